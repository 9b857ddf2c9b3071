// StorageVersionMigration (storagemigration.orch.io/v1beta1): Kubernetes' v1beta1 validation.
//   - spec.resource.resource is required (`resource is required to be set`) and a DNS-1035 label;
//     spec.resource.group may be empty (the core group), else a DNS subdomain;
//   - spec is immutable: `spec: Invalid value: {...}: field is immutable`;
//   - /status: status.resourceVersion is empty or an integer string (strconv.ParseInt) that is not
//     negative, and cannot change once set; status.conditions have the shared Condition shape of
//     document 1 (metav1validation.ValidateConditions, ./conditions.ts); Succeeded and Failed are never
//     both True, Running is not True beside either, and Succeeded / Failed once True stay True.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {goQuote, invalid, required} from '../../machinery/field-errors.js'
import {isDNS1035Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {fieldImmutableErrorMsg, immutable, isNegativeErrorMsg, list, obj, str, type KindValidator} from './common.js'
import {validateConditions} from './conditions.js'

export function validateStorageVersionMigration(svm: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const resource = obj(obj(svm.spec).resource)
  const name = str(resource.resource)
  if (name === '') errs.push(required('spec.resource.resource', 'resource is required to be set'))
  else {
    const msgs = isDNS1035Label(name)
    if (msgs.length > 0) errs.push(invalid('spec.resource.resource', name, msgs.join(',')))
  }
  const group = str(resource.group)
  if (group !== '') {
    const msgs = isDNS1123Subdomain(group)
    if (msgs.length > 0) errs.push(invalid('spec.resource.group', group, msgs.join(',')))
  }
  return errs
}

export function validateStorageVersionMigrationUpdate(svm: AnyObject, old: AnyObject): FieldError[] {
  return [...validateStorageVersionMigration(svm), ...immutable(svm.spec ?? {}, old.spec ?? {}, 'spec')]
}

function conditionTrue(svm: AnyObject, type: string): boolean {
  return list(obj(svm.status).conditions).some((c) => obj(c).type === type && obj(c).status === 'True')
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Go's strconv.ParseInt(rv, 10, 64): the value, or the error text (`strconv.ParseInt: parsing "x": invalid syntax`). */
function parseInt64(text: string): bigint | string {
  if (!/^[+-]?[0-9]+$/.test(text)) return `strconv.ParseInt: parsing ${goQuote(text)}: invalid syntax`
  const value = BigInt(text)
  if (value < INT64_MIN || value > INT64_MAX) return `strconv.ParseInt: parsing ${goQuote(text)}: value out of range`
  return value
}

/** status.resourceVersion: empty (not set yet) or a non-negative integer (convertResourceVersionToInt + ValidateNonnegativeField). */
function validateStatusResourceVersion(rv: string): FieldError[] {
  const path = 'status.resourceVersion'
  if (rv === '') return []
  const parsed = parseInt64(rv)
  if (typeof parsed === 'string') return [invalid(path, rv, `failed to parse resource version ${goQuote(rv)}: ${parsed}`)]
  if (parsed >= 0n) return []
  const value = parsed >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(parsed) : parsed
  return [invalid(path, value, isNegativeErrorMsg)]
}

export function validateStorageVersionMigrationStatusUpdate(svm: AnyObject, old: AnyObject): FieldError[] {
  const rv = str(obj(svm.status).resourceVersion)
  const oldRV = str(obj(old.status).resourceVersion)
  const errs: FieldError[] = [...validateStatusResourceVersion(rv), ...validateConditions(obj(svm.status).conditions, 'status.conditions')]
  if (oldRV !== '' && oldRV !== rv) errs.push(invalid('status.resourceVersion', rv, fieldImmutableErrorMsg))
  const conditions = obj(svm.status).conditions ?? null
  const path = 'status.conditions'
  const succeeded = conditionTrue(svm, 'Succeeded')
  const failed = conditionTrue(svm, 'Failed')
  const running = conditionTrue(svm, 'Running')
  if (succeeded && failed) errs.push(invalid(path, conditions, 'Both success and failed conditions cannot be true at the same time'))
  if (succeeded && running) errs.push(invalid(path, conditions, 'Running condition cannot be true when success condition is true'))
  if (failed && running) errs.push(invalid(path, conditions, 'Running condition cannot be true when failed condition is true'))
  if (conditionTrue(old, 'Succeeded') && !succeeded) errs.push(invalid(path, conditions, 'Success condition cannot be set to false once it is true'))
  if (conditionTrue(old, 'Failed') && !failed) errs.push(invalid(path, conditions, 'Failed condition cannot be set to false once it is true'))
  return errs
}

export const storageVersionMigrationValidator: KindValidator = {
  create: (object) => validateStorageVersionMigration(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    if (context.subresource === 'status') return validateStorageVersionMigrationStatusUpdate(object, old)
    if (context.subresource) return []
    return validateStorageVersionMigrationUpdate(object, old)
  },
}
