// What Kubernetes' strategic merge patch reports when the patched object does not fit its Go type.
// Unlike the other patch types, whose patched JSON is decoded with encoding/json (go-json.ts), a
// strategic merge patch is applied to maps and the result is turned into the typed object by
// runtime.DefaultUnstructuredConverter.FromUnstructured, whose errors read `cannot convert string to
// int32`, `cannot restore struct from: string`, `cannot restore slice from map`. The 422 then shows the
// patch itself as Go's fmt prints a map (`map[spec:map[replicas:three]]`), not the patched object.
//
// The converter is more lenient than encoding/json in one way: a whole float (3.0) goes into an
// integer field. Struct fields are converted in the struct's order and the first error ends it.
import type {ObjectSchema, Schema} from '../api/types.js'
import type {NumberLiteralAt} from './field-validation.js'
import {quantityError, quantityErrors} from './quantity.js'
import {goType, jsonKind, timeParseError, writtenLiteralsOf, type WrittenLiterals} from './go-json.js'
import {errors} from './status.js'
import {isPlainObject, structFields} from './typed-value.js'

/** The Go type a value decoded from JSON into interface{} has (sigs.k8s.io/json, ints preserved). */
function sourceType(value: unknown): string {
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return isInt64(value) ? 'int64' : 'float64'
  if (typeof value === 'bigint') return 'int64'
  if (Array.isArray(value)) return '[]interface {}'
  return 'map[string]interface {}'
}

/** reflect.Kind's name of that type, which the "cannot restore" errors print */
function sourceKind(value: unknown): string {
  if (Array.isArray(value)) return 'slice'
  if (typeof value === 'object' && value !== null) return 'map'
  return sourceType(value)
}

const INT64_LIMIT = 2 ** 63

/** An integer JSON number that PreserveInts keeps as an int64 (beyond that it is a float64). */
function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT
}

/** encoding/json's text for a number Go's json.Marshal writes (what a custom UnmarshalJSON reads) */
function marshalledNumber(value: number): string {
  return String(value)
}

/** the custom UnmarshalJSONs the converter hands a value to (it marshals it to JSON first) */
function customError(value: unknown, schema: Schema): string | undefined {
  switch (schema.type) {
    case 'time':
      // metav1.Time / MicroTime: json.Unmarshal into a string, then time.Parse
      if (typeof value !== 'string') return `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`
      return timeParseError(value, schema.micro ?? false)
    case 'quantity': {
      // resource.Quantity parses the JSON text, a string's without its quotes
      const text = typeof value === 'string' ? value : typeof value === 'number' ? marshalledNumber(value) : undefined
      if (text === undefined) return quantityErrors.format
      return quantityError(text.trim()) ?? undefined
    }
    default:
      return intOrStringError(value)
  }
}

/** intstr.IntOrString's UnmarshalJSON: a string, else json.Unmarshal into an int32 */
function intOrStringError(value: unknown): string | undefined {
  if (typeof value === 'string') return undefined
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) return undefined
    return `json: cannot unmarshal number ${marshalledNumber(value)} into Go value of type int32`
  }
  return `json: cannot unmarshal ${jsonKind(value)} into Go value of type int32`
}

function convertError(value: unknown, schema: Schema): string | undefined {
  if (value === null || value === undefined) return undefined
  switch (schema.type) {
    case 'string':
      if (schema.format === 'int-or-string') return intOrStringError(value)
      if (schema.format === 'byte') {
        // a []byte: a string is base64 (json round trip), a slice converts element by element
        if (typeof value === 'string' || Array.isArray(value)) return undefined
        return `cannot restore slice from ${sourceKind(value)}`
      }
      return typeof value === 'string' ? undefined : `cannot convert ${sourceType(value)} to string`
    case 'integer':
      // an integer converts (as Go's conversion does); a float only when it is whole
      if (typeof value === 'number' || typeof value === 'bigint') {
        if (typeof value === 'bigint' || Number.isInteger(value)) return undefined
      }
      return `cannot convert ${sourceType(value)} to ${goType(schema, '')}`
    case 'number':
      return typeof value === 'number' || typeof value === 'bigint' ? undefined : `cannot convert ${sourceType(value)} to float64`
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `cannot convert ${sourceType(value)} to bool`
    case 'time':
    case 'quantity':
    case 'int-or-string':
      return customError(value, schema)
    case 'raw':
      return undefined
    case 'object': {
      if (!isPlainObject(value)) return `cannot restore struct from: ${sourceKind(value)}`
      for (const [name, field] of structFields(schema)) {
        const error = convertError(value[name], field)
        if (error !== undefined) return error
      }
      return undefined
    }
    case 'map': {
      if (!isPlainObject(value)) return `cannot restore map from ${sourceKind(value)}`
      for (const key in value) {
        const error = convertError(value[key], schema.values)
        if (error !== undefined) return error
      }
      return undefined
    }
    case 'array': {
      if (!Array.isArray(value)) return `cannot restore slice from ${sourceKind(value)}`
      for (const item of value) {
        const error = convertError(item, schema.items)
        if (error !== undefined) return error
      }
      return undefined
    }
  }
}

/**
 * The error runtime.DefaultUnstructuredConverter.FromUnstructured gives turning `value` (a patched
 * object as maps) into the Go type of `schema`, or undefined when it converts. Fields the schema does
 * not know are not its business (field-validation.ts reports them).
 */
export function unstructuredConversionError(value: Record<string, unknown>, schema: ObjectSchema): string | undefined {
  return convertError(value, schema)
}

/** Go's %v of a float64: strconv's 'g' with the shortest digits (`3.5`, `1e+06`, `1.5e-05`). */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf'
  const [mantissa, exponentText] = value.toExponential().split('e')
  const exponent = Number(exponentText)
  // with the shortest precision, %e form when the exponent is < -4 or >= 6
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(value)
}

/** A number as sigs.k8s.io/json decodes it into interface{} (PreserveInts), printed by %v: an int64
 *  when written as an integer that fits, else a float64. */
function goNumber(value: number, literal: string | undefined): string {
  if (literal === undefined) return isInt64(value) ? BigInt(value).toString() : goFloat(value)
  if (/^-?\d+$/.test(literal)) {
    const integer = BigInt(literal)
    if (integer >= -(2n ** 63n) && integer < 2n ** 63n) return integer.toString()
  }
  return goFloat(value)
}

/** Go's fmt %+v of a value decoded from JSON into interface{}: `map[a:1 b:[x y]]`, keys sorted.
 *  `literals` tell how the numbers of the JSON text were written. */
export function goFormatValue(value: unknown, literals: WrittenLiterals = new Map(), path = ''): string {
  if (value === null || value === undefined) return '<nil>'
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return String(value)
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') return goNumber(value, literals.size === 0 ? undefined : literals.get(path))
  const at = (segment: string | number) => (path === '' ? String(segment) : `${path}\0${segment}`)
  if (Array.isArray(value)) return `[${value.map((item, index) => goFormatValue(item, literals, at(index))).join(' ')}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  return `map[${keys.map((key) => `${key}:${goFormatValue(record[key], literals, at(key))}`).join(' ')}]`
}

/** Throws the 422 Kubernetes' strategic merge patcher answers when the patched object does not
 *  convert: on field `patch`, the patch as Go prints the map, with the converter's error. */
export function assertStrategicPatchConverts(patched: Record<string, unknown>, patch: unknown, schema: ObjectSchema, patchNumbers: readonly NumberLiteralAt[]): void {
  const problem = unstructuredConversionError(patched, schema)
  if (problem === undefined) return
  throw errors.invalid({group: '', kind: ''}, '', [{type: 'FieldValueInvalid', field: 'patch', value: strategicPatchShown(patch, patchNumbers), message: problem}])
}

/** A strategic merge patch as its 422s show it: Go's %+v of the decoded patch map. */
export function strategicPatchShown(patch: unknown, patchNumbers: readonly NumberLiteralAt[]): string {
  return goFormatValue(patch, writtenLiteralsOf(patchNumbers))
}
