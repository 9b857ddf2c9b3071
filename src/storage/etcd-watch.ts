// One etcd watch on its own gRPC watch stream, resumed across connection loss.
//
// As Kubernetes' etcd client (clientv3's watcher) does: when the stream breaks (etcd restarted, the
// TCP connection cut, the endpoint's circuit breaker open), the watch is created again from the
// revision after the last one delivered, with back-off while etcd is unreachable, and the handlers
// see nothing of it. Only a compaction past that revision ends the watch (CompactedError: the
// caller re-lists); so do a cancel etcd chose (e.g. permission denied) and a throwing handler.
import {castGrpcError, type Etcd3, type IWatchResponse} from 'etcd3'
import type {Logger} from '../machinery/log.js'
import {isUnreachable, prefixRange, toKv} from './etcd-support.js'
import {CompactedError, StorageError, StoreUnavailableError, type KeyValue, type WatchEvent, type WatchHandlers} from './store.js'

/** What a watch needs of its store. */
export interface EtcdWatchOwner {
  readonly label: string
  readonly logger?: Logger
  /** fails with CompactedError when revision is older than the compacted history */
  checkNotCompacted(revision: number): Promise<void>
  learnCompacted(revision: number): void
  translate(error: unknown, what: string): StorageError
}

/** back-off between attempts to resume a broken watch while etcd is unreachable */
export const RESUME_MIN_DELAY_MS = 100
export const RESUME_MAX_DELAY_MS = 2_000

type WatchStream = Awaited<ReturnType<Etcd3['watchClient']['watch']>>

export class EtcdWatch {
  private stream: WatchStream | undefined
  private done = false
  /** everything up to here has been delivered: a resumed watch starts after it */
  private position: number
  private retryDelay = 0
  private retryTimer: NodeJS.Timeout | undefined
  /** the watch broke and has not been created again yet (for the log) */
  private interrupted: Error | undefined

  constructor(
    private readonly owner: EtcdWatchOwner,
    private readonly client: Etcd3,
    private readonly prefix: string,
    fromRevision: number,
    private readonly handlers: WatchHandlers,
    private readonly onFinish: () => void,
  ) {
    this.position = fromRevision
  }

  start(): void {
    void this.connect()
  }

  cancel(): void {
    if (this.done) return
    this.done = true
    this.finish()
  }

  /** Creates the etcd watcher from position + 1. etcd would accept a watch from the compaction point
   *  - 1, but the delete events at exactly the compaction point may be gone by then: a read at
   *  position first holds etcd to the contract's "reads before fail". */
  private async connect(): Promise<void> {
    if (this.done) return
    try {
      await this.owner.checkNotCompacted(this.position)
    } catch (error) {
      if (this.done) return
      if (this.resumable(error)) return this.retryLater(error as Error)
      return this.fail(this.owner.translate(error, `watch ${this.prefix}`))
    }
    if (this.done) return
    let stream: WatchStream
    try {
      stream = await this.client.watchClient.watch()
    } catch (error) {
      if (this.resumable(error)) return this.retryLater(error as Error)
      return this.fail(this.owner.translate(error, `watch ${this.prefix}`))
    }
    if (this.done) {
      closeStream(stream)
      return
    }
    this.stream = stream
    stream.on('data', (response: IWatchResponse) => {
      if (this.stream !== stream) return
      if (response.created) this.resumed()
      this.receive(response)
    })
    stream.on('error', (error: Error) => {
      if (this.stream !== stream) return
      this.lost(stream, error)
    })
    stream.on('end', () => {
      if (this.stream !== stream) return
      this.lost(stream, new StoreUnavailableError(`${this.owner.label}: the watch stream on ${this.prefix} ended`))
    })
    const {start, end} = prefixRange(this.prefix)
    stream.write({
      create_request: {key: start, range_end: end, start_revision: this.position + 1, prev_kv: true, progress_notify: true},
    })
  }

  /** A broken connection, a closed stream, an open circuit breaker: etcd may come back. */
  private resumable(error: unknown): boolean {
    if (error instanceof StoreUnavailableError) return true
    // a stream's errors come from grpc untyped ("14 UNAVAILABLE: Connection dropped"): type them as
    // etcd3 types a unary call's
    return error instanceof Error && isUnreachable(error.constructor === Error ? castGrpcError(error) : error)
  }

  private lost(stream: WatchStream, error: Error): void {
    closeStream(stream)
    this.stream = undefined
    if (this.done) return
    if (!this.resumable(error)) return this.fail(this.owner.translate(error, `watch ${this.prefix}`))
    this.retryLater(error)
  }

  private retryLater(error: Error): void {
    if (this.done) return
    if (!this.interrupted) {
      this.interrupted = error
      this.owner.logger?.warn('etcd watch interrupted; resuming it', {prefix: this.prefix, fromRevision: this.position + 1, error: this.owner.translate(error, `watch ${this.prefix}`).message})
    }
    this.retryDelay = this.retryDelay === 0 ? RESUME_MIN_DELAY_MS : Math.min(this.retryDelay * 2, RESUME_MAX_DELAY_MS)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      void this.connect()
    }, this.retryDelay)
  }

  private resumed(): void {
    this.retryDelay = 0
    if (this.interrupted) {
      this.interrupted = undefined
      this.owner.logger?.info('etcd watch resumed', {prefix: this.prefix, fromRevision: this.position + 1})
    }
  }

  private receive(response: IWatchResponse): void {
    if (this.done) return
    const compacted = Number(response.compact_revision)
    if (compacted > 0) {
      this.owner.learnCompacted(compacted)
      this.fail(new CompactedError(this.position, compacted))
      return
    }
    if (response.canceled) {
      this.fail(new StorageError(`${this.owner.label}: etcd canceled the watch on ${this.prefix}: ${response.cancel_reason || 'no reason given'}`, response.cancel_reason || undefined))
      return
    }
    if (response.created) return
    if (response.events.length === 0) {
      // a progress notification: etcd sends them to watchers that are caught up only
      const revision = Number(response.header.revision)
      if (revision >= this.position) {
        this.position = revision
        this.call(() => this.handlers.onProgress?.(revision))
      }
      return
    }
    const events: WatchEvent[] = []
    for (const event of response.events) {
      const revision = Number(event.kv.mod_revision)
      if (revision <= this.position) continue
      const prevKv = event.prev_kv ? toKv(event.prev_kv) : undefined
      if (String(event.type).toUpperCase() === 'DELETE') {
        const key = event.kv.key.toString('utf8')
        const kv: KeyValue = {
          key,
          value: prevKv?.value ?? Buffer.alloc(0),
          modRevision: revision,
          createRevision: prevKv?.createRevision ?? 0,
        }
        events.push({type: 'delete', kv, prevKv, created: false, revision})
      } else {
        const kv = toKv(event.kv)
        events.push({type: 'put', kv, prevKv, created: kv.createRevision === kv.modRevision, revision})
      }
    }
    if (events.length === 0) return
    this.position = events[events.length - 1].revision
    this.call(() => this.handlers.onEvents(events))
  }

  /** A throwing handler ends the watch with its error, as in the other backends. */
  private call(handler: () => void): void {
    try {
      handler()
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)))
    }
  }

  private fail(error: Error): void {
    if (this.done) return
    this.done = true
    this.finish()
    this.handlers.onError(error)
  }

  private finish(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    if (this.stream) closeStream(this.stream)
    this.stream = undefined
    this.onFinish()
  }
}

/** Ends a watch stream. end() first: etcd3 marks the endpoint failed (and resets its connections)
 *  when a stream that is still writable errors, and our own cancel errors with CANCELLED. */
function closeStream(stream: WatchStream): void {
  stream.on('error', () => {})
  try {
    stream.end()
    stream.cancel()
  } catch {
    // already closed
  }
}
