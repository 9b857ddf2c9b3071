// The watch half of the Store contract (contract.ts runs it inside its describe).
import assert from 'node:assert/strict'
import type {Store} from '../../src/storage/store.js'
import {assertKv, bytesOf, keysOf, record, textOf, turn, uniquePrefix} from './contract-support.js'

export function defineWatchContract(storeOf: () => Store, define: (title: string, body: () => Promise<void>) => void): void {
  let store: Store
  const test = (title: string, body: () => Promise<void>) =>
    define(title, async () => {
      store = storeOf()
      await body()
    })

  // --- watch -------------------------------------------------------------------------------

  test('watch from a revision replays the history after it, then live events, in order with types, created flags and prevKv', async () => {
    const prefix = uniquePrefix('watch')
    const start = await store.currentRevision()
    const r1 = await store.create(prefix + 'a', bytesOf('a1'))
    const r2 = await store.update(prefix + 'a', bytesOf('a2'), r1)
    const r3 = await store.create(prefix + 'b', bytesOf('b1'))
    const r4 = (await store.delete(prefix + 'b')).revision
    const recorder = record(store, prefix, start)
    try {
      await recorder.untilEvents(4)
      const r5 = await store.update(prefix + 'a', bytesOf('a3'), r2)
      const r6 = (await store.delete(prefix + 'a', r5)).revision
      const r7 = await store.create(prefix + 'c', bytesOf('c1'))
      const events = await recorder.untilEvents(7)
      assert.equal(recorder.errors.length, 0)
      assert.deepEqual(
        events.map((e) => [e.type, e.kv.key, e.revision, e.created]),
        [
          ['put', prefix + 'a', r1, true],
          ['put', prefix + 'a', r2, false],
          ['put', prefix + 'b', r3, true],
          ['delete', prefix + 'b', r4, false],
          ['put', prefix + 'a', r5, false],
          ['delete', prefix + 'a', r6, false],
          ['put', prefix + 'c', r7, true],
        ],
      )
      for (const event of events) assert.equal(event.kv.modRevision, event.revision)
      // puts carry the new value, deletes the last value
      assert.deepEqual(events.map((e) => textOf(e.kv.value)), ['a1', 'a2', 'b1', 'b1', 'a3', 'a3', 'c1'])
      assert.deepEqual(events.map((e) => e.kv.createRevision), [r1, r1, r3, r3, r1, r1, r7])
      // prevKv: absent on creates, the value before the write otherwise
      assert.equal(events[0].prevKv, undefined)
      assertKv(events[1].prevKv, {key: prefix + 'a', value: 'a1', modRevision: r1, createRevision: r1})
      assert.equal(events[2].prevKv, undefined)
      assertKv(events[3].prevKv, {key: prefix + 'b', value: 'b1', modRevision: r3, createRevision: r3})
      assertKv(events[4].prevKv, {key: prefix + 'a', value: 'a2', modRevision: r2, createRevision: r1})
      assertKv(events[5].prevKv, {key: prefix + 'a', value: 'a3', modRevision: r5, createRevision: r1})
      assert.equal(events[6].prevKv, undefined)
      // each batch is non-empty and in revision order
      for (const batch of recorder.batches) assert.ok(batch.length > 0)
      for (let i = 1; i < events.length; i++) assert.ok(events[i].revision > events[i - 1].revision)
    } finally {
      recorder.watch.cancel()
    }
  })

  test('watch from a revision in the middle of the history replays only the events after it', async () => {
    const prefix = uniquePrefix('watch-middle')
    const r1 = await store.create(prefix + 'a', bytesOf('1'))
    const r2 = await store.update(prefix + 'a', bytesOf('2'), r1)
    const r3 = await store.update(prefix + 'a', bytesOf('3'), r2)
    const recorder = record(store, prefix, r2)
    try {
      const r4 = await store.create(prefix + 'b', bytesOf('1'))
      const events = await recorder.untilEvents(2)
      assert.deepEqual(events.map((e) => e.revision), [r3, r4])
    } finally {
      recorder.watch.cancel()
    }
  })

  test('watch from the current revision delivers only later events', async () => {
    const prefix = uniquePrefix('watch-now')
    await store.create(prefix + 'old', bytesOf('x'))
    const recorder = record(store, prefix, await store.currentRevision())
    try {
      const revision = await store.create(prefix + 'new', bytesOf('y'))
      const events = await recorder.untilEvents(1)
      assert.deepEqual(events.map((e) => [e.kv.key, e.revision]), [[prefix + 'new', revision]])
    } finally {
      recorder.watch.cancel()
    }
  })

  test('watch only delivers events under its prefix (not a sibling prefix, not the parent)', async () => {
    const root = uniquePrefix('watch-prefix')
    const recorder = record(store, `${root}a/`, await store.currentRevision())
    try {
      await store.create(`${root}ab/x`, bytesOf('sibling'))
      await store.create(`${root}a`, bytesOf('parent-ish'))
      await store.create(`${root}b/x`, bytesOf('other'))
      await store.create(`${root}x`, bytesOf('parent'))
      const mine = await store.create(`${root}a/x`, bytesOf('mine'))
      // events come in revision order, so everything written before `mine` has been filtered by now
      const events = await recorder.untilEvents(1)
      await turn()
      assert.deepEqual(
        recorder.events.map((e) => [e.kv.key, e.revision]),
        [[`${root}a/x`, mine]],
      )
      assert.equal(events.length, 1)
    } finally {
      recorder.watch.cancel()
    }
  })

  test('cancel stops event delivery at once', async () => {
    const prefix = uniquePrefix('watch-cancel')
    const from = await store.currentRevision()
    const cancelled = record(store, prefix, from)
    const control = record(store, prefix, from)
    try {
      await store.create(prefix + 'k1', bytesOf('1'))
      await cancelled.untilEvents(1)
      await control.untilEvents(1)
      cancelled.watch.cancel()
      await store.create(prefix + 'k2', bytesOf('2'))
      await store.create(prefix + 'k3', bytesOf('3'))
      // the control watch got both later events: had the cancelled one still delivered, it would have too
      await control.untilEvents(3)
      await turn()
      assert.deepEqual(keysOf(cancelled.events.map((e) => e.kv)), [prefix + 'k1'])
      assert.equal(cancelled.errors.length, 0, 'a cancelled watch reports no error')
      // cancel is idempotent
      cancelled.watch.cancel()
    } finally {
      cancelled.watch.cancel()
      control.watch.cancel()
    }
  })

  test('cancel right after watch (before any delivery) delivers nothing', async () => {
    const prefix = uniquePrefix('watch-cancel-early')
    const r1 = await store.create(prefix + 'k1', bytesOf('1'))
    const cancelled = record(store, prefix, r1 - 1)
    cancelled.watch.cancel()
    const control = record(store, prefix, r1 - 1)
    try {
      await store.create(prefix + 'k2', bytesOf('2'))
      await control.untilEvents(2)
      await turn()
      assert.deepEqual(cancelled.events, [])
      assert.deepEqual(cancelled.errors, [])
    } finally {
      control.watch.cancel()
    }
  })

  test('several watches on overlapping prefixes each get their own events', async () => {
    const root = uniquePrefix('watch-many')
    const from = await store.currentRevision()
    const outer = record(store, root, from)
    const inner = record(store, `${root}in/`, from)
    try {
      const r1 = await store.create(`${root}out`, bytesOf('1'))
      const r2 = await store.create(`${root}in/x`, bytesOf('2'))
      assert.deepEqual((await outer.untilEvents(2)).map((e) => e.revision), [r1, r2])
      assert.deepEqual((await inner.untilEvents(1)).map((e) => e.revision), [r2])
    } finally {
      outer.watch.cancel()
      inner.watch.cancel()
    }
  })

}
