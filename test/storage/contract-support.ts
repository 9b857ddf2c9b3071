// Helpers of the Store contract suite (contract.ts, contract-watch.ts).
import assert from 'node:assert/strict'
import type {KeyValue, Store, Watch, WatchEvent} from '../../src/storage/store.js'

export interface OpenedStore {
  store: Store
  cleanup: () => Promise<void>
}

/** how long a test waits for a watch to deliver what it expects before failing */
export const WAIT_MS = 10_000
export const TEST_TIMEOUT_MS = 30_000

export const encoder = new TextEncoder()

export function bytesOf(text: string): Uint8Array {
  return encoder.encode(text)
}

export function textOf(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
}

export const run = `${process.pid.toString(36)}${Date.now().toString(36)}`
let prefixes = 0

/** A key prefix no other test (nor an earlier run against the same server) uses. */
export function uniquePrefix(name: string): string {
  prefixes += 1
  return `/contract/${run}-${prefixes}-${name}/`
}

export interface Recorder {
  events: WatchEvent[]
  batches: WatchEvent[][]
  errors: Error[]
  progress: number[]
  watch: Watch
  /** resolves once at least n events have arrived */
  untilEvents(n: number): Promise<WatchEvent[]>
  /** resolves with the watch's error */
  untilError(): Promise<Error>
  /** resolves once progress at or past revision was reported */
  untilProgress(revision: number): Promise<number>
}

/** Watches and records every handler call; waits fail after WAIT_MS with what was seen. */
export function record(store: Store, prefix: string, fromRevision: number): Recorder {
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of [...waiters]) waiter()
  }
  const recorder: Recorder = {
    events: [],
    batches: [],
    errors: [],
    progress: [],
    watch: {cancel() {}},
    untilEvents: (n) =>
      waitUntil(() => (recorder.events.length >= n ? recorder.events : undefined), () => `${n} events`),
    untilError: () => waitUntil(() => recorder.errors[0], () => 'an error', false),
    untilProgress: (revision) =>
      waitUntil(() => recorder.progress.find((p) => p >= revision), () => `progress at ${revision}`),
  }
  /** Waits until ready() gives a value; a watch error fails the wait unless the error is awaited. */
  function waitUntil<T>(ready: () => T | undefined, what: () => string, errorEnds = true): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = ready()
        if (value !== undefined) finish(value)
        else if (errorEnds && recorder.errors.length > 0) finish(undefined, recorder.errors[0])
      }
      const timer = setTimeout(() => {
        const seen = recorder.events.map((e) => `${e.type} ${e.kv.key}@${e.revision}`).join(', ')
        finish(undefined, new Error(`watch on ${prefix} from ${fromRevision}: waited ${WAIT_MS} ms for ${what()}; saw [${seen}]`))
      }, WAIT_MS)
      const finish = (value?: T, error?: Error) => {
        clearTimeout(timer)
        waiters.delete(check)
        if (error) reject(error)
        else resolve(value as T)
      }
      waiters.add(check)
      check()
    })
  }
  recorder.watch = store.watch(prefix, fromRevision, {
    onEvents(events) {
      recorder.batches.push(events)
      recorder.events.push(...events)
      notify()
    },
    onProgress(revision) {
      recorder.progress.push(revision)
      notify()
    },
    onError(error) {
      recorder.errors.push(error)
      notify()
    },
  })
  return recorder
}

export function assertKv(kv: KeyValue | null | undefined, expected: {key: string; value: string; modRevision: number; createRevision: number}) {
  assert.ok(kv, `expected ${expected.key} to be present`)
  assert.deepEqual(
    {key: kv.key, value: textOf(kv.value), modRevision: kv.modRevision, createRevision: kv.createRevision},
    expected,
  )
}

export function keysOf(items: KeyValue[]): string[] {
  return items.map((kv) => kv.key)
}

/** Resolves after the event loop has run everything already queued (I/O callbacks included). */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
