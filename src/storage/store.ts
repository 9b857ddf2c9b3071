// The revisioned key-value store every backend implements. It knows nothing about kinds:
// keys are strings, values are bytes, and one global increasing integer orders every write.

export interface KeyValue {
  key: string
  value: Uint8Array
  /** revision of the write that produced this value */
  modRevision: number
  /** revision of the write that created the key (stays the same across updates) */
  createRevision: number
}

export interface ListOptions {
  /** list as the store was at this revision; 0 or absent = now */
  revision?: number
  /** only keys strictly greater than this one (paging) */
  startAfter?: string
  /** at most this many items; 0 or absent = no limit */
  limit?: number
}

export interface ListResult {
  items: KeyValue[]
  /** the revision the list was read at */
  revision: number
  /** how many keys under the prefix come after the last returned item (at that revision) */
  remaining: number
}

export type WatchEventType = 'put' | 'delete'

export interface WatchEvent {
  type: WatchEventType
  /** for put: the new value; for delete: key with the deleting revision and the last value */
  kv: KeyValue
  /** the value before this write, when there was one */
  prevKv?: KeyValue
  /** true when a put created the key */
  created: boolean
  revision: number
}

export interface WatchHandlers {
  /** events in revision order; each call carries events of one or more consecutive revisions */
  onEvents(events: WatchEvent[]): void
  /** the store has delivered everything up to this revision (no event under the prefix was skipped) */
  onProgress?(revision: number): void
  /** the watch ended because of an error (Compacted, connection lost); no more calls follow */
  onError(error: Error): void
}

export interface Watch {
  /** stop the watch; no more handler calls after this returns */
  cancel(): void
}

export interface Store {
  readonly backend: 'sqlite' | 'etcd'
  get(key: string): Promise<KeyValue | null>
  list(prefix: string, options?: ListOptions): Promise<ListResult>
  /** count keys under the prefix now */
  count(prefix: string): Promise<number>
  /** fails with KeyExistsError when the key exists; resolves to the new revision */
  create(key: string, value: Uint8Array): Promise<number>
  /** compare-and-swap: fails with ConflictError unless the key's modRevision equals expectedModRevision
   *  (the error carries the current value), KeyNotFoundError when the key is absent */
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<number>
  /** delete, optionally only when the modRevision matches; resolves to the deleting revision and the last value */
  delete(key: string, expectedModRevision?: number): Promise<{revision: number; prev: KeyValue}>
  /** events after fromRevision (exclusive) under the prefix; fromRevision older than the compacted
   *  history fails with CompactedError through onError */
  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): Watch
  /** drop history older than revision; later reads or watches before it fail with CompactedError */
  compact(revision: number): Promise<void>
  /** the revision history is compacted to (reads before it fail) */
  compactedRevision(): Promise<number>
  currentRevision(): Promise<number>
  /** One round trip that proves the store answers (what Kubernetes' etcd health check does): resolves
   *  when it does, rejects saying why not. etcd: a read with this deadline; SQLite: a read of the
   *  database, failing too while the last commit failed. */
  check(timeoutMs: number): Promise<void>
  /** finish in-flight writes, then release the store */
  close(): Promise<void>
}

export class StorageError extends Error {
  /** The message names the store's endpoints and keys, for the log. serverMessage is the storage
   *  server's own error text when it gave one (etcd: "etcdserver: request is too large"), which
   *  the API passes on to the client as Kubernetes does. */
  constructor(
    message: string,
    readonly serverMessage?: string,
  ) {
    super(message)
    this.name = new.target.name
  }
}

export class KeyExistsError extends StorageError {
  constructor(readonly key: string) {
    super(`key exists: ${key}`)
  }
}

export class KeyNotFoundError extends StorageError {
  constructor(readonly key: string) {
    super(`key not found: ${key}`)
  }
}

export class ConflictError extends StorageError {
  constructor(
    readonly key: string,
    readonly current: KeyValue | null,
  ) {
    super(`revision conflict on ${key}`)
  }
}

export class CompactedError extends StorageError {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`revision ${requested} has been compacted (oldest available: ${compacted})`)
  }
}

/** The store cannot be opened or reached: names the file or endpoint. */
export class StoreUnavailableError extends StorageError {}

/** The exclusive end of the key range under a prefix. */
export function prefixEnd(prefix: string): string {
  return prefix + '\u{10FFFF}'
}
