// JSON objects to CEL values and back. Struct fields are renamed by Kubernetes' escaping rules (a
// field `foo-bar` is `foo__dash__bar` in an expression, `namespace` is `__namespace__`); map keys are
// not (they are indexed: labels['app.orch.io/name']). Integers are int64 (BigInt) where the schema
// says integer — or, without a schema, wherever the JSON number is integral; `number` fields stay
// doubles. Objects without a schema expose only apiVersion, kind, metadata.name and
// metadata.generateName of their metadata (Kubernetes' minimal guaranteed set); typed objects expose
// every field their schema declares.
import type {AnyObject, ObjectSchema, Schema} from '../../api/types.js'

const RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
])
const IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/

/** Kubernetes' property name escaping; undefined when the name cannot be accessed at all. */
export function escapePropertyName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`
  if (IDENTIFIER.test(name) && !name.includes('__')) return name
  if (!ESCAPABLE.test(name)) return undefined
  return name.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__')
}

/** The reverse of escapePropertyName. */
export function unescapePropertyName(name: string): string {
  const reserved = /^__([a-z]+)__$/.exec(name)
  if (reserved && RESERVED.has(reserved[1])) return reserved[1]
  return name.replace(/__underscores__/g, '__').replace(/__dot__/g, '.').replace(/__dash__/g, '-').replace(/__slash__/g, '/')
}

function integral(value: number): bigint {
  if (!Number.isSafeInteger(value)) throw new Error(`integer ${value} is out of the int64 range JSON can carry exactly`)
  return BigInt(value)
}

function scalar(value: unknown, schema: Schema | undefined): unknown {
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value
    if (schema?.type === 'integer' || (schema?.type !== 'raw' && Number.isInteger(value))) return Number.isInteger(value) ? integral(value) : value
    return value
  }
  return value
}

/** A JSON value as CEL sees it, shaped by `schema` (undefined: no schema). */
export function toCel(value: unknown, schema?: Schema, root = true): unknown {
  if (value === null || value === undefined) return null
  if (Array.isArray(value)) {
    const items = schema?.type === 'array' ? schema.items : undefined
    const converted = value.map((item) => toCel(item, items, false))
    // a set's order means nothing: a canonical order makes == ignore it, as Kubernetes' set equality does
    if (schema?.type === 'array' && schema.listType === 'set') return converted.sort(canonicalOrder)
    return converted
  }
  if (typeof value !== 'object') return scalar(value, schema)
  const object = value as AnyObject
  if (schema?.type === 'map') {
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, toCel(v, schema.values, false)]))
  }
  if (schema?.type === 'object') return structToCel(object, schema)
  if (schema?.type === 'int-or-string' || (schema && schema.type !== 'raw')) return object
  return untypedToCel(object, root)
}

function structToCel(object: AnyObject, schema: ObjectSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(object)) {
    const name = escapePropertyName(key)
    if (name === undefined) continue
    out[name] = key === 'metadata' && !schema.fields[key] ? restrictedMetadata(v) : toCel(v, schema.fields[key], false)
  }
  return out
}

function restrictedMetadata(metadata: unknown): AnyObject | null {
  if (!metadata || typeof metadata !== 'object') return null
  const m = metadata as AnyObject
  const out: AnyObject = {}
  if (m.name !== undefined) out.name = m.name
  if (m.generateName !== undefined) out.generateName = m.generateName
  return out
}

/** No schema: keys escaped where they are valid property names, integral numbers int64, and at the
 *  root only the minimal metadata. */
function untypedToCel(object: AnyObject, root: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(object)) {
    if (root && key === 'metadata') {
      out.metadata = restrictedMetadata(v)
      continue
    }
    out[key] = toCel(v, undefined, false)
  }
  return out
}

function canonicalOrder(a: unknown, b: unknown): number {
  const x = typeof a === 'bigint' ? a.toString() : JSON.stringify(a)
  const y = typeof b === 'bigint' ? b.toString() : JSON.stringify(b)
  return x < y ? -1 : x > y ? 1 : 0
}

/** A CEL result as JSON: int64 to numbers, Maps to objects. */
export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`integer ${value} does not fit a JSON number`)
    return Number(value)
  }
  if (Array.isArray(value)) return value.map(fromCel)
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), fromCel(v)]))
  if (value instanceof Date) return value.toISOString()
  if (value && typeof value === 'object' && (value as AnyObject).constructor === Object) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCel(v)]))
  }
  return value
}

/** Struct keys of an object built in CEL (ApplyConfiguration) back to their JSON names. */
export function unescapeObject(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeObject)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [unescapePropertyName(k), unescapeObject(v)]))
  }
  return value
}
