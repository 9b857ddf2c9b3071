// "a key is a key": the machinery that patches, merges, applies and decodes objects treats keys named
// after Object.prototype's members (__proto__, constructor, toString, hasOwnProperty, ...) as keys.
// Inputs are JSON.parse'd (a literal `{__proto__: x}` sets a prototype instead of making a key).
import {afterEach, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {controllerRevision} from '../../src/api/apps/controllerrevision.js'
import {configMap} from '../../src/api/core/configmap.js'
import type {AnyObject} from '../../src/api/types.js'
import {apply, type ApplyResult} from '../../src/machinery/apply.js'
import {CborSequenceReader, decodeCbor, encodeCbor} from '../../src/machinery/cbor.js'
import {valuesEqual} from '../../src/machinery/field-path.js'
import {updateManagedFields} from '../../src/machinery/managed-fields.js'
import {ownValue, setOwn} from '../../src/machinery/own-keys.js'
import {applyJsonPatch, applyMergePatch} from '../../src/machinery/patch.js'
import {strategicMergePatch} from '../../src/machinery/strategic.js'
import {compare, dropNulls, merge, objectSchema, removeItems, toFieldSet, withGoZeroValues} from '../../src/machinery/typed-value.js'
import {ApiError} from '../../src/machinery/status.js'

const json = (text: string): any => JSON.parse(text)
const now = new Date('2025-06-01T12:00:00Z')
const schema = objectSchema(configMap.schema)

/** own keys and values, sorted by key: what JSON.stringify would write, regardless of order */
function entries(value: unknown): [string, unknown][] {
  assert.ok(value !== null && typeof value === 'object', `not an object: ${JSON.stringify(value)}`)
  assert.equal(Object.getPrototypeOf(value), Object.prototype, 'the prototype is untouched')
  return Object.entries(value as object).sort(([a], [b]) => (a < b ? -1 : 1))
}

function cm(text: string): AnyObject {
  return {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'c', namespace: 'default'}, ...json(text)}
}

function assertUnpolluted(): void {
  for (const name of ['polluted', 'x']) assert.equal(name in {}, false, `Object.prototype gained ${name}`)
}

describe('"a key is a key": keys named after Object.prototype members in the machinery', () => {
  afterEach(() => {
    assertUnpolluted()
    delete (Object.prototype as any).polluted
  })

  it('ownValue and setOwn see and write own keys only', () => {
    const object: Record<string, unknown> = {}
    assert.equal(ownValue(object, 'constructor'), undefined)
    assert.equal(ownValue(object, '__proto__'), undefined)
    setOwn(object, '__proto__', 'p')
    setOwn(object, 'constructor', 'c')
    assert.deepEqual(entries(object), [['__proto__', 'p'], ['constructor', 'c']])
    assert.equal(ownValue(object, '__proto__'), 'p')
    assert.equal(JSON.stringify(object), '{"__proto__":"p","constructor":"c"}')
  })

  it('a merge patch adds, replaces and removes them, and a __proto__ object is data, not a prototype', () => {
    const target = json('{"data":{"a":"b"}}')
    const added = applyMergePatch(target, json('{"data":{"__proto__":"p","constructor":"c","toString":{"x":1}}}')) as any
    assert.deepEqual(entries(added.data), [['__proto__', 'p'], ['a', 'b'], ['constructor', 'c'], ['toString', {x: 1}]])
    const nested = applyMergePatch({}, json('{"__proto__":{"polluted":1}}')) as any
    assert.deepEqual(entries(nested), [['__proto__', {polluted: 1}]])
    const removed = applyMergePatch(added, json('{"data":{"__proto__":null,"hasOwnProperty":null,"toString":{"x":null}}}')) as any
    assert.deepEqual(entries(removed.data), [['a', 'b'], ['constructor', 'c'], ['toString', {}]])
    assert.deepEqual(entries(target.data), [['a', 'b']], 'the target is not changed')
  })

  it('a JSON patch adds, tests, copies, moves and removes them, refuses them where they are absent, and cannot reach a prototype', () => {
    const doc = json('{"data":{"a":"b"}}')
    const ops = (text: string) => json(text)
    const added = applyJsonPatch(doc, ops('[{"op":"add","path":"/data/__proto__","value":{"constructor":"c"}},{"op":"add","path":"/data/toString","value":"t"}]')) as any
    assert.deepEqual(entries(added.data), [['__proto__', {constructor: 'c'}], ['a', 'b'], ['toString', 't']])
    assert.deepEqual(entries(added.data.__proto__), [['constructor', 'c']])
    const moved = applyJsonPatch(
      added,
      ops('[{"op":"test","path":"/data/__proto__/constructor","value":"c"},{"op":"move","from":"/data/__proto__","path":"/data/valueOf"},{"op":"copy","from":"/data/toString","path":"/data/~0__proto__"}]'),
    ) as any
    assert.deepEqual(entries(moved.data), [['a', 'b'], ['toString', 't'], ['valueOf', {constructor: 'c'}], ['~__proto__', 't']])
    const removed = applyJsonPatch(moved, ops('[{"op":"remove","path":"/data/valueOf/constructor"},{"op":"remove","path":"/data/toString"}]')) as any
    assert.deepEqual(entries(removed.data), [['a', 'b'], ['valueOf', {}], ['~__proto__', 't']])
    // keys that begin with the escape character are keys too
    const nul = applyJsonPatch(json('{"\\u0000a":"n"}'), ops('[{"op":"add","path":"/\\u0000constructor","value":"m"}]')) as any
    assert.deepEqual(entries(nul), [['\u0000a', 'n'], ['\u0000constructor', 'm']])
    for (const op of [
      '{"op":"remove","path":"/data/__proto__"}',
      '{"op":"remove","path":"/data/constructor"}',
      '{"op":"test","path":"/data/toString","value":"x"}',
      '{"op":"add","path":"/data/__proto__/polluted","value":"x"}',
      '{"op":"add","path":"/data/constructor/prototype/polluted","value":"x"}',
    ]) {
      assert.throws(() => applyJsonPatch(doc, ops(`[${op}]`)), (e: unknown) => e instanceof ApiError && e.code === 422, op)
    }
    // a copy of an absent key copies null (json-patch v4's get finds no node), never the prototype's member
    const copied = applyJsonPatch(doc, ops('[{"op":"copy","from":"/data/constructor","path":"/data/x"}]')) as any
    assert.equal(Object.getOwnPropertyDescriptor(copied.data, 'x')?.value, null)
    // replacing an absent key adds it as an own key (json-patch v4), never the prototype's member
    const upserted = applyJsonPatch(doc, ops('[{"op":"replace","path":"/data/hasOwnProperty","value":"x"}]')) as any
    assert.equal(Object.getOwnPropertyDescriptor(upserted.data, 'hasOwnProperty')?.value, 'x')
    assert.equal(({} as any).hasOwnProperty, Object.prototype.hasOwnProperty)
    assert.throws(
      () => applyJsonPatch(added, ops('[{"op":"test","path":"/data/__proto__","value":"other"}]')),
      (e: unknown) => e instanceof ApiError && e.message.endsWith('testing value /data/__proto__ failed: test failed'),
    )
  })

  it('a strategic merge patch merges them in typed maps, structs and free-form values', () => {
    const original = cm('{"data":{"a":"b","constructor":"c"},"metadata":{"name":"c","labels":{"toString":"t"}}}')
    const patched = strategicMergePatch(original, json('{"data":{"__proto__":"p","constructor":null,"valueOf":"v"},"metadata":{"labels":{"hasOwnProperty":"h","toString":null}}}'), configMap.schema)
    assert.deepEqual(entries(patched.data), [['__proto__', 'p'], ['a', 'b'], ['valueOf', 'v']])
    assert.deepEqual(entries(patched.metadata.labels), [['hasOwnProperty', 'h']])
    const replaced = strategicMergePatch(patched, json('{"data":{"$patch":"replace","__proto__":"q"}}'), configMap.schema)
    assert.deepEqual(entries(replaced.data), [['__proto__', 'q']])
    const revision = {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: {name: 'r'}, revision: 1, data: json('{"constructor":{"a":1}}')}
    const raw = strategicMergePatch(revision, json('{"data":{"__proto__":{"x":1},"constructor":{"b":2},"toString":{"c":null}}}'), controllerRevision.schema)
    assert.deepEqual(entries(raw.data), [['__proto__', {x: 1}], ['constructor', {a: 1, b: 2}], ['toString', {}]])
    // a directive naming such a list is refused as for any field the struct does not have
    assert.throws(
      () => strategicMergePatch(original, json('{"$setElementOrder/constructor":[]}'), configMap.schema),
      /unable to find api field in struct ConfigMap for the json field "constructor"/,
    )
  })

  it('typed values: compare, merge, removeItems, dropNulls and withGoZeroValues keep them and see only own keys', () => {
    const live = cm('{"metadata":{"name":"c","labels":{"a":"b"}}}')
    const next = cm('{"metadata":{"name":"c","labels":{"a":"b","constructor":"x"}},"data":{"__proto__":"p"}}')
    const comparison = compare(live, next, schema)
    assert.deepEqual(comparison.modified.paths(), [])
    assert.equal(comparison.added.has([{kind: 'field', name: 'metadata'}, {kind: 'field', name: 'labels'}, {kind: 'field', name: 'constructor'}]), true)
    assert.equal(comparison.added.has([{kind: 'field', name: 'data'}, {kind: 'field', name: '__proto__'}]), true)
    const merged = merge(live, next, schema) as any
    assert.deepEqual(entries(merged.data), [['__proto__', 'p']])
    assert.deepEqual(entries(merged.metadata.labels), [['a', 'b'], ['constructor', 'x']])
    const without = removeItems(merged, toFieldSet(json('{"metadata":{"labels":{"a":"b"}}}'), schema), schema) as any
    assert.deepEqual(entries(without.data), [['__proto__', 'p']])
    assert.deepEqual(entries(without.metadata.labels), [['constructor', 'x']])
    assert.deepEqual(entries((dropNulls(next, schema) as any).data), [['__proto__', 'p']])
    assert.deepEqual(entries((withGoZeroValues(next, schema) as any).data), [['__proto__', 'p']])
    assert.equal(valuesEqual(json('{"constructor":"x"}'), json('{"toString":"x"}')), false)
  })

  it('server-side apply: no conflict with a manager of such a key over another key; a real conflict on it is reported', () => {
    const created = updateManagedFields(undefined, cm('{"metadata":{"name":"c","namespace":"default","labels":{"constructor":"x"}},"data":{"__proto__":"p"}}'), configMap.schema, 'mgrA', {now, apiVersion: 'v1'})
    const live = created.object
    const options = {now, apiVersion: 'v1', kind: 'ConfigMap'}
    const result: ApplyResult = apply(live, cm('{"metadata":{"name":"c","labels":{"tier":"web"}}}'), configMap.schema, 'mgrB', options)
    assert.equal(result.conflicts, undefined, JSON.stringify(result.conflicts))
    assert.deepEqual(entries(result.object.metadata!.labels), [['constructor', 'x'], ['tier', 'web']])
    assert.deepEqual(entries(result.object.data), [['__proto__', 'p']])
    const conflicting = apply(live, cm('{"metadata":{"name":"c","labels":{"constructor":"y"}},"data":{"__proto__":"q"}}'), configMap.schema, 'mgrB', options)
    assert.deepEqual(conflicting.conflicts?.map((c) => c.field), ['.data.__proto__', '.metadata.labels.constructor'])
    const applied = apply(undefined, cm('{"data":{"__proto__":"p","toString":"t"}}'), configMap.schema, 'mgrC', options)
    assert.equal(applied.conflicts, undefined)
    assert.deepEqual(entries(applied.object.data), [['__proto__', 'p'], ['toString', 't']])
    assert.deepEqual(Object.keys(applied.managedFields[0].fieldsV1!['f:data'] as object), ['f:__proto__', 'f:toString'])
    // dropping them from the configuration removes them
    const dropped = apply(applied.object, cm('{"data":{"toString":"t"}}'), configMap.schema, 'mgrC', options)
    assert.equal(dropped.conflicts, undefined)
    assert.deepEqual(entries(dropped.object.data), [['toString', 't']])
  })

  it('CBOR keeps a key named __proto__ (cbor-x alone reads it as __proto_), in one item and in a sequence', () => {
    const value = json('{"data":{"__proto__":"p","__proto_":"q","constructor":"c"},"items":[{"__proto__":{"polluted":1}}]}')
    const decoded = decodeCbor(encodeCbor(value)) as any
    assert.deepEqual(entries(decoded.data), [['__proto_', 'q'], ['__proto__', 'p'], ['constructor', 'c']])
    assert.deepEqual(entries(decoded.items[0]), [['__proto__', {polluted: 1}]])
    const reader = new CborSequenceReader()
    const items = reader.push(Buffer.concat([encodeCbor(value), encodeCbor({a: {b: 1}})])) as any[]
    assert.deepEqual(entries(items[0].data), [['__proto_', 'q'], ['__proto__', 'p'], ['constructor', 'c']])
    assert.deepEqual(items[1], {a: {b: 1}})
    assert.deepEqual(decodeCbor(encodeCbor({a: [1, {b: 'c'}]})), {a: [1, {b: 'c'}]})
  })
})
