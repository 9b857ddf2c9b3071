// fieldValidation's findings as Kubernetes reports them: Strict refuses the request with one 400
// listing every problem, Warn sends each back in a Warning header, Ignore looks for none.
import type {AnyObject, ObjectSchema} from '../api/types.js'
import type {FieldValidation, NumberLiteralAt} from '../machinery/field-validation.js'
import {orderedFieldProblems, pruneUnknownFields, scanJsonText, unknownFields, unknownFieldsSorted, type JsonTextScan} from '../machinery/field-validation.js'
import {strategicPatchShown} from '../machinery/go-converter.js'
import {patchedJson} from '../machinery/go-json.js'
import {STRATEGIC_PATCH} from './codec.js'
import {errors} from '../machinery/status.js'

/** What strict decoding found: go-yaml's duplicate-key lines (`line 5: key "name" already set in map`)
 *  and the decoder's `duplicate field` / `unknown field` problems, each list in the order found. */
export interface StrictProblems {
  decoding: string[]
  yaml: string[]
}

/** Strict: a 400 `strict decoding error: yaml: unmarshal errors:\n  line …, unknown field "…"`
 *  (`wrap`ped as the endpoint words decode errors); Warn: each YAML line and each problem as a warning. */
export function reportStrictProblems(problems: StrictProblems, validation: FieldValidation, warnings: string[], wrap = (message: string) => message): void {
  const {decoding, yaml} = problems
  if (validation === 'Ignore' || (decoding.length === 0 && yaml.length === 0)) return
  if (validation === 'Strict') {
    const parts = yaml.length > 0 ? [`yaml: unmarshal errors:\n  ${yaml.join('\n  ')}`, ...decoding] : decoding
    throw errors.badRequest(wrap(`strict decoding error: ${parts.join(', ')}`))
  }
  warnings.push(...yaml, ...decoding)
}

/** A body decoded into a typed object: its problems, a JSON body's in the order of its text (`scan`:
 *  that text's scanJsonText), any other's unknown fields as found. */
export function typedBodyProblems(text: string, unknown: readonly string[], scan: JsonTextScan | undefined): string[] {
  return scan ? orderedFieldProblems(text, unknown, scan) : unknown.map((path) => `unknown field "${path}"`)
}

/** An apply patch's duplicate keys, checked after the apply as Kubernetes' apply patcher does. */
export function reportApplyYamlProblems(yaml: readonly string[], validation: FieldValidation, warnings: string[]): void {
  if (validation === 'Ignore' || yaml.length === 0) return
  if (validation === 'Strict') {
    throw errors.badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${yaml.join('\n  ')}`)
  }
  warnings.push(...yaml)
}

const JSON_PATCH_OPERATION_FIELDS = new Set(['op', 'path', 'from', 'value'])

/** A JSON patch's operations decoded strictly into Kubernetes' {op, path, from, value}: each unknown or
 *  repeated field of an operation, `json patch unknown field "[0].foo"`, in the order of the text. */
export function jsonPatchProblems(text: string, patch: unknown): string[] {
  if (!Array.isArray(patch)) return []
  const unknown: string[] = []
  patch.forEach((operation, index) => {
    if (typeof operation !== 'object' || operation === null || Array.isArray(operation)) return
    for (const key of Object.keys(operation)) if (!JSON_PATCH_OPERATION_FIELDS.has(key)) unknown.push(`[${index}].${key}`)
  })
  return orderedFieldProblems(text, unknown, scanJsonText(text), 'json patch ')
}

/** What fieldValidation finds in a patch once its result is known: the patch's own problems, then the
 *  result's unknown fields in the order Go meets them (the converter sorts its paths; a merge or JSON
 *  patch's result is JSON written from maps, keys sorted at each level). Strict: the patcher's 422 on
 *  field patch, its value the patched document (a strategic patch: the patch map); Warn: warnings,
 *  once however often the write is retried. The unknown fields are then dropped, as decoding does. */
export function checkPatchedFields(
  contentType: string,
  patch: unknown,
  patched: AnyObject,
  schema: ObjectSchema,
  patchNumbers: readonly NumberLiteralAt[],
  strict: {validation: FieldValidation; problems: StrictProblems; warnings: string[]},
  warningsBefore: number,
): void {
  const unknown = contentType === STRATEGIC_PATCH ? unknownFields(patched, schema).sort() : unknownFieldsSorted(patched, schema)
  const decoding = strict.validation === 'Ignore' ? [] : [...strict.problems.decoding, ...unknown.map((path) => `unknown field "${path}"`)]
  if (strict.validation === 'Strict' && decoding.length > 0) {
    const shown = contentType === STRATEGIC_PATCH ? strategicPatchShown(patch, patchNumbers) : patchedJson(patched, patchNumbers)
    throw errors.invalid({group: '', kind: ''}, '', [{type: 'FieldValueInvalid', field: 'patch', value: shown, message: `strict decoding error: ${decoding.join(', ')}`}])
  }
  pruneUnknownFields(patched, schema)
  strict.warnings.length = warningsBefore
  strict.warnings.push(...decoding)
}
