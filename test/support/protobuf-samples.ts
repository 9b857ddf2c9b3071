// Sample objects for the protobuf tests: every kind, with a value in every field of its schema.
import {allDeclarations} from '../../src/api/index.js'
import {apiVersionOf, type AnyObject, type KindDeclaration, type Schema} from '../../src/api/types.js'

export const kinds: KindDeclaration[] = [...allDeclarations]
export const byKind = (kind: string): KindDeclaration => kinds.find((d) => d.kind === kind)!

/** A value for every field of `schema` (embedded structs, maps, quantities, times … included), deterministic. */
export function sample(schema: Schema, depth = 0, counter = {n: 0}): unknown {
  const n = ++counter.n
  switch (schema.type) {
    case 'string':
      if (schema.enum) return schema.enum[n % schema.enum.length]
      if (schema.format === 'byte') return Buffer.from([n & 0xff, 0, 0xff, 0x80, 7]).toString('base64')
      // long strings need a two-byte length; non-ASCII ones check UTF-8
      return n % 7 === 0 ? `long-${'x'.repeat(150)}-${n}` : n % 5 === 0 ? `ünïcödé-${n}-✓` : `s${n}`
    case 'integer':
      if (schema.format === 'int32') return n % 3 === 0 ? -n : n
      return n % 2 ? 2 ** 40 + n : -(2 ** 35) - n
    case 'number':
      return n + 0.25
    case 'boolean':
      return n % 2 === 0
    case 'time': {
      const iso = new Date(Date.UTC(2025, 5, 1, 12) + n * 1000).toISOString()
      return schema.micro ? iso.replace(/\.\d+Z$/, `.${String((n * 37019) % 1e6).padStart(6, '0')}Z`) : iso.replace(/\.\d+Z$/, 'Z')
    }
    case 'quantity':
      return [`${n}Mi`, '100m', '1.5', '2Gi'][n % 4]
    case 'int-or-string':
      return n % 2 ? n : `port-${n}`
    case 'raw':
      return {n, list: [1, 'two', null, true], nested: {a: 'b'}}
    case 'object':
      return Object.fromEntries(Object.entries(schema.fields).map(([name, field]) => [name, sample(field, depth + 1, counter)]))
    case 'map':
      // not in key order: the wire sorts them
      return {'b-key': sample(schema.values, depth + 1, counter), 'a-key': sample(schema.values, depth + 1, counter)}
    case 'array':
      return Array.from({length: depth > 6 ? 1 : 2}, () => sample(schema.items, depth + 1, counter))
  }
}

export function fullObject(d: KindDeclaration): AnyObject {
  return {apiVersion: apiVersionOf(d), kind: d.kind, ...(sample(d.schema) as AnyObject)}
}
