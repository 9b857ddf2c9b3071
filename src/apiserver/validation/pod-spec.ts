// The PodSpec checks a scheduler and an agent rely on, shared by Pod and the StatefulSet template:
// Kubernetes' ValidatePodSpec narrowed to containers (names, images, ports, resources), restart
// policy, node selector, node affinity, tolerations, seccomp profiles, activeDeadlineSeconds and
// nodeName, with Kubernetes' paths and messages. Volumes, probes, env and the rest are not checked.
import type {FieldError} from '../../api/types.js'
import {duplicate, forbidden, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {compareQuantities, formatQuantity, parseQuantity, QuantityParseError, type Quantity} from '../../machinery/quantity.js'
import {isDNS1123Label, isValidLabelValue, isValidPortNum, nameIsDNSSubdomain, validateLabels} from '../../machinery/validation.js'
import {list, obj, str, stringMap, validateResourceQuantity} from './common.js'
import {validateLabelName, validateTaintEffect} from './node.js'

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const
export const SECCOMP_PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const
const MAX_INT32 = 2147483647

export interface PodSpecOptions {
  /** the spec is a Pod's own, not a template's (Kubernetes' validatePodMetadataAndSpec extras) */
  resourceIsPod: boolean
}

/** validation.IsValidPortName: an IANA service name. */
function isValidPortName(name: string): string[] {
  const errs: string[] = []
  if (name.length > 15) errs.push('must be no more than 15 characters')
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)')
  if (name.includes('--')) errs.push('must not contain consecutive hyphens')
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) errs.push('must not begin or end with a hyphen')
  return errs
}

function validateContainerPorts(ports: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const names = new Set<string>()
  list(ports).forEach((raw, i) => {
    const port = obj(raw)
    const idx = `${path}[${i}]`
    const name = str(port.name)
    if (name !== '') {
      const msgs = isValidPortName(name)
      if (msgs.length > 0) errs.push(...msgs.map((m) => invalid(`${idx}.name`, name, m)))
      else if (names.has(name)) errs.push(duplicate(`${idx}.name`, name))
      else names.add(name)
    }
    const containerPort = typeof port.containerPort === 'number' ? port.containerPort : 0
    if (containerPort === 0) errs.push(required(`${idx}.containerPort`, ''))
    else errs.push(...isValidPortNum(containerPort).map((m) => invalid(`${idx}.containerPort`, containerPort, m)))
    const hostPort = typeof port.hostPort === 'number' ? port.hostPort : 0
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((m) => invalid(`${idx}.hostPort`, hostPort, m)))
    const protocol = str(port.protocol)
    if (protocol === '') errs.push(required(`${idx}.protocol`, ''))
    else if (!(PORT_PROTOCOLS as readonly string[]).includes(protocol)) errs.push(notSupported(`${idx}.protocol`, protocol, PORT_PROTOCOLS))
  })
  return errs
}

/** helper.IsOvercommitAllowed: native resources other than hugepages may ask less than their limit. */
function isOvercommitAllowed(name: string): boolean {
  const native = !name.includes('/') || name.includes('orch.io/')
  return native && !name.startsWith('hugepages-')
}

/** validateContainerResourceName: a qualified name; without a domain, one of the standard container resources. */
function validateContainerResourceName(name: string, path: string): FieldError[] {
  const errs = validateLabelName(name, path)
  if (errs.length > 0) return errs
  if (!name.includes('/') && !['cpu', 'memory', 'ephemeral-storage'].includes(name) && !name.startsWith('hugepages-')) {
    errs.push(invalid(path, name, 'must be a standard resource for containers'))
  }
  return errs
}

function quantityOf(value: unknown): Quantity | null {
  try {
    return parseQuantity(typeof value === 'number' ? String(value) : str(value))
  } catch (e) {
    if (e instanceof QuantityParseError) return null
    throw e
  }
}

/** validateResourceRequirements: quantities valid and not negative, each request at most its limit. */
export function validateResourceRequirements(resources: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const limits = obj(obj(resources).limits)
  const requests = obj(obj(resources).requests)
  const limPath = `${path}.limits`
  const reqPath = `${path}.requests`
  for (const [name, value] of Object.entries(limits)) {
    errs.push(...validateContainerResourceName(name, `${limPath}[${name}]`))
    errs.push(...validateResourceQuantity(name, value, `${limPath}[${name}]`))
  }
  for (const [name, value] of Object.entries(requests)) {
    errs.push(...validateContainerResourceName(name, `${reqPath}[${name}]`))
    errs.push(...validateResourceQuantity(name, value, `${reqPath}[${name}]`))
    const request = quantityOf(value)
    if (Object.hasOwn(limits, name)) {
      const limit = quantityOf(limits[name])
      if (request === null || limit === null) continue
      const cmp = compareQuantities(request, limit)
      if (cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(invalid(reqPath, formatQuantity(request), `must be equal to ${name} limit of ${formatQuantity(limit)}`))
      } else if (cmp > 0) {
        errs.push(invalid(reqPath, formatQuantity(request), `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`))
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'))
    }
  }
  return errs
}

/** validateLocalDescendingPath: relative, no `..` element. */
function validateLocalDescendingPath(target: string, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (target.startsWith('/')) errs.push(invalid(path, target, 'must be a relative path'))
  if (target.split('/').includes('..')) errs.push(invalid(path, target, "must not contain '..'"))
  return errs
}

/** validateSeccompProfileField: a known type; localhostProfile required with Localhost, forbidden otherwise. */
export function validateSeccompProfile(profile: unknown, path: string): FieldError[] {
  if (profile == null) return []
  const errs: FieldError[] = []
  const sp = obj(profile)
  const type = str(sp.type)
  if (type === '') errs.push(required(`${path}.type`, 'type is required when seccompProfile is set'))
  else if (!(SECCOMP_PROFILE_TYPES as readonly string[]).includes(type)) errs.push(notSupported(`${path}.type`, type, SECCOMP_PROFILE_TYPES))
  if (type === 'Localhost') {
    if (sp.localhostProfile == null) errs.push(required(`${path}.localhostProfile`, 'must be set when seccomp type is Localhost'))
    else errs.push(...validateLocalDescendingPath(str(sp.localhostProfile), `${path}.localhostProfile`))
  } else if (sp.localhostProfile != null) {
    errs.push(invalid(`${path}.localhostProfile`, profile, 'can only be set when seccomp type is Localhost'))
  }
  return errs
}

/** validateContainerCommon (narrowed): name, image, ports, resources, seccomp profile. */
function validateContainer(container: Record<string, any>, path: string, options: PodSpecOptions): FieldError[] {
  const errs: FieldError[] = []
  const name = str(container.name)
  if (name === '') errs.push(required(`${path}.name`, ''))
  else errs.push(...isDNS1123Label(name).map((m) => invalid(`${path}.name`, name, m)))
  const image = str(container.image)
  if (image === '') errs.push(required(`${path}.image`, ''))
  else if (options.resourceIsPod && image.trim() !== image) {
    errs.push(invalid(`${path}.image`, image, 'must not have leading or trailing whitespace'))
  }
  errs.push(...validateContainerPorts(container.ports, `${path}.ports`))
  errs.push(...validateResourceRequirements(container.resources, `${path}.resources`))
  errs.push(...validateSeccompProfile(obj(container.securityContext).seccompProfile, `${path}.securityContext.seccompProfile`))
  return errs
}

function validateContainers(spec: Record<string, any>, path: string, options: PodSpecOptions): FieldError[] {
  const errs: FieldError[] = []
  const containers = list(spec.containers)
  const names = new Set<string>()
  if (containers.length === 0) errs.push(required(`${path}.containers`, ''))
  containers.forEach((raw, i) => {
    const c = obj(raw)
    const idx = `${path}.containers[${i}]`
    errs.push(...validateContainer(c, idx, options))
    if (names.has(str(c.name))) errs.push(duplicate(`${idx}.name`, str(c.name)))
    else names.add(str(c.name))
    if (c.restartPolicy != null) errs.push(forbidden(`${idx}.restartPolicy`, 'may not be set for non-init containers'))
  })
  list(spec.initContainers).forEach((raw, i) => {
    const c = obj(raw)
    const idx = `${path}.initContainers[${i}]`
    errs.push(...validateContainer(c, idx, options))
    if (names.has(str(c.name))) errs.push(duplicate(`${idx}.name`, str(c.name)))
    else if (str(c.name) !== '') names.add(str(c.name))
  })
  return errs
}

/** ValidateNodeSelectorRequirement (+ Gt/Lt's one value must be an integer, as the scheduler reads it). */
function validateNodeSelectorRequirement(raw: unknown, allowInvalidLabelValue: boolean, path: string): FieldError[] {
  const errs: FieldError[] = []
  const rq = obj(raw)
  const values = list(rq.values).map(str)
  const operator = str(rq.operator)
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"))
      break
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
      break
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) errs.push(required(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"))
      else if (!/^[+-]?[0-9]+$/.test(values[0]!)) errs.push(invalid(`${path}.values[0]`, values[0], 'must be an integer'))
      break
    default:
      errs.push(invalid(`${path}.operator`, operator, 'not a valid selector operator'))
  }
  errs.push(...validateLabelName(str(rq.key), `${path}.key`))
  if (!allowInvalidLabelValue) {
    values.forEach((v, i) => errs.push(...isValidLabelValue(v).map((m) => invalid(`${path}.values[${i}]`, v, m))))
  }
  return errs
}

/** ValidateNodeFieldSelectorRequirement: only `metadata.name`, In/NotIn with exactly one node name. */
function validateNodeFieldSelectorRequirement(raw: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const rq = obj(raw)
  const values = list(rq.values).map(str)
  const operator = str(rq.operator)
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length !== 1) errs.push(required(`${path}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
  } else {
    errs.push(invalid(`${path}.operator`, operator, 'not a valid selector operator'))
  }
  if (str(rq.key) !== 'metadata.name') errs.push(invalid(`${path}.key`, str(rq.key), 'not a valid field selector key'))
  else values.forEach((v, i) => errs.push(...nameIsDNSSubdomain(v).map((m) => invalid(`${path}.values[${i}]`, v, m))))
  return errs
}

function validateNodeSelectorTerm(raw: unknown, allowInvalidLabelValue: boolean, path: string): FieldError[] {
  const term = obj(raw)
  return [
    ...list(term.matchExpressions).flatMap((r, j) => validateNodeSelectorRequirement(r, allowInvalidLabelValue, `${path}.matchExpressions[${j}]`)),
    ...list(term.matchFields).flatMap((r, j) => validateNodeFieldSelectorRequirement(r, `${path}.matchFields[${j}]`)),
  ]
}

/** validateNodeAffinity: required terms (at least one) and weighted preferred terms. */
export function validateNodeAffinity(raw: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const na = obj(raw)
  if (na.requiredDuringSchedulingIgnoredDuringExecution != null) {
    const termsPath = `${path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`
    const terms = list(obj(na.requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms)
    if (terms.length === 0) errs.push(required(termsPath, 'must have at least one node selector term'))
    terms.forEach((t, i) => errs.push(...validateNodeSelectorTerm(t, false, `${termsPath}[${i}]`)))
  }
  list(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((raw, i) => {
    const term = obj(raw)
    const idx = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`
    const weight = typeof term.weight === 'number' ? term.weight : 0
    if (weight <= 0 || weight > 100) errs.push(invalid(`${idx}.weight`, weight, 'must be in the range 1-100'))
    errs.push(...validateNodeSelectorTerm(term.preference, true, `${idx}.preference`))
  })
  return errs
}

/** ValidateTolerations. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  list(tolerations).forEach((raw, i) => {
    const t = obj(raw)
    const idx = `${path}[${i}]`
    const key = str(t.key)
    const operator = str(t.operator)
    const value = str(t.value)
    const effect = str(t.effect)
    if (key !== '') errs.push(...validateLabelName(key, `${idx}.key`))
    if (key === '' && operator !== 'Exists') {
      errs.push(invalid(`${idx}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
    }
    if (t.tolerationSeconds != null && effect !== 'NoExecute') {
      errs.push(invalid(`${idx}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    }
    switch (operator) {
      case 'Equal':
      case '': {
        const msgs = isValidLabelValue(value)
        if (msgs.length > 0) errs.push(invalid(`${idx}.operator`, value, msgs.join(';')))
        break
      }
      case 'Exists':
        if (value !== '') errs.push(invalid(`${idx}.operator`, value, "value must be empty when `operator` is 'Exists'"))
        break
      default:
        errs.push(notSupported(`${idx}.operator`, operator, ['Equal', 'Exists']))
    }
    if (effect !== '') errs.push(...validateTaintEffect(effect, true, `${idx}.effect`))
  })
  return errs
}

/** ValidatePodSpec, narrowed (see the file comment). `path` is `spec` or `spec.template.spec`. */
export function validatePodSpec(rawSpec: unknown, path: string, options: PodSpecOptions): FieldError[] {
  const spec = obj(rawSpec)
  const errs: FieldError[] = []
  if (spec.terminationGracePeriodSeconds == null) errs.push(required(`${path}.terminationGracePeriodSeconds`, ''))
  errs.push(...validateContainers(spec, path, options))
  const restartPolicy = str(spec.restartPolicy)
  if (restartPolicy === '') errs.push(required(`${path}.restartPolicy`, ''))
  else if (!(RESTART_POLICIES as readonly string[]).includes(restartPolicy)) {
    errs.push(notSupported(`${path}.restartPolicy`, restartPolicy, RESTART_POLICIES))
  }
  errs.push(...validateLabels(stringMap(spec.nodeSelector), `${path}.nodeSelector`))
  errs.push(...validateSeccompProfile(obj(spec.securityContext).seccompProfile, `${path}.securityContext.seccompProfile`))
  if (spec.affinity != null && obj(spec.affinity).nodeAffinity != null) {
    errs.push(...validateNodeAffinity(obj(spec.affinity).nodeAffinity, `${path}.affinity.nodeAffinity`))
  }
  const nodeName = str(spec.nodeName)
  if (nodeName !== '') errs.push(...nameIsDNSSubdomain(nodeName).map((m) => invalid(`${path}.nodeName`, nodeName, m)))
  if (typeof spec.activeDeadlineSeconds === 'number') {
    const value = spec.activeDeadlineSeconds
    if (value < 1 || value > MAX_INT32) errs.push(invalid(`${path}.activeDeadlineSeconds`, value, `must be between 1 and ${MAX_INT32}, inclusive`))
  }
  errs.push(...validateTolerations(spec.tolerations, `${path}.tolerations`))
  return errs
}
