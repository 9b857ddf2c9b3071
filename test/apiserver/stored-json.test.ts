// Lists from storage send the stored bytes with metadata.resourceVersion spliced in, unparsed.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {storedWithVersion} from '../../src/apiserver/registry.js'

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
})
