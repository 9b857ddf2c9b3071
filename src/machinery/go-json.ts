// Decoding a request body into a kind's typed object, as Kubernetes does with Go's encoding/json
// (sigs.k8s.io/json): a value of the wrong JSON type for its field is refused with Go's message, e.g.
// `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`; []byte fields take
// standard base64 only (`illegal base64 data at input byte 3`) or an array of bytes; metav1.Time takes
// RFC 3339 and MicroTime RFC 3339 with exactly six fraction digits, as time.Parse reads those layouts.
// Nulls leave a field unset, as in Go.
//
// Which error is reported is Go's: a value of the wrong type (an UnmarshalTypeError) or bad base64 is
// remembered and decoding goes on, the first one in document order being reported at the end; an error
// from a type's own UnmarshalJSON (metav1.Time, resource.Quantity, intstr.IntOrString) ends decoding at
// once and is reported instead. UnmarshalTypeErrors name the innermost struct and the JSON field names
// from the root (`ContainerPort.spec.template.spec.containers.ports.containerPort`): map keys and list
// indexes are not part of it, and an embedded struct's fields count as the embedding struct's.
import type {AnyObject, KindDeclaration, ObjectSchema, Schema} from '../api/types.js'
import type {NumberLiteralAt} from './field-validation.js'
import {quantityError, quantityErrors} from './quantity.js'
import {goJSON} from './field-path.js'
import {structFields} from './typed-value.js'
import {errors} from './status.js'

/** Go's package names of the types of apimachinery's meta/v1, shown as v1.X whatever the kind's version */
const META_TYPES = new Set([
  'ObjectMeta',
  'ListMeta',
  'OwnerReference',
  'ManagedFieldsEntry',
  'LabelSelector',
  'LabelSelectorRequirement',
  'Condition',
  'Status',
  'StatusDetails',
  'StatusCause',
  'DeleteOptions',
  'Preconditions',
])

/** The Go type a schema decodes into, as encoding/json names it in errors. */
export function goType(schema: Schema, pkg: string): string {
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

/** A JSON object as the decoders give it (not an array, a CBOR byte string or a CBOR date). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) && !(value instanceof Date)
}

/** encoding/json's description of a JSON value in an UnmarshalTypeError */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  // a CBOR byte string stands where JSON would have a string
  if (value instanceof Uint8Array) return 'string'
  if (typeof value === 'object') return 'object'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number' || typeof value === 'bigint') return 'number'
  return 'string'
}

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
/** int64 values are JS numbers in orch (exact, and encodable in protobuf, within ±(2^53 - 1)) */
const INT_RANGES = {int32: [INT32_MIN, INT32_MAX], int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]} as const

function inRange(value: number | bigint, [min, max]: readonly [number, number]): boolean {
  if (typeof value === 'bigint') return value >= BigInt(min) && value <= BigInt(max)
  return Number.isInteger(value) && value >= min && value <= max
}

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

// ---------- time.Parse(time.RFC3339 | metav1.RFC3339Micro, text) ----------

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00'
const RFC3339_MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00'

/** Go's time.quote: ASCII as is (" and \ escaped), anything else byte by byte as \xNN */
function goTimeQuote(text: string): string {
  let out = '"'
  for (const char of text) {
    const c = char.codePointAt(0)!
    if (c >= 0x80 || c < 0x20) {
      for (const byte of Buffer.from(char, 'utf8')) out += `\\x${byte.toString(16).padStart(2, '0')}`
    } else {
      if (c === 0x22 || c === 0x5c) out += '\\'
      out += char
    }
  }
  return out + '"'
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/**
 * The error of Go's time.Parse reading `text` with the layout RFC3339 ("2006-01-02T15:04:05Z07:00",
 * metav1.Time) or, `micro`, metav1.RFC3339Micro ("2006-01-02T15:04:05.000000Z07:00", MicroTime), or
 * undefined when it parses: Go's generic parser, element by element, with its range checks.
 */
export function timeParseError(text: string, micro = false): string | undefined {
  const layout = micro ? RFC3339_MICRO_LAYOUT : RFC3339_LAYOUT
  const cannot = (elem: string, at: number) =>
    `parsing time ${goTimeQuote(text)} as ${goTimeQuote(layout)}: cannot parse ${goTimeQuote(text.slice(at))} as ${goTimeQuote(elem)}`
  const outOfRange = (what: string) => `parsing time ${goTimeQuote(text)}: ${what} out of range`
  const digit = (i: number) => i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39
  const at = (i: number) => text.charCodeAt(i) - 0x30
  let p = 0
  /** getnum: one or two digits (two when fixed), or -1 */
  const num = (fixed: boolean): number => {
    if (!digit(p)) return -1
    if (!digit(p + 1)) {
      if (fixed) return -1
      return at(p++)
    }
    p += 2
    return at(p - 2) * 10 + at(p - 1)
  }
  const literal = (c: string) => p < text.length && text[p] === c

  // 2006: four characters, the first a digit, all digits for atoi
  if (text.length - p < 4 || !digit(p) || !digit(p + 1) || !digit(p + 2) || !digit(p + 3)) return cannot('2006', p)
  const year = at(p) * 1000 + at(p + 1) * 100 + at(p + 2) * 10 + at(p + 3)
  p += 4
  if (!literal('-')) return cannot('-', p)
  p++
  let hold = p
  const month = num(true)
  if (month < 0) return cannot('01', hold)
  if (month < 1 || month > 12) return outOfRange('month')
  if (!literal('-')) return cannot('-', p)
  p++
  hold = p
  const day = num(true)
  if (day < 0) return cannot('02', hold)
  if (!literal('T')) return cannot('T', p)
  p++
  hold = p
  const hour = num(false)
  if (hour < 0) return cannot('15', hold)
  if (hour >= 24) return outOfRange('hour')
  if (!literal(':')) return cannot(':', p)
  p++
  hold = p
  const minute = num(true)
  if (minute < 0) return cannot('04', hold)
  if (minute >= 60) return outOfRange('minute')
  if (!literal(':')) return cannot(':', p)
  p++
  hold = p
  const second = num(true)
  if (second < 0) return cannot('05', hold)
  if (second >= 60) return outOfRange('second')
  const fraction = (literal('.') || literal(',')) && digit(p + 1)
  if (micro) {
    // .000000: exactly a separator and six characters, read as atoi reads them (a sign allowed)
    hold = p
    if (text.length - p < 7 || !(literal('.') || literal(','))) return cannot('.000000', hold)
    let q = p + 1
    const negative = text[q] === '-'
    if (text[q] === '-' || text[q] === '+') q++
    for (; q < p + 7; q++) if (!digit(q)) return cannot('.000000', hold)
    let zero = true
    for (q = p + 1; q < p + 7; q++) if (digit(q) && at(q) !== 0) zero = false
    if (negative && !zero) return outOfRange('fractional second')
    p += 7
  } else if (fraction) {
    // a fraction the layout does not name is read all the same
    p += 2
    while (digit(p)) p++
  }
  // Z07:00
  hold = p
  if (literal('Z')) {
    p++
  } else {
    if (text.length - p < 6 || text[p + 3] !== ':') return cannot('Z07:00', hold)
    const sign = text[p]
    const twoDigits = (i: number) => (digit(i) && digit(i + 1) ? at(i) * 10 + at(i + 1) : -1)
    const hours = twoDigits(p + 1)
    const minutes = hours < 0 ? -1 : twoDigits(p + 4)
    p += 6
    // (Go sets the minute's range error after the hour's: the minute's wins)
    if (minutes > 60) return outOfRange('time zone offset minute')
    if (hours > 24) return outOfRange('time zone offset hour')
    if (hours < 0 || minutes < 0 || (sign !== '+' && sign !== '-')) return cannot('Z07:00', hold)
  }
  if (p < text.length) return `parsing time ${goTimeQuote(text)}: extra text: ${goTimeQuote(text.slice(p))}`
  if (day < 1 || day > daysIn(month, year)) return outOfRange('day')
  return undefined
}

/** time.Parse(time.RFC3339, text)'s error, or undefined when it parses. */
export function rfc3339Error(text: string): string | undefined {
  return timeParseError(text, false)
}

// ---------- the decoder ----------

/** A number of the body as it was written (`1.0`), put in its place while the body is checked: Go's
 *  decoder parses an integer field's text with strconv.ParseInt, which refuses a fraction or an
 *  exponent however whole the value, and its errors quote the text. Elsewhere it stands for its value. */
class WrittenNumber {
  /** set when the number stands for a resource.Quantity, which is the text itself (UnmarshalJSON
   *  parses the number's bytes): the text, not the number, is put back */
  isQuantity = false
  constructor(
    readonly literal: string,
    readonly value: number,
  ) {}
}

/** The container that holds `key`, when it is its own property of the right kind: an array's index or
 *  an object's key (a duplicate key may have left an array where the text had an object). */
function ownSlot(holder: unknown, key: string | number): Record<string | number, unknown> | undefined {
  if (Array.isArray(holder)) {
    const index = typeof key === 'number' ? key : /^(0|[1-9]\d*)$/.test(key) ? Number(key) : -1
    return index >= 0 && index < holder.length ? (holder as unknown as Record<number, unknown>) : undefined
  }
  if (holder === null || typeof holder !== 'object' || typeof key !== 'string') return undefined
  return Object.prototype.hasOwnProperty.call(holder, key) ? (holder as Record<string, unknown>) : undefined
}

/** A number put back in its place after the check. */
interface MarkedNumber {
  holder: Record<string | number, unknown>
  key: string | number
  written: WrittenNumber
}

/** Puts WrittenNumbers where the texts are, where the value found there is still the text's number
 *  (a later duplicate key or patch operation may have put another there), and lists them in `marked`
 *  for goDecodeErrorWritten to put the numbers back. */
function markWrittenNumbers(body: AnyObject, literals: readonly NumberLiteralAt[], marked: MarkedNumber[]): void {
  for (const {segments, literal} of literals) {
    let holder: unknown = body
    let slot: Record<string | number, unknown> | undefined
    for (const segment of segments) {
      slot = ownSlot(holder, segment)
      if (slot === undefined) break
      holder = slot[segment]
    }
    const key = segments[segments.length - 1]
    if (slot === undefined || key === undefined) continue
    const value = slot[key]
    if (typeof value !== 'number' || !(value === Number(literal) || (Number.isNaN(value) && Number.isNaN(Number(literal))))) continue
    const written = new WrittenNumber(literal, value)
    slot[key] = written
    marked.push({holder: slot, key, written})
  }
}

/** goDecodeError with the numbers of `literals` seen as they were written. A number that is a
 *  quantity is left as its text (`1e3`, `0.50`), which the quantity is made of (see goNullsToZero). */
function goDecodeErrorWritten(value: AnyObject, schema: ObjectSchema, pkg: string, literals: readonly NumberLiteralAt[]): string | undefined {
  if (literals.length === 0) return goDecodeError(value, schema, pkg)
  const marked: MarkedNumber[] = []
  try {
    markWrittenNumbers(value, literals, marked)
    return goDecodeError(value, schema, pkg)
  } finally {
    for (const {holder, key, written} of marked) holder[key] = written.isQuantity ? written.literal : written.value
  }
}

/** A text with a fraction or an exponent, which strconv.ParseInt refuses. */
const notAnIntegerText = (literal: string) => /[.eE]/.test(literal)


/** What the walk knows where it is, as encoding/json's errorContext, and the error it keeps. */
interface DecodeState {
  pkg: string
  /** the innermost struct's Go name ('' until a struct field is entered) */
  struct: string
  /** the JSON field names from the root */
  fields: string[]
  /** the first UnmarshalTypeError (or base64 error) met; decoding goes on after it */
  saved: string | undefined
}

function typeError(shown: string, goTypeName: string, state: DecodeState): string {
  if (state.fields.length === 0) return `json: cannot unmarshal ${shown} into Go value of type ${goTypeName}`
  return `json: cannot unmarshal ${shown} into Go struct field ${state.struct}.${state.fields.join('.')} of type ${goTypeName}`
}

/** remembers a non-fatal error, the first only (the message is only built for that one) */
function saveTypeError(state: DecodeState, value: unknown, schema: Schema, literal = false): void {
  if (state.saved !== undefined) return
  state.saved = typeError(literal ? `number ${String(value)}` : jsonKind(value), goType(schema, state.pkg), state)
}

/** A CBOR byte string's text (Kubernetes' CBOR decoder allows one where a Go string goes). */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
  return undefined
}

/** intstr.IntOrString's UnmarshalJSON: a string, else encoding/json into an int32; its errors end decoding */
function checkIntOrString(value: unknown, state: DecodeState): string | undefined {
  if (typeof value === 'string' || value instanceof Uint8Array) return undefined
  if (typeof value === 'number' || typeof value === 'bigint') {
    return inRange(value, INT_RANGES.int32) ? undefined : typeError(`number ${String(value)}`, 'int32', state)
  }
  return typeError(jsonKind(value), 'int32', state)
}

/** Checks `value` against `schema`; answers a fatal error (decoding ends), or undefined. */
function check(value: unknown, schema: Schema, state: DecodeState): string | undefined {
  if (value === null || value === undefined) return undefined
  if (value instanceof WrittenNumber) {
    if (schema.type === 'quantity') {
      value.isQuantity = true
      return quantityError(value.literal) ?? undefined
    }
    const intOrString = schema.type === 'int-or-string' || (schema.type === 'string' && schema.format === 'int-or-string')
    if (intOrString || schema.type === 'integer') {
      const format = intOrString ? 'int32' : (schema as {format: 'int32' | 'int64'}).format
      if (notAnIntegerText(value.literal) || !inRange(value.value, INT_RANGES[format])) {
        const error = typeError(`number ${value.literal}`, format, state)
        // IntOrString's UnmarshalJSON decodes the number into an int32; its error ends decoding
        if (intOrString) return error
        state.saved ??= error
        return undefined
      }
    } else if (schema.type === 'number' && !Number.isFinite(value.value)) {
      state.saved ??= typeError(`number ${value.literal}`, 'float64', state)
      return undefined
    }
    value = value.value
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'byte') {
        if (typeof value === 'string') {
          if (state.saved === undefined) {
            const offset = base64ErrorOffset(value)
            if (offset >= 0) state.saved = `illegal base64 data at input byte ${offset}`
          }
        } else if (Array.isArray(value)) {
          // a JSON array of numbers decodes into a []byte element by element
          for (const item of value) {
            if (item === null || item === undefined) continue
            if (item instanceof WrittenNumber) {
              if (notAnIntegerText(item.literal) || !inRange(item.value, [0, 255])) state.saved ??= typeError(`number ${item.literal}`, 'uint8', state)
            } else if (typeof item === 'number' || typeof item === 'bigint') {
              if (!inRange(item, [0, 255]) && state.saved === undefined) state.saved = typeError(`number ${String(item)}`, 'uint8', state)
            } else if (state.saved === undefined) {
              state.saved = typeError(jsonKind(item), 'uint8', state)
            }
          }
        } else if (!(value instanceof Uint8Array)) {
          saveTypeError(state, value, schema)
        }
        return undefined
      }
      if (schema.format === 'int-or-string') return checkIntOrString(value, state)
      if (typeof value !== 'string' && !(value instanceof Uint8Array)) saveTypeError(state, value, schema)
      return undefined
    case 'integer':
      if (typeof value === 'number' || typeof value === 'bigint') {
        if (!inRange(value, INT_RANGES[schema.format])) saveTypeError(state, value, schema, true)
      } else {
        saveTypeError(state, value, schema)
      }
      return undefined
    case 'number':
      if (typeof value === 'bigint') return undefined
      if (typeof value !== 'number') saveTypeError(state, value, schema)
      else if (!Number.isFinite(value)) saveTypeError(state, value, schema, true)
      return undefined
    case 'boolean':
      if (typeof value !== 'boolean') saveTypeError(state, value, schema)
      return undefined
    case 'time': {
      // metav1.Time's UnmarshalJSON reads a string with encoding/json (its type error gets this
      // decoder's context on the way out), then parses it
      const text = textOf(value)
      if (text === undefined) return typeError(jsonKind(value), 'string', state)
      return timeParseError(text, schema.micro ?? false)
    }
    case 'quantity': {
      // resource.Quantity's UnmarshalJSON parses the JSON text, a string's without its quotes
      if (typeof value === 'number') return Number.isFinite(value) ? undefined : quantityErrors.format
      if (typeof value === 'bigint') return undefined
      const text = textOf(value)
      if (text === undefined) return quantityErrors.format
      return quantityError(text.trim()) ?? undefined
    }
    case 'int-or-string':
      return checkIntOrString(value, state)
    case 'raw':
      return undefined
    case 'object': {
      if (!isPlainObject(value)) {
        saveTypeError(state, value, schema)
        return undefined
      }
      const fields = structFields(schema)
      const outer = state.struct
      for (const key in value) {
        const childSchema = fields.get(key)
        if (!childSchema) continue
        state.fields.push(key)
        state.struct = schema.name
        const fatal = check(value[key], childSchema, state)
        if (fatal !== undefined) return fatal
        state.fields.pop()
        state.struct = outer
      }
      return undefined
    }
    case 'map': {
      if (!isPlainObject(value)) {
        saveTypeError(state, value, schema)
        return undefined
      }
      for (const key in value) {
        const fatal = check(value[key], schema.values, state)
        if (fatal !== undefined) return fatal
      }
      return undefined
    }
    case 'array': {
      if (!Array.isArray(value)) {
        saveTypeError(state, value, schema)
        return undefined
      }
      for (const item of value) {
        const fatal = check(item, schema.items, state)
        if (fatal !== undefined) return fatal
      }
      return undefined
    }
  }
}

/**
 * The error Go's encoding/json would give decoding `value` into the kind whose schema is `schema`
 * (a Go type named schema.name in package `pkg`, the API version: `v1`, `v1beta1`), or undefined.
 * Fields the schema does not know are not this function's business (see field-validation.ts).
 */
export function goDecodeError(value: unknown, schema: ObjectSchema, pkg: string): string | undefined {
  const state: DecodeState = {pkg, struct: '', fields: [], saved: undefined}
  return check(value, schema, state) ?? state.saved
}

/** runtime's summarizeData: a body starting with `{` as text, any other in hex, cut at `max` bytes. */
export function summarizeData(raw: Buffer, max: number): string {
  if (raw.length === 0) return '<empty>'
  const cut = raw.length > max ? raw.subarray(0, max) : raw
  const text = raw[0] === 0x7b ? cut.toString('utf8') : cut.toString('hex')
  return raw.length > max ? `${text} ...` : text
}

/**
 * What the serializer's SimpleMetaFactory.Interpret says of the body's apiVersion and kind, which it
 * reads first: an error when either is not a string or apiVersion is no group/version; else the group,
 * version and kind (empty when absent).
 */
function interpretTypeMeta(body: AnyObject): {error: string} | {group: string; version: string; kind: string} {
  for (const key in body) {
    if (key !== 'apiVersion' && key !== 'kind') continue
    const value = body[key]
    if (value !== null && value !== undefined && typeof value !== 'string') {
      return {error: `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(value)} into Go struct field .${key} of type string`}
    }
  }
  const apiVersion = typeof body.apiVersion === 'string' ? body.apiVersion : ''
  const kind = typeof body.kind === 'string' ? body.kind : ''
  if (apiVersion === '' || apiVersion === '/') return {group: '', version: '', kind}
  const slash = apiVersion.indexOf('/')
  if (slash < 0) return {group: '', version: apiVersion, kind}
  if (apiVersion.indexOf('/', slash + 1) >= 0) return {error: `unexpected GroupVersion string: ${apiVersion}`}
  return {group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind}
}

/**
 * Kubernetes' message for a body that does not decode into its kind (transformDecodeError): the body's
 * kind and version, defaulted from the endpoint's as the serializer defaults them (gvkWithDefaults), or,
 * when even those cannot be read, "the object provided is unrecognized" with a summary of the body.
 */
export function decodeFailure(body: AnyObject, declaration: DecodedKind, raw: Buffer, problem: string): string {
  const meta = interpretTypeMeta(body)
  if ('error' in meta) {
    return `the object provided is unrecognized (must be of type ${declaration.kind}): ${meta.error} (${summarizeData(raw, 30)})`
  }
  const defaultGroup = declaration.group ?? ''
  const defaultVersion = declaration.version ?? ''
  let {group, version} = meta
  if (!version && !group) {
    group = defaultGroup
    version = defaultVersion
  }
  if (!version && group === defaultGroup) version = defaultVersion
  return `${meta.kind || declaration.kind} in version ${JSON.stringify(version)} cannot be handled as a ${declaration.kind}: ${problem}`
}

/** The kind a body is decoded into: its Go type's schema and name. */
export type DecodedKind = Pick<KindDeclaration, 'group' | 'version' | 'kind'>

/** Throws the 400 Kubernetes answers for a request body that does not decode into `kind`. For a JSON
 *  body, `writtenNumbers` are its numbers whose text JSON.parse does not keep (scanJsonText). */
export function assertDecodes(body: AnyObject, schema: ObjectSchema, kind: DecodedKind, raw: Buffer, writtenNumbers: readonly NumberLiteralAt[] = []): void {
  const problem = goDecodeErrorWritten(body, schema, kind.version, writtenNumbers)
  if (problem) throw errors.badRequest(decodeFailure(body, kind, raw, problem))
}

/** Throws the 422 Kubernetes' patcher answers when the patched object does not decode: on field
 *  `patch`, the patched JSON as the value. */
export function assertPatchedDecodes(patched: AnyObject, schema: ObjectSchema, pkg: string, writtenNumbers: readonly NumberLiteralAt[] = []): void {
  const problem = goDecodeErrorWritten(patched, schema, pkg, writtenNumbers)
  if (problem) throw errors.invalid({group: '', kind: ''}, '', [{type: 'FieldValueInvalid', field: 'patch', value: patchedJson(patched, writtenNumbers), message: problem}])
}

/** Where a number was written with a fraction, an exponent or more digits than JSON.parse keeps:
 *  its text, by its path's segments joined with NUL. */
export type WrittenLiterals = ReadonlyMap<string, string>

export function writtenLiteralsOf(numbers: readonly NumberLiteralAt[]): WrittenLiterals {
  return new Map(numbers.map(({segments, literal}) => [segments.join('\0'), literal]))
}

/**
 * The patched document as Kubernetes' json-patch library writes it: Go's json.Marshal of its maps (keys
 * sorted, <, >, & escaped: field-path's goJSON) with the patch's numbers as the patch wrote them (`3.0`
 * stays `3.0`).
 */
export function patchedJson(patched: AnyObject, writtenNumbers: readonly NumberLiteralAt[]): string {
  const literals = writtenLiteralsOf(writtenNumbers)
  const write = (value: unknown, path: string): string => {
    if (typeof value === 'number' && literals.size > 0) {
      const literal = literals.get(path)
      if (literal !== undefined && Number(literal) === value) return literal
    }
    const at = (segment: string | number) => (path === '' ? String(segment) : `${path}\0${segment}`)
    if (Array.isArray(value)) return `[${value.map((item, index) => write(item ?? null, at(index))).join(',')}]`
    if (isPlainObject(value)) {
      const keys = Object.keys(value).filter((key) => value[key] !== undefined).sort()
      return `{${keys.map((key) => `${goJSON(key)}:${write(value[key], at(key))}`).join(',')}}`
    }
    return goJSON(value)
  }
  return write(patched, '')
}
