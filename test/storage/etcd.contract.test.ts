// The Store contract against a real etcd, plus the etcd backend's own behaviour (open errors,
// progress notifications, close, a lost server). Skipped loudly when no etcd binary exists.
import assert from 'node:assert/strict'
import {createServer, type Socket} from 'node:net'
import {after, describe, it} from 'node:test'
import {Etcd3} from 'etcd3'
import {openEtcdStore, type EtcdStore} from '../../src/storage/etcd.js'
import {StorageError, StoreUnavailableError, type WatchEvent} from '../../src/storage/store.js'
import {findEtcdBinary, freePort, startEtcd, type RunningEtcd} from '../support/etcd.js'
import {defineStoreContract} from './contract.js'

const binary = findEtcdBinary()
const skip = binary ? false : 'no etcd binary found; install Debian package etcd-server'
if (!binary) {
  console.error('ETCD CONTRACT SUITE SKIPPED: no etcd binary found; install Debian package etcd-server')
}

// One etcd for the whole file, started on first use.
let shared: Promise<RunningEtcd> | undefined
function sharedEtcd(): Promise<RunningEtcd> {
  shared ??= startEtcd()
  return shared
}

after(async () => {
  if (shared) await (await shared).stop()
})

const encoder = new TextEncoder()

defineStoreContract(
  'etcd',
  async () => {
    const etcd = await sharedEtcd()
    const version = ((await (await fetch(`${etcd.endpoint}/version`)).json()) as {etcdserver?: string}).etcdserver
    console.log(`etcd contract suite: running against real etcd ${version ?? '(unknown version)'} at ${etcd.endpoint}`)
    const store = await openEtcdStore({endpoints: [etcd.endpoint]})
    assert.equal(store.backend, 'etcd')
    return {store, cleanup: () => store.close()}
  },
  {skip},
)

function assertOneLineNaming(error: unknown, endpoints: string[]): true {
  assert.ok(error instanceof StoreUnavailableError, `expected StoreUnavailableError, got ${String(error)}`)
  assert.ok(!error.message.includes('\n'), `message is one line: ${JSON.stringify(error.message)}`)
  for (const endpoint of endpoints) assert.ok(error.message.includes(endpoint), `names ${endpoint}: ${error.message}`)
  assert.match(error.message, /^etcd at .* is unreachable: \S/)
  return true
}

describe('etcd store: opening', {timeout: 60_000}, () => {
  it('opening against an unreachable endpoint fails with StoreUnavailableError whose one-line message names the endpoint', {timeout: 30_000}, async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`
    await assert.rejects(openEtcdStore({endpoints: [endpoint], dialTimeoutMs: 3_000}), (error) =>
      assertOneLineNaming(error, [endpoint]),
    )
  })

  it('opening against several unreachable endpoints names them all', {timeout: 30_000}, async () => {
    const endpoints = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`]
    await assert.rejects(openEtcdStore({endpoints, dialTimeoutMs: 3_000}), (error) => assertOneLineNaming(error, endpoints))
  })

  it('opening against an endpoint that accepts connections but never answers fails within the dial timeout', {timeout: 30_000}, async () => {
    // a TCP server that holds every connection and says nothing: like a hung or firewalled etcd
    const sockets = new Set<Socket>()
    const server = createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    try {
      const started = Date.now()
      await assert.rejects(openEtcdStore({endpoints: [endpoint], dialTimeoutMs: 500}), (error) =>
        assertOneLineNaming(error, [endpoint]),
      )
      assert.ok(Date.now() - started < 5_000, `gave up after ${Date.now() - started} ms`)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('opening with no endpoints fails with StoreUnavailableError', {timeout: 30_000}, async () => {
    await assert.rejects(openEtcdStore({endpoints: []}), StoreUnavailableError)
  })
})

describe('etcd store: behaviour beyond the contract', {skip, timeout: 120_000}, () => {
  it('keys are stored as given, so a plain etcd client sees them under the same name', {timeout: 30_000}, async () => {
    const etcd = await sharedEtcd()
    const store = await openEtcdStore({endpoints: [etcd.endpoint]})
    const raw = new Etcd3({hosts: etcd.endpoint})
    try {
      const key = `/registry/configmaps/default/plain-${Date.now()}`
      await store.create(key, encoder.encode('hello'))
      assert.equal(await raw.get(key).string(), 'hello')
    } finally {
      raw.close()
      await store.close()
    }
  })

  it('onProgress reports a revision up to which everything has been delivered', {timeout: 30_000}, async () => {
    const etcd = await sharedEtcd()
    const store = await openEtcdStore({endpoints: [etcd.endpoint]})
    try {
      const prefix = `/progress-${Date.now()}/`
      const events: WatchEvent[] = []
      let written = Infinity
      const from = await store.currentRevision()
      const progressed = new Promise<number>((resolve, reject) => {
        const watch = store.watch(prefix, from, {
          onEvents: (batch) => events.push(...batch),
          // startEtcd asks etcd for progress notifications every 500 ms
          onProgress: (revision) => {
            if (revision >= written) {
              watch.cancel()
              resolve(revision)
            }
          },
          onError: reject,
        })
      })
      written = await store.create(prefix + 'a', encoder.encode('x'))
      const revision = await progressed
      assert.ok(revision >= written)
      assert.deepEqual(events.map((e) => e.revision), [written])
    } finally {
      await store.close()
    }
  })

  it('cancelling several watches at once leaves the connection and the other watches working', {timeout: 30_000}, async () => {
    // etcd3 counts a cancelled stream that is still writable as a failure of the endpoint: three in
    // a row would open its circuit breaker and fail the next calls with "unreachable"
    const etcd = await sharedEtcd()
    const store = await openEtcdStore({endpoints: [etcd.endpoint]})
    try {
      const prefix = `/churn-${Date.now()}/`
      const created = await store.create(prefix + 'a', encoder.encode('x'))
      const kept: WatchEvent[] = []
      const keptError: Error[] = []
      let keptArrived: () => void = () => {}
      const arrived = new Promise<void>((resolve) => (keptArrived = resolve))
      const keeper = store.watch(prefix, created, {
        onEvents: (batch) => {
          kept.push(...batch)
          keptArrived()
        },
        onError: (error) => keptError.push(error),
      })
      const watches = await Promise.all(
        Array.from(
          {length: 6},
          () =>
            new Promise<{cancel(): void}>((resolve, reject) => {
              // each replays the create, then waits
              const watch = store.watch(prefix, created - 1, {onEvents: () => resolve(watch), onError: reject})
            }),
        ),
      )
      for (const watch of watches) watch.cancel()
      const written = await store.create(prefix + 'b', encoder.encode('y'))
      await arrived
      assert.deepEqual(kept.map((e) => e.revision), [written])
      assert.deepEqual(keptError, [])
      assert.equal(await store.count(prefix), 2)
      keeper.cancel()
    } finally {
      await store.close()
    }
  })

  it('close waits for in-flight writes; afterwards operations fail with StorageError', {timeout: 30_000}, async () => {
    const etcd = await sharedEtcd()
    const store = await openEtcdStore({endpoints: [etcd.endpoint]})
    const prefix = `/close-${Date.now()}/`
    const writes = Array.from({length: 8}, (_, i) => store.create(`${prefix}${i}`, encoder.encode(String(i))))
    await store.close()
    const settled = await Promise.allSettled(writes)
    assert.deepEqual(settled.map((s) => s.status), Array(8).fill('fulfilled'))
    await assert.rejects(store.get(prefix + '0'), StorageError)
    await assert.rejects(store.create(prefix + 'late', encoder.encode('x')), StorageError)
    await store.close()
    const again = await openEtcdStore({endpoints: [etcd.endpoint]})
    try {
      assert.equal(await again.count(prefix), 8)
    } finally {
      await again.close()
    }
  })

  it('when etcd goes away, calls fail with StoreUnavailableError naming the endpoint (watches wait to resume: etcd-resume.test.ts)', {timeout: 30_000}, async () => {
    const etcd = await startEtcd()
    let store: EtcdStore | undefined
    try {
      store = await openEtcdStore({endpoints: [etcd.endpoint], requestTimeoutMs: 3_000})
      await store.create('/gone/a', encoder.encode('x'))
      await etcd.stop()
      await assert.rejects(store.get('/gone/a'), (e) => assertOneLineNaming(e, [etcd.endpoint]))
    } finally {
      await store?.close()
      await etcd.stop()
    }
  })
})
