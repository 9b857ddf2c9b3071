// The watch history window: compaction keeps at least the retention window, and the watch cache
// refuses to replay events older than it.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, describe, it} from 'node:test'
import {Compactor} from '../../src/storage/compactor.js'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {CompactedError} from '../../src/storage/store.js'
import {TooOldResourceVersionError, WatchCache} from '../../src/storage/watch-cache.js'
import {tempDir} from '../support/server.js'

const value = (s: string) => Buffer.from(s)

describe('watch history window', () => {
  const dirs: string[] = []
  after(() => {
    for (const d of dirs) rmSync(d, {recursive: true, force: true})
  })
  function open() {
    const dir = tempDir('orch-history-')
    dirs.push(dir)
    return openSqliteStore({dataDir: dir})
  }

  it('history compaction keeps at least the retention window and answers Compacted for anything older', async () => {
    const store = open()
    const compactor = new Compactor(store, {retentionMs: 5 * 60_000, intervalMs: 0})
    const t0 = 1_000_000
    await store.create('/h/0', value('0'))
    await store.create('/h/a', value('1'))
    const early = await store.currentRevision()
    await compactor.tick(t0)
    await store.create('/h/b', value('2'))
    await compactor.tick(t0 + 60_000)
    // younger than the window: nothing compacted yet
    assert.equal(await store.compactedRevision(), 0)
    await store.create('/h/c', value('3'))
    await compactor.tick(t0 + 5 * 60_000)
    assert.equal(await store.compactedRevision(), early)
    await assert.rejects(store.list('/h/', {revision: early - 1}), CompactedError)
    const kept = await store.list('/h/', {revision: early})
    assert.deepEqual(kept.items.map((i) => i.key), ['/h/0', '/h/a'])
    await store.close()
  })

  it('the watch cache does not replay events older than its retention: such a watch is too old (410)', async () => {
    const store = open()
    let now = 0
    const cache = new WatchCache(store, '/w/', {decode: (kv) => kv.key, retentionMs: 1_000, now: () => now})
    await cache.start()
    const start = cache.revision
    await store.create('/w/a', value('1'))
    await cache.waitUntil(start + 1, 5_000)
    now = 500
    assert.doesNotThrow(() => cache.watch(start, {onEvents() {}, onError() {}}).cancel())
    now = 2_000
    await store.create('/w/b', value('2'))
    await cache.waitUntil(start + 2, 5_000)
    assert.throws(() => cache.watch(start, {onEvents() {}, onError() {}}), TooOldResourceVersionError)
    // a watch from after the expired events is still served
    assert.doesNotThrow(() => cache.watch(start + 1, {onEvents() {}, onError() {}}).cancel())
    cache.stop()
    await store.close()
  })
})
