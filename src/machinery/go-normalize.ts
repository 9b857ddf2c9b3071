// What Go's decoder makes of what it reads, applied to a decoded body in place before defaulting and
// validation: nulls as Go leaves them, empty optional collections unset (omitempty), CBOR's values as
// the same Go value reads in JSON, and quantities as resource.Quantity serialises them.
import type {Field, Schema} from '../api/types.js'
import {isPlainObject} from './go-json.js'
import {canonicalQuantity, QuantityParseError} from './quantity.js'
import {scalarZero, structFields} from './typed-value.js'

/** The value Go's encoding/json leaves for a JSON null in a map value or a slice element (a struct field
 *  given null is left unset). undefined: keep the null (a nil map, slice, time or raw value). */
function zeroOf(schema: Schema): unknown {
  if (schema.type === 'object') return {}
  return scalarZero(schema) ?? undefined
}

/**
 * A value as the decoded Go value serialises it, for the shapes only CBOR gives (JSON never does):
 * big integers (cbor-x gives 64-bit ones as bigint) as numbers; byte strings as base64 in a []byte
 * field and as text where a string goes. undefined: no change. (Quantities: storedQuantity.)
 */
function converted(value: unknown, schema: Schema): unknown {
  if (typeof value === 'bigint') {
    if (schema.type === 'integer' || schema.type === 'number' || schema.type === 'int-or-string' || schema.type === 'raw') return Number(value)
    return undefined
  }
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    if (schema.type === 'string' && schema.format === 'byte') return bytes.toString('base64')
    if (schema.type === 'string' || schema.type === 'time' || schema.type === 'int-or-string' || schema.type === 'raw') {
      return bytes.toString('utf8')
    }
    return undefined
  }
  if (Array.isArray(value) && schema.type === 'string' && schema.format === 'byte') {
    // a JSON array of bytes in a []byte field (goDecodeError checked each is 0..255; null reads 0)
    return Buffer.from(value.map((b) => (b === null || b === undefined ? 0 : Number(b)))).toString('base64')
  }
  return undefined
}

/** In free-form (raw) JSON: CBOR's big integers as numbers and byte strings as text. */
function normalizeRaw(value: unknown): void {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return
  const record = value as Record<string, unknown>
  for (const key in record) {
    const child = record[key]
    if (typeof child === 'bigint' || child instanceof Uint8Array) record[key] = converted(child, {type: 'raw'})
    else normalizeRaw(child)
  }
}

/** [] for a list field, {} for a map field: what Go's omitempty leaves out when it serialises */
function isEmptyCollection(value: unknown, schema: Schema): boolean {
  if (schema.type === 'array') return Array.isArray(value) && value.length === 0
  if (schema.type !== 'map' || !isPlainObject(value)) return false
  for (const _ in value) return false
  return true
}

/**
 * Gives a decoded object what Go's decoder would have made of it, in place: a struct field that is
 * null is unset, and a null map value or slice element is its type's zero value ("" for a string, {}
 * for a struct), so that validation sees `labels: {"a": ""}` for `{"a": null}`, as Kubernetes does,
 * and never a null where it reads a string or an object. What only a CBOR body holds becomes what the
 * same Go value reads as in JSON: big integers numbers, byte strings base64 ([]byte) or text. A
 * quantity is the text Kubernetes stores for it (`"0.5"` and `0.5` are `"500m"`: storedQuantity). Values
 * of the wrong type are left as they are (goDecodeError refuses them). An optional list or map field
 * that is empty is unset, as Go's omitempty never serialises it (`labels: {}`, `ownerReferences: []`).
 */
export function goNullsToZero(value: unknown, schema: Schema): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return
  switch (schema.type) {
    case 'object': {
      if (Array.isArray(value)) return
      const fields = structFields(schema)
      const record = value as Record<string, unknown>
      for (const key in record) {
        const childSchema = fields.get(key)
        if (!childSchema) continue
        const child = record[key]
        // null, and (Go's omitempty, which every optional list and map field has) an empty list or map
        if (child === null || (!(childSchema as Field).required && isEmptyCollection(child, childSchema))) delete record[key]
        else settle(record, key, child, childSchema)
      }
      return
    }
    case 'map': {
      if (Array.isArray(value)) return
      const record = value as Record<string, unknown>
      for (const key in record) {
        const child = record[key]
        if (child === null) {
          const zero = zeroOf(schema.values)
          if (zero !== undefined) record[key] = zero
        } else settle(record, key, child, schema.values)
      }
      return
    }
    case 'array': {
      if (!Array.isArray(value)) return
      for (let i = 0; i < value.length; i++) {
        if (value[i] === null) {
          const zero = zeroOf(schema.items)
          if (zero !== undefined) value[i] = zero
        } else settle(value as unknown as Record<number, unknown>, i, value[i], schema.items)
      }
      return
    }
    case 'raw':
      normalizeRaw(value)
      return
    default:
      return
  }
}

/** One non-null child: a quantity made canonical, converted in its parent when only CBOR gives its
 *  shape, else walked into. */
function settle(parent: Record<string | number, unknown>, key: string | number, child: unknown, schema: Schema): void {
  if (schema.type === 'quantity') {
    const text = storedQuantity(child)
    if (text !== undefined) parent[key] = text
    return
  }
  if (typeof child === 'bigint' || child instanceof Uint8Array || (Array.isArray(child) && schema.type === 'string')) {
    const value = converted(child, schema)
    if (value !== undefined) parent[key] = value
    return
  }
  goNullsToZero(child, schema)
}

/**
 * The text a resource.Quantity decoded from `value` serialises as: UnmarshalJSON parses a string
 * without its quotes and surrounding space, or a number's JSON text (Go's json.Marshal of a float64 or
 * an int64 writes what String() does; a number written otherwise in a JSON body arrives here as its
 * text), and MarshalJSON writes String(). undefined for what does not parse (goDecodeError refuses it).
 */
function storedQuantity(value: unknown): string | undefined {
  let text: string
  if (typeof value === 'string') text = value.trim()
  else if (typeof value === 'number') text = String(value)
  else if (typeof value === 'bigint') text = value.toString()
  else if (value instanceof Uint8Array) text = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8').trim()
  else return undefined
  try {
    return canonicalQuantity(text)
  } catch (e) {
    if (e instanceof QuantityParseError) return undefined
    throw e
  }
}
