// Service (v1): the parts of Kubernetes' ValidateService / ValidateServiceUpdate that tie fields to the
// type, so that an update which changes the type and also sets a field the new type does not use
// (dropTypeDependentFields leaves such fields alone) is refused as in Kubernetes:
//   - ExternalName: spec.externalName required (a DNS subdomain, a trailing dot allowed); clusterIPs,
//     ipFamilies and ipFamilyPolicy forbidden (`may not be set for ExternalName services`);
//   - ClusterIP: no node ports (`may not be used when `type` is 'ClusterIP'`); a (protocol, nodePort)
//     pair at most once;
//   - allocateLoadBalancerNodePorts and loadBalancerClass only for LoadBalancer; loadBalancerClass may
//     not change while the Service stays a LoadBalancer;
//   - externalTrafficPolicy only for externally accessible Services; healthCheckNodePort only for a
//     LoadBalancer with externalTrafficPolicy Local, a valid port, unchanged while it stays needed.
// Node ports are checked against --service-node-port-range by the allocator, not here; a missing
// healthCheckNodePort is not required (the allocator, which runs before validation as Kubernetes'
// BeginCreate / BeginUpdate does, has set it). The allocator checks the cluster IP fields first, with
// validateClusterIPsRelatedFields below.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {externallyAccessible} from '../../api/core/service.js'
import {duplicate, forbidden, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {ipFamilyOf, isDNS1123Subdomain, isValidIP, isValidPortNum} from '../../machinery/validation.js'
import {fieldImmutableErrorMsg, list, obj, str, type KindValidator} from './common.js'

const needsHealthCheck = (spec: AnyObject) => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local'

export function validateServiceTypeFields(object: AnyObject): FieldError[] {
  const spec = obj(object.spec)
  const errs: FieldError[] = []
  const ports = list(spec.ports).map(obj)
  if (spec.type === 'ExternalName') {
    if (list(spec.clusterIPs).length > 0 || str(spec.clusterIP) !== '') errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'))
    if (list(spec.ipFamilies).length > 0) errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'))
    if (spec.ipFamilyPolicy != null) errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'))
    const cname = str(spec.externalName).replace(/\.$/, '')
    if (cname === '') errs.push(required('spec.externalName'))
    else for (const msg of isDNS1123Subdomain(cname)) errs.push(invalid('spec.externalName', cname, msg))
  }
  if (spec.type === 'ClusterIP') {
    for (const [i, port] of ports.entries()) {
      if (port.nodePort) errs.push(forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"))
    }
  }
  const nodePorts = new Set<string>()
  for (const [i, port] of ports.entries()) {
    if (!port.nodePort) continue
    const key = `${str(port.protocol)}/${port.nodePort}`
    if (nodePorts.has(key)) errs.push(duplicate(`spec.ports[${i}].nodePort`, port.nodePort))
    nodePorts.add(key)
  }
  if (spec.allocateLoadBalancerNodePorts != null && spec.type !== 'LoadBalancer') {
    errs.push(forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"))
  }
  if (spec.loadBalancerClass != null && spec.type !== 'LoadBalancer') {
    errs.push(forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"))
  }
  if (!externallyAccessible(spec)) {
    if (str(spec.externalTrafficPolicy) !== '') {
      errs.push(invalid('spec.externalTrafficPolicy', spec.externalTrafficPolicy, 'may only be set for externally-accessible services'))
    }
  } else if (str(spec.externalTrafficPolicy) === '') {
    errs.push(required('spec.externalTrafficPolicy'))
  }
  const health = spec.healthCheckNodePort
  if (!needsHealthCheck(spec)) {
    if (health) errs.push(invalid('spec.healthCheckNodePort', health, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
  } else if (health) {
    for (const msg of isValidPortNum(health)) errs.push(invalid('spec.healthCheckNodePort', health, msg))
  }
  return errs
}

export function validateServiceTypeFieldsUpdate(object: AnyObject, old: AnyObject): FieldError[] {
  const spec = obj(object.spec)
  const before = obj(old.spec)
  const errs: FieldError[] = []
  if (before.type === 'LoadBalancer' && spec.type === 'LoadBalancer' && (spec.loadBalancerClass ?? null) !== (before.loadBalancerClass ?? null)) {
    errs.push(invalid('spec.loadBalancerClass', spec.loadBalancerClass ?? null, 'may not change once set'))
  }
  if (needsHealthCheck(before) && needsHealthCheck(spec) && (spec.healthCheckNodePort ?? 0) !== (before.healthCheckNodePort ?? 0)) {
    errs.push(forbidden('spec.healthCheckNodePort', fieldImmutableErrorMsg))
  }
  return [...errs, ...validateServiceTypeFields(object)]
}

export const serviceValidator: KindValidator = {
  create: (object) => validateServiceTypeFields(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    if (context.subresource) return []
    return validateServiceTypeFieldsUpdate(object, old)
  },
}

const IP_FAMILIES = ['IPv4', 'IPv6']
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack']

/**
 * Kubernetes' ValidateServiceClusterIPsRelatedFields, the "loose pre-validation" its allocator runs
 * before it allocates (initIPFamilyFields): clusterIP and clusterIPs in step, ipFamilies and
 * ipFamilyPolicy from their enumerations, clusterIPs valid addresses ('None' alone), at most two and
 * one per family, each of the family ipFamilies names. Nothing for ExternalName.
 */
export function validateClusterIPsRelatedFields(object: AnyObject): FieldError[] {
  const spec = obj(object.spec)
  if (spec.type === 'ExternalName') return []
  const errs: FieldError[] = []
  const clusterIP = str(spec.clusterIP)
  const clusterIPs: string[] = list(spec.clusterIPs).map(str)
  const families: string[] = list(spec.ipFamilies).map(str)
  if (clusterIP !== '') {
    if (clusterIPs.length === 0) errs.push(required('spec.clusterIPs'))
    else if (clusterIPs[0] !== clusterIP) errs.push(invalid('spec.clusterIPs', clusterIPs, 'first value must match `clusterIP`'))
  } else if (clusterIPs.length > 0) {
    errs.push(invalid('spec.clusterIPs', clusterIPs, 'must be empty when `clusterIP` is not specified'))
  }
  const seen = new Set<string>()
  for (const [i, family] of families.entries()) {
    if (!IP_FAMILIES.includes(family)) errs.push(notSupported(`spec.ipFamilies[${i}]`, family, IP_FAMILIES))
    if (seen.has(family)) errs.push(duplicate(`spec.ipFamilies[${i}]`, family))
    seen.add(family)
  }
  if (spec.ipFamilyPolicy != null && !IP_FAMILY_POLICIES.includes(str(spec.ipFamilyPolicy))) {
    errs.push(notSupported('spec.ipFamilyPolicy', spec.ipFamilyPolicy, IP_FAMILY_POLICIES))
  }
  let invalidIPs = false
  for (const [i, ip] of clusterIPs.entries()) {
    if (i === 0 && ip === 'None') {
      if (clusterIPs.length > 1) {
        invalidIPs = true
        errs.push(invalid('spec.clusterIPs', clusterIPs, "'None' must be the first and only value"))
      }
      continue
    }
    for (const msg of isValidIP(ip)) {
      invalidIPs = true
      errs.push(invalid(`spec.clusterIPs[${i}]`, ip, msg))
    }
  }
  if (clusterIPs.length > 2) errs.push(invalid('spec.clusterIPs', clusterIPs, 'may only hold up to 2 values'))
  // a bad address would skew the checks below
  if (invalidIPs) return errs
  if (clusterIPs.length > 1) {
    const found = new Set(clusterIPs.map(ipFamilyOf))
    if (!(found.has('IPv4') && found.has('IPv6'))) errs.push(invalid('spec.clusterIPs', clusterIPs, 'may specify no more than one IP for each IP family'))
  }
  const headless = clusterIPs.length === 1 && clusterIPs[0] === 'None'
  if (!headless) {
    for (const [i, ip] of clusterIPs.slice(0, families.length).entries()) {
      const family = ipFamilyOf(ip)
      if (families[i] === 'IPv4' && family === 'IPv6') errs.push(invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``))
      if (families[i] === 'IPv6' && family !== 'IPv6') errs.push(invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``))
    }
  }
  return errs
}
