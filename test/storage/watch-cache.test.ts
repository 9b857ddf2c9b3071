// The watch cache over the real SQLite store: listing, event order, replay from the ring, fan-out,
// waitUntil and decode failures.
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {StorageError, type KeyValue, type Store} from '../../src/storage/store.js'
import {TooOldResourceVersionError, WatchCache, type CacheEvent, type CacheWatcher} from '../../src/storage/watch-cache.js'

interface Obj {
  name: string
  n: number
}

const PREFIX = '/registry/pods/'

function enc(name: string, n: number, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({name, n, ...extra}))
}

/** JSON values; a value marked {bad: true} fails to decode */
function decode(kv: KeyValue): Obj {
  const parsed = JSON.parse(Buffer.from(kv.value).toString()) as Obj & {bad?: boolean}
  if (parsed.bad) throw new Error(`undecodable ${kv.key}`)
  return {name: parsed.name, n: parsed.n}
}

async function withStore(fn: (store: Store, dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-watch-cache-'))
  const store = openSqliteStore({dataDir})
  try {
    await fn(store, dataDir)
  } finally {
    await store.close()
    rmSync(dataDir, {recursive: true, force: true})
  }
}

async function withCache(
  fn: (cache: WatchCache<Obj>, store: Store) => Promise<void>,
  options: {capacity?: number; setup?: (store: Store) => Promise<void>; wrap?: (store: Store) => Store} = {},
): Promise<void> {
  await withStore(async (store) => {
    await options.setup?.(store)
    const cache = new WatchCache<Obj>(options.wrap ? options.wrap(store) : store, PREFIX, {decode, capacity: options.capacity})
    await cache.start()
    try {
      await fn(cache, store)
    } finally {
      cache.stop()
    }
  })
}

/** A watcher that records what it is given, in the order it is given it. */
class Recorder implements CacheWatcher<Obj> {
  readonly events: CacheEvent<Obj>[] = []
  /** 'e<revision>' per event and 'p<revision>' per progress call, in call order */
  readonly calls: string[] = []
  readonly errors: Error[] = []
  onEvents(events: CacheEvent<Obj>[]): void {
    for (const event of events) {
      this.events.push(event)
      this.calls.push(`e${event.revision}`)
    }
  }
  onProgress(revision: number): void {
    this.calls.push(`p${revision}`)
  }
  onError(error: Error): void {
    this.errors.push(error)
  }
  get revisions(): number[] {
    return this.events.map((e) => e.revision)
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = []
  for (let r = from; r <= to; r++) out.push(r)
  return out
}

/** n creates issued in the same tick (one group commit); resolves to their revisions */
function createMany(store: Store, names: string[], prefix = PREFIX): Promise<number[]> {
  return Promise.all(names.map((name, i) => store.create(prefix + name, enc(name, i))))
}

describe('watch cache over the sqlite store', () => {
  it('start lists the keys already under the prefix, and only those', async () => {
    await withCache(
      async (cache, store) => {
        const {items, revision} = cache.list()
        assert.deepEqual(
          items.map((e) => e.kv.key),
          [PREFIX + 'a', PREFIX + 'b'],
        )
        assert.deepEqual(
          items.map((e) => e.object),
          [
            {name: 'a', n: 1},
            {name: 'b', n: 0},
          ],
        )
        assert.equal(revision, await store.currentRevision())
        assert.equal(cache.revision, revision)
        assert.equal(cache.size, 2)
        assert.equal(cache.get(PREFIX + 'a')?.kv.modRevision, 4)
        assert.equal(cache.get('/registry/services/x'), undefined)
      },
      {
        setup: async (store) => {
          await store.create(PREFIX + 'b', enc('b', 0)) // 1
          const a = await store.create(PREFIX + 'a', enc('a', 0)) // 2
          await store.create('/registry/services/x', enc('x', 0)) // 3
          await store.update(PREFIX + 'a', enc('a', 1), a) // 4
          const c = await store.create(PREFIX + 'c', enc('c', 0)) // 5
          await store.delete(PREFIX + 'c', c) // 6
        },
      },
    )
  })

  it('events update the cache in revision order: ADDED, MODIFIED, DELETED with prev', async () => {
    await withCache(async (cache, store) => {
      const recorder = new Recorder()
      cache.watch(cache.revision, recorder)
      const a = await store.create(PREFIX + 'a', enc('a', 0))
      // several writes in one group commit reach the cache in one batch, still in order
      const [a2, b, other] = await Promise.all([
        store.update(PREFIX + 'a', enc('a', 1), a),
        store.create(PREFIX + 'b', enc('b', 0)),
        store.create('/registry/services/s', enc('s', 0)),
      ])
      const {revision: gone} = await store.delete(PREFIX + 'a', a2)
      await cache.waitUntil(gone, 5_000)

      assert.deepEqual(
        recorder.events.map((e) => [e.type, e.revision, e.key, e.object, e.prev]),
        [
          ['ADDED', a, PREFIX + 'a', {name: 'a', n: 0}, undefined],
          ['MODIFIED', a2, PREFIX + 'a', {name: 'a', n: 1}, {name: 'a', n: 0}],
          ['ADDED', b, PREFIX + 'b', {name: 'b', n: 0}, undefined],
          ['DELETED', gone, PREFIX + 'a', {name: 'a', n: 1}, {name: 'a', n: 1}],
        ],
      )
      assert.ok(other > b && other < gone, 'the write under another prefix sits between them')
      assert.equal(recorder.events[1].kv.modRevision, a2)
      assert.equal(recorder.events[1].kv.createRevision, a)
      assert.equal(recorder.events[3].kv.modRevision, gone)
      assert.equal(cache.get(PREFIX + 'a'), undefined)
      assert.deepEqual(cache.get(PREFIX + 'b')?.object, {name: 'b', n: 0})
      assert.equal(cache.revision, gone)
      assert.deepEqual(recorder.errors, [])
    })
  })

  it('watch(fromRevision) replays the ring after fromRevision, then live events, with no gap or duplicate', async () => {
    await withCache(async (cache, store) => {
      const first = await createMany(store, range(0, 9).map((i) => `k${i}`))
      await cache.waitUntil(first[9], 5_000)
      const from = first[3]
      const recorder = new Recorder()
      cache.watch(from, recorder)
      const more = await createMany(store, range(10, 14).map((i) => `k${i}`))
      await cache.waitUntil(more[4], 5_000)
      assert.deepEqual(recorder.revisions, range(from + 1, more[4]))
      // the replayed part carries the same events the live watchers saw
      assert.deepEqual(recorder.events[0].object, {name: 'k4', n: 4})
    })
  })

  it('no gap or duplicate when writes commit between watch() and its first delivery', async () => {
    await withCache(async (cache, store) => {
      const first = await createMany(store, range(0, 9).map((i) => `k${i}`))
      await cache.waitUntil(first[9], 5_000)
      // a batch of writes; the continuation of one of them runs after the commit, before the
      // cache has applied it: watch() there, so that live events race the replay
      const pending = createMany(store, range(10, 19).map((i) => `k${i}`))
      const rev = await store.create(PREFIX + 'x', enc('x', 0))
      assert.ok(cache.revision < rev, 'the cache has not applied the write yet')
      const from = first[5]
      const recorder = new Recorder()
      cache.watch(from, recorder)
      assert.deepEqual(recorder.events, [], 'nothing is delivered inside watch()')
      // and more writes while the replay is still queued
      const later = createMany(store, range(20, 29).map((i) => `k${i}`))
      const last = Math.max(rev, ...(await pending), ...(await later))
      await cache.waitUntil(last, 5_000)
      assert.deepEqual(recorder.revisions, range(from + 1, last))
    })
  })

  it('a watch from a revision the cache has not reached yet gets only the events after it', async () => {
    await withCache(async (cache, store) => {
      await createMany(store, ['a', 'b'])
      // a client writes, and watches from the revision it got back, before the cache applied it
      // (c, d and e commit together; the continuation after e's await runs before the cache applies them)
      const cd = createMany(store, ['c', 'd'])
      const r3 = await store.create(PREFIX + 'e', enc('e', 0))
      assert.ok(cache.revision < r3, 'the cache has not applied the write yet')
      const r2 = r3 - 1
      const recorder = new Recorder()
      cache.watch(r2, recorder)
      const r4 = await store.create(PREFIX + 'f', enc('f', 0))
      await cache.waitUntil(r4, 5_000)
      assert.deepEqual(await cd, [r2 - 1, r2])
      assert.deepEqual(recorder.revisions, [r3, r4], `watch from ${r2} was given events at or before ${r2}`)
    })
  })

  it('a watcher is never told of progress past events it has not been given yet', async () => {
    await withCache(async (cache, store) => {
      const created = await createMany(store, ['a', 'b', 'c'])
      await cache.waitUntil(created[2], 5_000)
      // a write under another prefix: the cache hears of it as progress only. Watch from the
      // start right after its commit, while the replay of a, b, c is still queued.
      const other = await store.create('/registry/services/s', enc('s', 0))
      const recorder = new Recorder()
      cache.watch(created[0] - 1, recorder)
      await cache.waitUntil(other, 5_000)
      const firstProgress = recorder.calls.findIndex((c) => c.startsWith('p'))
      const lastEvent = recorder.calls.findLastIndex((c) => c.startsWith('e'))
      assert.deepEqual(recorder.revisions, created)
      assert.ok(
        firstProgress === -1 || firstProgress > lastEvent,
        `calls in order ${recorder.calls.join(' ')}: progress ${recorder.calls[firstProgress]} came before the events it covers`,
      )
    })
  })

  it('a fromRevision older than the ring holds throws TooOldResourceVersionError', async () => {
    await withCache(
      async (cache, store) => {
        const start = cache.revision
        const revisions: number[] = []
        for (let i = 0; i < 10; i++) revisions.push(await store.create(PREFIX + `k${i}`, enc(`k${i}`, i)))
        await cache.waitUntil(revisions[9], 5_000)
        // the ring keeps the last 3 events: it can replay after revisions[6], not before
        const oldest = revisions[6]
        assert.throws(
          () => cache.watch(start, new Recorder()),
          (error) => error instanceof TooOldResourceVersionError && error.requested === start && error.oldest === oldest,
        )
        assert.throws(() => cache.watch(oldest - 1, new Recorder()), TooOldResourceVersionError)
        const recorder = new Recorder()
        cache.watch(oldest, recorder)
        const next = await store.create(PREFIX + 'k10', enc('k10', 10))
        await cache.waitUntil(next, 5_000)
        assert.deepEqual(recorder.revisions, [...revisions.slice(7), next])
        assert.equal(cache.watcherCount, 1)
      },
      {capacity: 3},
    )
  })

  it('any number of watchers fan out from one storage watch: 1,000 watchers all get every event in order', async () => {
    let storageWatches = 0
    const counting = (store: Store): Store =>
      new Proxy(store, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown
          if (property === 'watch') {
            return (...args: Parameters<Store['watch']>) => {
              storageWatches++
              return target.watch(...args)
            }
          }
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    await withCache(
      async (cache, store) => {
        const from = cache.revision
        const recorders: Recorder[] = []
        const watches = []
        for (let i = 0; i < 1_000; i++) {
          const recorder = new Recorder()
          recorders.push(recorder)
          watches.push(cache.watch(from, recorder))
        }
        assert.equal(cache.watcherCount, 1_000)
        // 16 concurrent writers: creates, updates and deletes
        const written: number[] = []
        await Promise.all(
          range(0, 15).map(async (w) => {
            const key = `${PREFIX}w${w}`
            let rev = await store.create(key, enc(`w${w}`, 0))
            written.push(rev)
            for (let n = 1; n < 12; n++) {
              rev = await store.update(key, enc(`w${w}`, n), rev)
              written.push(rev)
            }
            written.push((await store.delete(key, rev)).revision)
          }),
        )
        written.sort((x, y) => x - y)
        await cache.waitUntil(written[written.length - 1], 5_000)
        assert.equal(written.length, 16 * 13)
        for (const recorder of recorders) {
          assert.deepEqual(recorder.revisions, written)
          assert.deepEqual(recorder.errors, [])
        }
        const types = recorders[0].events.map((e) => e.type)
        assert.equal(types.filter((t) => t === 'ADDED').length, 16)
        assert.equal(types.filter((t) => t === 'DELETED').length, 16)
        assert.equal(storageWatches, 1, 'the cache opened more than one storage watch')
        for (const watch of watches) watch.cancel()
        assert.equal(cache.watcherCount, 0)
      },
      {wrap: counting},
    )
  })

  it('waitUntil(revision) resolves once a write at that revision is seen and rejects on timeout', async () => {
    await withCache(async (cache, store) => {
      const now = cache.revision
      await cache.waitUntil(now, 10) // already there: resolves at once
      const waiting = cache.waitUntil(now + 1, 5_000)
      let resolved = false
      void waiting.then(() => (resolved = true))
      const rev = await store.create(PREFIX + 'a', enc('a', 0))
      assert.equal(rev, now + 1)
      await waiting
      assert.ok(resolved)
      assert.ok(cache.revision >= rev)
      assert.ok(cache.get(PREFIX + 'a'), 'the write is in the cache when waitUntil resolves')
      // a write under another prefix moves the cache's revision too (storage progress)
      const other = await store.create('/registry/services/s', enc('s', 0))
      await cache.waitUntil(other, 5_000)
      assert.equal(cache.revision, other)
      await assert.rejects(cache.waitUntil(other + 100, 50), (error) => {
        assert.ok(error instanceof StorageError)
        assert.match(error.message, new RegExp(`revision ${other + 100}`))
        return true
      })
    })
  })

  it('list() is sorted by key and reflects the cache revision', async () => {
    await withCache(async (cache, store) => {
      const revs = await createMany(store, ['zeta', 'alpha', 'mu'])
      await cache.waitUntil(Math.max(...revs), 5_000)
      let listed = cache.list()
      assert.deepEqual(
        listed.items.map((e) => e.object.name),
        ['alpha', 'mu', 'zeta'],
      )
      assert.equal(listed.revision, Math.max(...revs))
      // a new key, an update and a delete: the next list shows all three
      const beta = await store.create(PREFIX + 'beta', enc('beta', 0))
      const mu = await store.update(PREFIX + 'mu', enc('mu', 7), revs[2])
      const {revision: gone} = await store.delete(PREFIX + 'zeta')
      await cache.waitUntil(gone, 5_000)
      listed = cache.list()
      assert.deepEqual(
        listed.items.map((e) => [e.object.name, e.kv.modRevision]),
        [
          ['alpha', revs[1]],
          ['beta', beta],
          ['mu', mu],
        ],
      )
      assert.equal(listed.items[2].object.n, 7)
      assert.equal(listed.revision, gone)
      // the same as the store lists at that revision
      const fromStore = await store.list(PREFIX)
      assert.equal(fromStore.revision, gone)
      assert.deepEqual(
        fromStore.items.map((kv) => [kv.key, kv.modRevision]),
        listed.items.map((e) => [e.kv.key, e.kv.modRevision]),
      )
    })
  })

  it('a decode that throws skips that entry', async () => {
    await withCache(
      async (cache, store) => {
        assert.deepEqual(
          cache.list().items.map((e) => e.object.name),
          ['good'],
        )
        const recorder = new Recorder()
        cache.watch(cache.revision, recorder)
        const badLive = await store.create(PREFIX + 'bad-live', enc('bad-live', 0, {bad: true}))
        const ok = await store.create(PREFIX + 'ok', enc('ok', 0))
        // deleting an entry the cache never held produces no event
        const {revision: gone} = await store.delete(PREFIX + 'bad-live')
        await cache.waitUntil(gone, 5_000)
        assert.ok(badLive < ok)
        assert.deepEqual(
          recorder.events.map((e) => [e.type, e.key]),
          [['ADDED', PREFIX + 'ok']],
        )
        assert.deepEqual(
          cache.list().items.map((e) => e.object.name),
          ['good', 'ok'],
        )
        assert.equal(cache.revision, gone)
        assert.deepEqual(recorder.errors, [])
      },
      {
        setup: async (store) => {
          await store.create(PREFIX + 'bad', enc('bad', 0, {bad: true}))
          await store.create(PREFIX + 'good', enc('good', 0))
          await store.create(PREFIX + 'garbage', Buffer.from('{not json'))
        },
      },
    )
  })

  it('stop() ends every watcher with an error', async () => {
    await withCache(async (cache) => {
      const recorders = [new Recorder(), new Recorder()]
      for (const recorder of recorders) cache.watch(cache.revision, recorder)
      cache.stop()
      for (const recorder of recorders) assert.equal(recorder.errors.length, 1)
      assert.equal(cache.watcherCount, 0)
    })
  })
})
