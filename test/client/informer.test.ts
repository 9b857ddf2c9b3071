import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {performance} from 'node:perf_hooks'
import {errors as statusErrors} from '../../src/machinery/status.js'
import {Informer, RestClient, type InformerOptions, type ResourceLocator} from '../../src/client/index.js'
import {Recorder, startFakeServer, type FakeServer, type Obj} from './fake-server.js'

const configmaps = (namespace?: string): ResourceLocator => ({group: '', version: 'v1', resource: 'configmaps', namespace})

type Call = ['add', string, string] | ['update', string, string, string] | ['delete', string, string]

/** An informer whose handler calls are recorded as [verb, name, resourceVersion(s)]. */
function recordingInformer(client: RestClient, namespace: string, options: InformerOptions = {}) {
  const recorder = new Recorder<Call>()
  const errors: Error[] = []
  const informer = new Informer<Obj>(
    client,
    configmaps(namespace),
    {
      onAdd: (o) => recorder.push(['add', o.metadata.name, o.metadata.resourceVersion]),
      onUpdate: (old, o) => recorder.push(['update', o.metadata.name, old.metadata.resourceVersion, o.metadata.resourceVersion]),
      onDelete: (o) => recorder.push(['delete', o.metadata.name, o.metadata.resourceVersion]),
    },
    {backoff: {initialMs: 10, maxMs: 100}, onError: (e) => errors.push(e), ...options},
  )
  return {informer, recorder, errors}
}

/** recordingInformer, started: synced, and its watch open on the server. */
async function watchingInformer(server: FakeServer, client: RestClient, namespace: string) {
  const recording = recordingInformer(client, namespace)
  const opened = server.nextWatch()
  recording.informer.start()
  await recording.informer.waitForSync()
  await opened
  return recording
}

function listRequests(server: FakeServer, namespace: string): number {
  return server.requests.filter((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${namespace}/configmaps` && !r.query.has('watch')).length
}

describe('Informer', () => {
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

  it('lists in pages, then watches from the list resourceVersion with bookmarks, keeping the cache current', async () => {
    const ns = 'sync'
    for (const name of ['a', 'b', 'c', 'd', 'e']) server.put({metadata: {name, namespace: ns}})
    const listRv = server.resourceVersion
    const {informer, recorder, errors} = recordingInformer(client, ns, {pageSize: 2})
    assert.equal(informer.hasSynced(), false)
    const opened = server.nextWatch()
    informer.start()
    await informer.waitForSync()
    assert.equal(informer.hasSynced(), true)
    assert.deepEqual(
      recorder.calls.map((c) => c[1]),
      ['a', 'b', 'c', 'd', 'e'],
    )
    assert.equal(listRequests(server, ns), 3)
    const query = await opened
    assert.equal(query.get('resourceVersion'), listRv)
    assert.equal(query.get('allowWatchBookmarks'), 'true')

    const added = server.put({metadata: {name: 'f', namespace: ns}})
    const before = informer.get(`${ns}/a`)!
    const modified = server.put({metadata: {name: 'a', namespace: ns}, data: {x: '1'}})
    const deleted = server.remove(ns, 'b')!
    const calls = await recorder.waitFor(8)
    assert.deepEqual(calls.slice(5), [
      ['add', 'f', added.metadata.resourceVersion],
      ['update', 'a', before.metadata.resourceVersion, modified.metadata.resourceVersion],
      ['delete', 'b', deleted.metadata.resourceVersion],
    ])
    assert.deepEqual(informer.get(`${ns}/a`)?.data, {x: '1'})
    assert.equal(informer.get(`${ns}/b`), undefined)
    assert.deepEqual(informer.keys().sort(), ['sync/a', 'sync/c', 'sync/d', 'sync/e', 'sync/f'])
    assert.equal(informer.list().length, 5)
    assert.equal(informer.lastSyncResourceVersion, deleted.metadata.resourceVersion)
    await informer.stop()
    assert.deepEqual(errors, [])
  })

  it('resumes the watch from the last resourceVersion seen after the server closes the stream, without relisting', async () => {
    const ns = 'resume'
    server.put({metadata: {name: 'first', namespace: ns}})
    const {informer, recorder, errors} = await watchingInformer(server, client, ns)
    const seen = server.put({metadata: {name: 'seen', namespace: ns}})
    await recorder.waitFor(2)
    // a change outside the namespace moves the resourceVersion on; only a bookmark tells the informer
    server.put({metadata: {name: 'elsewhere', namespace: 'other'}})
    const bookmarkRv = server.resourceVersion
    const reopened = server.nextWatch()
    // the bookmark goes out before the end of the stream, so it is applied before the informer reconnects
    server.bookmark()
    server.closeWatches()
    // a change while the informer is disconnected: the resumed watch must replay it
    const missed = server.put({metadata: {name: 'missed', namespace: ns}})
    const query = await reopened
    assert.equal(query.get('resourceVersion'), bookmarkRv)
    const calls = await recorder.waitFor(3)
    assert.deepEqual(calls, [
      ['add', 'first', calls[0][2]],
      ['add', 'seen', seen.metadata.resourceVersion],
      ['add', 'missed', missed.metadata.resourceVersion],
    ])
    assert.equal(listRequests(server, ns), 1)
    await informer.stop()
    assert.deepEqual(errors, [])
  })

  it('a DELETED event for an object the cache does not hold (a repeat, or one never seen) is no onDelete, as client-go ignores it', async () => {
    const ns = 'unknown-delete'
    server.put({metadata: {name: 'a', namespace: ns}})
    const {informer, recorder, errors} = await watchingInformer(server, client, ns)
    try {
      const deleted = server.remove(ns, 'a')!
      server.event('DELETED', deleted)
      server.event('DELETED', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'ghost', namespace: ns, resourceVersion: deleted.metadata.resourceVersion}})
      const last = server.put({metadata: {name: 'z', namespace: ns}})
      await new Promise<void>((resolve) => {
        const check = () => (informer.get(`${ns}/z`) ? resolve() : setTimeout(check, 5))
        check()
      })
      assert.deepEqual(recorder.calls, [
        ['add', 'a', recorder.calls[0][2]],
        ['delete', 'a', deleted.metadata.resourceVersion],
        ['add', 'z', last.metadata.resourceVersion],
      ])
      assert.deepEqual(informer.keys(), [`${ns}/z`])
      assert.equal(informer.lastSyncResourceVersion, last.metadata.resourceVersion)
    } finally {
      await informer.stop()
    }
    assert.deepEqual(errors, [])
  })

  it('relists on 410 Gone and reports the difference between the old cache and the new list', async () => {
    const ns = 'relist'
    const a = server.put({metadata: {name: 'a', namespace: ns}})
    const b = server.put({metadata: {name: 'b', namespace: ns}})
    const c = server.put({metadata: {name: 'c', namespace: ns}})
    const {informer, recorder, errors} = await watchingInformer(server, client, ns)
    assert.equal(recorder.calls.length, 3)

    // changes the informer's watch never delivers, then the history is gone
    server.suspended = true
    const b2 = server.put({metadata: {name: 'b', namespace: ns}, data: {v: '2'}})
    server.remove(ns, 'c')
    const d = server.put({metadata: {name: 'd', namespace: ns}})
    server.suspended = false
    const reopened = server.nextWatch()
    server.expireWatches()

    const calls = await recorder.waitFor(6)
    assert.deepEqual(calls.slice(3), [
      ['update', 'b', b.metadata.resourceVersion, b2.metadata.resourceVersion],
      ['add', 'd', d.metadata.resourceVersion],
      ['delete', 'c', c.metadata.resourceVersion],
    ])
    const query = await reopened
    assert.equal(query.get('resourceVersion'), server.resourceVersion)
    assert.equal(listRequests(server, ns), 2)
    assert.deepEqual(informer.keys().sort(), ['relist/a', 'relist/b', 'relist/d'])
    assert.equal(informer.get(`${ns}/a`)?.metadata.resourceVersion, a.metadata.resourceVersion)
    assert.deepEqual(errors, [], 'a 410 is handled by relisting, not reported')

    // the new watch is live
    server.remove(ns, 'a')
    assert.deepEqual((await recorder.waitFor(7))[6].slice(0, 2), ['delete', 'a'])
    await informer.stop()
  })

  it('a failing watch is retried with a backoff that doubles up to the maximum, not in a tight loop', async () => {
    const ns = 'backoff'
    server.failWatchesWith = statusErrors.internal('watch broken').toStatus()
    const times: number[] = []
    const attempts = new Recorder<number>()
    const onRequest = () => {
      times.push(performance.now())
      attempts.push(times.length)
    }
    server.on('watchRequest', onRequest)
    const {informer, errors} = recordingInformer(client, ns, {backoff: {initialMs: 20, maxMs: 80}})
    informer.start()
    await attempts.waitFor(6)
    await informer.stop()
    server.off('watchRequest', onRequest)
    server.failWatchesWith = undefined
    const gaps = times.slice(1, 6).map((t, i) => t - times[i])
    const expected = [20, 40, 80, 80, 80]
    gaps.forEach((gap, i) => assert.ok(gap >= expected[i] - 2, `gap ${i} was ${gap.toFixed(1)} ms, expected at least ${expected[i]} ms`))
    assert.ok(errors.length >= 5)
    assert.equal(errors[0].message, 'Internal error occurred: watch broken')
  })

  it('waitForSync rejects when the informer was not started or stops before it synced', async () => {
    const {informer} = recordingInformer(client, 'never')
    await assert.rejects(informer.waitForSync(), /not started/)
    const unreachable = new RestClient({server: 'http://127.0.0.1:1'})
    const lonely = new Informer(unreachable, configmaps('x'), {}, {backoff: {initialMs: 10, maxMs: 10}})
    lonely.start()
    const waiting = assert.rejects(lonely.waitForSync(), /stopped before it synced/)
    await lonely.stop()
    await waiting
    await unreachable.destroy()
  })

  it('a throwing handler is reported to onError and the informer keeps going', async () => {
    const ns = 'throwing'
    const errors: Error[] = []
    const recorder = new Recorder<string>()
    const informer = new Informer<Obj>(
      client,
      configmaps(ns),
      {
        onAdd: (o) => {
          recorder.push(o.metadata.name)
          if (o.metadata.name === 'bad') throw new Error('handler failed')
        },
      },
      {onError: (e) => errors.push(e)},
    )
    const opened = server.nextWatch()
    informer.start()
    await informer.waitForSync()
    await opened
    server.put({metadata: {name: 'bad', namespace: ns}})
    server.put({metadata: {name: 'good', namespace: ns}})
    assert.deepEqual(await recorder.waitFor(2), ['bad', 'good'])
    assert.equal(errors[0].message, 'handler failed')
    assert.ok(informer.get(`${ns}/bad`))
    await informer.stop()
  })
})
