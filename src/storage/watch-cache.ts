// The watch cache: one storage watch per resource prefix feeds an in-memory copy of the current
// objects and a ring of recent events. Any number of watchers fan out from it, and it answers
// "list at least as new as revision R" without touching storage.
import {CompactedError, StorageError, type KeyValue, type Store, type Watch, type WatchEvent} from './store.js'

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED'

export interface CacheEntry<T> {
  kv: KeyValue
  object: T
}

export interface CacheEvent<T> {
  type: CacheEventType
  revision: number
  key: string
  /** the object after the change; for DELETED the last state before deletion, at the deletion's revision */
  object: T
  /** the object before the change (MODIFIED, DELETED) */
  prev?: T
  kv: KeyValue
}

export interface CacheWatcher<T> {
  /** events in revision order */
  onEvents(events: CacheEvent<T>[]): void
  /** the cache has seen everything up to this revision */
  onProgress?(revision: number): void
  /** the watch ended: the cache restarted (the client should list again) or was stopped */
  onError(error: Error): void
}

export interface WatchCacheOptions<T> {
  /** turns stored bytes into the cached object; throwing skips the entry */
  decode: (kv: KeyValue) => T
  /** events kept for replay (default 10,000) */
  capacity?: number
  /** events older than this (ms) are not replayed; absent = only capacity bounds the history */
  retentionMs?: number
  /** the clock, in ms (tests move it) */
  now?: () => number
  /** called when the storage watch fails and the cache relists */
  onRestart?: (error: Error) => void
}

/** A derived view kept in step with the cache's objects: told of every change before any watcher is. */
export interface CacheIndex<T> {
  /** the cache (re)listed: forget everything; each current object follows as an update */
  reset(): void
  /** key now holds object (undefined: deleted); previous is what it held before (undefined: new) */
  update(key: string, object: T | undefined, previous: T | undefined): void
}

export class TooOldResourceVersionError extends StorageError {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`)
  }
}

interface Registered<T> {
  watcher: CacheWatcher<T>
  active: boolean
  /** replayed history not yet delivered: always goes out before live events */
  backlog: CacheEvent<T>[]
  /** the watch started after this revision: nothing at or before it is delivered */
  from: number
}

export class WatchCache<T> {
  private readonly entries = new Map<string, CacheEntry<T>>()
  private sortedKeys: string[] | null = null
  private ring: CacheEvent<T>[] = []
  /** when each ring event was recorded (ms) */
  private ringTimes: number[] = []
  private ringStart = 0
  /** the revision the ring's history starts after: watches from here on can be replayed */
  private since = 0
  private revisionSeen = 0
  private storageWatch: Watch | undefined
  private readonly watchers = new Set<Registered<T>>()
  private readonly waiters: {revision: number; resolve: () => void}[] = []
  private readonly indexes: CacheIndex<T>[] = []
  private changeCount = 0
  private stopped = false
  private startPromise: Promise<void> | undefined
  private loaded = false
  readonly capacity: number

  constructor(
    private readonly store: Store,
    readonly prefix: string,
    private readonly options: WatchCacheOptions<T>,
  ) {
    this.capacity = options.capacity ?? 10_000
  }

  private now(): number {
    return this.options.now?.() ?? Date.now()
  }

  get revision(): number {
    return this.revisionSeen
  }

  get size(): number {
    return this.entries.size
  }

  /** Moves whenever the objects held change (a write, a delete, a relist), not with progress alone:
   *  what is derived from the objects is stale exactly when this moved. */
  get changes(): number {
    return this.changeCount
  }

  /** listed and following the store (false before start and while a failed watch is re-established) */
  get synced(): boolean {
    return this.loaded && !this.stopped
  }

  get watcherCount(): number {
    return this.watchers.size
  }

  /** Keeps index up to date from now on, starting with the objects held now. */
  addIndex(index: CacheIndex<T>): void {
    this.indexes.push(index)
    this.fill(index)
  }

  private fill(index: CacheIndex<T>): void {
    index.reset()
    for (const [key, entry] of this.entries) index.update(key, entry.object, undefined)
  }

  /** Lists the prefix, then follows it; resolves once the cache holds a consistent state. */
  start(): Promise<void> {
    this.startPromise ??= this.load()
    return this.startPromise
  }

  private async load(): Promise<void> {
    const listed = await this.store.list(this.prefix)
    this.entries.clear()
    this.changeCount++
    this.sortedKeys = null
    for (const kv of listed.items) {
      const object = this.tryDecode(kv)
      if (object !== undefined) this.entries.set(kv.key, {kv, object})
    }
    for (const index of this.indexes) this.fill(index)
    this.ring = []
    this.ringTimes = []
    this.ringStart = 0
    this.since = listed.revision
    this.advance(listed.revision)
    this.storageWatch = this.store.watch(this.prefix, listed.revision, {
      onEvents: (events) => this.apply(events),
      onProgress: (revision) => this.progress(revision),
      onError: (error) => void this.restart(error),
    })
    this.loaded = true
  }

  private async restart(error: Error): Promise<void> {
    if (this.stopped) return
    this.loaded = false
    this.options.onRestart?.(error)
    this.storageWatch?.cancel()
    for (const registered of [...this.watchers]) this.end(registered, error)
    this.startPromise = undefined
    // keep trying: a store that comes back lets the cache resume
    for (let delay = 100; !this.stopped; delay = Math.min(delay * 2, 5_000)) {
      try {
        await this.start()
        return
      } catch {
        this.startPromise = undefined
        await new Promise((resolve) => setTimeout(resolve, delay).unref())
      }
    }
  }

  stop(): void {
    this.stopped = true
    this.storageWatch?.cancel()
    for (const registered of [...this.watchers]) this.end(registered, new StorageError('watch cache stopped'))
  }

  /** A snapshot of the current objects in key order, with the revision it reflects. */
  list(): {items: CacheEntry<T>[]; revision: number} {
    if (!this.sortedKeys) this.sortedKeys = [...this.entries.keys()].sort()
    const items: CacheEntry<T>[] = []
    for (const key of this.sortedKeys) items.push(this.entries.get(key)!)
    return {items, revision: this.revisionSeen}
  }

  get(key: string): CacheEntry<T> | undefined {
    return this.entries.get(key)
  }

  /** Resolves once the cache has seen revision; rejects after timeoutMs. */
  waitUntil(revision: number, timeoutMs: number): Promise<void> {
    if (this.revisionSeen >= revision) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const waiter = {revision, resolve: () => (clearTimeout(timer), resolve())}
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter)
        if (index >= 0) this.waiters.splice(index, 1)
        reject(new StorageError(`watch cache for ${this.prefix} did not reach revision ${revision} in ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.push(waiter)
    })
  }

  /** Events after fromRevision, then live ones. fromRevision older than the ring holds fails
   *  with TooOldResourceVersionError (the API answers 410 Gone). */
  watch(fromRevision: number, watcher: CacheWatcher<T>): Watch {
    this.evictExpired()
    if (fromRevision < this.since) throw new TooOldResourceVersionError(fromRevision, this.since)
    const registered: Registered<T> = {watcher, active: true, backlog: [], from: fromRevision}
    for (let i = this.ringStart; i < this.ring.length; i++) {
      if (this.ring[i].revision > fromRevision) registered.backlog.push(this.ring[i])
    }
    this.watchers.add(registered)
    if (registered.backlog.length > 0) {
      queueMicrotask(() => {
        if (registered.active && registered.backlog.length > 0) this.deliver(registered, [])
      })
    }
    return {cancel: () => this.end(registered)}
  }

  private end(registered: Registered<T>, error?: Error): void {
    if (!registered.active) return
    registered.active = false
    this.watchers.delete(registered)
    if (error) registered.watcher.onError(error)
  }

  private deliver(registered: Registered<T>, events: CacheEvent<T>[]): void {
    if (registered.backlog.length > 0) {
      events = [...registered.backlog, ...events]
      registered.backlog = []
    }
    // a watch from a revision the cache had not reached yet skips what it asked not to see
    if (events.length > 0 && events[0].revision <= registered.from) events = events.filter((e) => e.revision > registered.from)
    if (events.length === 0) return
    try {
      registered.watcher.onEvents(events)
    } catch (error) {
      this.end(registered, error as Error)
    }
  }

  private tryDecode(kv: KeyValue): T | undefined {
    try {
      return this.options.decode(kv)
    } catch {
      return undefined
    }
  }

  private apply(events: WatchEvent[]): void {
    const out: CacheEvent<T>[] = []
    for (const event of events) {
      const previous = this.entries.get(event.kv.key)
      if (event.type === 'delete') {
        if (!previous) continue
        this.entries.delete(event.kv.key)
        this.changeCount++
        this.sortedKeys = null
        for (const index of this.indexes) index.update(event.kv.key, undefined, previous.object)
        // the last state at the deletion's revision (a delete event's kv holds the last value with
        // modRevision = the deletion), as Kubernetes sends it: a watcher resumes after the deletion
        const last = this.tryDecode(event.kv) ?? previous.object
        out.push({type: 'DELETED', revision: event.revision, key: event.kv.key, object: last, prev: previous.object, kv: event.kv})
        continue
      }
      const object = this.tryDecode(event.kv)
      if (object === undefined) continue
      this.entries.set(event.kv.key, {kv: event.kv, object})
      this.changeCount++
      if (!previous) this.sortedKeys = null
      for (const index of this.indexes) index.update(event.kv.key, object, previous?.object)
      out.push({
        type: previous ? 'MODIFIED' : 'ADDED',
        revision: event.revision,
        key: event.kv.key,
        object,
        prev: previous?.object,
        kv: event.kv,
      })
    }
    for (const event of out) this.record(event)
    const last = events.length > 0 ? events[events.length - 1].revision : this.revisionSeen
    if (out.length > 0) {
      for (const registered of [...this.watchers]) if (registered.active) this.deliver(registered, out)
    }
    this.advance(last)
  }

  private record(event: CacheEvent<T>): void {
    this.ring.push(event)
    this.ringTimes.push(this.now())
    if (this.ring.length - this.ringStart > this.capacity) this.evictOldest()
    this.evictExpired()
  }

  private evictOldest(): void {
    this.since = this.ring[this.ringStart].revision
    this.ringStart++
    // compact the arrays now and then instead of shifting on every event
    if (this.ringStart > this.capacity) {
      this.ring = this.ring.slice(this.ringStart)
      this.ringTimes = this.ringTimes.slice(this.ringStart)
      this.ringStart = 0
    }
  }

  /** events older than the history window are not replayed (a watch from before them is 410) */
  private evictExpired(): void {
    const retention = this.options.retentionMs
    if (retention === undefined) return
    const oldest = this.now() - retention
    while (this.ringStart < this.ring.length && this.ringTimes[this.ringStart] < oldest) this.evictOldest()
  }

  private progress(revision: number): void {
    this.advance(revision)
  }

  private advance(revision: number): void {
    if (revision <= this.revisionSeen) return
    this.revisionSeen = revision
    for (const registered of [...this.watchers]) {
      // replayed events first: progress must never run ahead of what a watcher was given
      if (registered.active && registered.backlog.length > 0) this.deliver(registered, [])
      if (registered.active) registered.watcher.onProgress?.(revision)
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i].revision <= revision) {
        const [waiter] = this.waiters.splice(i, 1)
        waiter.resolve()
      }
    }
  }
}

export {CompactedError}
