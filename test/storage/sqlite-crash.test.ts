// Crash safety and open errors of the SQLite store. A child process (fixtures/crash-writer.ts)
// writes through the store with 16 concurrent loops and reports every acknowledged write on stdout;
// the parent SIGKILLs it at a point picked from that stream, reopens the store and checks that
// nothing acknowledged was lost and that the log is intact.
import {spawn, type ChildProcess} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {after, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {StoreUnavailableError, type KeyValue, type Store, type WatchEvent} from '../../src/storage/store.js'
import {KEYS_PER_WORKER, keyOf, PREFIX, prng, seqOf, valueFor, WORKERS, type Ack} from './fixtures/crash-writer.js'

const WRITER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crash-writer.js')
const ROUNDS = 20
/** the child stops by itself after this many acknowledgements; the parent kills it long before */
const CHILD_MAX_ACKS = 20_000

const children = new Set<ChildProcess>()
const tempDirs: string[] = []

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-crash-'))
  tempDirs.push(dir)
  return dir
}

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}
process.once('exit', killAll)
after(() => {
  killAll()
  for (const dir of tempDirs) {
    try {
      chmodSync(dir, 0o700)
    } catch {
      // removed already
    }
    rmSync(dir, {recursive: true, force: true})
  }
})

interface Run {
  child: ChildProcess
  /** resolves with every complete stdout line once the child has exited and its pipes closed */
  done: Promise<{lines: string[]; partial: string; code: number | null; signal: NodeJS.Signals | null; stderr: string}>
}

/** Spawns the writer; onLine sees each complete stdout line as it arrives (and may kill the child). */
function spawnWriter(args: string[], onLine: (line: string, child: ChildProcess) => void): Run {
  const child = spawn(process.execPath, [WRITER, ...args], {stdio: ['pipe', 'pipe', 'pipe']})
  children.add(child)
  const lines: string[] = []
  let partial = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop()!
    for (const line of parts) {
      lines.push(line)
      onLine(line, child)
    }
  })
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_000)
  })
  const done = new Promise<Awaited<Run['done']>>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code, signal) => {
      children.delete(child)
      resolve({lines, partial, code, signal, stderr})
    })
  })
  return {child, done}
}

/** Every event under the prefix from revision 0 up to the store's current revision. */
async function history(store: Store, prefix: string): Promise<WatchEvent[]> {
  const until = await store.currentRevision()
  const events: WatchEvent[] = []
  if (until === 0) return events
  await new Promise<void>((resolve, reject) => {
    const watch = store.watch(prefix, 0, {
      onEvents: (batch) => events.push(...batch),
      onProgress: (revision) => {
        if (revision >= until) {
          watch.cancel()
          resolve()
        }
      },
      onError: reject,
    })
  })
  return events
}

function allKeys(): string[] {
  const keys: string[] = []
  for (let worker = 0; worker < WORKERS; worker++) {
    for (let index = 0; index < KEYS_PER_WORKER; index++) keys.push(keyOf(worker, index))
  }
  return keys
}

type WriteAck = Exclude<Ack, {op: 'conflict' | 'exists'}>

/** the acknowledgements of writes (a refused CAS or duplicate create wrote nothing) */
function writesOf(acks: Ack[]): WriteAck[] {
  return acks.filter((a): a is WriteAck => a.op !== 'conflict' && a.op !== 'exists')
}

function assertOneLine(error: unknown, ...mustName: string[]): true {
  assert.ok(error instanceof StoreUnavailableError, `expected StoreUnavailableError, got ${String(error)}`)
  assert.ok(!error.message.includes('\n'), `error spans several lines: ${JSON.stringify(error.message)}`)
  for (const name of mustName) assert.ok(error.message.includes(name), `error does not name ${name}: ${error.message}`)
  return true
}

/** Checks the reopened store against every acknowledgement so far; returns the current revision. */
async function verify(dataDir: string, acks: Ack[], roundAcks: Ack[], round: number): Promise<number> {
  const store = openSqliteStore({dataDir})
  let current: number
  try {
    current = await store.currentRevision()
    const events = await history(store, PREFIX)

    // the log: revisions strictly increasing, no duplicate, no gap, ending at the current revision
    for (let i = 0; i < events.length; i++) {
      assert.equal(events[i].revision, i + 1, `round ${round}: history position ${i} has revision ${events[i].revision}`)
      assert.equal(events[i].kv.modRevision, events[i].revision)
    }
    assert.equal(events.length, current, `round ${round}: history ends at ${events.length}, store is at ${current}`)

    // every value in the log is one the writer wrote, and each key's sequence numbers only grow
    const lastSeq = new Map<string, number>()
    const lastEvent = new Map<string, WatchEvent>()
    for (const event of events) {
      const seq = seqOf(event.kv.key, event.kv.value)
      if (event.type === 'put') {
        const before = lastSeq.get(event.kv.key) ?? -1
        assert.ok(seq > before, `round ${round}: ${event.kv.key} went from seq ${before} to ${seq} at ${event.revision}`)
        lastSeq.set(event.kv.key, seq)
      }
      lastEvent.set(event.kv.key, event)
    }

    // every acknowledged write is in the history with its revision and value
    for (const a of writesOf(acks)) {
      const event = events[a.revision - 1]
      assert.ok(event, `round ${round}: acknowledged ${a.op} of ${a.key} at revision ${a.revision} is missing (store at ${current})`)
      assert.equal(event.kv.key, a.key, `round ${round}: revision ${a.revision} holds ${event.kv.key}, acknowledged for ${a.key}`)
      if (a.op === 'delete') {
        assert.equal(event.type, 'delete', `round ${round}: acknowledged delete at ${a.revision} is a ${event.type}`)
        assert.equal(event.prevKv?.modRevision, a.prevRevision)
      } else {
        assert.equal(event.type, 'put', `round ${round}: acknowledged ${a.op} at ${a.revision} is a ${event.type}`)
        assert.equal(event.created, a.op === 'create')
        assert.ok(Buffer.from(event.kv.value).equals(valueFor(a.key, a.seq)), `round ${round}: value at ${a.revision} differs`)
      }
    }

    // each key holds its latest acknowledged state, or a later one that was written but not yet acknowledged
    const latest = new Map<string, WriteAck>()
    for (const a of writesOf(acks)) {
      if ((latest.get(a.key)?.revision ?? 0) < a.revision) latest.set(a.key, a)
    }
    for (const key of allKeys()) {
      const kv: KeyValue | null = await store.get(key)
      const last = lastEvent.get(key)
      const acked = latest.get(key)
      if (!last) {
        assert.equal(kv, null)
        assert.equal(acked, undefined)
        continue
      }
      // the current table agrees with the log
      if (last.type === 'delete') assert.equal(kv, null, `round ${round}: ${key} deleted at ${last.revision} but still listed`)
      else assert.equal(kv?.modRevision, last.revision, `round ${round}: ${key} current row ${kv?.modRevision} ≠ log ${last.revision}`)
      if (!acked) continue
      if (last.revision === acked.revision) {
        // the key is exactly as last acknowledged
        if (acked.op === 'delete') assert.equal(kv, null)
        else assert.ok(kv && Buffer.from(kv.value).equals(valueFor(key, acked.seq)), `round ${round}: ${key} value differs`)
      } else {
        // a later state, written after the acknowledgement (sequence numbers only grow)
        assert.ok(last.revision > acked.revision, `round ${round}: ${key} is at ${last.revision}, acknowledged ${acked.revision}`)
        if (kv && acked.op !== 'delete') assert.ok(seqOf(key, kv.value) > acked.seq)
        if (kv && acked.op === 'delete') assert.ok(kv.createRevision > acked.revision)
      }
    }

    // a list at each revision acknowledged in this round shows that write
    for (const a of writesOf(roundAcks)) {
      const listed = await store.list(a.key, {revision: a.revision})
      assert.equal(listed.revision, a.revision)
      if (a.op === 'delete') {
        assert.equal(listed.items.length, 0, `round ${round}: ${a.key} listed at ${a.revision} after its delete`)
      } else {
        assert.equal(listed.items.length, 1, `round ${round}: ${a.key} not listed at ${a.revision}`)
        assert.equal(listed.items[0].modRevision, a.revision)
        assert.ok(Buffer.from(listed.items[0].value).equals(valueFor(a.key, a.seq)))
      }
    }
  } finally {
    await store.close()
  }

  // the file itself, read by a plain read-only connection once the store is closed
  const db = new Database(join(dataDir, 'state.db'), {readonly: true, fileMustExist: true})
  try {
    assert.equal(db.pragma('integrity_check', {simple: true}), 'ok', `round ${round}: integrity_check`)
    const ids = db.prepare('SELECT id FROM log ORDER BY rowid').pluck().all() as number[]
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `round ${round}: log id ${ids[i]} after ${ids[i - 1]}`)
    assert.equal(ids.length, current)
    const seq = db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'log'`).pluck().get() as number | undefined
    assert.equal(seq ?? 0, current)
    // current points at the last row of every key whose last row is not a delete, and nothing else
    const mismatched = db
      .prepare(
        `SELECT COUNT(*) FROM (
           SELECT name, MAX(id) AS id FROM log GROUP BY name) last
           JOIN log l ON l.id = last.id
           FULL OUTER JOIN current c ON c.name = last.name
         WHERE (l.deleted = 0 AND (c.revision IS NULL OR c.revision <> l.id)) OR (l.deleted = 1 AND c.name IS NOT NULL)
            OR l.id IS NULL`,
      )
      .pluck()
      .get() as number
    assert.equal(mismatched, 0, `round ${round}: current table disagrees with the log`)
  } finally {
    db.close()
  }
  return current
}

describe('sqlite store: crash safety', () => {
  it(`after SIGKILL mid-write every acknowledged write is present with its revision (${ROUNDS} rounds)`, {timeout: 120_000}, async (t) => {
    const dataDir = tempDir()
    const random = prng(0x5eed)
    const acks: Ack[] = []
    let revisionBefore = 0
    let killedWithWritesInFlight = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const killAfter = 50 + Math.floor(random() * 451)
      let seen = 0
      const run = spawnWriter([dataDir, 'write', String(round), String(CHILD_MAX_ACKS)], (_line, child) => {
        if (++seen === killAfter) child.kill('SIGKILL')
      })
      run.child.stdin!.on('error', () => {}) // EPIPE once the child is gone
      const result = await run.done
      assert.equal(
        result.signal,
        'SIGKILL',
        `round ${round}: the writer exited by itself (code ${result.code}) after ${seen} acks:\n${result.stderr}`,
      )
      assert.ok(seen >= killAfter, `round ${round}: killed after ${seen} acks, wanted ${killAfter}`)
      // every complete line counts, including those still in the pipe when the kill landed;
      // a torn last line is not an acknowledgement the parent saw
      const roundAcks = result.lines.map((line) => JSON.parse(line) as Ack)
      acks.push(...roundAcks)

      const current = await verify(dataDir, acks, roundAcks, round)
      const lastAcked = Math.max(0, ...roundAcks.map((a) => a.revision))
      if (current > lastAcked) killedWithWritesInFlight++
      assert.ok(current >= lastAcked)
      assert.ok(current > revisionBefore, `round ${round}: the store did not move past ${revisionBefore}`)
      revisionBefore = current
    }
    assert.ok(acks.length >= ROUNDS * 50)
    // how often the kill landed after a commit whose acknowledgement the parent never saw
    t.diagnostic(`${acks.length} acknowledgements, store at revision ${revisionBefore}; ` +
      `${killedWithWritesInFlight}/${ROUNDS} rounds had commits past the last acknowledgement`)
  })
})

describe('sqlite store: open errors', () => {
  it('a second open of a data dir held by a live process fails with one line naming state.db', {timeout: 30_000}, async () => {
    const dataDir = tempDir()
    let ready!: () => void
    const isReady = new Promise<void>((resolve) => (ready = resolve))
    const run = spawnWriter([dataDir, 'hold'], (line) => {
      if (line === 'ready') ready()
    })
    try {
      await Promise.race([
        isReady,
        run.done.then((r) => {
          throw new Error(`holder exited early (${r.code ?? r.signal}): ${r.stderr}`)
        }),
      ])
      const path = join(dataDir, 'state.db')
      assert.throws(() => openSqliteStore({dataDir}), (error) => assertOneLine(error, path, 'locked'))
    } finally {
      run.child.kill('SIGKILL')
      await run.done
    }
    // the lock dies with the process
    const store = openSqliteStore({dataDir})
    await store.close()
  })

  it('a corrupt state.db fails with one line naming the file and is left byte-for-byte unchanged', () => {
    const dataDir = tempDir()
    const path = join(dataDir, 'state.db')
    const random = prng(42)
    const garbage = Buffer.alloc(16_384)
    for (let i = 0; i < garbage.length; i++) garbage[i] = Math.floor(random() * 256)
    writeFileSync(path, garbage)
    assert.throws(() => openSqliteStore({dataDir}), (error) => assertOneLine(error, path))
    assert.ok(readFileSync(path).equals(garbage), 'state.db was modified by the failed open')
  })

  it('an unwritable data dir fails with one line naming the path', () => {
    const parent = tempDir()
    let dataDir = join(parent, 'readonly')
    mkdirSync(dataDir)
    chmodSync(dataDir, 0o500)
    // root (as in CI) writes through 0500 anyway: then use a path below a regular file instead
    let writable = false
    try {
      writeFileSync(join(dataDir, 'probe'), '')
      writable = true
    } catch {
      // the mode holds: this data dir is unwritable
    }
    if (writable) {
      const file = join(parent, 'a-file')
      writeFileSync(file, '')
      dataDir = join(file, 'sub')
    }
    assert.throws(() => openSqliteStore({dataDir}), (error) => assertOneLine(error, dataDir))
  })
})
