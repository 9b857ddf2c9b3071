// The etcd backend's watches across a lost connection, against a real etcd behind a TCP proxy that
// the tests cut: as Kubernetes' etcd client, a watch resumes from the last revision it delivered,
// and only a compaction past that revision ends it.
import assert from 'node:assert/strict'
import {after, describe, it} from 'node:test'
import {openEtcdStore, type EtcdStore} from '../../src/storage/etcd.js'
import {CompactedError, type WatchEvent} from '../../src/storage/store.js'
import {findEtcdBinary, startEtcd, type RunningEtcd} from '../support/etcd.js'
import {startTcpProxy} from '../support/tcp-proxy.js'
import {until} from '../support/until.js'

const skip = findEtcdBinary() ? false : 'no etcd binary found; install Debian package etcd-server'
const encoder = new TextEncoder()

let shared: Promise<RunningEtcd> | undefined
function sharedEtcd(): Promise<RunningEtcd> {
  shared ??= startEtcd()
  return shared
}
after(async () => {
  if (shared) await (await shared).stop()
})

/** A store that reaches etcd through a proxy, one that reaches it directly, and a watch on prefix. */
async function setUp(prefix: string) {
  const etcd = await sharedEtcd()
  const proxy = await startTcpProxy(etcd.endpoint)
  const store = await openEtcdStore({endpoints: [proxy.endpoint], requestTimeoutMs: 3_000})
  const direct = await openEtcdStore({endpoints: [etcd.endpoint]})
  const events: WatchEvent[] = []
  const failures: Error[] = []
  const from = await direct.currentRevision()
  const watch = store.watch(prefix, from, {onEvents: (batch) => events.push(...batch), onError: (error) => failures.push(error)})
  const cleanup = async () => {
    watch.cancel()
    await store.close()
    await direct.close()
    await proxy.close()
  }
  return {proxy, store, direct, events, failures, cleanup}
}

async function writeAndSee(direct: EtcdStore, events: WatchEvent[], key: string): Promise<number> {
  const revision = await direct.create(key, encoder.encode('x'))
  await until(`the watch to deliver ${key} at ${revision}`, () => events.some((e) => e.revision === revision), {timeoutMs: 20_000})
  return revision
}

describe('etcd store: watches across a lost connection', {skip, timeout: 120_000}, () => {
  it('"the etcd client keeps the watch and resumes it from the last revision seen after reconnecting": a cut connection loses no event and calls no onError', {timeout: 60_000}, async () => {
    const prefix = `/resume-cut-${Date.now()}/`
    const {proxy, direct, events, failures, cleanup} = await setUp(prefix)
    try {
      const first = await writeAndSee(direct, events, prefix + 'a')
      proxy.cut()
      // written while the watch's connection is gone or being made again
      const missed = [await direct.create(prefix + 'b', encoder.encode('x')), await direct.create(prefix + 'c', encoder.encode('x'))]
      const last = await writeAndSee(direct, events, prefix + 'd')
      assert.deepEqual(events.map((e) => e.revision), [first, ...missed, last])
      assert.deepEqual(failures, [])
    } finally {
      await cleanup()
    }
  })

  it('"retrying with back-off while etcd is unreachable": a watch whose etcd stays unreachable for a while resumes once it answers again', {timeout: 60_000}, async () => {
    const prefix = `/resume-blocked-${Date.now()}/`
    const {proxy, store, direct, events, failures, cleanup} = await setUp(prefix)
    try {
      const first = await writeAndSee(direct, events, prefix + 'a')
      proxy.block()
      const missed = await direct.create(prefix + 'b', encoder.encode('x'))
      // the store's own calls fail meanwhile: etcd is unreachable through the proxy
      await assert.rejects(store.get(prefix + 'a'))
      proxy.unblock()
      const last = await writeAndSee(direct, events, prefix + 'c')
      assert.deepEqual(events.map((e) => e.revision), [first, missed, last])
      assert.deepEqual(failures, [])
    } finally {
      await cleanup()
    }
  })

  it('"only when the revision was compacted meanwhile" does a resumed watch end, with CompactedError', {timeout: 60_000}, async () => {
    const prefix = `/resume-compacted-${Date.now()}/`
    const {proxy, direct, events, failures, cleanup} = await setUp(prefix)
    try {
      const first = await writeAndSee(direct, events, prefix + 'a')
      proxy.block()
      await direct.create(prefix + 'b', encoder.encode('x'))
      const compactedTo = await direct.create(prefix + 'c', encoder.encode('x'))
      await direct.compact(compactedTo)
      proxy.unblock()
      await until('the watch to fail', () => failures.length > 0, {timeoutMs: 20_000})
      assert.ok(failures[0] instanceof CompactedError, `got ${String(failures[0])}`)
      assert.equal((failures[0] as CompactedError).requested, first)
      assert.deepEqual(events.map((e) => e.revision), [first])
    } finally {
      await cleanup()
    }
  })
})
