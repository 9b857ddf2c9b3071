// Events expire (kube-apiserver's --event-ttl, 1 hour by default): Kubernetes writes each Event with an
// etcd lease of that TTL, so an Event nobody has written for that long is deleted by storage itself —
// no admission, no finalizers, a DELETED event for watchers. orch does the same on either backend with
// a sweep over the events' watch cache: an Event whose last write is older than the TTL is deleted at
// the revision it was seen at. The time of a write is when this server's cache saw it; for Events
// written before it started, the Event's newest timestamp (lastTimestamp, eventTime,
// series.lastObservedTime, creationTimestamp or a managedFields time, none later than now).
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import type {Store} from '../storage/index.js'
import type {WatchCache} from '../storage/watch-cache.js'

export interface EventExpiryOptions {
  ttlMs: number
  now: () => Date
  logger?: Logger
}

/** The last time an Event was written, as far as the Event tells. */
export function lastWritten(event: AnyObject): number {
  const times = [event.lastTimestamp, event.eventTime, event.series?.lastObservedTime, event.metadata?.creationTimestamp]
  for (const entry of event.metadata?.managedFields ?? []) times.push(entry?.time)
  let newest = 0
  for (const time of times) {
    const ms = typeof time === 'string' ? Date.parse(time) : NaN
    if (ms > newest) newest = ms
  }
  return newest
}

export class EventExpiry {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  /** when this server saw each Event's current version written: key -> [modRevision, ms] */
  private readonly written = new Map<string, [number, number]>()
  private watch: {cancel(): void} | undefined
  private stopped = false

  constructor(
    private readonly store: Store,
    private readonly cache: WatchCache<AnyObject>,
    private readonly options: EventExpiryOptions,
  ) {}

  /** Sweeps every tenth of the TTL (at least every second, at most every minute). */
  start(): void {
    if (this.options.ttlMs <= 0) return
    this.watchWrites()
    const interval = Math.min(Math.max(this.options.ttlMs / 10, 1_000), 60_000)
    this.timer = setInterval(() => {
      this.running ??= this.sweep().then(
        () => undefined,
        (error) => this.options.logger?.warn('event expiry failed', {error}),
      ).finally(() => (this.running = undefined))
    }, interval)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    this.watch?.cancel()
    await this.running
  }

  /** Notes the time of each write the cache delivers (a lease is renewed by every write). */
  private watchWrites(): void {
    try {
      this.watch = this.cache.watch(this.cache.revision, {
        onEvents: (events) => {
          const at = this.options.now().getTime()
          for (const event of events) {
            if (event.type === 'DELETED') this.written.delete(event.key)
            else this.written.set(event.key, [event.kv.modRevision, at])
          }
        },
        // the cache started over: what it lists again is judged by its timestamps
        onError: () => {
          this.written.clear()
          if (!this.stopped) this.watchWrites()
        },
      })
    } catch (error) {
      this.options.logger?.warn('event expiry cannot follow writes', {error})
    }
  }

  /** When the Event's current version was written, as far as this server knows. */
  private writtenAt(key: string, modRevision: number, object: AnyObject): number {
    const seen = this.written.get(key)
    if (seen && seen[0] === modRevision) return seen[1]
    return Math.min(lastWritten(object), this.options.now().getTime())
  }

  /** Deletes the Events whose TTL has passed; returns how many. */
  async sweep(): Promise<number> {
    const deadline = this.options.now().getTime() - this.options.ttlMs
    let deleted = 0
    for (const {kv, object} of this.cache.list().items) {
      const written = this.writtenAt(kv.key, kv.modRevision, object)
      if (written === 0 || written > deadline) continue
      try {
        // at the revision seen: an Event written meanwhile has a new lease
        await this.store.delete(kv.key, kv.modRevision)
        deleted++
      } catch (error) {
        this.options.logger?.v(4, 'event not expired', {key: kv.key, error})
      }
    }
    if (deleted > 0) this.options.logger?.v(2, 'expired events', {count: deleted})
    return deleted
  }
}
