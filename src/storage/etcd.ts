// The etcd backend: the Store contract on an etcd v3 cluster, through the etcd3 client.
//
// Notes on how it maps (see docs/architecture.md for the contract itself):
// - Keys are used as given; values are stored as raw bytes. One etcd revision = one store revision.
// - create/update/delete are single txns whose compares carry the precondition, so they are atomic
//   on the server. etcd3's default policy retries every call on transient errors; that is replaced
//   here: a write is sent again only when it surely never reached a server (no connection, breaker
//   open), since a retried txn whose first attempt did apply would report a false KeyExists or
//   Conflict. Reads are retried on any transient error. Each retry may pick another endpoint.
// - etcd3 ignores its dialTimeout option: open() bounds its connectivity check with a call
//   deadline instead, and every unary call gets a deadline (requestTimeoutMs).
// - close() waits for in-flight calls, then cancels open watches without calling their handlers.
// - Watches use their own gRPC watch stream rather than etcd3's Watcher (etcd-watch.ts): the Watcher
//   hides the compact_revision of a canceled watch (it only emits an empty "Watcher canceled"). Here
//   a cancel caused by compaction becomes a CompactedError (the caller re-lists and re-watches), and
//   a lost stream is resumed from the last revision delivered, as Kubernetes' etcd client does.
// - etcd 3.4 does not report its compaction point in any unary response. compactedRevision()
//   therefore probes it: a read at revision r fails with "compacted" exactly when r < the
//   compaction point, so a binary search between the highest point this process knows (compacted
//   to, or learnt from a watch's compact_revision) and the current revision finds it.
import {asBuffer} from '../machinery/bytes.js'
import {ClientClosedError, CompareResult, CompareTarget, Etcd3, type ICompare, type IRangeRequest, type IRangeResponse, type ITxnResponse} from 'etcd3'
import type {Logger} from '../machinery/log.js'
import {
  NUL,
  bytes,
  etcdServerMessage,
  isBrokenCircuit,
  isCompactedError,
  isFutureRevisionError,
  isUnreachable,
  neverSent,
  noRetryPolicy,
  prefixRange,
  reasonOf,
  toKv,
  FutureRevisionError,
} from './etcd-support.js'
import {EtcdWatch} from './etcd-watch.js'
import {
  CompactedError,
  ConflictError,
  KeyExistsError,
  KeyNotFoundError,
  StorageError,
  StoreUnavailableError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type Watch,
  type WatchHandlers,
} from './store.js'

export interface EtcdStoreOptions {
  /** client URLs, e.g. http://127.0.0.1:2379 */
  endpoints: string[]
  /** how long open() waits for an endpoint to answer (default 5 s) */
  dialTimeoutMs?: number
  /** deadline of each unary call (default 30 s; compaction gets 10 minutes) */
  requestTimeoutMs?: number
  /** where watch interruptions and resumptions are logged */
  logger?: Logger
}

const DEFAULT_DIAL_TIMEOUT_MS = 5_000
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
const COMPACT_TIMEOUT_MS = 10 * 60_000
const MIN_ATTEMPTS = 3

export async function openEtcdStore(options: EtcdStoreOptions): Promise<EtcdStore> {
  const endpoints = options.endpoints.map((e) => e.trim()).filter((e) => e.length > 0)
  if (endpoints.length === 0) throw new StoreUnavailableError('etcd: no endpoints given')
  const label = `etcd at ${endpoints.join(', ')}`
  const dialTimeoutMs = options.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  let client: Etcd3
  try {
    client = new Etcd3({
      hosts: endpoints,
      dialTimeout: dialTimeoutMs,
      defaultCallOptions: (context) => (context.isStream ? {} : {deadline: Date.now() + requestTimeoutMs}),
      faultHandling: {global: noRetryPolicy()},
    })
  } catch (error) {
    throw new StoreUnavailableError(`${label} cannot be used: ${reasonOf(error)}`)
  }
  // Connectivity: a Status call, tried on each endpoint until one answers or the dial timeout passes.
  const deadline = Date.now() + dialTimeoutMs
  let firstError: unknown
  for (let attempt = 0; attempt < endpoints.length * 2 + 1 && Date.now() < deadline; attempt++) {
    try {
      await client.maintenance.status({deadline})
      return new EtcdStore(client, endpoints, options.logger)
    } catch (error) {
      // the circuit breaker's "open" says nothing about why: keep the first real reason
      if (firstError === undefined || isBrokenCircuit(firstError)) {
        firstError = error
      }
      if (!isUnreachable(error)) break
    }
  }
  client.close()
  const reason = firstError === undefined ? `no answer within ${dialTimeoutMs} ms` : reasonOf(firstError)
  throw new StoreUnavailableError(`${label} is unreachable: ${reason}`)
}

export class EtcdStore implements Store {
  readonly backend = 'etcd' as const
  /** the highest compaction point this process knows of (a lower bound of etcd's) */
  private knownCompacted = 0
  private closed = false
  private readonly inflight = new Set<Promise<unknown>>()
  private readonly watches = new Set<EtcdWatch>()
  readonly label: string
  /** tries of a call that failed without effect: each may go to another endpoint */
  readonly attempts: number

  constructor(
    private readonly client: Etcd3,
    readonly endpoints: string[],
    readonly logger?: Logger,
  ) {
    this.label = `etcd at ${endpoints.join(', ')}`
    this.attempts = Math.max(MIN_ATTEMPTS, endpoints.length * 2 + 1)
  }

  get(key: string): Promise<KeyValue | null> {
    return this.run(async () => {
      const response = await this.range({key: bytes(key)}, `get ${key}`)
      return response.kvs.length > 0 ? toKv(response.kvs[0]) : null
    })
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.run(async () => {
      const {start, end} = prefixRange(prefix)
      let from = start
      if (options.startAfter !== undefined) {
        // the smallest key after startAfter is startAfter + NUL
        const after = Buffer.concat([bytes(options.startAfter), NUL])
        if (Buffer.compare(after, from) > 0) from = after
      }
      const revision = options.revision && options.revision > 0 ? options.revision : 0
      const limit = options.limit && options.limit > 0 ? options.limit : 0
      const response = await this.range({key: from, range_end: end, revision, limit}, `list ${prefix}`, revision)
      const items = response.kvs.map(toKv)
      // count is the number of keys in [from, end) at that revision, whatever the limit
      const remaining = Math.max(0, Number(response.count) - items.length)
      return {items, revision: revision > 0 ? revision : Number(response.header.revision), remaining}
    })
  }

  count(prefix: string): Promise<number> {
    return this.run(async () => {
      const {start, end} = prefixRange(prefix)
      const response = await this.range({key: start, range_end: end, count_only: true}, `count ${prefix}`)
      return Number(response.count)
    })
  }

  create(key: string, value: Uint8Array): Promise<number> {
    return this.run(async () => {
      const k = bytes(key)
      const response = await this.txn(`create ${key}`, () =>
        this.client.kv.txn({
          compare: [{key: k, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0}],
          success: [{request_put: {key: k, value: asBuffer(value)}}],
        }),
      )
      if (!response.succeeded) throw new KeyExistsError(key)
      return Number(response.header.revision)
    })
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<number> {
    return this.run(async () => {
      const k = bytes(key)
      const response = await this.txn(`update ${key}`, () =>
        this.client.kv.txn({
          compare: [
            // the key exists (without it, mod_revision 0 would match an absent key and create it)
            {key: k, target: CompareTarget.Version, result: CompareResult.Greater, version: 0},
            {key: k, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: expectedModRevision},
          ],
          success: [{request_put: {key: k, value: asBuffer(value)}}],
          failure: [{request_range: {key: k}}],
        }),
      )
      if (!response.succeeded) throw this.preconditionError(key, response)
      return Number(response.header.revision)
    })
  }

  delete(key: string, expectedModRevision?: number): Promise<{revision: number; prev: KeyValue}> {
    return this.run(async () => {
      const k = bytes(key)
      const compare: ICompare[] = [
        {key: k, target: CompareTarget.Version, result: CompareResult.Greater, version: 0},
      ]
      if (expectedModRevision !== undefined) {
        compare.push({key: k, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: expectedModRevision})
      }
      const response = await this.txn(`delete ${key}`, () =>
        this.client.kv.txn({
          compare,
          success: [{request_delete_range: {key: k, prev_kv: true}}],
          failure: [{request_range: {key: k}}],
        }),
      )
      if (!response.succeeded) throw this.preconditionError(key, response)
      const prev = response.responses[0]?.response_delete_range?.prev_kvs?.[0]
      if (!prev) throw new StorageError(`${this.label}: delete ${key} returned no previous value`)
      return {revision: Number(response.header.revision), prev: toKv(prev)}
    })
  }

  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): Watch {
    if (this.closed) {
      const error = this.closedError()
      queueMicrotask(() => handlers.onError(error))
      return {cancel() {}}
    }
    const watch = new EtcdWatch(this, this.client, prefix, fromRevision, handlers, () => this.watches.delete(watch))
    this.watches.add(watch)
    watch.start()
    return {cancel: () => watch.cancel()}
  }

  compact(revision: number): Promise<void> {
    return this.run(async () => {
      const current = await this.readCurrentRevision()
      const target = Math.min(revision, current)
      if (target <= this.knownCompacted) return
      try {
        await this.client.kv.compact({revision: target, physical: true}, {deadline: Date.now() + COMPACT_TIMEOUT_MS})
      } catch (error) {
        // compacted already at or past target (by us or another client): nothing to do
        if (!isCompactedError(error)) throw this.translate(error, `compact to ${target}`)
      }
      this.learnCompacted(target)
    })
  }

  compactedRevision(): Promise<number> {
    return this.run(() => this.probeCompacted())
  }

  currentRevision(): Promise<number> {
    return this.run(() => this.readCurrentRevision())
  }

  async check(timeoutMs: number): Promise<void> {
    await this.run(async () => {
      try {
        await this.client.kv.range({key: NUL, count_only: true}, {deadline: Date.now() + timeoutMs})
      } catch (error) {
        throw this.translate(error, 'health check')
      }
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight])
    for (const watch of [...this.watches]) watch.cancel()
    this.client.close()
  }

  /** @internal a compaction point seen in a watch response or made by compact() */
  learnCompacted(revision: number): void {
    if (revision > this.knownCompacted) this.knownCompacted = revision
  }

  /** @internal fails with CompactedError when revision is older than the compacted history;
   *  a revision in the future passes (a watch may start there). */
  async checkNotCompacted(revision: number): Promise<void> {
    try {
      await this.range({key: NUL, revision: Math.max(1, revision), count_only: true}, `read at revision ${revision}`, revision)
    } catch (error) {
      if (error instanceof CompactedError) throw error
      if (error instanceof FutureRevisionError) return
      throw error
    }
  }

  /** @internal */
  translate(error: unknown, what: string): StorageError {
    if (error instanceof StorageError) return error
    if (error instanceof ClientClosedError) return this.closedError()
    const server = etcdServerMessage(error)
    if (isUnreachable(error)) return new StoreUnavailableError(`${this.label} is unreachable: ${what}: ${reasonOf(error)}`, server)
    return new StorageError(`${this.label}: ${what}: ${reasonOf(error)}`, server)
  }

  private closedError(): StorageError {
    return new StorageError(`${this.label}: the store is closed`)
  }

  /** Runs an operation unless the store is closed, and keeps it in the set close() waits for. */
  private run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError())
    const promise = operation()
    this.inflight.add(promise)
    const done = () => this.inflight.delete(promise)
    promise.then(done, done)
    return promise
  }

  /** A read, retried on transient errors (each retry may go to another endpoint). Errors come
   *  back translated: CompactedError and "in the future" when `revision` is not readable. */
  private async range(request: IRangeRequest, what: string, revision = 0): Promise<IRangeResponse> {
    let lastError: unknown
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      try {
        return await this.client.kv.range(request)
      } catch (error) {
        lastError = error
        if (!isUnreachable(error) || this.closed) break
      }
    }
    if (isCompactedError(lastError)) throw new CompactedError(revision, await this.probeCompacted(revision))
    if (isFutureRevisionError(lastError)) {
      const current = await this.readCurrentRevision()
      throw new FutureRevisionError(`${this.label}: ${what}: revision ${revision} is in the future (current ${current})`)
    }
    throw this.translate(lastError, what)
  }

  /** A write: sent again only when it surely never reached a server. */
  private async txn(what: string, call: () => Promise<ITxnResponse>): Promise<ITxnResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call()
      } catch (error) {
        if (!neverSent(error) || attempt >= this.attempts || this.closed) throw this.translate(error, what)
      }
    }
  }

  private preconditionError(key: string, response: ITxnResponse): StorageError {
    const current = response.responses[0]?.response_range?.kvs?.[0]
    return current ? new ConflictError(key, toKv(current)) : new KeyNotFoundError(key)
  }

  private async readCurrentRevision(): Promise<number> {
    const response = await this.range({key: NUL, count_only: true}, 'current revision')
    return Number(response.header.revision)
  }

  /** Reads at revision r fail exactly when r < the compaction point: find that point. `failing`
   *  is a revision already known to fail. */
  private async probeCompacted(failing = 0): Promise<number> {
    const readable = async (revision: number): Promise<boolean> => {
      try {
        await this.client.kv.range({key: NUL, revision, count_only: true})
        return true
      } catch (error) {
        if (isCompactedError(error)) return false
        throw this.translate(error, `read at revision ${revision}`)
      }
    }
    let low = Math.max(this.knownCompacted, failing + 1, 1)
    if (await readable(low)) {
      // revision 1 holds no data: compacted to 0 and to 1 are the same history
      if (low > 1) this.learnCompacted(low)
      return this.knownCompacted
    }
    // low fails, the current revision never does: the point is in (low, high]
    let high = await this.readCurrentRevision()
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2)
      if (await readable(middle)) high = middle
      else low = middle
    }
    this.learnCompacted(high)
    return this.knownCompacted
  }
}
