// The scheduler's events (Scheduled, FailedScheduling) as core/v1 Events. Recording never blocks or
// fails the scheduler: events wait in a queue written by a few workers, and when 1,000 are waiting
// new ones are dropped, as client-go's broadcaster drops them (DropIfChannelFull) — scheduling a
// burst of pods must not wait for its own paperwork. The same event about the same pod again (a pod
// that still fits nowhere) bumps the count of the event already written, as client-go's correlator
// does, instead of writing another one.
import {hostname} from 'node:os'
import type {AnyObject} from '../../api/types.js'
import {isApiStatusError, type RestClient} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import {formatTime} from '../../machinery/managed-fields.js'

export type EventType = 'Normal' | 'Warning'

export interface EventRecorderOptions {
  component: string
  now?: () => number
  /** events waiting to be written before new ones are dropped (default 1,000) */
  maxQueued?: number
  /** writes in flight (default 4) */
  concurrency?: number
}

interface Written {
  name: string
  namespace: string
  count: number
}

const REMEMBERED = 4096

export class EventRecorder {
  private readonly waiting: (() => Promise<void>)[] = []
  private running = 0
  private idle: (() => void)[] = []
  private lastNanos = 0n
  private readonly written = new Map<string, Written>()
  private readonly instance: string
  private readonly now: () => number
  private closed = false
  /** events dropped because the queue was full (or the recorder stopped) */
  dropped = 0

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    private readonly options: EventRecorderOptions,
  ) {
    this.now = options.now ?? Date.now
    this.instance = `${options.component}-${hostname()}`
  }

  /** Queues an event about the object; returns at once. */
  record(object: AnyObject, type: EventType, reason: string, action: string, message: string): void {
    if (this.closed) return
    if (this.waiting.length >= (this.options.maxQueued ?? 1_000)) {
      this.dropped++
      this.logger.v(2, 'event dropped: queue full', {reason, object: `${object.metadata?.namespace}/${object.metadata?.name}`})
      return
    }
    const at = this.now()
    this.waiting.push(() => this.write(object, type, reason, action, message, at))
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

  /** Unique, increasing nanosecond stamps for event names. */
  private nanos(ms: number): bigint {
    let n = BigInt(ms) * 1_000_000n
    if (n <= this.lastNanos) n = this.lastNanos + 1n
    this.lastNanos = n
    return n
  }

  private async write(object: AnyObject, type: EventType, reason: string, action: string, message: string, at: number): Promise<void> {
    const meta = object.metadata ?? {}
    const namespace: string = meta.namespace || 'default'
    const key = `${meta.uid}|${type}|${reason}|${message}`
    const seen = this.written.get(key)
    if (seen) {
      try {
        const events = {group: '', version: 'v1', resource: 'events', namespace: seen.namespace, name: seen.name}
        await this.client.patch(events, 'merge', {count: seen.count + 1, lastTimestamp: formatTime(new Date(at))})
        seen.count++
        return
      } catch (error) {
        if (!isApiStatusError(error) || error.code !== 404) throw error
        this.written.delete(key)
      }
    }
    const name = `${meta.name}.${this.nanos(at).toString(16)}`
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {name, namespace},
      involvedObject: {
        kind: object.kind ?? 'Pod',
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        apiVersion: object.apiVersion ?? 'v1',
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      source: {component: this.options.component},
      firstTimestamp: formatTime(new Date(at)),
      lastTimestamp: formatTime(new Date(at)),
      count: 1,
      type,
      action,
      reportingComponent: this.options.component,
      reportingInstance: this.instance,
    }
    await this.client.create({group: '', version: 'v1', resource: 'events', namespace}, event)
    if (this.written.size >= REMEMBERED) this.written.delete(this.written.keys().next().value!)
    this.written.set(key, {name, namespace, count: 1})
  }
}
