// Storage benchmark: `npm run bench:storage`. Every figure is printed next to a baseline measured in
// the same run on the same disk, so the ratios mean something on any machine:
//   1. raw better-sqlite3 inserts of the store's log rows (WAL, synchronous=FULL), committed the way
//      the store commits: one transaction per group of concurrent writes, with the group size the
//      store was seen to use; and one transaction per insert, for context;
//   2. the SQLite store: creates/s with 16 writers and with 1, ~1 KiB values; ratio to raw;
//   3. the etcd store (when an etcd binary is installed): creates/s with 16 and 64 writers;
//   4. the watch cache fanning 2,000 writes out to 1,000 watchers.
// The whole run stays under ~2 minutes on 2 cores, and a watchdog ends it (and any etcd) if not.
import Database from 'better-sqlite3'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {openEtcdStore} from '../src/storage/etcd.js'
import {openSqliteStore} from '../src/storage/sqlite.js'
import type {KeyValue, Store} from '../src/storage/store.js'
import {WatchCache} from '../src/storage/watch-cache.js'
import {findEtcdBinary, startEtcd, type RunningEtcd} from '../test/support/etcd.js'
import {median, table, type Cell} from './report.js'

const VALUE_BYTES = 1024
const SQLITE_WRITES = 20_000
const SQLITE_SINGLE_WRITES = 3_000
const NAIVE_INSERTS = 3_000
const ETCD_WRITES = 4_000
const FANOUT_WRITES = 2_000
const FANOUT_WATCHERS = 1_000
const FANOUT_WRITERS = 16
const WATCHDOG_MS = 150_000
const TRIALS = 3
/** writes before each measured run, in the same file (JIT, WAL file grown) */
const WARMUP_WRITES = 500

const VALUE = Buffer.alloc(VALUE_BYTES)
for (let i = 0; i < VALUE.length; i++) VALUE[i] = 32 + ((i * 31) % 95)

const tempDirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-'))
  tempDirs.push(dir)
  return dir
}
function cleanup(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, {recursive: true, force: true})
}
process.once('exit', cleanup)

// ---------------------------------------------------------------------------------------------
// output (tables and medians: bench/report.ts)

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

// ---------------------------------------------------------------------------------------------
// raw better-sqlite3

const LOG_SCHEMA = `
CREATE TABLE log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value BLOB
);
CREATE INDEX log_name_id ON log(name, id);
`

/** rows/s inserting `rows` log rows, one transaction per `group` rows (group 1 = autocommit each),
 *  after as many warm-up rows as the store gets. */
function rawInserts(rows: number, group: number): number {
  const dir = tempDir()
  const db = new Database(join(dir, 'raw.db'))
  try {
    db.pragma('locking_mode = EXCLUSIVE')
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.exec(LOG_SCHEMA)
    const insert = db.prepare(
      `INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    const commitGroup = db.transaction((from: number, to: number) => {
      for (let id = from; id < to; id++) insert.run(id, keyName('raw', id), 1, 0, id, 0, VALUE)
    })
    const insertRows = (first: number, last: number) => {
      for (let id = first; id <= last; id += group) {
        if (group === 1) insert.run(id, keyName('raw', id), 1, 0, id, 0, VALUE)
        else commitGroup(id, Math.min(id + group, last + 1))
      }
    }
    insertRows(1, WARMUP_WRITES)
    const started = performance.now()
    insertRows(WARMUP_WRITES + 1, WARMUP_WRITES + rows)
    return rows / ((performance.now() - started) / 1000)
  } finally {
    db.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

function keyName(run: string, i: number): string {
  return `/bench/${run}/${String(i).padStart(8, '0')}`
}

// ---------------------------------------------------------------------------------------------
// stores

interface WriteRun {
  writesPerSecond: number
  seconds: number
  /** mean writes per commit as seen through a watch (SQLite: one event batch per group commit) */
  groupSize: number
}

/** `writes` creates of ~1 KiB values from `writers` concurrent loops; onAck sees each revision. */
async function createLoad(
  store: Store,
  run: string,
  writes: number,
  writers: number,
  onAck?: (revision: number) => void,
): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({length: writers}, async () => {
      while (next < writes) {
        const revision = await store.create(keyName(run, next++), VALUE)
        onAck?.(revision)
      }
    }),
  )
  return (performance.now() - started) / 1000
}

async function measureStore(
  store: Store,
  run: string,
  writes: number,
  writers: number,
  observeGroups: boolean,
): Promise<WriteRun> {
  let batches = 0
  let events = 0
  if (!observeGroups) {
    const seconds = await createLoad(store, run, writes, writers)
    return {writesPerSecond: writes / seconds, seconds, groupSize: NaN}
  }
  const watch = store.watch(`/bench/${run}/`, await store.currentRevision(), {
    onEvents: (batch) => {
      batches++
      events += batch.length
    },
    onError: () => {},
  })
  const seconds = await createLoad(store, run, writes, writers)
  // the last batch reaches the watch in a microtask after its commit
  await new Promise((resolve) => setImmediate(resolve))
  watch.cancel()
  return {writesPerSecond: writes / seconds, seconds, groupSize: batches > 0 ? events / batches : NaN}
}

async function sqliteRun(writes: number, writers: number): Promise<WriteRun> {
  const store = openSqliteStore({dataDir: tempDir()})
  try {
    await createLoad(store, 'warmup', WARMUP_WRITES, writers)
    return await measureStore(store, `w${writers}`, writes, writers, true)
  } finally {
    await store.close()
  }
}

// ---------------------------------------------------------------------------------------------
// watch-cache fan-out

interface FanOut {
  writesAlone: number
  withFanOut: number
  latenciesMs: number[]
}

async function fanOut(): Promise<FanOut> {
  // the same writes with nobody watching
  const plain = openSqliteStore({dataDir: tempDir()})
  let writesAlone: number
  try {
    await createLoad(plain, 'warmup', WARMUP_WRITES, FANOUT_WRITERS)
    writesAlone = await createLoad(plain, 'fan', FANOUT_WRITES, FANOUT_WRITERS)
  } finally {
    await plain.close()
  }

  const store = openSqliteStore({dataDir: tempDir()})
  const cache = new WatchCache<KeyValue>(store, '/bench/fan/', {decode: (kv) => kv, capacity: FANOUT_WRITES})
  try {
    await createLoad(store, 'warmup', WARMUP_WRITES, FANOUT_WRITERS)
    await cache.start()
    const base = cache.revision
    const ackedAt = new Float64Array(FANOUT_WRITES + 1)
    const deliveredAt = new Float64Array(FANOUT_WRITES + 1)
    const received = new Uint32Array(FANOUT_WRITES + 1)
    const watches = []
    for (let w = 0; w < FANOUT_WATCHERS; w++) {
      watches.push(
        cache.watch(base, {
          onEvents(events) {
            for (const event of events) {
              const i = event.revision - base
              if (++received[i] === FANOUT_WATCHERS) deliveredAt[i] = performance.now()
            }
          },
          onError() {
            // counted below: a watcher that ended early misses events
          },
        }),
      )
    }
    const started = performance.now()
    let last = 0
    await createLoad(store, 'fan', FANOUT_WRITES, FANOUT_WRITERS, (revision) => {
      ackedAt[revision - base] = performance.now()
      last = Math.max(last, revision)
    })
    await cache.waitUntil(last, 30_000)
    let finished = started
    const latenciesMs: number[] = []
    for (let i = 1; i <= FANOUT_WRITES; i++) {
      if (received[i] !== FANOUT_WATCHERS) throw new Error(`revision ${base + i} reached ${received[i]} watchers`)
      finished = Math.max(finished, deliveredAt[i])
      latenciesMs.push(Math.max(0, deliveredAt[i] - ackedAt[i]))
    }
    for (const watch of watches) watch.cancel()
    latenciesMs.sort((a, b) => a - b)
    return {writesAlone, withFanOut: (finished - started) / 1000, latenciesMs}
  } finally {
    cache.stop()
    await store.close()
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  let etcd: RunningEtcd | undefined
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s, giving up`)
    void etcd?.stop()
    // the exit hooks of test/support/etcd.ts kill a running etcd synchronously
    process.exit(1)
  }, WATCHDOG_MS)
  watchdog.unref()

  console.log(`storage bench: ~${VALUE_BYTES} B values, synchronous=FULL, WAL; node ${process.version}`)

  // Store and raw runs alternate, TRIALS times, and each ratio is taken within one trial: fsync
  // speed drifts with whatever else the disk is doing, and a ratio of neighbours drifts much less.
  // The store runs first in each trial, so that raw commits with the group size the store used.
  const trials: {writers: number; writes: number; store: WriteRun; group: number; raw: number}[] = []
  const naiveRates: number[] = []
  for (let trial = 0; trial < TRIALS; trial++) {
    for (const [writers, writes] of [
      [16, SQLITE_WRITES],
      [1, SQLITE_SINGLE_WRITES],
    ]) {
      const store = await sqliteRun(writes, writers)
      const group = Math.max(1, Math.round(store.groupSize))
      const raw = rawInserts(group === 1 ? NAIVE_INSERTS : writes, group)
      trials.push({writers, writes, store, group, raw})
      if (group === 1) naiveRates.push(raw)
    }
    if (naiveRates.length <= trial) naiveRates.push(rawInserts(NAIVE_INSERTS, 1))
  }
  const summary = (writers: number) => {
    const runs = trials.filter((t) => t.writers === writers)
    return {
      writes: runs[0].writes,
      group: median(runs.map((t) => t.group)),
      groupSize: median(runs.map((t) => t.store.groupSize)),
      store: median(runs.map((t) => t.store.writesPerSecond)),
      raw: median(runs.map((t) => t.raw)),
      ratio: median(runs.map((t) => t.store.writesPerSecond / t.raw)),
    }
  }
  const s16 = summary(16)
  const s1 = summary(1)
  const raw16 = s16.raw

  table(
    `baseline: raw better-sqlite3 inserts of log rows (median of ${TRIALS} trials)`,
    ['commit', 'rows/tx', 'rows', 'rows/s'],
    [
      ['grouped like the store (16 writers)', s16.group, s16.writes, s16.raw],
      ...(s1.group === 1 ? [] : [['grouped like the store (1 writer)', s1.group, s1.writes, s1.raw] as Cell[]]),
      ['one transaction per insert', 1, NAIVE_INSERTS, median(naiveRates)],
    ],
  )

  table(
    `sqlite store: creates (median of ${TRIALS} trials; store/raw is the median of per-trial ratios)`,
    ['writers', 'writes', 'writes/tx', 'creates/s', 'raw rows/s', 'store/raw'],
    [
      [16, s16.writes, s16.groupSize, s16.store, s16.raw, s16.ratio],
      [1, s1.writes, s1.groupSize, s1.store, s1.raw, s1.ratio],
    ],
  )

  if (!findEtcdBinary()) {
    console.log('\netcd: skipped (no etcd binary)')
  } else {
    etcd = await startEtcd()
    try {
      const store = await openEtcdStore({endpoints: [etcd.endpoint]})
      const rows: Cell[][] = []
      try {
        await createLoad(store, 'warmup', 300, 16)
        for (const writers of [16, 64]) {
          const run = await measureStore(store, `w${writers}`, ETCD_WRITES, writers, false)
          rows.push([writers, ETCD_WRITES, run.writesPerSecond, raw16, run.writesPerSecond / raw16])
        }
      } finally {
        await store.close()
      }
      table(
        `etcd store: creates (etcd at ${etcd.endpoint})`,
        ['writers', 'writes', 'creates/s', 'raw rows/s', 'etcd/raw'],
        rows,
      )
    } finally {
      await etcd.stop()
      etcd = undefined
    }
  }

  const fan = await fanOut()
  const delivered = (FANOUT_WRITES * FANOUT_WATCHERS) / fan.withFanOut
  table(
    `watch cache fan-out: ${FANOUT_WRITES.toLocaleString('en-US')} writes (${FANOUT_WRITERS} writers) to ${FANOUT_WATCHERS.toLocaleString('en-US')} watchers`,
    ['figure', 'value'],
    [
      ['writes alone, s', fan.writesAlone],
      ['writes + delivery to every watcher, s', fan.withFanOut],
      ['ratio (with fan-out / writes alone)', fan.withFanOut / fan.writesAlone],
      ['events delivered/s (writes x watchers / s)', delivered],
      ['ack -> last watcher latency p50, ms', percentile(fan.latenciesMs, 50)],
      ['ack -> last watcher latency p99, ms', percentile(fan.latenciesMs, 99)],
    ],
  )
  clearTimeout(watchdog)
}

main().then(
  () => {
    cleanup()
    process.exit(0)
  },
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    cleanup()
    process.exit(1)
  },
)
