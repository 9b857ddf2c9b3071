// orch over a real etcd reached through a TCP proxy that the tests cut, as a tester did: what
// clients see while orch's connection to etcd is lost and after it comes back, as Kubernetes 1.32's
// apiserver behaves. Skipped when no etcd binary exists.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {findEtcdBinary, startEtcd, type RunningEtcd} from '../support/etcd.js'
import {call, openWatch} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {startTcpProxy, type TcpProxy} from '../support/tcp-proxy.js'
import {until} from '../support/until.js'

const skip = findEtcdBinary() ? false : 'no etcd binary found; install Debian package etcd-server'
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'

function configMap(name: string, extra: Record<string, unknown> = {}) {
  return {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data: {a: 'b'}, ...extra}
}

describe('orch over etcd: a lost etcd connection', {skip, timeout: 240_000}, () => {
  let etcd: RunningEtcd
  let proxy: TcpProxy
  let server: OrchServer
  before(async () => {
    etcd = await startEtcd()
    proxy = await startTcpProxy(etcd.endpoint)
    server = await startOrchServer(['--storage', 'etcd', '--etcd-servers', proxy.endpoint])
  })
  after(async () => {
    proxy?.unblock()
    await server?.cleanup()
    await proxy?.close()
    await etcd?.stop()
  })

  async function create(name: string): Promise<number> {
    const created = await call(server.url, 'POST', CONFIGMAPS, configMap(name))
    assert.equal(created.status, 201, created.text)
    return Number(created.json.metadata.resourceVersion)
  }

  it('"clients see no ERROR and the cache keeps its history": open watches survive a cut connection, and a watch from before it replays', {timeout: 60_000}, async () => {
    const before = Number((await call(server.url, 'GET', CONFIGMAPS)).json.metadata.resourceVersion)
    const watch = await openWatch(server.url, `${CONFIGMAPS}?watch=1&resourceVersion=${before}`)
    try {
      await create('cut-a')
      await watch.waitFor(1)
      proxy.cut()
      await server.waitForLog(/etcd watch resumed/, 20_000)
      await create('cut-b')
      const events = await watch.waitFor(2)
      assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'cut-a'], ['ADDED', 'cut-b']])
      // the cache kept the history from before the cut: no 410 for a version it held then
      const replay = await openWatch(server.url, `${CONFIGMAPS}?watch=1&resourceVersion=${before}`)
      try {
        const replayed = await replay.waitFor(2)
        assert.deepEqual(replayed.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'cut-a'], ['ADDED', 'cut-b']])
      } finally {
        replay.close()
      }
    } finally {
      watch.close()
    }
  })

  it('"the watch cache stays ready and serves rv=0 lists and watches from what it has" while etcd is unreachable; "informer-sync" stays [+], only the etcd checks fail; "the storage-objects gauge reports -1"', {timeout: 60_000}, async () => {
    await create('outage-a')
    proxy.block()
    try {
      const list = await call(server.url, 'GET', `${CONFIGMAPS}?resourceVersion=0`)
      assert.equal(list.status, 200, list.text)
      assert.ok(list.json.items.some((item: {metadata: {name: string}}) => item.metadata.name === 'outage-a'))
      const watch = await openWatch(server.url, `${CONFIGMAPS}?watch=1&resourceVersion=0`)
      try {
        assert.equal(watch.status, 200)
        const events = await watch.waitFor(1)
        assert.ok(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'outage-a'))
      } finally {
        watch.close()
      }
      const readyz = await call(server.url, 'GET', '/readyz?verbose')
      assert.equal(readyz.status, 500)
      assert.match(readyz.text, /\[-\]etcd failed: reason withheld\n\[-\]etcd-readiness failed: reason withheld\n\[\+\]informer-sync ok\n/)
      const metrics = await call(server.url, 'GET', '/metrics')
      assert.match(metrics.text, /\napiserver_storage_objects\{resource="configmaps"\} -1\n/)
      // a consistent read still needs etcd: as Kubernetes, a timeout that names nothing of ours
      const consistent = await call(server.url, 'GET', `${CONFIGMAPS}/outage-a`)
      assert.equal(consistent.status, 504, consistent.text)
      assert.equal(consistent.json.reason, 'Timeout')
      assert.equal(consistent.json.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded')
      const write = await call(server.url, 'POST', CONFIGMAPS, configMap('outage-b'))
      assert.equal(write.status, 504, write.text)
      assert.doesNotMatch(write.text, /registry|127\.0\.0\.1/)
    } finally {
      proxy.unblock()
    }
    await until('the etcd check to pass again', async () => (await call(server.url, 'GET', '/readyz')).status === 200, {timeoutMs: 30_000})
    const metrics = await call(server.url, 'GET', '/metrics')
    assert.match(metrics.text, /\napiserver_storage_objects\{resource="configmaps"\} [1-9]\d*\n/)
  })

  it('"etcdserver: request is too large": a ConfigMap within Kubernetes\' limits that etcd refuses is 500 with etcd\'s text, logged', {timeout: 60_000}, async () => {
    const big = configMap('too-large', {
      metadata: {name: 'too-large', annotations: {big: 'x'.repeat(262_044)}},
      data: undefined,
      binaryData: {blob: Buffer.alloc(1_048_566, 7).toString('base64')},
    })
    const refused = await call(server.url, 'POST', CONFIGMAPS, big)
    assert.equal(refused.status, 500, refused.text)
    assert.deepEqual(refused.json, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500})
    await server.waitForLog(/request failed.*etcdserver: request is too large/)
  })
})
