// Pod (v1): the parts of Kubernetes' ValidatePodCreate / ValidatePodUpdate a scheduler and an agent
// rely on (the PodSpec checks are in pod-spec.ts).
//
// An update may change only container images, activeDeadlineSeconds (set once, then only lowered),
// tolerations (additions, and tolerationSeconds of existing ones), deletions of scheduling gates and
// terminationGracePeriodSeconds from a negative value to 1. Anything else is refused with Kubernetes'
// `spec: Forbidden: pod updates may not change fields other than ...` followed by a diff; the diff
// is ours (one `-`/`+` pair per changed PodSpec field), not go-cmp's.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {forbidden, goJSON, invalid} from '../../machinery/field-errors.js'
import {list, obj, semanticEqual, str, type KindValidator} from './common.js'
import {validatePodSpec} from './pod-spec.js'

const MAX_INT32 = 2147483647

/** Kubernetes' updatablePodSpecFields, joined with ',' in the Forbidden message. */
export const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
]

export const POD_UPDATE_FORBIDDEN_PREFIX = `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}`

export function validatePod(pod: AnyObject): FieldError[] {
  const spec = obj(pod.spec)
  const errs = validatePodSpec(spec, 'spec', {resourceIsPod: true})
  if (list(spec.ephemeralContainers).length > 0) errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'))
  if (str(spec.nodeName) !== '' && list(spec.schedulingGates).length > 0) {
    errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'))
  }
  return errs
}

/** validateOnlyAddedTolerations: every old toleration is still there, up to its tolerationSeconds. */
function validateOnlyAddedTolerations(next: unknown[], old: unknown[], path: string): FieldError[] {
  for (const before of old) {
    const found = next.some((after) => semanticEqual({...obj(before), tolerationSeconds: obj(after).tolerationSeconds}, after))
    if (!found) return [forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')]
  }
  return []
}

/** validateOnlyDeletedSchedulingGates: no gate may be added after creation. */
function validateOnlyDeletedSchedulingGates(next: unknown[], old: unknown[], path: string): FieldError[] {
  const before = new Set(old.map((g) => str(obj(g).name)))
  const errs: FieldError[] = []
  next.forEach((g, i) => {
    const name = str(obj(g).name)
    if (!before.has(name)) errs.push(forbidden(`${path}[${i}].name`, `only deletion is allowed, but found new scheduling gate '${name}'`))
  })
  return errs
}

/** One `-`/`+` pair per PodSpec field that differs, framed like go-cmp's output. */
function specDiff(old: Record<string, any>, next: Record<string, any>): string {
  const keys = [...new Set([...Object.keys(old), ...Object.keys(next)])].sort()
  let out = '  core.PodSpec{\n'
  for (const key of keys) {
    if (semanticEqual(old[key], next[key])) continue
    if (old[key] !== undefined) out += `- \t${key}: ${goJSON(old[key])},\n`
    if (next[key] !== undefined) out += `+ \t${key}: ${goJSON(next[key])},\n`
  }
  return out + '  }\n'
}

export function validatePodUpdate(pod: AnyObject, old: AnyObject): FieldError[] {
  const spec = obj(pod.spec)
  const oldSpec = obj(old.spec)
  const errs = validatePodSpec(spec, 'spec', {resourceIsPod: true})
  for (const which of ['containers', 'initContainers'] as const) {
    if (list(spec[which]).length !== list(oldSpec[which]).length) {
      errs.push(forbidden(`spec.${which}`, 'pod updates may not add or remove containers'))
      return errs
    }
  }
  // activeDeadlineSeconds: from nil to a value, or lowered; never back to nil
  const deadline = spec.activeDeadlineSeconds
  const oldDeadline = oldSpec.activeDeadlineSeconds
  if (typeof deadline === 'number') {
    if (deadline < 0 || deadline > MAX_INT32) {
      errs.push(invalid('spec.activeDeadlineSeconds', deadline, `must be between 0 and ${MAX_INT32}, inclusive`))
      return errs
    }
    if (typeof oldDeadline === 'number' && oldDeadline < deadline) {
      errs.push(invalid('spec.activeDeadlineSeconds', deadline, 'must be less than or equal to previous value'))
      return errs
    }
  } else if (typeof oldDeadline === 'number') {
    errs.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'))
  }
  errs.push(...validateOnlyAddedTolerations(list(spec.tolerations), list(oldSpec.tolerations), 'spec.tolerations'))
  errs.push(...validateOnlyDeletedSchedulingGates(list(spec.schedulingGates), list(oldSpec.schedulingGates), 'spec.schedulingGates'))
  if (semanticEqual(spec, oldSpec)) return errs

  // the updatable fields take their old values; whatever still differs was not allowed to change
  const munged: Record<string, any> = {...spec}
  for (const which of ['containers', 'initContainers'] as const) {
    if (spec[which] !== undefined) munged[which] = list(spec[which]).map((c, i) => ({...obj(c), image: obj(list(oldSpec[which])[i]).image}))
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds
  munged.tolerations = oldSpec.tolerations
  munged.schedulingGates = oldSpec.schedulingGates
  const oldGrace = oldSpec.terminationGracePeriodSeconds
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace
  if (!semanticEqual(munged, oldSpec)) {
    errs.push(forbidden('spec', `${POD_UPDATE_FORBIDDEN_PREFIX}\n${specDiff(oldSpec, munged)}`))
  }
  return errs
}

export const podValidator: KindValidator = {
  create: (object) => validatePod(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    // /status, /binding and /eviction do not write the spec
    if (context.subresource) return []
    return validatePodUpdate(object, old)
  },
}
