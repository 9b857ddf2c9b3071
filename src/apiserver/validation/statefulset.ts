// StatefulSet (apps/v1): Kubernetes' ValidateStatefulSet / ValidateStatefulSetUpdate /
// ValidateStatefulSetStatusUpdate, and document 2's field rules.
//
// Kubernetes checks only the template's labels, annotations, restartPolicy and activeDeadlineSeconds;
// we also run the narrowed PodSpec checks of pod-spec.ts on `spec.template.spec` (containers with
// unique DNS-label names and an image, ports in range, ...). Added by document 2, in Kubernetes' style:
//   - serviceName, when set, names a Service, so it is a DNS-1035 label;
//   - each volumeClaimTemplates entry has a valid, unique name that matches a volumeMount of a
//     template container: `spec.volumeClaimTemplates[i].metadata.name: Invalid value: "data":
//     must match the name of a volumeMount in a template container`.
// Updates may change only replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
// persistentVolumeClaimRetentionPolicy and minReadySeconds (current Kubernetes' list and message).
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {duplicate, forbidden, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
} from '../../machinery/validation.js'
import {isObject, list, nonNegative, obj, semanticEqual, str, stringMap, type KindValidator} from './common.js'
import {validatePodSpec} from './pod-spec.js'

export const STATEFULSET_SPEC_FORBIDDEN =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"

/** The spec fields an update may change; the others must stay as stored. */
const MUTABLE_SPEC_FIELDS = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']

/** Whether a (valid) metav1.LabelSelector matches the labels; a nil selector matches nothing. */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  if (!isObject(selector)) return false
  for (const [k, v] of Object.entries(stringMap(selector.matchLabels))) if (labels[k] !== v) return false
  for (const raw of list(selector.matchExpressions)) {
    const expr = obj(raw)
    const key = str(expr.key)
    const has = Object.hasOwn(labels, key)
    const values = list(expr.values).map(str)
    switch (expr.operator) {
      case 'In':
        if (!has || !values.includes(labels[key]!)) return false
        break
      case 'NotIn':
        if (has && values.includes(labels[key]!)) return false
        break
      case 'Exists':
        if (!has) return false
        break
      case 'DoesNotExist':
        if (has) return false
        break
      default:
        return false
    }
  }
  return true
}

function isEmptySelector(selector: Record<string, any>): boolean {
  return Object.keys(obj(selector.matchLabels)).length + list(selector.matchExpressions).length === 0
}

/** ValidatePositiveIntOrPercent + "cannot be 0" + IsNotMoreThan100Percent, for maxUnavailable. */
function validateMaxUnavailable(value: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  let amount = 0
  let percent: number | null = null
  if (typeof value === 'string') {
    if (/^[0-9]+%$/.test(value)) {
      percent = Number(value.slice(0, -1))
      amount = percent
    } else {
      errs.push(invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"))
      amount = /^[+-]?[0-9]+$/.test(value) ? Number(value) : 0
    }
  } else if (typeof value === 'number') {
    amount = value
    errs.push(...nonNegative(value, path))
  } else {
    return [invalid(path, value, "must be an integer or percentage (e.g '5%%')")] // sic: Kubernetes' text
  }
  if (amount === 0) errs.push(invalid(path, value, 'cannot be 0'))
  if (percent !== null && percent > 100) errs.push(invalid(path, value, 'must not be greater than 100%'))
  return errs
}

function validateUpdateStrategy(strategy: Record<string, any>): FieldError[] {
  const path = 'spec.updateStrategy'
  switch (str(strategy.type)) {
    case '':
      return [required(path, '')]
    case 'OnDelete':
      return strategy.rollingUpdate != null ? [invalid(`${path}.rollingUpdate`, strategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'")] : []
    case 'RollingUpdate': {
      if (strategy.rollingUpdate == null) return []
      const rollingUpdate = obj(strategy.rollingUpdate)
      const errs = nonNegative(rollingUpdate.partition, `${path}.rollingUpdate.partition`)
      if (rollingUpdate.maxUnavailable != null) errs.push(...validateMaxUnavailable(rollingUpdate.maxUnavailable, `${path}.rollingUpdate.maxUnavailable`))
      return errs
    }
    default:
      return [invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")]
  }
}

/** The names of the volumeMounts of all template containers. */
function mountNames(podSpec: Record<string, any>): Set<string> {
  const names = new Set<string>()
  for (const c of [...list(podSpec.containers), ...list(podSpec.initContainers)]) {
    for (const m of list(obj(c).volumeMounts)) names.add(str(obj(m).name))
  }
  return names
}

function validateVolumeClaimTemplates(spec: Record<string, any>): FieldError[] {
  const errs: FieldError[] = []
  const mounts = mountNames(obj(obj(spec.template).spec))
  const seen = new Set<string>()
  list(spec.volumeClaimTemplates).forEach((raw, i) => {
    const path = `spec.volumeClaimTemplates[${i}].metadata.name`
    const name = str(obj(obj(raw).metadata).name)
    if (name === '') {
      errs.push(required(path, ''))
      return
    }
    const msgs = nameIsDNSSubdomain(name)
    errs.push(...msgs.map((m) => invalid(path, name, m)))
    if (seen.has(name)) errs.push(duplicate(path, name))
    seen.add(name)
    if (msgs.length === 0 && !mounts.has(name)) errs.push(invalid(path, name, 'must match the name of a volumeMount in a template container'))
  })
  return errs
}

/** ValidateStatefulSetSpec (+ the template's PodSpec and document 2's additions). */
export function validateStatefulSetSpec(rawSpec: unknown): FieldError[] {
  const spec = obj(rawSpec)
  const errs: FieldError[] = []
  const policy = str(spec.podManagementPolicy)
  if (policy === '') errs.push(required('spec.podManagementPolicy', ''))
  else if (policy !== 'OrderedReady' && policy !== 'Parallel') errs.push(invalid('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"))
  errs.push(...validateUpdateStrategy(obj(spec.updateStrategy)))
  if (spec.persistentVolumeClaimRetentionPolicy != null) {
    const retention = obj(spec.persistentVolumeClaimRetentionPolicy)
    for (const when of ['whenDeleted', 'whenScaled'] as const) {
      const value = str(retention[when])
      if (value !== 'Retain' && value !== 'Delete') {
        errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${when}`, value, ['Retain', 'Delete']))
      }
    }
  }
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'))
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'))
  if (spec.ordinals != null) errs.push(...nonNegative(obj(spec.ordinals).start, 'spec.ordinals.start'))
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'))
  const serviceName = str(spec.serviceName)
  if (serviceName !== '') errs.push(...isDNS1035Label(serviceName).map((m) => invalid('spec.serviceName', serviceName, m)))

  const template = obj(spec.template)
  const templateMeta = obj(template.metadata)
  const templateLabels = stringMap(templateMeta.labels)
  let selectorValid = true
  if (spec.selector == null) {
    errs.push(required('spec.selector', ''))
  } else {
    const selectorErrs = validateLabelSelector(spec.selector, 'spec.selector')
    errs.push(...selectorErrs)
    selectorValid = selectorErrs.length === 0
    if (isEmptySelector(obj(spec.selector))) errs.push(invalid('spec.selector', spec.selector, 'empty selector is invalid for statefulset'))
  }
  if (!selectorValid) {
    // Kubernetes could not turn the selector into a label selector: it says so and skips the template
    errs.push(invalid('spec.selector', spec.selector, ''))
  } else {
    const matchesEverything = spec.selector != null && isEmptySelector(obj(spec.selector))
    if (!matchesEverything && !selectorMatches(spec.selector, templateLabels)) {
      errs.push(invalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'))
    }
    errs.push(...validateLabels(templateLabels, 'spec.template.labels'))
    errs.push(...validateAnnotations(stringMap(templateMeta.annotations), 'spec.template.annotations'))
  }
  const podSpec = obj(template.spec)
  errs.push(...validatePodSpec(podSpec, 'spec.template.spec', {resourceIsPod: false}))
  const restartPolicy = str(podSpec.restartPolicy)
  if (restartPolicy !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']))
  if (podSpec.activeDeadlineSeconds != null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'))
  }
  errs.push(...validateVolumeClaimTemplates(spec))
  return errs
}

export function validateStatefulSet(sts: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  // ValidateStatefulSetName: a DNS label (pods are named <name>-<ordinal>); the generic metadata
  // check has already reported what is not even a subdomain
  const name = str(obj(sts.metadata).name)
  if (name !== '' && isDNS1123Subdomain(name).length === 0) errs.push(...isDNS1123Label(name).map((m) => invalid('metadata.name', name, m)))
  return [...errs, ...validateStatefulSetSpec(sts.spec)]
}

export function validateStatefulSetUpdate(sts: AnyObject, old: AnyObject): FieldError[] {
  const errs = validateStatefulSetSpec(sts.spec)
  const spec = {...obj(sts.spec)}
  const oldSpec = obj(old.spec)
  for (const field of MUTABLE_SPEC_FIELDS) spec[field] = oldSpec[field]
  if (!semanticEqual(spec, oldSpec)) errs.push(forbidden('spec', STATEFULSET_SPEC_FORBIDDEN))
  return errs
}

/** ValidateStatefulSetStatus plus "collisionCount cannot be decremented". */
export function validateStatefulSetStatusUpdate(sts: AnyObject, old: AnyObject): FieldError[] {
  const status = obj(sts.status)
  const errs: FieldError[] = []
  const counters = ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']
  for (const f of counters) errs.push(...nonNegative(status[f], `status.${f}`))
  const n = (f: string) => (typeof status[f] === 'number' ? status[f] : 0)
  for (const f of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    if (n(f) > n('replicas')) errs.push(invalid(`status.${f}`, n(f), 'cannot be greater than status.replicas'))
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push(invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than status.readyReplicas'))
  }
  const oldCount = obj(old.status).collisionCount
  if (typeof oldCount === 'number' && (typeof status.collisionCount !== 'number' || status.collisionCount < oldCount)) {
    errs.push(invalid('status.collisionCount', n('collisionCount'), 'cannot be decremented'))
  }
  return errs
}

export const statefulSetValidator: KindValidator = {
  create: (object) => validateStatefulSet(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    if (context.subresource === 'status') return validateStatefulSetStatusUpdate(object, old)
    // the main resource and /scale (which writes spec.replicas) run the full update validation
    if (context.subresource && context.subresource !== 'scale') return []
    return validateStatefulSetUpdate(object, old)
  },
}
