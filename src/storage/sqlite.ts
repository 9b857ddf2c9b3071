// The embedded store: an append-only log in SQLite, in the style of kine, with a table of the
// current row per key so that lists stay index-driven at any size. See docs/architecture.md.
import {asBuffer} from '../machinery/bytes.js'
import Database from 'better-sqlite3'
import {mkdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {
  CompactedError,
  ConflictError,
  KeyExistsError,
  KeyNotFoundError,
  prefixEnd,
  StorageError,
  StoreUnavailableError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type Watch,
  type WatchEvent,
  type WatchHandlers,
} from './store.js'
import {LogWatchers} from './watchers.js'

export interface SqliteStoreOptions {
  dataDir: string
  /** fsync each commit (FULL, default) or only at checkpoints (NORMAL) */
  synchronous?: 'full' | 'normal'
}

interface LogRow {
  id: number
  name: string
  created: number
  deleted: number
  create_revision: number
  prev_revision: number
  value: Buffer | null
}

interface LogRowWithPrev extends LogRow {
  prev_value: Buffer | null
  prev_create_revision: number | null
}

type PendingWrite =
  | {op: 'create'; key: string; value: Uint8Array; resolve: (rev: number) => void; reject: (e: Error) => void}
  | {op: 'update'; key: string; value: Uint8Array; expected: number; resolve: (rev: number) => void; reject: (e: Error) => void}
  | {
      op: 'delete'
      key: string
      expected?: number
      resolve: (r: {revision: number; prev: KeyValue}) => void
      reject: (e: Error) => void
    }

const SCHEMA = `
CREATE TABLE IF NOT EXISTS log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value BLOB
);
CREATE INDEX IF NOT EXISTS log_name_id ON log(name, id);
CREATE TABLE IF NOT EXISTS current (
  name TEXT PRIMARY KEY,
  revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`

function toKv(row: {name: string; id: number; create_revision: number; value: Buffer | null}): KeyValue {
  return {key: row.name, value: row.value ?? Buffer.alloc(0), modRevision: row.id, createRevision: row.create_revision}
}

function describeOpenError(path: string, error: unknown): string {
  const code = (error as {code?: string}).code ?? ''
  const message = error instanceof Error ? error.message : String(error)
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || /locked/i.test(message)) {
    return `${path} is locked: another orch server is using this data dir`
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') return `${path} is not a valid orch store (${message})`
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM' || code === 'EACCES') {
    return `${path} cannot be opened for writing (${message})`
  }
  return `${path}: ${message}`
}

/** A state.db of 0 bytes (with no write-ahead log holding its data): SQLite would take it for a new
 *  database and the server would start an empty cluster beside the old certificates, so that clients
 *  connect and find everything gone. It is refused as a damaged store instead. */
function emptiedStore(path: string): string | undefined {
  const size = (file: string) => {
    try {
      return statSync(file).size
    } catch {
      return undefined
    }
  }
  if (size(path) !== 0 || (size(`${path}-wal`) ?? 0) > 0) return undefined
  return `${path} is not a valid orch store (the file is empty); move it away to start a new cluster in this data dir`
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const path = join(options.dataDir, 'state.db')
  try {
    mkdirSync(options.dataDir, {recursive: true})
  } catch (error) {
    throw new StoreUnavailableError(`cannot create data dir ${options.dataDir}: ${(error as Error).message}`)
  }
  const emptied = emptiedStore(path)
  if (emptied) throw new StoreUnavailableError(emptied)
  let db: Database.Database | undefined
  try {
    db = new Database(path, {timeout: 0})
    // EXCLUSIVE locking keeps the file locked for the life of this process, so a second server
    // on the same data dir fails here instead of writing beside us. The lock dies with the process.
    db.pragma('locking_mode = EXCLUSIVE')
    db.pragma('journal_mode = WAL')
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`)
    db.exec('BEGIN EXCLUSIVE; COMMIT;')
    db.exec(SCHEMA)
    return new SqliteStore(db, path, options)
  } catch (error) {
    db?.close()
    throw new StoreUnavailableError(describeOpenError(path, error))
  }
}

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const
  private revision: number
  private compacted: number
  private pending: PendingWrite[] = []
  private flushScheduled = false
  private closed = false
  /** why the last group commit failed, until one succeeds (the health check reports it) */
  private lastCommitError: string | undefined
  private readonly watchers = new LogWatchers()
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
    _options: SqliteStoreOptions,
  ) {
    this.statements = {
      getCurrent: db.prepare(
        `SELECT l.id, l.name, l.create_revision, l.value FROM current c JOIN log l ON l.id = c.revision WHERE c.name = ?`,
      ),
      listCurrent: db.prepare(
        `SELECT l.id, l.name, l.create_revision, l.value FROM current c JOIN log l ON l.id = c.revision
         WHERE c.name >= ? AND c.name < ? ORDER BY c.name LIMIT ?`,
      ),
      countCurrent: db.prepare(`SELECT COUNT(*) AS n FROM current WHERE name >= ? AND name < ?`),
      listUnchangedSince: db.prepare(
        `SELECT l.id, l.name, l.create_revision, l.value FROM current c JOIN log l ON l.id = c.revision
         WHERE c.name >= ? AND c.name < ? AND c.revision <= ? ORDER BY c.name LIMIT ?`,
      ),
      countUnchangedSince: db.prepare(`SELECT COUNT(*) AS n FROM current WHERE name >= ? AND name < ? AND revision <= ?`),
      namesChangedSince: db.prepare(`SELECT DISTINCT name FROM log WHERE id > ? AND name >= ? AND name < ?`),
      rowAtRevision: db.prepare(
        `SELECT id, name, create_revision, value, deleted FROM log WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1`,
      ),
      insert: db.prepare(
        `INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      upsertCurrent: db.prepare(
        `INSERT INTO current (name, revision) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET revision = excluded.revision`,
      ),
      deleteCurrent: db.prepare(`DELETE FROM current WHERE name = ?`),
      history: db.prepare(
        `SELECT l.id, l.name, l.created, l.deleted, l.create_revision, l.prev_revision, l.value,
                p.value AS prev_value, p.create_revision AS prev_create_revision
         FROM log l LEFT JOIN log p ON p.id = l.prev_revision
         WHERE l.id > ? AND l.name >= ? AND l.name < ? ORDER BY l.id`,
      ),
      compactChunk: db.prepare(
        `DELETE FROM log WHERE id > ? AND id <= ? AND (deleted = 1 OR EXISTS
           (SELECT 1 FROM log later WHERE later.name = log.name AND later.id > log.id AND later.id <= ?))`,
      ),
      sequence: db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'log'`),
      setMeta: db.prepare(
        `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      ),
    }
    const seq = this.statements.sequence.get() as {seq: number} | undefined
    this.revision = seq?.seq ?? 0
    const meta = db.prepare(`SELECT value FROM meta WHERE key = 'compacted'`).get() as {value: number} | undefined
    this.compacted = meta?.value ?? 0
  }

  async get(key: string): Promise<KeyValue | null> {
    this.assertOpen()
    const row = this.statements.getCurrent.get(key) as LogRow | undefined
    return row ? toKv(row) : null
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen()
    const end = prefixEnd(prefix)
    // the smallest key after startAfter is startAfter + NUL: keys hold no NUL
    const from =
      options.startAfter !== undefined && options.startAfter + '\0' > prefix ? options.startAfter + '\0' : prefix
    const limit = options.limit && options.limit > 0 ? options.limit : -1
    const atRevision = options.revision && options.revision > 0 ? options.revision : this.revision
    if (atRevision > this.revision) throw new StorageError(`revision ${atRevision} is in the future (current ${this.revision})`)
    if (atRevision < this.compacted) throw new CompactedError(atRevision, this.compacted)
    const read = this.db.transaction(() => {
      if (atRevision === this.revision) {
        const rows = this.statements.listCurrent.all(from, end, limit) as LogRow[]
        const total = (this.statements.countCurrent.get(from, end) as {n: number}).n
        return {items: rows.map(toKv), total}
      }
      // A past revision: keys untouched since then are current; keys changed since are resolved one by one.
      const unchanged = this.statements.listUnchangedSince.all(from, end, atRevision, limit) as LogRow[]
      const unchangedCount = (this.statements.countUnchangedSince.get(from, end, atRevision) as {n: number}).n
      const restored: LogRow[] = []
      for (const {name} of this.statements.namesChangedSince.all(atRevision, from, end) as {name: string}[]) {
        const row = this.statements.rowAtRevision.get(name, atRevision) as LogRow | undefined
        if (row && !row.deleted) restored.push(row)
      }
      const merged = [...unchanged, ...restored].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      const items = (limit > 0 ? merged.slice(0, limit) : merged).map(toKv)
      return {items, total: unchangedCount + restored.length}
    })
    const {items, total} = read()
    return {items, revision: atRevision, remaining: Math.max(0, total - items.length)}
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen()
    return (this.statements.countCurrent.get(prefix, prefixEnd(prefix)) as {n: number}).n
  }

  create(key: string, value: Uint8Array): Promise<number> {
    return new Promise((resolve, reject) => this.enqueue({op: 'create', key, value, resolve, reject}))
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.enqueue({op: 'update', key, value, expected: expectedModRevision, resolve, reject}),
    )
  }

  delete(key: string, expectedModRevision?: number): Promise<{revision: number; prev: KeyValue}> {
    return new Promise((resolve, reject) =>
      this.enqueue({op: 'delete', key, expected: expectedModRevision, resolve, reject}),
    )
  }

  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): Watch {
    this.assertOpen()
    if (fromRevision < this.compacted) {
      const error = new CompactedError(fromRevision, this.compacted)
      queueMicrotask(() => handlers.onError(error))
      return {cancel() {}}
    }
    if (fromRevision > this.revision) {
      // a watch from the future starts when the store gets there: nothing to replay
      return this.watchers.add(prefix, prefixEnd(prefix), [], handlers, fromRevision)
    }
    const rows = this.statements.history.all(fromRevision, prefix, prefixEnd(prefix)) as LogRowWithPrev[]
    return this.watchers.add(prefix, prefixEnd(prefix), rows.map(rowToEvent), handlers, this.revision)
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen()
    const target = Math.min(revision, this.revision)
    if (target <= this.compacted) return
    // in chunks, so that a large history does not hold the event loop for long
    const chunk = 5_000
    for (let start = this.compacted; start < target; start += chunk) {
      const stop = Math.min(start + chunk, target)
      this.db.transaction(() => {
        this.statements.compactChunk.run(start, stop, target)
        this.statements.setMeta.run('compacted', stop)
      })()
      this.compacted = stop
      if (stop < target) await new Promise((r) => setImmediate(r))
    }
  }

  async compactedRevision(): Promise<number> {
    return this.compacted
  }

  async currentRevision(): Promise<number> {
    return this.revision
  }

  async check(): Promise<void> {
    this.assertOpen()
    // Stays failed until a write commits again: a small probe write here would often fit where the
    // failed batch did not (SQLite reuses the WAL's space), and say healthy on a disk that is full.
    if (this.lastCommitError !== undefined) throw new StorageError(`the last commit to ${this.path} failed: ${this.lastCommitError}`)
    this.statements.sequence.get()
  }

  async close(): Promise<void> {
    if (this.closed) return
    if (this.pending.length > 0) this.flush()
    this.closed = true
    this.watchers.closeAll()
    this.db.close()
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError(`store ${this.path} is closed`)
  }

  private enqueue(write: PendingWrite): void {
    if (this.closed) {
      write.reject(new StorageError(`store ${this.path} is closed`))
      return
    }
    this.pending.push(write)
    if (!this.flushScheduled) {
      this.flushScheduled = true
      setImmediate(() => this.flush())
    }
  }

  /** Group commit: every write queued during this tick goes into one transaction; none is
   *  acknowledged before that transaction commits. */
  private flush(): void {
    this.flushScheduled = false
    const batch = this.pending
    this.pending = []
    if (batch.length === 0 || this.closed) return
    const outcomes: (() => void)[] = []
    const events: WatchEvent[] = []
    const startRevision = this.revision
    let next = this.revision
    try {
      this.db.transaction(() => {
        for (const write of batch) {
          const current = this.statements.getCurrent.get(write.key) as LogRow | undefined
          if (write.op === 'create') {
            if (current) {
              const error = new KeyExistsError(write.key)
              outcomes.push(() => write.reject(error))
              continue
            }
            const id = ++next
            this.statements.insert.run(id, write.key, 1, 0, id, 0, asBuffer(write.value))
            this.statements.upsertCurrent.run(write.key, id)
            events.push({type: 'put', created: true, revision: id, kv: kvOf(write.key, write.value, id, id)})
            outcomes.push(() => write.resolve(id))
          } else if (write.op === 'update') {
            if (!current) {
              const error = new KeyNotFoundError(write.key)
              outcomes.push(() => write.reject(error))
              continue
            }
            if (current.id !== write.expected) {
              const error = new ConflictError(write.key, toKv(current))
              outcomes.push(() => write.reject(error))
              continue
            }
            const id = ++next
            this.statements.insert.run(id, write.key, 0, 0, current.create_revision, current.id, asBuffer(write.value))
            this.statements.upsertCurrent.run(write.key, id)
            events.push({
              type: 'put',
              created: false,
              revision: id,
              kv: kvOf(write.key, write.value, id, current.create_revision),
              prevKv: toKv(current),
            })
            outcomes.push(() => write.resolve(id))
          } else {
            if (!current) {
              const error = new KeyNotFoundError(write.key)
              outcomes.push(() => write.reject(error))
              continue
            }
            if (write.expected !== undefined && current.id !== write.expected) {
              const error = new ConflictError(write.key, toKv(current))
              outcomes.push(() => write.reject(error))
              continue
            }
            const id = ++next
            const prev = toKv(current)
            this.statements.insert.run(id, write.key, 0, 1, current.create_revision, current.id, current.value)
            this.statements.deleteCurrent.run(write.key)
            events.push({
              type: 'delete',
              created: false,
              revision: id,
              kv: {...prev, modRevision: id},
              prevKv: prev,
            })
            outcomes.push(() => write.resolve({revision: id, prev}))
          }
        }
      })()
    } catch (error) {
      this.revision = startRevision
      this.lastCommitError = (error as Error).message
      const failure = new StorageError(`write to ${this.path} failed: ${(error as Error).message}`)
      for (const write of batch) write.reject(failure)
      return
    }
    // a batch of refused writes only (conflicts) committed nothing, and proves nothing about the disk
    if (next > startRevision) this.lastCommitError = undefined
    this.revision = next
    for (const outcome of outcomes) outcome()
    this.watchers.dispatch(events, this.revision)
  }
}

function kvOf(key: string, value: Uint8Array, modRevision: number, createRevision: number): KeyValue {
  return {key, value, modRevision, createRevision}
}

function rowToEvent(row: LogRowWithPrev): WatchEvent {
  const prevKv =
    row.prev_revision > 0 && row.prev_value !== null
      ? {
          key: row.name,
          value: row.prev_value,
          modRevision: row.prev_revision,
          createRevision: row.prev_create_revision ?? row.create_revision,
        }
      : undefined
  if (row.deleted) {
    return {type: 'delete', created: false, revision: row.id, kv: toKv(row), prevKv}
  }
  return {type: 'put', created: row.created === 1, revision: row.id, kv: toKv(row), prevKv}
}
