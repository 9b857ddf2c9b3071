// The shared Condition shape of document 1 (Kubernetes' metav1.Condition) and its validation,
// Kubernetes' metav1validation.ValidateConditions, for the status.conditions lists that use it
// (StorageVersionMigration; not ServiceCIDR, whose /status Kubernetes does not check). Document 1's rules:
//   - `type` required, CamelCase or `<domain>/CamelCase`: a qualified name (ValidateLabelName);
//   - `status` required, `True`, `False` or `Unknown`;
//   - `lastTransitionTime` required (`Required value: must be set`);
//   - `reason` required and not empty, a programmatic CamelCase identifier (Kubernetes' reason regex),
//     at most 1024 bytes;
//   - `message` may be an empty string, at most 32 KiB;
//   - `observedGeneration` not negative.
// One condition per type: a repeated type is `status.conditions[i].type: Duplicate value`.
// The resource-specific variants (Namespace, StatefulSet, Node, CSR conditions) are not checked here.
import type {FieldError} from '../../api/types.js'
import {byteLength, duplicate, invalid, notSupported, required, tooLong} from '../../machinery/field-errors.js'
import {isQualifiedName} from '../../machinery/validation.js'
import {isZeroTime, list, obj, str} from './common.js'

/** metav1's ConditionTrue / False / Unknown, sorted as Kubernetes lists them in the error. */
export const CONDITION_STATUSES = ['False', 'True', 'Unknown'] as const
export const MAX_CONDITION_REASON_BYTES = 1024
export const MAX_CONDITION_MESSAGE_BYTES = 32 * 1024

const conditionReasonFmt = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?'
const conditionReasonErrMsg =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
const conditionReasonRegexp = new RegExp(`^${conditionReasonFmt}$`)
const conditionReasonExamples = ['my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB']

/** validation.RegexError for the reason rule, rendered as Kubernetes renders it. */
const conditionReasonError = `${conditionReasonErrMsg} (e.g. ${conditionReasonExamples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${conditionReasonFmt}')`

/** ValidateCondition: one condition at `path` (e.g. `status.conditions[0]`). */
export function validateCondition(raw: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const condition = obj(raw)
  const type = str(condition.type)
  errs.push(...isQualifiedName(type).map((msg) => invalid(`${path}.type`, type, msg)))
  const status = str(condition.status)
  if (!(CONDITION_STATUSES as readonly string[]).includes(status)) errs.push(notSupported(`${path}.status`, status, CONDITION_STATUSES))
  const generation = condition.observedGeneration
  if (typeof generation === 'number' && generation < 0) {
    errs.push(invalid(`${path}.observedGeneration`, generation, 'must be greater than or equal to zero'))
  }
  if (isZeroTime(condition.lastTransitionTime)) errs.push(required(`${path}.lastTransitionTime`, 'must be set'))
  const reason = str(condition.reason)
  if (reason === '') errs.push(required(`${path}.reason`, 'must be set'))
  else {
    if (!conditionReasonRegexp.test(reason)) errs.push(invalid(`${path}.reason`, reason, conditionReasonError))
    if (byteLength(reason) > MAX_CONDITION_REASON_BYTES) errs.push(tooLong(`${path}.reason`, reason, MAX_CONDITION_REASON_BYTES))
  }
  const message = str(condition.message)
  if (byteLength(message) > MAX_CONDITION_MESSAGE_BYTES) errs.push(tooLong(`${path}.message`, message, MAX_CONDITION_MESSAGE_BYTES))
  return errs
}

/** ValidateConditions: each condition's shape, and one condition per type. */
export function validateConditions(conditions: unknown, path: string): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  list(conditions).forEach((raw, i) => {
    const type = str(obj(raw).type)
    if (seen.has(type)) errs.push(duplicate(`${path}[${i}].type`, type))
    else seen.add(type)
    errs.push(...validateCondition(raw, `${path}[${i}]`))
  })
  return errs
}
