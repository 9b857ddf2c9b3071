// The Store contract (src/storage/store.ts) as a test suite every backend runs. Each test works
// under its own key prefix, so tests do not see each other's keys; the compaction tests come last
// because compaction is store-wide. The watch tests are in contract-watch.ts.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {CompactedError, ConflictError, KeyExistsError, KeyNotFoundError, StorageError, type Store} from '../../src/storage/store.js'
import {assertKv, bytesOf, keysOf, type OpenedStore, record, TEST_TIMEOUT_MS, textOf, uniquePrefix} from './contract-support.js'
import {defineWatchContract} from './contract-watch.js'

export type {OpenedStore} from './contract-support.js'

export function defineStoreContract(
  name: string,
  open: () => Promise<OpenedStore>,
  options: {skip?: string | false} = {},
): void {
  describe(`Store contract: ${name}`, {skip: options.skip || undefined, timeout: 10 * 60_000}, () => {
    let store: Store
    let cleanup: (() => Promise<void>) | undefined

    before(async () => {
      const opened = await open()
      store = opened.store
      cleanup = opened.cleanup
    })

    after(async () => {
      await cleanup?.()
    })

    const test = (title: string, body: () => Promise<void>) => it(title, {timeout: TEST_TIMEOUT_MS}, body)

    // --- single keys -------------------------------------------------------------------------

    test('create stores a new key: get returns it with modRevision = createRevision = the returned revision', async () => {
      const key = uniquePrefix('create') + 'a'
      const revision = await store.create(key, bytesOf('one'))
      assert.ok(Number.isInteger(revision) && revision > 0)
      assertKv(await store.get(key), {key, value: 'one', modRevision: revision, createRevision: revision})
    })

    test('get of an absent key resolves to null', async () => {
      assert.equal(await store.get(uniquePrefix('absent') + 'nothing'), null)
    })

    test('values are stored as exact bytes (empty, NUL and 0xff bytes included)', async () => {
      const prefix = uniquePrefix('bytes')
      const binary = new Uint8Array([0, 255, 1, 0, 128, 10, 13])
      await store.create(prefix + 'binary', binary)
      await store.create(prefix + 'empty', new Uint8Array(0))
      assert.deepEqual([...((await store.get(prefix + 'binary'))?.value ?? [])], [...binary])
      assert.equal((await store.get(prefix + 'empty'))?.value.length, 0)
    })

    test('create of an existing key fails with KeyExistsError and leaves the value unchanged', async () => {
      const key = uniquePrefix('exists') + 'a'
      const revision = await store.create(key, bytesOf('first'))
      await assert.rejects(store.create(key, bytesOf('second')), (error: unknown) => {
        assert.ok(error instanceof KeyExistsError, `expected KeyExistsError, got ${String(error)}`)
        assert.ok(error instanceof StorageError)
        assert.equal(error.key, key)
        return true
      })
      assertKv(await store.get(key), {key, value: 'first', modRevision: revision, createRevision: revision})
    })

    test('create of a deleted key succeeds and starts a new createRevision', async () => {
      const key = uniquePrefix('recreate') + 'a'
      const first = await store.create(key, bytesOf('v1'))
      await store.delete(key)
      const second = await store.create(key, bytesOf('v2'))
      assert.ok(second > first)
      assertKv(await store.get(key), {key, value: 'v2', modRevision: second, createRevision: second})
    })

    test('update with the current modRevision succeeds, returns a higher revision and keeps createRevision', async () => {
      const key = uniquePrefix('update') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      const updated = await store.update(key, bytesOf('v2'), created)
      assert.ok(updated > created)
      assertKv(await store.get(key), {key, value: 'v2', modRevision: updated, createRevision: created})
      const again = await store.update(key, bytesOf('v3'), updated)
      assert.ok(again > updated)
      assertKv(await store.get(key), {key, value: 'v3', modRevision: again, createRevision: created})
    })

    test('update with a stale expected revision fails with ConflictError carrying the current value', async () => {
      const key = uniquePrefix('conflict') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      const updated = await store.update(key, bytesOf('v2'), created)
      await assert.rejects(store.update(key, bytesOf('v3'), created), (error: unknown) => {
        assert.ok(error instanceof ConflictError, `expected ConflictError, got ${String(error)}`)
        assert.equal(error.key, key)
        assertKv(error.current, {key, value: 'v2', modRevision: updated, createRevision: created})
        return true
      })
      assertKv(await store.get(key), {key, value: 'v2', modRevision: updated, createRevision: created})
    })

    test('update of an absent key fails with KeyNotFoundError (whatever the expected revision)', async () => {
      const prefix = uniquePrefix('update-absent')
      for (const expected of [0, 1, 12345]) {
        await assert.rejects(store.update(prefix + 'missing', bytesOf('x'), expected), (error: unknown) => {
          assert.ok(error instanceof KeyNotFoundError, `expected KeyNotFoundError, got ${String(error)}`)
          assert.equal(error.key, prefix + 'missing')
          return true
        })
      }
      assert.equal(await store.get(prefix + 'missing'), null)
    })

    test('update of a deleted key fails with KeyNotFoundError', async () => {
      const key = uniquePrefix('update-deleted') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      await store.delete(key)
      await assert.rejects(store.update(key, bytesOf('v2'), created), KeyNotFoundError)
    })

    test('delete without an expected revision removes the key and returns the deleting revision and the last value', async () => {
      const key = uniquePrefix('delete') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      const updated = await store.update(key, bytesOf('v2'), created)
      const {revision, prev} = await store.delete(key)
      assert.ok(revision > updated)
      assertKv(prev, {key, value: 'v2', modRevision: updated, createRevision: created})
      assert.equal(await store.get(key), null)
    })

    test('delete with the current modRevision removes the key', async () => {
      const key = uniquePrefix('delete-cas') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      const {revision, prev} = await store.delete(key, created)
      assert.ok(revision > created)
      assertKv(prev, {key, value: 'v1', modRevision: created, createRevision: created})
      assert.equal(await store.get(key), null)
    })

    test('delete with a stale expected revision fails with ConflictError carrying the current value and keeps the key', async () => {
      const key = uniquePrefix('delete-conflict') + 'a'
      const created = await store.create(key, bytesOf('v1'))
      const updated = await store.update(key, bytesOf('v2'), created)
      await assert.rejects(store.delete(key, created), (error: unknown) => {
        assert.ok(error instanceof ConflictError, `expected ConflictError, got ${String(error)}`)
        assert.equal(error.key, key)
        assertKv(error.current, {key, value: 'v2', modRevision: updated, createRevision: created})
        return true
      })
      assertKv(await store.get(key), {key, value: 'v2', modRevision: updated, createRevision: created})
    })

    test('delete of an absent key fails with KeyNotFoundError, with or without an expected revision', async () => {
      const key = uniquePrefix('delete-absent') + 'missing'
      await assert.rejects(store.delete(key), KeyNotFoundError)
      await assert.rejects(store.delete(key, 7), KeyNotFoundError)
    })

    // --- revisions ---------------------------------------------------------------------------

    test('revisions strictly increase across all keys and writes, and currentRevision follows every write', async () => {
      const a = uniquePrefix('revisions-a')
      const b = uniquePrefix('revisions-b')
      let last = await store.currentRevision()
      const step = async (write: Promise<number>) => {
        const revision = await write
        assert.ok(revision > last, `revision ${revision} does not follow ${last}`)
        assert.ok((await store.currentRevision()) >= revision)
        last = revision
        return revision
      }
      const a1 = await step(store.create(a + 'k', bytesOf('1')))
      const b1 = await step(store.create(b + 'k', bytesOf('1')))
      const a2 = await step(store.update(a + 'k', bytesOf('2'), a1))
      await step(store.update(b + 'k', bytesOf('2'), b1))
      await step(store.delete(a + 'k', a2).then((r) => r.revision))
      await step(store.create(a + 'k', bytesOf('3')))
    })

    test('currentRevision moves forward with writes and stays put without them', async () => {
      const prefix = uniquePrefix('current')
      const initial = await store.currentRevision()
      assert.ok(Number.isInteger(initial) && initial >= 0)
      const written = await store.create(prefix + 'a', bytesOf('x'))
      const moved = await store.currentRevision()
      assert.ok(written > initial && moved >= written)
      await store.get(prefix + 'a')
      await store.list(prefix)
      await store.count(prefix)
      assert.equal(await store.currentRevision(), moved)
    })

    // --- list and count ----------------------------------------------------------------------

    test('list returns the keys under a prefix ordered by key, without keys of a sibling prefix', async () => {
      const root = uniquePrefix('list')
      const keys = [`${root}a/y`, `${root}ab/y`, `${root}a/x`, `${root}a/z/deep`, `${root}a`, `${root}b/x`, `${root}a/0`]
      for (const key of keys) await store.create(key, bytesOf(key))
      const result = await store.list(`${root}a/`)
      assert.deepEqual(keysOf(result.items), [`${root}a/0`, `${root}a/x`, `${root}a/y`, `${root}a/z/deep`])
      for (const kv of result.items) assert.equal(textOf(kv.value), kv.key)
      assert.equal(result.remaining, 0)
      assert.ok(result.revision >= (await store.get(`${root}a/0`))!.modRevision)
      assert.deepEqual(keysOf((await store.list(root)).items), [...keys].sort())
    })

    test('list of a prefix with no keys returns no items and remaining 0', async () => {
      const result = await store.list(uniquePrefix('list-empty'))
      assert.deepEqual(result.items, [])
      assert.equal(result.remaining, 0)
      assert.ok(result.revision >= 0)
    })

    test('list without a revision reads now and reports the revision it read at', async () => {
      const prefix = uniquePrefix('list-now')
      const written = await store.create(prefix + 'a', bytesOf('x'))
      const result = await store.list(prefix)
      assert.ok(result.revision >= written)
      assert.ok(result.revision <= (await store.currentRevision()))
      assert.deepEqual(keysOf(result.items), [prefix + 'a'])
    })

    test('list at an older revision returns the snapshot as it was before later creates, updates and deletes', async () => {
      const prefix = uniquePrefix('snapshot')
      const ra = await store.create(prefix + 'a', bytesOf('a1'))
      const rb = await store.create(prefix + 'b', bytesOf('b1'))
      const rc = await store.create(prefix + 'c', bytesOf('c1'))
      const snapshot = rc
      const ra2 = await store.update(prefix + 'a', bytesOf('a2'), ra)
      await store.delete(prefix + 'b')
      await store.create(prefix + 'd', bytesOf('d1'))
      await store.delete(prefix + 'c')
      await store.create(prefix + 'c', bytesOf('c2'))

      const then = await store.list(prefix, {revision: snapshot})
      assert.equal(then.revision, snapshot)
      assert.equal(then.remaining, 0)
      assert.deepEqual(keysOf(then.items), [prefix + 'a', prefix + 'b', prefix + 'c'])
      assertKv(then.items[0], {key: prefix + 'a', value: 'a1', modRevision: ra, createRevision: ra})
      assertKv(then.items[1], {key: prefix + 'b', value: 'b1', modRevision: rb, createRevision: rb})
      assertKv(then.items[2], {key: prefix + 'c', value: 'c1', modRevision: rc, createRevision: rc})

      const limited = await store.list(prefix, {revision: snapshot, limit: 2})
      assert.deepEqual(keysOf(limited.items), [prefix + 'a', prefix + 'b'])
      assert.equal(limited.remaining, 1)

      const middle = await store.list(prefix, {revision: ra2})
      assert.deepEqual(
        middle.items.map((kv) => `${kv.key}=${textOf(kv.value)}`),
        [`${prefix}a=a2`, `${prefix}b=b1`, `${prefix}c=c1`],
      )

      const now = await store.list(prefix)
      assert.deepEqual(
        now.items.map((kv) => `${kv.key}=${textOf(kv.value)}`),
        [`${prefix}a=a2`, `${prefix}c=c2`, `${prefix}d=d1`],
      )
      assert.ok(then.items.length === 3 && (await store.list(prefix, {revision: rb})).items.length === 2)
    })

    test('paging with startAfter and limit gives every key once at a constant revision, with correct remaining (0 on the last page)', async () => {
      const prefix = uniquePrefix('paging')
      const keys = Array.from({length: 10}, (_, i) => `${prefix}k${String(i).padStart(2, '0')}`)
      for (const key of [...keys].reverse()) await store.create(key, bytesOf(key))
      await store.create(uniquePrefix('paging-sibling') + 'k', bytesOf('x'))

      const seen: string[] = []
      const remainings: number[] = []
      let revision = 0
      let startAfter: string | undefined
      let pages = 0
      while (true) {
        const page = await store.list(prefix, {revision, startAfter, limit: 3})
        pages += 1
        if (revision === 0) {
          revision = page.revision
          // writes between pages must not show: the later pages read at the first page's revision
          await store.create(`${prefix}k05a`, bytesOf('new'))
          await store.delete(`${prefix}k08`)
          const k01 = (await store.get(`${prefix}k01`))!
          await store.update(`${prefix}k01`, bytesOf('changed'), k01.modRevision)
        } else {
          assert.equal(page.revision, revision)
        }
        seen.push(...keysOf(page.items))
        remainings.push(page.remaining)
        for (const kv of page.items) assert.equal(textOf(kv.value), kv.key)
        if (page.remaining === 0) break
        assert.ok(page.items.length === 3, 'a page before the last is full')
        startAfter = page.items[page.items.length - 1].key
        assert.ok(pages < 10, 'paging does not end')
      }
      assert.deepEqual(seen, keys)
      assert.deepEqual(remainings, [7, 4, 1, 0])

      const beyond = await store.list(prefix, {revision, startAfter: keys[9], limit: 3})
      assert.deepEqual(beyond.items, [])
      assert.equal(beyond.remaining, 0)

      const all = await store.list(prefix, {revision, limit: 10})
      assert.equal(all.items.length, 10)
      assert.equal(all.remaining, 0)

      // startAfter before the prefix starts at the prefix
      const fromStart = await store.list(prefix, {revision, startAfter: '/', limit: 2})
      assert.deepEqual(keysOf(fromStart.items), keys.slice(0, 2))
      assert.equal(fromStart.remaining, 8)

      // and paging now sees the writes made meanwhile
      const now = await store.list(prefix)
      assert.ok(keysOf(now.items).includes(`${prefix}k05a`) && !keysOf(now.items).includes(`${prefix}k08`))
    })

    test('list at a revision in the future fails with a StorageError', async () => {
      const prefix = uniquePrefix('future')
      await store.create(prefix + 'a', bytesOf('x'))
      const future = (await store.currentRevision()) + 1000
      await assert.rejects(store.list(prefix, {revision: future}), (error: unknown) => {
        assert.ok(error instanceof StorageError, `expected a StorageError, got ${String(error)}`)
        assert.ok(!(error instanceof CompactedError))
        return true
      })
    })

    test('count returns how many keys are under a prefix now, without sibling prefixes', async () => {
      const root = uniquePrefix('count')
      assert.equal(await store.count(`${root}a/`), 0)
      for (const key of ['a/1', 'a/2', 'a/3', 'ab/1', 'b/1']) await store.create(root + key, bytesOf(key))
      assert.equal(await store.count(`${root}a/`), 3)
      assert.equal(await store.count(root), 5)
      await store.delete(`${root}a/2`)
      assert.equal(await store.count(`${root}a/`), 2)
    })

    // --- watch (contract-watch.ts) -------------------------------------------------------------

    defineWatchContract(() => store, test)

    // --- concurrency -------------------------------------------------------------------------

    test('16 concurrent creates of distinct keys all succeed with distinct revisions', async () => {
      const prefix = uniquePrefix('concurrent-create')
      const keys = Array.from({length: 16}, (_, i) => `${prefix}${String(i).padStart(2, '0')}`)
      const revisions = await Promise.all(keys.map((key) => store.create(key, bytesOf(key))))
      assert.equal(new Set(revisions).size, 16)
      const listed = await store.list(prefix)
      assert.deepEqual(keysOf(listed.items), keys)
      for (const [i, kv] of listed.items.entries()) assert.equal(kv.modRevision, revisions[i])
    })

    test('of 16 concurrent creates of one key exactly one succeeds and the others fail with KeyExistsError', async () => {
      const key = uniquePrefix('concurrent-create-one') + 'k'
      const results = await Promise.allSettled(Array.from({length: 16}, (_, i) => store.create(key, bytesOf(`w${i}`))))
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{i, revision: r.value}] : []))
      assert.equal(won.length, 1)
      for (const r of results) {
        if (r.status === 'rejected') assert.ok(r.reason instanceof KeyExistsError, `unexpected ${String(r.reason)}`)
      }
      assertKv(await store.get(key), {key, value: `w${won[0].i}`, modRevision: won[0].revision, createRevision: won[0].revision})
    })

    test('of 16 concurrent updates with the same expected revision exactly one wins and the others get ConflictError with the winner', async () => {
      const key = uniquePrefix('cas-race') + 'k'
      const created = await store.create(key, bytesOf('start'))
      const results = await Promise.allSettled(
        Array.from({length: 16}, (_, i) => store.update(key, bytesOf(`w${i}`), created)),
      )
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{i, revision: r.value}] : []))
      assert.equal(won.length, 1, `${won.length} updates won`)
      const winner = {key, value: `w${won[0].i}`, modRevision: won[0].revision, createRevision: created}
      for (const r of results) {
        if (r.status === 'fulfilled') continue
        assert.ok(r.reason instanceof ConflictError, `unexpected ${String(r.reason)}`)
        assertKv(r.reason.current, winner)
      }
      assertKv(await store.get(key), winner)
    })

    test('16 concurrent read-modify-write loops that retry on ConflictError lose no update', async () => {
      const key = uniquePrefix('counter') + 'n'
      await store.create(key, bytesOf('0'))
      const increments = 3
      const worker = async () => {
        for (let done = 0; done < increments; ) {
          const current = (await store.get(key))!
          try {
            await store.update(key, bytesOf(String(Number(textOf(current.value)) + 1)), current.modRevision)
            done += 1
          } catch (error) {
            if (!(error instanceof ConflictError)) throw error
          }
        }
      }
      await Promise.all(Array.from({length: 16}, worker))
      assert.equal(textOf((await store.get(key))!.value), String(16 * increments))
    })

    test('16 concurrent deletes with the same expected revision: exactly one succeeds and the others fail with KeyNotFoundError', async () => {
      const key = uniquePrefix('concurrent-delete') + 'k'
      const created = await store.create(key, bytesOf('x'))
      const results = await Promise.allSettled(Array.from({length: 16}, () => store.delete(key, created)))
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      for (const r of results) {
        if (r.status === 'rejected') assert.ok(r.reason instanceof KeyNotFoundError, `unexpected ${String(r.reason)}`)
      }
      assert.equal(await store.get(key), null)
    })

    // --- compaction (store-wide: last) -------------------------------------------------------

    describe('compaction', () => {
      let prefix: string
      let r1: number
      let r2: number
      let r3: number

      before(async () => {
        prefix = uniquePrefix('compact')
        r1 = await store.create(prefix + 'a', bytesOf('a1'))
        r2 = await store.update(prefix + 'a', bytesOf('a2'), r1)
        r3 = await store.create(prefix + 'b', bytesOf('b1'))
        await store.compact(r3)
      })

      test('compactedRevision reports the revision compacted to', async () => {
        assert.equal(await store.compactedRevision(), r3)
      })

      test('list at a revision older than the compacted one fails with CompactedError', async () => {
        for (const revision of [r1, r2, r3 - 1]) {
          await assert.rejects(store.list(prefix, {revision}), (error: unknown) => {
            assert.ok(error instanceof CompactedError, `expected CompactedError, got ${String(error)}`)
            assert.ok(error instanceof StorageError)
            assert.equal(error.requested, revision)
            assert.equal(error.compacted, r3)
            return true
          })
        }
      })

      test('list at the compacted revision itself still returns the snapshot', async () => {
        const result = await store.list(prefix, {revision: r3})
        assert.deepEqual(
          result.items.map((kv) => `${kv.key}=${textOf(kv.value)}`),
          [`${prefix}a=a2`, `${prefix}b=b1`],
        )
      })

      test('watch from a revision older than the compacted one fails with CompactedError through onError', async () => {
        for (const from of [r1, r3 - 1]) {
          const recorder = record(store, prefix, from)
          try {
            const error = await recorder.untilError()
            assert.ok(error instanceof CompactedError, `expected CompactedError, got ${String(error)}`)
            assert.equal(error.requested, from)
            assert.equal(error.compacted, r3)
            assert.deepEqual(recorder.events, [])
          } finally {
            recorder.watch.cancel()
          }
        }
      })

      test('watch from the compacted revision still delivers the events after it', async () => {
        const recorder = record(store, prefix, r3)
        try {
          const r4 = await store.update(prefix + 'b', bytesOf('b2'), r3)
          const events = await recorder.untilEvents(1)
          assert.deepEqual(events.map((e) => [e.type, e.kv.key, e.revision]), [['put', prefix + 'b', r4]])
          assertKv(events[0].prevKv, {key: prefix + 'b', value: 'b1', modRevision: r3, createRevision: r3})
          assert.deepEqual(recorder.errors, [])
        } finally {
          recorder.watch.cancel()
        }
      })

      test('compact to a revision at or below the compacted one changes nothing', async () => {
        await store.compact(r2)
        await store.compact(r3)
        assert.equal(await store.compactedRevision(), r3)
        assert.equal((await store.list(prefix, {revision: r3})).items.length, 2)
      })

      test('reads and writes work as before after compaction', async () => {
        const current = (await store.get(prefix + 'a'))!
        assertKv(current, {key: prefix + 'a', value: 'a2', modRevision: r2, createRevision: r1})
        const r = await store.update(prefix + 'a', bytesOf('a3'), r2)
        assert.ok(r > r3)
        assert.equal(await store.count(prefix), 2)
      })
    })
  })
}
