// Watch streams in the other wire encodings (what `--wire protobuf|cbor` reads): protobuf frames and CBOR
// sequences decode to the same events whatever the chunking, chosen by the stream's Content-Type.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {configMap} from '../../src/api/core/configmap.js'
import {watchStreamDecoder} from '../../src/client/watch.js'
import {encodeCbor} from '../../src/machinery/cbor.js'
import {frameWatchEvent} from '../../src/machinery/protobuf.js'

const locator = {group: '', version: 'v1', resource: 'configmaps'}
const events = [
  {type: 'ADDED', object: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a', namespace: 'default', resourceVersion: '1'}, data: {text: 'héllo ✓'}}},
  {type: 'MODIFIED', object: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a', namespace: 'default', resourceVersion: '2'}, data: {k: 'v'}}},
  {type: 'DELETED', object: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a', namespace: 'default', resourceVersion: '2'}}},
]

function decodeSplit(contentType: string, stream: Buffer, cuts: number[]): unknown[] {
  const decoder = watchStreamDecoder(contentType, locator)
  const out: unknown[] = []
  let from = 0
  for (const cut of [...cuts, stream.length]) {
    out.push(...decoder.push(stream.subarray(from, cut)))
    from = cut
  }
  decoder.end()
  return out
}

describe('watch streams in protobuf and CBOR', () => {
  const encodings = [
    ['application/vnd.orch.protobuf;stream=watch', Buffer.concat(events.map((e) => Buffer.from(frameWatchEvent(configMap, e))))],
    ['application/cbor-seq', Buffer.concat(events.map((e) => encodeCbor(e)))],
  ] as const

  for (const [contentType, stream] of encodings) {
    it(`${contentType}: every split into two chunks, and one byte per chunk, decode to the same events`, () => {
      for (let cut = 0; cut <= stream.length; cut++) assert.deepEqual(decodeSplit(contentType, stream, [cut]), events, `cut at ${cut}`)
      assert.deepEqual(decodeSplit(contentType, stream, Array.from({length: stream.length - 1}, (_, i) => i + 1)), events)
    })

    it(`${contentType}: a stream that ends inside an event is an error`, () => {
      const decoder = watchStreamDecoder(contentType, locator)
      decoder.push(stream.subarray(0, stream.length - 3))
      assert.throws(() => decoder.end(), /ended inside an event/)
    })
  }

  it('any other Content-Type is read as JSON objects', () => {
    const stream = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n'))
    assert.deepEqual(decodeSplit('application/json', stream, [7]), events)
  })
})
