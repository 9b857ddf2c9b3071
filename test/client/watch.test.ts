import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {once} from 'node:events'
import {ApiStatusError, JsonStreamDecoder, RestClient, watch, watchEvents, type ResourceLocator, type WatchEvent} from '../../src/client/index.js'
import {Recorder, startFakeServer, type FakeServer, type Obj} from './fake-server.js'

const configmaps = (namespace?: string): ResourceLocator => ({group: '', version: 'v1', resource: 'configmaps', namespace})

const events = [
  {type: 'ADDED', object: {metadata: {name: 'a', resourceVersion: '1'}, data: {text: 'héllo ✓ "quoted" {braces} [brackets] \\ backslash'}}},
  {type: 'MODIFIED', object: {metadata: {name: 'a', resourceVersion: '2'}, data: {nested: {list: [1, {x: '}'}]}}}},
  {type: 'BOOKMARK', object: {metadata: {resourceVersion: '3'}}},
]
const stream = Buffer.from(events.map((e) => JSON.stringify(e) + '\n').join(''))

describe('watch stream decoding', () => {
  it('every split of the byte stream into two chunks decodes to the same events', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const decoder = new JsonStreamDecoder()
      const got = [...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))]
      decoder.end()
      assert.deepEqual(got, events, `cut at byte ${cut}`)
    }
  })

  it('one byte per chunk decodes, including multi-byte UTF-8 characters split apart', () => {
    const decoder = new JsonStreamDecoder()
    const got: unknown[] = []
    for (let i = 0; i < stream.length; i++) got.push(...decoder.push(stream.subarray(i, i + 1)))
    decoder.end()
    assert.deepEqual(got, events)
  })

  it('several events in one chunk all come out, in order', () => {
    const decoder = new JsonStreamDecoder()
    assert.deepEqual(decoder.push(Buffer.concat([stream, stream])), [...events, ...events])
  })

  it('objects without newline separators are decoded too', () => {
    const decoder = new JsonStreamDecoder()
    const compact = Buffer.from(events.map((e) => JSON.stringify(e)).join(''))
    assert.deepEqual(decoder.push(compact), events)
  })

  it('a stream ending inside an event is an error', () => {
    const decoder = new JsonStreamDecoder()
    decoder.push(stream.subarray(0, 10))
    assert.throws(() => decoder.end(), /ended inside an event/)
  })

  it('garbage between events is an error', () => {
    const decoder = new JsonStreamDecoder()
    assert.throws(() => decoder.push(Buffer.from('{"type":"ADDED","object":{}}\nnope')), /expected a JSON object/)
  })
})

describe('watch over HTTP', () => {
  let server: FakeServer
  let client: RestClient

  before(async () => {
    server = await startFakeServer()
    client = new RestClient({server: server.url})
  })

  after(async () => {
    await client.close()
    await server.close()
  })

  it('events split across chunk boundaries, and several per chunk, arrive whole and in order', async () => {
    server.splitEvents = true
    const start = server.resourceVersion
    const recorder = new Recorder<WatchEvent<Obj>>()
    const opened = server.nextWatch()
    const handle = watch<Obj>(client, configmaps('split'), {resourceVersion: start, allowWatchBookmarks: true}, {onEvent: (e) => recorder.push(e)})
    const query = await opened
    // one tick: several events in one write, cut into pieces (the first cut inside "é")
    server.put({metadata: {name: 'one', namespace: 'split'}, data: {text: 'héllo wörld ✓'}})
    server.put({metadata: {name: 'two', namespace: 'split'}, data: {}})
    server.put({metadata: {name: 'one', namespace: 'split'}, data: {text: 'changed'}})
    server.remove('split', 'two')
    const got = await recorder.waitFor(4)
    server.bookmark()
    const [bookmark] = (await recorder.waitFor(5)).slice(4)
    handle.stop()
    await handle.done
    server.splitEvents = false
    assert.deepEqual(
      got.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'one'],
        ['ADDED', 'two'],
        ['MODIFIED', 'one'],
        ['DELETED', 'two'],
      ],
    )
    assert.equal(got[0].object.data.text, 'héllo wörld ✓')
    assert.equal(bookmark.type, 'BOOKMARK')
    assert.equal(bookmark.object.metadata.resourceVersion, server.resourceVersion)
    assert.equal(query.get('watch'), '1')
    assert.equal(query.get('resourceVersion'), start)
    assert.equal(query.get('allowWatchBookmarks'), 'true')
  })

  it('a watch from a resourceVersion replays the changes after it', async () => {
    server.put({metadata: {name: 'r1', namespace: 'replay'}})
    const from = server.resourceVersion
    server.put({metadata: {name: 'r2', namespace: 'replay'}})
    server.remove('replay', 'r1')
    const got: [string, string][] = []
    const iterator = watchEvents<Obj>(client, configmaps('replay'), {resourceVersion: from})
    for await (const event of iterator) {
      got.push([event.type, event.object.metadata.name])
      if (got.length === 2) break
    }
    assert.deepEqual(got, [
      ['ADDED', 'r2'],
      ['DELETED', 'r1'],
    ])
  })

  it('an ERROR event with a 410 Status reaches onError as an ApiStatusError and ends the watch', async () => {
    server.put({metadata: {name: 'old', namespace: 'gone'}})
    const stale = server.resourceVersion
    server.put({metadata: {name: 'newer', namespace: 'gone'}})
    server.compact()
    const errors: Error[] = []
    let closed = false
    const handle = watch(client, configmaps('gone'), {resourceVersion: String(Number(stale) - 1)}, {
      onEvent: () => assert.fail('no event expected'),
      onError: (e) => errors.push(e),
      onClose: () => (closed = true),
    })
    await handle.done
    assert.equal(errors.length, 1)
    const error = errors[0]
    assert.ok(error instanceof ApiStatusError)
    assert.equal(error.code, 410)
    assert.equal(error.reason, 'Expired')
    assert.match(error.message, /^too old resource version: \d+ \(\d+\)$/)
    assert.ok(closed)
  })

  it('the async iterator throws the ERROR event as ApiStatusError', async () => {
    server.compact()
    await assert.rejects(
      async () => {
        for await (const _ of watchEvents(client, configmaps('gone'), {resourceVersion: '1'})) assert.fail('no event expected')
      },
      (e: unknown) => e instanceof ApiStatusError && e.code === 410,
    )
  })

  it('a non-2xx answer to the watch request is an ApiStatusError', async () => {
    const errors: Error[] = []
    const other = new RestClient({server: server.url})
    const handle = watch(other, {group: '', version: 'v1', resource: 'secrets'}, {}, {onEvent: () => {}, onError: (e) => errors.push(e)})
    await handle.done
    assert.ok(errors[0] instanceof ApiStatusError)
    assert.equal((errors[0] as ApiStatusError).code, 404)
    await other.close()
  })

  it('without onError, done rejects with the failure', async () => {
    server.compact()
    const handle = watch(client, configmaps('gone'), {resourceVersion: '1'}, {onEvent: () => {}})
    await assert.rejects(handle.done, (e: unknown) => e instanceof ApiStatusError && e.code === 410)
  })

  it('stop() ends an open watch: done resolves and the server sees the stream closed', async () => {
    const opened = server.nextWatch()
    const handle = watch(client, configmaps('quiet'), {resourceVersion: server.resourceVersion}, {onEvent: () => {}})
    await opened
    assert.ok(server.openWatches >= 1)
    const closed = once(server, 'watchClosed')
    handle.stop()
    await handle.done
    await closed
  })

  it('a watch ended by the server resolves done without an error', async () => {
    const opened = server.nextWatch()
    const errors: Error[] = []
    const handle = watch(client, configmaps('quiet'), {resourceVersion: server.resourceVersion}, {onEvent: () => {}, onError: (e) => errors.push(e)})
    await opened
    server.closeWatches()
    await handle.done
    assert.deepEqual(errors, [])
  })
})
