// Decoding a request body into a kind's typed object, as Kubernetes does with Go's encoding/json
// (sigs.k8s.io/json): a value of the wrong JSON type for its field is refused with Go's message, e.g.
// `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`; []byte fields take
// standard base64 only (`illegal base64 data at input byte 3`); metav1.Time takes RFC 3339 only. Nulls
// leave a field unset, as in Go. The first error in document order is reported.
import type {AnyObject, KindDeclaration, ObjectSchema, Schema} from '../api/types.js'

/** Go's package names of the types of apimachinery's meta/v1, shown as v1.X whatever the kind's version */
const META_TYPES = new Set(['ObjectMeta', 'ListMeta', 'OwnerReference', 'ManagedFieldsEntry', 'LabelSelector', 'LabelSelectorRequirement', 'Condition', 'Status', 'StatusDetails', 'StatusCause'])

const flatFields = new WeakMap<ObjectSchema, Map<string, Schema>>()

/** The JSON fields of a struct, an embedded struct's (a '' field) shown flat as Go's encoding/json does. */
function fieldsOf(schema: ObjectSchema): Map<string, Schema> {
  let fields = flatFields.get(schema)
  if (!fields) {
    fields = new Map()
    for (const [name, field] of Object.entries(schema.fields)) {
      if (name === '' && field.type === 'object') for (const [inner, child] of fieldsOf(field)) fields.set(inner, child)
      else fields.set(name, field)
    }
    flatFields.set(schema, fields)
  }
  return fields
}

/** The Go type a schema decodes into, as encoding/json names it in errors. */
function goType(schema: Schema, pkg: string): string {
  switch (schema.type) {
    case 'string':
      return schema.format === 'byte' ? '[]uint8' : 'string'
    case 'integer':
      return schema.format
    case 'number':
      return 'float64'
    case 'boolean':
      return 'bool'
    case 'time':
      return schema.micro ? 'v1.MicroTime' : 'v1.Time'
    case 'quantity':
      return 'resource.Quantity'
    case 'int-or-string':
      return 'intstr.IntOrString'
    case 'object':
      return `${META_TYPES.has(schema.name) ? 'v1' : pkg}.${schema.name}`
    case 'map':
      return `map[string]${goType(schema.values, pkg)}`
    case 'array':
      return `[]${goType(schema.items, pkg)}`
    case 'raw':
      return 'runtime.RawExtension'
  }
}

/** encoding/json's description of a JSON value in an UnmarshalTypeError */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'object') return 'object'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number' || typeof value === 'bigint') return 'number'
  return 'string'
}

const INT_RANGES = {int32: [-(2 ** 31), 2 ** 31 - 1], int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]} as const

/** Go's base64.StdEncoding.Decode: the offset of the first illegal byte, or -1 when `text` decodes. */
export function base64ErrorOffset(text: string): number {
  const isAlphabet = (c: number) =>
    (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f
  const isNewline = (c: number) => c === 0x0a || c === 0x0d
  let si = 0
  for (;;) {
    // one quantum of four characters; newlines are skipped anywhere
    for (let j = 0; j < 4; j++) {
      if (si === text.length) return j === 0 ? -1 : si - j
      const c = text.charCodeAt(si++)
      if (isAlphabet(c)) continue
      if (isNewline(c)) {
        j--
        continue
      }
      if (c !== 0x3d /* = */ || j < 2) return si - 1
      if (j === 2) {
        while (si < text.length && isNewline(text.charCodeAt(si))) si++
        if (si === text.length) return text.length
        if (text.charCodeAt(si) !== 0x3d) return si - 1
        si++
      }
      while (si < text.length && isNewline(text.charCodeAt(si))) si++
      return si < text.length ? si : -1
    }
  }
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/** time.Parse(time.RFC3339, text)'s error, or undefined when it parses. */
export function rfc3339Error(text: string): string | undefined {
  const quoted = JSON.stringify(text)
  const match = RFC3339.exec(text)
  if (!match) return `parsing time ${quoted} as "2006-01-02T15:04:05Z07:00": cannot parse ${quoted} as "2006-01-02T15:04:05Z07:00"`
  const [, year, month, day, hour, minute, second] = match.map(Number)
  if (month < 1 || month > 12) return `parsing time ${quoted}: month out of range`
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (day < 1 || day > daysInMonth) return `parsing time ${quoted}: day out of range`
  if (hour > 23) return `parsing time ${quoted}: hour out of range`
  if (minute > 59) return `parsing time ${quoted}: minute out of range`
  if (second > 59) return `parsing time ${quoted}: second out of range`
  return undefined
}

const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/

interface Context {
  pkg: string
  /** the innermost struct's Go name and the JSON field names from the root, as encoding/json reports them */
  struct: string
  fields: string[]
}

function typeError(value: unknown, schema: Schema, context: Context, literal = false): string {
  const shown = literal ? `number ${String(value)}` : jsonKind(value)
  if (context.fields.length === 0) return `json: cannot unmarshal ${shown} into Go value of type ${goType(schema, context.pkg)}`
  return `json: cannot unmarshal ${shown} into Go struct field ${context.struct}.${context.fields.join('.')} of type ${goType(schema, context.pkg)}`
}

function check(value: unknown, schema: Schema, context: Context): string | undefined {
  if (value === null || value === undefined) return undefined
  switch (schema.type) {
    case 'string':
      if (schema.format === 'byte') {
        if (value instanceof Uint8Array) return undefined
        if (typeof value !== 'string') return typeError(value, schema, context)
        const offset = base64ErrorOffset(value)
        return offset >= 0 ? `illegal base64 data at input byte ${offset}` : undefined
      }
      if (schema.format === 'int-or-string') return checkIntOrString(value)
      return typeof value === 'string' ? undefined : typeError(value, schema, context)
    case 'integer': {
      if (typeof value === 'bigint') return undefined
      if (typeof value !== 'number') return typeError(value, schema, context)
      const [min, max] = INT_RANGES[schema.format]
      return Number.isInteger(value) && value >= min && value <= max ? undefined : typeError(value, schema, context, true)
    }
    case 'number':
      return typeof value === 'number' || typeof value === 'bigint' ? undefined : typeError(value, schema, context)
    case 'boolean':
      return typeof value === 'boolean' ? undefined : typeError(value, schema, context)
    case 'time':
      // metav1.Time's UnmarshalJSON reads a string first, then parses it
      if (typeof value !== 'string') return `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`
      return value === '' ? undefined : rfc3339Error(value)
    case 'quantity':
      if (typeof value === 'number' || typeof value === 'bigint') return undefined
      if (typeof value === 'string' && QUANTITY.test(value.trim())) return undefined
      return "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    case 'int-or-string':
      return checkIntOrString(value)
    case 'raw':
      return undefined
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) return typeError(value, schema, context)
      const fields = fieldsOf(schema)
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
        const childSchema = fields.get(key)
        if (!childSchema) continue
        const problem = check(child, childSchema, {pkg: context.pkg, struct: schema.name, fields: [...context.fields, key]})
        if (problem) return problem
      }
      return undefined
    }
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) return typeError(value, schema, context)
      for (const child of Object.values(value as Record<string, unknown>)) {
        const problem = check(child, schema.values, context)
        if (problem) return problem
      }
      return undefined
    }
    case 'array': {
      if (!Array.isArray(value)) return typeError(value, schema, context)
      for (const item of value) {
        const problem = check(item, schema.items, context)
        if (problem) return problem
      }
      return undefined
    }
  }
}

function checkIntOrString(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'bigint') return undefined
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= INT_RANGES.int32[0] && value <= INT_RANGES.int32[1]
      ? undefined
      : `json: cannot unmarshal number ${String(value)} into Go value of type int32`
  }
  return `json: cannot unmarshal ${jsonKind(value)} into Go value of type int32`
}

/**
 * The error Go's encoding/json would give decoding `value` into the kind whose schema is `schema`
 * (a Go type named schema.name in package `pkg`, the API version: `v1`, `v1beta1`), or undefined.
 * Fields the schema does not know are not this function's business (see field-validation.ts).
 */
export function goDecodeError(value: unknown, schema: ObjectSchema, pkg: string): string | undefined {
  return check(value, schema, {pkg, struct: schema.name, fields: []})
}

/** Kubernetes' message for a body that does not decode into its kind (transformDecodeError). */
export function decodeFailure(body: AnyObject, declaration: KindDeclaration, raw: Buffer, problem: string): string {
  if (typeof body.kind === 'string' && body.kind) {
    const version = typeof body.apiVersion === 'string' ? body.apiVersion.slice(body.apiVersion.indexOf('/') + 1) : ''
    return `${body.kind} in version ${JSON.stringify(version)} cannot be handled as a ${declaration.kind}: ${problem}`
  }
  const text = raw.toString('utf8')
  return `the object provided is unrecognized (must be of type ${declaration.kind}): ${problem} (${text.length > 30 ? `${text.slice(0, 30)} ...` : text})`
}

/** The value Go's encoding/json leaves for a JSON null in a map value or a slice element (a struct field
 *  given null is left unset). undefined: keep the null (a nil map, slice, time or raw value). */
function zeroOf(schema: Schema): unknown {
  switch (schema.type) {
    case 'string':
      return ''
    case 'integer':
    case 'number':
    case 'int-or-string':
      return 0
    case 'boolean':
      return false
    case 'quantity':
      return '0'
    case 'object':
      return {}
    default:
      return undefined
  }
}

/**
 * Gives a decoded object what Go's decoder would have made of its nulls, in place: a struct field that
 * is null is unset, and a null map value or slice element is its type's zero value ("" for a string,
 * {} for a struct), so that validation sees `labels: {"a": ""}` for `{"a": null}`, as Kubernetes does,
 * and never a null where it reads a string or an object. Values of the wrong type are left as they are
 * (goDecodeError refuses them).
 */
export function goNullsToZero(value: unknown, schema: Schema): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return
  switch (schema.type) {
    case 'object': {
      if (Array.isArray(value)) return
      const fields = fieldsOf(schema)
      const record = value as Record<string, unknown>
      for (const [key, child] of Object.entries(record)) {
        const childSchema = fields.get(key)
        if (!childSchema) continue
        if (child === null) delete record[key]
        else goNullsToZero(child, childSchema)
      }
      return
    }
    case 'map': {
      if (Array.isArray(value)) return
      const record = value as Record<string, unknown>
      for (const [key, child] of Object.entries(record)) {
        if (child === null) {
          const zero = zeroOf(schema.values)
          if (zero !== undefined) record[key] = zero
        } else goNullsToZero(child, schema.values)
      }
      return
    }
    case 'array': {
      if (!Array.isArray(value)) return
      for (let i = 0; i < value.length; i++) {
        if (value[i] === null) {
          const zero = zeroOf(schema.items)
          if (zero !== undefined) value[i] = zero
        } else goNullsToZero(value[i], schema.items)
      }
      return
    }
    default:
      return
  }
}
