// Node (v1): Kubernetes' ValidateNode / ValidateNodeUpdate, and document 2's field rules.
//
// Kubernetes-exact, including its quirks:
//   - taint errors are reported under `metadata.taints[i]` (Kubernetes builds the path from
//     `metadata`, not `spec`);
//   - a lone `podCIDR` is checked as `spec.podCIDRs[0]` (Kubernetes' internal Node has only podCIDRs);
//   - capacity and allocatable entries are `status.capacity.<name>` (a child path, not `[name]`).
// Added by document 2 where Kubernetes has no check (messages in Kubernetes' style):
//   - podCIDRs[0] must equal podCIDR when both are given (Kubernetes silently prefers podCIDRs; when
//     only one is given the declaration's defaults fill the other, as Kubernetes' conversion does);
//   - providerID has the form `<ProviderName>://<ProviderSpecificNodeID>`;
//   - configSource and status.config are checked wherever present (Kubernetes checks them on update
//     only); the Node strategy drops both on create and unless already stored on update, so through
//     the API they are checked on updates of nodes that still have them;
//   - status.addresses entries need an address and a known type;
//   - daemonEndpoints.agentEndpoint.Port lies in 0..65535 (0: not yet known).
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {duplicate, forbidden, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {
  isConfigMapKey,
  isInRange,
  isQualifiedName,
  isValidCIDR,
  isValidLabelValue,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  parseCIDR,
} from '../../machinery/validation.js'
import {list, obj, semanticEqual, str, validateResourceQuantity, type KindValidator} from './common.js'

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const
export const NODE_ADDRESS_TYPES = ['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS'] as const

const podCIDRChangeMessage = 'node updates may not change podCIDR except from "" to valid'

/** unversionedvalidation.ValidateLabelName: a qualified name, one Invalid per problem. */
export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(path, name, msg))
}

/** validateTaintEffect: required unless allowEmpty, else one of the three effects. */
export function validateTaintEffect(effect: unknown, allowEmpty: boolean, path: string): FieldError[] {
  const value = str(effect)
  if (!allowEmpty && value === '') return [required(path, '')]
  return (TAINT_EFFECTS as readonly string[]).includes(value) ? [] : [notSupported(path, value, TAINT_EFFECTS)]
}

/** validateNodeTaints: key a qualified name, value a label value, effect required, key+effect unique. */
export function validateNodeTaints(taints: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Map<string, Set<string>>()
  list(taints).forEach((raw, i) => {
    const taint = obj(raw)
    const idx = `${path}[${i}]`
    const key = str(taint.key)
    const effect = str(taint.effect)
    errs.push(...validateLabelName(key, `${idx}.key`))
    const valueMsgs = isValidLabelValue(str(taint.value))
    if (valueMsgs.length > 0) errs.push(invalid(`${idx}.value`, str(taint.value), valueMsgs.join(';')))
    errs.push(...validateTaintEffect(effect, false, `${idx}.effect`))
    const keys = seen.get(effect) ?? new Set<string>()
    if (keys.has(key)) {
      errs.push({...duplicate(idx, taint), message: 'taints must be unique by key and effect pair'})
      return
    }
    keys.add(key)
    seen.set(effect, keys)
  })
  return errs
}

function validateNodeResources(node: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const status = obj(node.status)
  for (const which of ['capacity', 'allocatable'] as const) {
    for (const [name, value] of Object.entries(obj(status[which]))) {
      errs.push(...validateResourceQuantity(name, value, `status.${which}.${name}`))
    }
  }
  return errs
}

/** The podCIDRs a Node has once converted as Kubernetes converts it: podCIDRs, else [podCIDR]. */
function effectivePodCIDRs(node: AnyObject): string[] {
  const spec = obj(node.spec)
  const cidrs = list(spec.podCIDRs).map(str)
  if (cidrs.length > 0) return cidrs
  return str(spec.podCIDR) ? [str(spec.podCIDR)] : []
}

function validatePodCIDRs(node: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = obj(node.spec)
  const path = 'spec.podCIDRs'
  const cidrs = effectivePodCIDRs(node)
  const podCIDR = str(spec.podCIDR)
  if (podCIDR && list(spec.podCIDRs).length > 0 && cidrs[0] !== podCIDR) {
    errs.push(invalid(`${path}[0]`, cidrs[0], 'must be equal to `podCIDR`'))
  }
  cidrs.forEach((cidr, i) => {
    for (const msg of isValidCIDR(cidr)) errs.push(invalid(`${path}[${i}]`, cidr, msg))
  })
  if (cidrs.length > 1) {
    const families = cidrs.map((c) => parseCIDR(c)?.family ?? null)
    const dualStack = !families.includes(null) && families.includes('IPv4') && families.includes('IPv6')
    if (!dualStack || cidrs.length > 2) errs.push(invalid(path, cidrs, 'may specify no more than one CIDR for each IP family'))
    const seen = new Set<string>()
    cidrs.forEach((cidr, i) => {
      if (seen.has(cidr)) errs.push(duplicate(`${path}[${i}]`, cidr))
      seen.add(cidr)
    })
  }
  return errs
}

const providerIDForm = /^[A-Za-z0-9][-A-Za-z0-9_.]*:\/\/.+$/

function validateProviderID(node: AnyObject): FieldError[] {
  const id = str(obj(node.spec).providerID)
  if (id === '' || providerIDForm.test(id)) return []
  return [invalid('spec.providerID', id, 'must be of the form <ProviderName>://<ProviderSpecificNodeID>')]
}

/** validateConfigMapNodeConfigSource: the fields both spec and status need. */
function validateConfigMapSource(source: Record<string, any>, path: string): FieldError[] {
  const errs: FieldError[] = []
  const namespace = str(source.namespace)
  if (namespace === '') errs.push(required(`${path}.namespace`, 'namespace must be set'))
  else for (const msg of nameIsDNSLabel(namespace)) errs.push(invalid(`${path}.namespace`, namespace, msg))
  const name = str(source.name)
  if (name === '') errs.push(required(`${path}.name`, 'name must be set'))
  else for (const msg of nameIsDNSSubdomain(name)) errs.push(invalid(`${path}.name`, name, msg))
  const key = str(source.agentConfigKey)
  if (key === '') errs.push(required(`${path}.agentConfigKey`, 'agentConfigKey must be set'))
  else for (const msg of isConfigMapKey(key)) errs.push(invalid(`${path}.agentConfigKey`, key, msg))
  return errs
}

/** validateNodeConfigSourceSpec / ...Status: exactly one reference; uid and resourceVersion forbidden in spec, required in status. */
function validateNodeConfigSource(raw: unknown, path: string, inStatus: boolean): FieldError[] {
  const errs: FieldError[] = []
  const source = obj(raw)
  let count = 0
  if (source.configMap != null) {
    count++
    const cm = obj(source.configMap)
    const cmPath = `${path}.configMap`
    for (const f of ['uid', 'resourceVersion'] as const) {
      if (!inStatus && str(cm[f]) !== '') errs.push(forbidden(`${cmPath}.${f}`, `${f} must not be set in spec`))
      if (inStatus && str(cm[f]) === '') errs.push(required(`${cmPath}.${f}`, `${f} must be set in status`))
    }
    errs.push(...validateConfigMapSource(cm, cmPath))
  }
  if (count !== 1) errs.push(invalid(path, raw, 'exactly one reference subfield must be non-nil'))
  return errs
}

function validateConfigSources(node: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = obj(node.spec)
  if (spec.configSource != null) errs.push(...validateNodeConfigSource(spec.configSource, 'spec.configSource', false))
  const config = obj(obj(node.status).config)
  for (const which of ['assigned', 'active', 'lastKnownGood'] as const) {
    if (config[which] != null) errs.push(...validateNodeConfigSource(config[which], `status.config.${which}`, true))
  }
  return errs
}

function validateAddresses(node: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  list(obj(node.status).addresses).forEach((raw, i) => {
    const address = obj(raw)
    const path = `status.addresses[${i}]`
    const type = str(address.type)
    if (type === '') errs.push(required(`${path}.type`, ''))
    else if (!(NODE_ADDRESS_TYPES as readonly string[]).includes(type)) errs.push(notSupported(`${path}.type`, type, NODE_ADDRESS_TYPES))
    if (str(address.address) === '') errs.push(required(`${path}.address`, ''))
  })
  return errs
}

function validateDaemonEndpoints(node: AnyObject): FieldError[] {
  const endpoint = obj(obj(obj(node.status).daemonEndpoints).agentEndpoint)
  const port = endpoint.Port
  if (typeof port !== 'number') return []
  return isInRange(port, 0, 65535).map((msg) => invalid('status.daemonEndpoints.agentEndpoint.Port', port, msg))
}

/** The checks create and update share. */
function validateNodeCommon(node: AnyObject): FieldError[] {
  return [
    ...validateNodeTaints(obj(node.spec).taints, 'metadata.taints'),
    ...validateNodeResources(node),
    ...validatePodCIDRs(node),
    ...validateProviderID(node),
    ...validateConfigSources(node),
    ...validateAddresses(node),
    ...validateDaemonEndpoints(node),
  ]
}

export function validateNode(node: AnyObject): FieldError[] {
  return validateNodeCommon(node)
}

export function validateNodeUpdate(node: AnyObject, old: AnyObject): FieldError[] {
  const errs = validateNodeCommon(node)
  // no duplicate addresses in status
  const seen = new Set<string>()
  list(obj(node.status).addresses).forEach((raw, i) => {
    const address = obj(raw)
    const key = JSON.stringify([str(address.type), str(address.address)])
    if (seen.has(key)) errs.push(duplicate(`status.addresses[${i}]`, raw))
    seen.add(key)
  })
  // podCIDRs: may be set once (from none), never changed
  const oldCIDRs = effectivePodCIDRs(old)
  const newCIDRs = effectivePodCIDRs(node)
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== newCIDRs.length) errs.push(forbidden('spec.podCIDRs', podCIDRChangeMessage))
    else for (const [i, cidr] of oldCIDRs.entries()) if (cidr !== newCIDRs[i]) errs.push(forbidden('spec.podCIDRs', podCIDRChangeMessage))
  }
  // providerID: may be set once, never changed
  const oldID = str(obj(old.spec).providerID)
  if (oldID !== '' && oldID !== str(obj(node.spec).providerID)) {
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'))
  }
  if (!semanticEqual(obj(node.spec).externalID, obj(old.spec).externalID)) errs.push(forbidden('spec.externalID', 'may not be updated'))
  return errs
}

export const nodeValidator: KindValidator = {
  create: (object) => validateNode(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    // the main resource and /status both run ValidateNodeUpdate; /proxy writes nothing
    if (context.subresource && context.subresource !== 'status') return []
    return validateNodeUpdate(object, old)
  },
}
