// Lists from storage, responses to writes and watch events send the stored bytes with
// metadata.resourceVersion spliced in instead of serialising the object again.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {decodeStored, decodeStoredShared, encodeStored, jsonOf, rememberStored, storedWithVersion} from '../../src/apiserver/stored-json.js'

describe('storedWithVersion', () => {
  it('puts resourceVersion first in metadata and leaves every other byte as stored', () => {
    const stored = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"d"},"data":{"metadata":{"a":"b"}}}')
    const out = storedWithVersion(stored, 42)!
    assert.equal(out.toString(), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"42","name":"x","namespace":"d"},"data":{"metadata":{"a":"b"}}}')
    assert.deepEqual(JSON.parse(out.toString()).metadata, {resourceVersion: '42', name: 'x', namespace: 'd'})
  })

  it('handles an empty metadata object', () => {
    const out = storedWithVersion(Buffer.from('{"apiVersion":"v1","kind":"X","metadata":{}}'), 7)!
    assert.deepEqual(JSON.parse(out.toString()), {apiVersion: 'v1', kind: 'X', metadata: {resourceVersion: '7'}})
  })

  it('declines bytes not laid out apiVersion, kind, metadata (a nested "metadata" must not be taken for the top-level one)', () => {
    assert.equal(storedWithVersion(Buffer.from('{"spec":{"template":{"metadata":{}}},"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{}}'), 1), undefined)
    assert.equal(storedWithVersion(Buffer.from('{"kind":"X","apiVersion":"v1","metadata":{}}'), 1), undefined)
    assert.equal(storedWithVersion(Buffer.from('{"apiVersion":"v1","kind":"X"}'), 1), undefined)
  })

  it('declines a stored value cut short (damaged on disk), so a list decodes it and fails instead of answering 200 with broken JSON', () => {
    const cut = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm135","namespace":"default"')
    assert.equal(storedWithVersion(cut, 3), undefined)
    assert.throws(() => decodeStored({key: 'k', value: cut, modRevision: 3, createRevision: 3}))
  })
})

describe('jsonOf', () => {
  const object = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {name: 'x', namespace: 'd', resourceVersion: '9', selfLink: '/old'},
    data: {'a\u2028': 'é "quoted"'},
  }

  it('encodeStored writes apiVersion, kind, metadata first, without resourceVersion and selfLink', () => {
    const stored = encodeStored(object).toString()
    assert.ok(stored.startsWith('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"d"}'), stored)
    assert.deepEqual(decodeStored({key: 'k', value: Buffer.from(stored), modRevision: 9, createRevision: 9}).metadata, {name: 'x', namespace: 'd', resourceVersion: '9'})
  })

  it('a remembered object answers with its stored bytes plus resourceVersion: the same JSON value as the object', () => {
    const written = structuredClone(object)
    delete (written.metadata as {selfLink?: string}).selfLink
    const stored = encodeStored(written)
    rememberStored(written, stored, 9)
    const bytes = jsonOf(written)
    assert.deepEqual(JSON.parse(bytes.toString()), written)
    assert.ok(bytes.toString().includes('"metadata":{"resourceVersion":"9","name":"x"'), 'taken from the stored bytes, not re-serialised')
    assert.equal(jsonOf(written), bytes, 'computed once')
  })

  it('a shared decoded object (the watch cache\'s) answers from the bytes it was decoded from', () => {
    const value = encodeStored(object)
    const decoded = decodeStoredShared({key: 'k', value, modRevision: 12, createRevision: 3})
    const bytes = jsonOf(decoded)
    assert.deepEqual(JSON.parse(bytes.toString()), decoded)
    assert.ok(bytes.toString().includes('"metadata":{"resourceVersion":"12",'))
  })

  it('an object with no stored bytes, or bytes of another layout, is serialised', () => {
    const plain = {apiVersion: 'v1', kind: 'X', metadata: {name: 'y'}}
    assert.equal(jsonOf(plain).toString(), JSON.stringify(plain))
    const reordered = {kind: 'X', apiVersion: 'v1', metadata: {name: 'z', resourceVersion: '4'}}
    rememberStored(reordered, Buffer.from('{"kind":"X","apiVersion":"v1","metadata":{"name":"z"}}'), 4)
    assert.equal(jsonOf(reordered).toString(), JSON.stringify(reordered))
  })
})
