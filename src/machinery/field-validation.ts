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

function walk(value: unknown, schema: Schema, path: string, out: string[], prune = false): void {
  if (value === null || value === undefined) return
  if (schema.type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return
    const fields = fieldsOf(schema)
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = path ? `${path}.${key}` : key
      const childSchema = fields.get(key)
      if (!childSchema) {
        if (!path && TYPE_META.has(key)) continue
        out.push(childPath)
        if (prune) delete (value as Record<string, unknown>)[key]
        continue
      }
      walk(child, childSchema, childPath, out, prune)
    }
  } else if (schema.type === 'array') {
    if (!Array.isArray(value)) return
    value.forEach((item, index) => walk(item, schema.items, `${path}[${index}]`, out, prune))
  } else if (schema.type === 'map') {
    if (typeof value !== 'object' || Array.isArray(value)) return
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) walk(child, schema.values, `${path}.${key}`, out, prune)
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

/** Paths of keys that appear twice in one JSON object (JSON.parse keeps the last silently). */
export function duplicateJsonFields(text: string): string[] {
  const out: string[] = []
  let i = 0
  const skipSpace = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++
  }
  const readString = (): string => {
    const start = i
    i++
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (path: string): void => {
    skipSpace()
    const ch = text[i]
    if (ch === '{') {
      i++
      const seen = new Set<string>()
      skipSpace()
      if (text[i] === '}') {
        i++
        return
      }
      for (;;) {
        skipSpace()
        if (text[i] !== '"') return
        const key = readString()
        const keyPath = path ? `${path}.${key}` : key
        if (seen.has(key)) out.push(keyPath)
        seen.add(key)
        skipSpace()
        if (text[i] !== ':') return
        i++
        value(keyPath)
        skipSpace()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === '}') i++
        return
      }
    } else if (ch === '[') {
      i++
      let index = 0
      skipSpace()
      if (text[i] === ']') {
        i++
        return
      }
      for (;;) {
        value(`${path}[${index++}]`)
        skipSpace()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === ']') i++
        return
      }
    } else if (ch === '"') {
      readString()
    } else {
      while (i < text.length && !',}] \t\r\n'.includes(text[i])) i++
    }
  }
  try {
    value('')
  } catch {
    // malformed JSON is reported by the decoder
  }
  return out
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore'

/** Kubernetes' wording: `unknown field "spec.x"`, `duplicate field "metadata.name"`. */
export function fieldProblems(unknown: string[], duplicates: string[]): string[] {
  return [...duplicates.map((p) => `duplicate field "${p}"`), ...unknown.map((p) => `unknown field "${p}"`)]
}

/** The Warning header value for a problem (RFC 7234: `299 - "text"`). */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`
}
