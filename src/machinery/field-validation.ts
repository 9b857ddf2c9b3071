// fieldValidation: unknown and duplicate fields in a request body, found against the kind's schema.
import type {ObjectSchema, Schema} from '../api/types.js'

/** The fields every object has besides its schema's own. */
const TYPE_META = new Set(['apiVersion', 'kind'])

function fieldsOf(schema: ObjectSchema): Map<string, Schema> {
  const out = new Map<string, Schema>()
  for (const [name, field] of Object.entries(schema.fields)) {
    // an embedded struct written as a '' field shows its fields flat in JSON
    if (name === '' && field.type === 'object') {
      for (const [inner, schemaOf] of fieldsOf(field)) out.set(inner, schemaOf)
    } else {
      out.set(name, field)
    }
  }
  return out
}

function walk(value: unknown, schema: Schema, path: string, out: string[], prune = false, sorted = false): void {
  if (value === null || value === undefined) return
  if (schema.type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return
    const fields = fieldsOf(schema)
    const entries = Object.entries(value as Record<string, unknown>)
    if (sorted) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    for (const [key, child] of entries) {
      const childPath = path ? `${path}.${key}` : key
      const childSchema = fields.get(key)
      if (!childSchema) {
        if (!path && TYPE_META.has(key)) continue
        out.push(childPath)
        if (prune) delete (value as Record<string, unknown>)[key]
        continue
      }
      walk(child, childSchema, childPath, out, prune, sorted)
    }
  } else if (schema.type === 'array') {
    if (!Array.isArray(value)) return
    value.forEach((item, index) => walk(item, schema.items, `${path}[${index}]`, out, prune, sorted))
  } else if (schema.type === 'map') {
    if (typeof value !== 'object' || Array.isArray(value)) return
    const entries = Object.entries(value as Record<string, unknown>)
    if (sorted) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    for (const [key, child] of entries) walk(child, schema.values, `${path}.${key}`, out, prune, sorted)
  }
}

/** Paths of fields the schema does not know, e.g. `spec.replicaz`, in document order. */
export function unknownFields(object: unknown, schema: ObjectSchema): string[] {
  const out: string[] = []
  walk(object, schema, '', out)
  return out
}

/** Removes the fields the schema does not know, as decoding into Kubernetes' typed structs does;
 *  returns their paths. */
export function pruneUnknownFields(object: unknown, schema: ObjectSchema): string[] {
  const out: string[] = []
  walk(object, schema, '', out, true)
  return out
}

/** A number whose text JSON.parse does not keep: one written with a fraction or an exponent (`1.0`,
 *  `1e3`: JSON.parse makes 1 and 1000 of them, while Go's decoder refuses such a text for an integer
 *  field), or one of more than 15 characters (JSON.parse may round it: Go's errors quote the text). */
export interface NumberLiteralAt {
  /** the keys and indexes leading to it */
  segments: (string | number)[]
  literal: string
}

export interface JsonTextScan {
  /** paths of keys that appear twice in one object, in document order */
  duplicates: string[]
  /** where each of those appears again in the text */
  duplicateOffsets: number[]
  /** numbers whose text JSON.parse does not keep, in document order (the first MAX_NUMBER_LITERALS) */
  numberLiterals: NumberLiteralAt[]
}

/** A body of floats in a free-form field could hold a million of them, and each is recorded with its
 *  path: past this many numbers, or this many path segments in all, the rest are not recorded (an
 *  integer field written 1.0 after them is then taken as 1). */
export const MAX_NUMBER_LITERALS = 10_000
const MAX_RECORDED_SEGMENTS = 200_000

/** Paths of keys that appear twice in one JSON object (JSON.parse keeps the last silently). */
export function duplicateJsonFields(text: string): string[] {
  return scanJsonText(text).duplicates
}

/** What JSON.parse does not tell of a JSON text: duplicate keys and how numbers were written. Every
 *  JSON write body goes through this, so it jumps from quote to quote and builds a path only for a
 *  duplicate. `firstOffsets`: paths mapped to -1, each set to where the path's key first appears. */
export function scanJsonText(text: string, firstOffsets?: Map<string, number>): JsonTextScan {
  const out: string[] = []
  const duplicateOffsets: number[] = []
  const numberLiterals: NumberLiteralAt[] = []
  let recordedSegments = 0
  /** the keys and indexes leading to the value being read */
  const segments: (string | number)[] = []
  const pathOf = (key: string): string => {
    let path = ''
    for (const segment of segments) path += typeof segment === 'number' ? `[${segment}]` : path ? `.${segment}` : segment
    return path ? `${path}.${key}` : key
  }
  let i = 0
  const skipSpace = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  }
  /** moves past the string at i */
  const skipString = (): void => {
    for (;;) {
      const quote = text.indexOf('"', i + 1)
      if (quote < 0) throw new Error('unterminated string')
      let backslashes = 0
      for (let k = quote - 1; text.charCodeAt(k) === 0x5c; k--) backslashes++
      i = quote
      if (backslashes % 2 === 0) break
    }
    i++
  }
  const readKey = (): string => {
    const start = i
    skipString()
    const raw = text.slice(start + 1, i - 1)
    return raw.includes('\\') ? (JSON.parse(text.slice(start, i)) as string) : raw
  }
  const value = (): void => {
    skipSpace()
    const ch = text.charCodeAt(i)
    if (ch === 0x7b /* { */) {
      i++
      skipSpace()
      if (text.charCodeAt(i) === 0x7d) {
        i++
        return
      }
      const seen = new Set<string>()
      for (;;) {
        skipSpace()
        if (text.charCodeAt(i) !== 0x22) return
        const keyOffset = i
        const key = readKey()
        if (seen.has(key)) {
          out.push(pathOf(key))
          duplicateOffsets.push(keyOffset)
        }
        seen.add(key)
        if (firstOffsets) {
          const path = pathOf(key)
          if (firstOffsets.get(path) === -1) firstOffsets.set(path, keyOffset)
        }
        skipSpace()
        if (text.charCodeAt(i) !== 0x3a /* : */) return
        i++
        segments.push(key)
        value()
        segments.pop()
        skipSpace()
        if (text.charCodeAt(i) === 0x2c /* , */) {
          i++
          continue
        }
        if (text.charCodeAt(i) === 0x7d) i++
        return
      }
    } else if (ch === 0x5b /* [ */) {
      i++
      skipSpace()
      if (text.charCodeAt(i) === 0x5d) {
        i++
        return
      }
      for (let index = 0; ; index++) {
        segments.push(index)
        value()
        segments.pop()
        skipSpace()
        if (text.charCodeAt(i) === 0x2c) {
          i++
          continue
        }
        if (text.charCodeAt(i) === 0x5d) i++
        return
      }
    } else if (ch === 0x22) {
      skipString()
    } else {
      const start = i
      let fractional = false
      for (let c = text.charCodeAt(i); i < text.length && c !== 0x2c && c !== 0x7d && c !== 0x5d && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09; c = text.charCodeAt(++i)) {
        if (c === 0x2e /* . */ || c === 0x65 /* e */ || c === 0x45 /* E */) fractional = true
      }
      // true and false hold an e; a number starts with a digit or a minus
      const isNumber = ch === 0x2d || (ch >= 0x30 && ch <= 0x39)
      if (isNumber && (fractional || i - start > 15) && numberLiterals.length < MAX_NUMBER_LITERALS && recordedSegments + segments.length <= MAX_RECORDED_SEGMENTS) {
        recordedSegments += segments.length
        numberLiterals.push({segments: [...segments], literal: text.slice(start, i)})
      }
    }
  }
  try {
    value()
  } catch {
    // malformed JSON is reported by the decoder
  }
  return {duplicates: out, duplicateOffsets, numberLiterals}
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore'

/** Kubernetes' wording: `unknown field "spec.x"`, `duplicate field "metadata.name"`. */
export function fieldProblems(unknown: string[], duplicates: string[]): string[] {
  return [...duplicates.map((p) => `duplicate field "${p}"`), ...unknown.map((p) => `unknown field "${p}"`)]
}

/** `path` is `ancestor` or lies under it */
function within(path: string, ancestor: string): boolean {
  return path === ancestor || (path.startsWith(ancestor) && (path[ancestor.length] === '.' || path[ancestor.length] === '['))
}

/**
 * The problems of a JSON body decoded into a typed object, as Go's strict decoder meets them: in the
 * order of the text, an unknown field where its key first appears, a duplicate where its key appears
 * again. A key that is both is only unknown, and nothing under an unknown field is looked at.
 * `prefix` comes before each (`json patch ` for a JSON patch's operations).
 */
export function orderedFieldProblems(text: string, unknown: readonly string[], scan: JsonTextScan, prefix = ''): string[] {
  const problems: {offset: number; text: string}[] = []
  scan.duplicates.forEach((path, index) => {
    if (unknown.some((field) => within(path, field))) return
    problems.push({offset: scan.duplicateOffsets[index]!, text: `${prefix}duplicate field "${path}"`})
  })
  if (problems.length > 0 && unknown.length > 0) {
    const offsets = new Map(unknown.map((path) => [path, -1]))
    scanJsonText(text, offsets)
    for (const path of unknown) problems.push({offset: offsets.get(path) ?? -1, text: `${prefix}unknown field "${path}"`})
    // a stable sort keeps the unknown fields' own order where the text did not place them
    problems.sort((a, b) => a.offset - b.offset)
    return problems.map((problem) => problem.text)
  }
  return [...problems.map((problem) => problem.text), ...unknown.map((path) => `${prefix}unknown field "${path}"`)]
}

/** Paths of fields the schema does not know in `object` walked with its keys sorted: the order Go's
 *  decoder meets them in JSON that Go wrote from maps (a patched document, YAML turned into JSON). */
export function unknownFieldsSorted(object: unknown, schema: ObjectSchema): string[] {
  const out: string[] = []
  walk(object, schema, '', out, false, true)
  return out
}

/** The Warning header value for a problem (RFC 7234: `299 - "text"`). */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`
}
