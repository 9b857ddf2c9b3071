// core/v1 Events as client-go's tools/record writes them, for the controllers and the agent alike.
// Recording never blocks or fails the caller: events wait in a bounded queue written by a few workers
// (when full, new ones are dropped, as the broadcaster's DropIfChannelFull does), and a write that
// fails (the API is down, forbidden, ...) is logged and dropped. What client-go's EventCorrelator does
// is done here too:
//  - the same event again (same source, involved object incl. fieldPath, type, reason, message) bumps
//    the count and lastTimestamp of the Event already written, with a PATCH, instead of writing another;
//  - optionally (`spam`), its spam filter: per source and involved object (not the fieldPath, so all of a
//    pod's container events share it) a token bucket of `burst` events refilled one per `intervalMs`
//    (client-go: 25, then one every 5 minutes); repeats count against it too. Events over it are dropped.
import {hostname} from 'node:os'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import {isApiStatusError, type RestClient} from './rest.js'

export type EventType = 'Normal' | 'Warning'

/** core/v1 ObjectReference: what an Event is about (fieldPath e.g. `spec.containers{app}`). */
export interface ObjectReference {
  kind?: string
  namespace?: string
  name?: string
  uid?: string
  apiVersion?: string
  resourceVersion?: string
  fieldPath?: string
}

export interface EventRecorderOptions {
  /** source.component and reportingComponent */
  component: string
  /** source.host (the kubelet: its node name); absent: no host */
  host?: string
  /** reportingInstance (default `<component>-<host name>`) */
  instance?: string
  now?: () => number
  /** events waiting to be written before new ones are dropped (default 1,000) */
  maxQueued?: number
  /** writes in flight (default 4; 1 keeps the order in which events were recorded) */
  concurrency?: number
  /** client-go's spam filter: `burst` events per source and object, then one per `intervalMs` */
  spam?: {burst: number; intervalMs: number}
  /** a write that takes longer is abandoned (dropped) */
  writeTimeoutMs?: number
}

/** client-go's defaults for its spam filter: a burst of 25, then one event every 5 minutes per object. */
export const CLIENT_GO_SPAM_FILTER = {burst: 25, intervalMs: 300_000}

interface Written {
  name: string
  namespace: string
  count: number
}

interface Bucket {
  tokens: number
  at: number
}

/** entries remembered for correlation and for the spam filter (client-go's LRU: 4096) */
const REMEMBERED = 4096

/** An object's reference, as client-go's reference.GetReference builds it (fieldPath added when given). */
export function referenceOf(object: AnyObject, fieldPath?: string): ObjectReference {
  const meta = object.metadata ?? {}
  return {
    kind: object.kind ?? 'Pod',
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid,
    apiVersion: object.apiVersion ?? 'v1',
    resourceVersion: meta.resourceVersion,
    ...(fieldPath ? {fieldPath} : {}),
  }
}

function compact(ref: ObjectReference): ObjectReference {
  return Object.fromEntries(Object.entries(ref).filter(([, value]) => value !== undefined && value !== '')) as ObjectReference
}

/** Event names as client-go's recorders make them: `<object name>.<unix nanoseconds in hex>`, the stamp
 *  increasing from one name to the next even within one millisecond. */
export class EventNames {
  private lastNanos = 0n

  next(objectName: string | undefined, ms: number): string {
    let n = BigInt(ms) * 1_000_000n
    if (n <= this.lastNanos) n = this.lastNanos + 1n
    this.lastNanos = n
    return `${objectName}.${n.toString(16)}`
  }
}

export class EventRecorder {
  private readonly waiting: (() => Promise<void>)[] = []
  private running = 0
  private idle: (() => void)[] = []
  private readonly names = new EventNames()
  private readonly written = new Map<string, Written>()
  private readonly buckets = new Map<string, Bucket>()
  private readonly instance: string
  private readonly now: () => number
  private closed = false
  /** events dropped: queue full, recorder stopped, or over the spam filter */
  dropped = 0

  constructor(
    private readonly client: RestClient | (() => RestClient | undefined),
    private readonly logger: Logger,
    private readonly options: EventRecorderOptions,
  ) {
    this.now = options.now ?? Date.now
    this.instance = options.instance ?? `${options.component}-${hostname()}`
  }

  /** Queues an event about the object (the scheduler's and controllers' form); returns at once. */
  record(object: AnyObject, type: EventType, reason: string, action: string, message: string): void {
    this.event(referenceOf(object), type, reason, message, action)
  }

  /** Queues an event about the referenced object; returns at once. */
  event(ref: ObjectReference, type: EventType, reason: string, message: string, action?: string): void {
    if (this.closed) return
    const at = this.now()
    const involved = compact(ref)
    const what = `${involved.namespace ?? ''}/${involved.name}`
    if (!this.allowed(involved, at)) {
      this.dropped++
      this.logger.v(2, 'event dropped: too many about this object', {reason, object: what})
      return
    }
    if (this.waiting.length >= (this.options.maxQueued ?? 1_000)) {
      this.dropped++
      this.logger.v(2, 'event dropped: queue full', {reason, object: what})
      return
    }
    this.waiting.push(() => this.write(involved, type, reason, message, action, at))
    this.pump()
  }

  /** Stops recording: events still waiting are dropped; resolves when those being written are done. */
  shutdown(): Promise<void> {
    this.closed = true
    this.dropped += this.waiting.length
    this.waiting.length = 0
    return this.drain()
  }

  /** Resolves when every queued event is written (or failed). */
  drain(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  /** The spam filter's token bucket for the source and object (client-go's getSpamKey: no fieldPath, type, reason). */
  private allowed(ref: ObjectReference, at: number): boolean {
    const spam = this.options.spam
    if (!spam) return true
    const key = [this.options.component, this.options.host, ref.kind, ref.namespace, ref.name, ref.uid, ref.apiVersion].join('\u0000')
    let bucket = this.buckets.get(key)
    if (bucket) {
      this.buckets.delete(key)
      bucket.tokens = Math.min(spam.burst, bucket.tokens + (at - bucket.at) / spam.intervalMs)
      bucket.at = at
    } else {
      if (this.buckets.size >= REMEMBERED) this.buckets.delete(this.buckets.keys().next().value!)
      bucket = {tokens: spam.burst, at}
    }
    this.buckets.set(key, bucket)
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }

  private pump(): void {
    while (this.running < (this.options.concurrency ?? 4) && this.waiting.length > 0) {
      const job = this.waiting.shift()!
      this.running++
      void job()
        .catch((error) => this.logger.v(2, 'event not recorded', {error: (error as Error).message}))
        .finally(() => {
          this.running--
          this.pump()
          if (this.running === 0 && this.waiting.length === 0) for (const wake of this.idle.splice(0)) wake()
        })
    }
  }

  private async write(ref: ObjectReference, type: EventType, reason: string, message: string, action: string | undefined, at: number): Promise<void> {
    const client = typeof this.client === 'function' ? this.client() : this.client
    const namespace = ref.namespace || 'default'
    if (!client) return
    const signal = this.options.writeTimeoutMs ? AbortSignal.timeout(this.options.writeTimeoutMs) : undefined
    const {component, host} = this.options
    const key = JSON.stringify([component, host, ref.kind, ref.namespace, ref.name, ref.fieldPath, ref.uid, ref.apiVersion, type, reason, message])
    try {
      const seen = this.written.get(key)
      if (seen) {
        try {
          const events = {group: '', version: 'v1', resource: 'events', namespace: seen.namespace, name: seen.name}
          await client.patch(events, 'merge', {count: seen.count + 1, lastTimestamp: formatTime(new Date(at))}, {signal})
          seen.count++
          return
        } catch (error) {
          if (!isApiStatusError(error) || error.code !== 404) throw error
          this.written.delete(key)
        }
      }
      const name = this.names.next(ref.name, at)
      const event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {name, namespace},
        involvedObject: ref,
        reason,
        message,
        source: host ? {component, host} : {component},
        firstTimestamp: formatTime(new Date(at)),
        lastTimestamp: formatTime(new Date(at)),
        count: 1,
        type,
        ...(action ? {action} : {}),
        reportingComponent: component,
        reportingInstance: this.instance,
      }
      await client.create({group: '', version: 'v1', resource: 'events', namespace}, event, {signal})
      if (this.written.size >= REMEMBERED) this.written.delete(this.written.keys().next().value!)
      this.written.set(key, {name, namespace, count: 1})
    } catch (error) {
      this.logger.warn('event not recorded (dropped)', {reason, object: `${namespace}/${ref.name}`, error: (error as Error).message})
    }
  }
}
