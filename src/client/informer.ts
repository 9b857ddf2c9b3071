// An informer: list (in pages), then watch from the list's resourceVersion with bookmarks, keeping a
// cache keyed by namespace/name current and telling handlers what changed. A dropped watch resumes from
// the last resourceVersion seen, after a backoff (100 ms doubling to 5 s; reset by a watch that worked).
// A 410 (the server no longer holds that history) makes it list again and report the difference between
// the old cache and the new list as adds, updates and deletes, as client-go's reflector does.
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type ResourceLocator, type RestClient} from './rest.js'
import {watchEvents, type WatchEvent} from './watch.js'

export interface InformerHandlers<T> {
  onAdd?(object: T): void
  onUpdate?(oldObject: T, newObject: T): void
  onDelete?(object: T): void
}

export interface InformerOptions {
  labelSelector?: string
  fieldSelector?: string
  /** items per list page (default 500) */
  pageSize?: number
  /** reconnect delay: starts at initialMs (100), doubles up to maxMs (5000) */
  backoff?: {initialMs?: number; maxMs?: number}
  /** timeoutSeconds of each watch request (default: 5 to 10 minutes, random, as client-go) */
  watchTimeoutSeconds?: number
  /** failures the informer recovers from by retrying (list or watch errors, handler exceptions) */
  onError?(error: Error): void
  /** the Accept header of its lists and of its watches (default: the client's wire), e.g. metadata
   *  only: `application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1,application/json` for
   *  lists and `...;as=PartialObjectMetadata;...` for watches */
  accept?: {list?: string; watch?: string}
}

/** The cache key of an object: namespace/name, or name for cluster-scoped objects. */
export function objectKey(object: AnyObject): string {
  const namespace = object.metadata?.namespace
  const name = object.metadata?.name ?? ''
  return namespace ? `${namespace}/${name}` : name
}

function resourceVersionOf(object: AnyObject | undefined): string | undefined {
  const rv = object?.metadata?.resourceVersion
  return typeof rv === 'string' && rv !== '' ? rv : undefined
}

export class Informer<T extends AnyObject = AnyObject> {
  private cache = new Map<string, T>()
  private synced = false
  private started = false
  private stopped = false
  private resourceVersion?: string
  private readonly controller = new AbortController()
  private running?: Promise<void>
  private syncWaiters: {resolve(): void; reject(error: Error): void}[] = []
  private wake?: () => void

  constructor(
    private readonly client: RestClient,
    private readonly locator: ResourceLocator,
    private readonly handlers: InformerHandlers<T> = {},
    private readonly options: InformerOptions = {},
  ) {}

  /** Starts listing and watching; returns the informer. */
  start(): this {
    if (this.started) return this
    this.started = true
    this.running = this.run()
    return this
  }

  /** Stops the watch and the retry loop; resolves when they are over. */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      this.controller.abort()
      this.wake?.()
      const error = new Error('the informer stopped before it synced')
      for (const waiter of this.syncWaiters.splice(0)) waiter.reject(error)
    }
    await this.running
  }

  /** True once the first list has been put in the cache. */
  hasSynced(): boolean {
    return this.synced
  }

  /** Resolves once the first list is in the cache; rejects when the informer stops (or never started). */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve()
    if (!this.started) return Promise.reject(new Error('the informer was not started: call start() first'))
    if (this.stopped) return Promise.reject(new Error('the informer stopped before it synced'))
    return new Promise((resolve, reject) => this.syncWaiters.push({resolve, reject}))
  }

  /** The cached objects. */
  list(): T[] {
    return [...this.cache.values()]
  }

  /** The cached object of a key (namespace/name, or name when cluster-scoped). */
  get(key: string): T | undefined {
    return this.cache.get(key)
  }

  keys(): string[] {
    return [...this.cache.keys()]
  }

  /** The resourceVersion the cache is current to (the list's, then each event's). */
  get lastSyncResourceVersion(): string | undefined {
    return this.resourceVersion
  }

  private report(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error))
    try {
      this.options.onError?.(e)
    } catch {
      // a failing error handler must not stop the informer
    }
  }

  private call(fn: () => void): void {
    try {
      fn()
    } catch (e) {
      this.report(e)
    }
  }

  private async run(): Promise<void> {
    const initial = this.options.backoff?.initialMs ?? 100
    const max = this.options.backoff?.maxMs ?? 5000
    let delay = initial
    let needList = true
    while (!this.stopped) {
      let healthy = false
      try {
        if (needList) {
          await this.relist()
          needList = false
        }
        if (this.stopped) break
        healthy = await this.watchOnce()
      } catch (e) {
        if (this.stopped) break
        if (isApiStatusError(e) && e.code === 410) needList = true
        else this.report(e)
      }
      if (this.stopped) break
      if (healthy) delay = initial
      await this.sleep(delay)
      delay = Math.min(delay * 2, max)
    }
  }

  /** Waits ms, or less when stop() comes first. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    }).finally(() => {
      this.wake = undefined
    })
  }

  /** Lists everything and replaces the cache, reporting the difference to the handlers. */
  private async relist(): Promise<void> {
    const list = await this.client.listAll<T>(this.locator, {
      labelSelector: this.options.labelSelector,
      fieldSelector: this.options.fieldSelector,
      limit: this.options.pageSize ?? 500,
      headers: this.options.accept?.list ? {accept: this.options.accept.list} : undefined,
      signal: this.controller.signal,
    })
    if (this.stopped) return
    const fresh = new Map<string, T>()
    for (const item of list.items) fresh.set(objectKey(item), item)
    const old = this.cache
    this.cache = fresh
    this.resourceVersion = list.metadata?.resourceVersion || undefined
    for (const [key, object] of fresh) {
      const previous = old.get(key)
      if (!previous) this.call(() => this.handlers.onAdd?.(object))
      else if (resourceVersionOf(previous) !== resourceVersionOf(object)) {
        this.call(() => this.handlers.onUpdate?.(previous, object))
      }
    }
    for (const [key, previous] of old) {
      if (!fresh.has(key)) this.call(() => this.handlers.onDelete?.(previous))
    }
    if (!this.synced) {
      this.synced = true
      for (const waiter of this.syncWaiters.splice(0)) waiter.resolve()
    }
  }

  /** One watch from the last resourceVersion; true when it delivered at least one event. */
  private async watchOnce(): Promise<boolean> {
    let delivered = false
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? Math.floor(300 * (1 + Math.random()))
    const events = watchEvents<T>(
      this.client,
      this.locator,
      {
        resourceVersion: this.resourceVersion,
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        allowWatchBookmarks: true,
        timeoutSeconds,
        headers: this.options.accept?.watch ? {accept: this.options.accept.watch} : undefined,
      },
      this.controller.signal,
    )
    for await (const event of events) {
      delivered = true
      this.apply(event)
      if (this.stopped) break
    }
    return delivered
  }

  private apply(event: WatchEvent<T>): void {
    const object = event.object
    const rv = resourceVersionOf(object)
    if (rv) this.resourceVersion = rv
    if (event.type === 'BOOKMARK') return
    const key = objectKey(object)
    const previous = this.cache.get(key)
    if (event.type === 'DELETED') {
      // a delete of an object the cache does not hold (repeated after a resume, or never seen) is no news
      if (!previous) return
      this.cache.delete(key)
      this.call(() => this.handlers.onDelete?.(object))
      return
    }
    this.cache.set(key, object)
    if (previous) this.call(() => this.handlers.onUpdate?.(previous, object))
    else this.call(() => this.handlers.onAdd?.(object))
  }
}
