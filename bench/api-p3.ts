// P3 of the API benchmark (bench/api.ts): watch fan-out over HTTP.
import type {Dispatcher} from 'undici'
import {CONCURRENCY, CONFIG, DRAIN_MS, MAX_LAG_SECONDS, note, SATURATION_SECONDS, WATCH_OBJECTS} from './api-config.js'
import {
  call,
  childCpuSeconds,
  childRssMiB,
  closePool,
  configMap,
  cpuSeconds,
  createNamespace,
  JSON_HEADERS,
  orchEndpoint,
  pool,
  startOrch,
  stopOrch,
} from './api-support.js'
// ---------------------------------------------------------------------------------------------
// P3: watch fan-out over HTTP

/** Latencies in 0.1 ms buckets up to 10 s (and the max beyond): bounded memory however many events. */
export class Histogram {
  private readonly buckets = new Uint32Array(100_001)
  count = 0
  max = 0
  private sum = 0

  record(ms: number): void {
    const bucket = ms <= 0 ? 0 : Math.min(this.buckets.length - 1, Math.floor(ms * 10))
    this.buckets[bucket]++
    this.count++
    this.sum += ms > 0 ? ms : 0
    if (ms > this.max) this.max = ms
  }

  /** the upper edge of the bucket holding the p-th percentile */
  percentile(p: number): number {
    if (this.count === 0) return NaN
    const target = Math.max(1, Math.ceil((p / 100) * this.count))
    let seen = 0
    for (let b = 0; b < this.buckets.length; b++) {
      seen += this.buckets[b]
      if (seen >= target) return b === this.buckets.length - 1 ? this.max : (b + 1) / 10
    }
    return this.max
  }

  get mean(): number {
    return this.count === 0 ? NaN : this.sum / this.count
  }
}

export const RV_NEEDLE = Buffer.from('"resourceVersion":"')
export const MODIFIED_PREFIX = Buffer.from('{"type":"MODIFIED",')

export interface WatchRun {
  /** set once the writes start: events at or below it were warm-up writes */
  measureAfter: number
  acks: Map<number, number>
  histogram: Histogram
  expected: number
  complete: number
  /** onComplete runs when this many watchers have every event */
  onCompleteCount: number
  onComplete: () => void
}

/** One watch stream, read with undici's low-level handler: lines are split on '\n' and each event's
 *  resourceVersion is read from the bytes; watcher 0 also JSON.parses every event as a cross-check. */
export class Watcher implements Dispatcher.DispatchHandler {
  status = 0
  count = 0
  lastRv = 0
  rvSum = 0
  failure: string | undefined
  ended = false
  private partial: Buffer | null = null
  private controller: Dispatcher.DispatchController | undefined
  private onStart: ((error?: Error) => void) | undefined

  constructor(
    readonly index: number,
    private readonly run: WatchRun,
    private readonly fullParse: boolean,
  ) {}

  started(): Promise<void> {
    return new Promise((resolveStart, reject) => {
      this.onStart = (error) => (error ? reject(error) : resolveStart())
    })
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode
    if (statusCode !== 200) this.fail(`watch answered ${statusCode}`)
    this.onStart?.(statusCode === 200 ? undefined : new Error(`watch answered ${statusCode}`))
    this.onStart = undefined
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.status !== 200) return
    const now = performance.now()
    const buffer = this.partial ? Buffer.concat([this.partial, chunk]) : chunk
    let start = 0
    for (;;) {
      const end = buffer.indexOf(10, start)
      if (end < 0) break
      if (end > start) this.event(buffer, start, end, now)
      start = end + 1
    }
    this.partial = start < buffer.length ? Buffer.from(buffer.subarray(start)) : null
  }

  onResponseEnd(): void {
    this.ended = true
    if (this.count < this.run.expected) this.fail(`stream ended after ${this.count} events`)
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.ended = true
    this.onStart?.(error)
    this.onStart = undefined
    if (this.count < this.run.expected) this.fail(`stream failed after ${this.count} events: ${error.message}`)
  }

  abort(): void {
    this.controller?.abort(new Error('bench done'))
  }

  private fail(message: string): void {
    this.failure ??= message
  }

  private event(buffer: Buffer, start: number, end: number, now: number): void {
    if (buffer.compare(MODIFIED_PREFIX, 0, MODIFIED_PREFIX.length, start, start + MODIFIED_PREFIX.length) !== 0) {
      this.fail(`unexpected event: ${buffer.toString('utf8', start, Math.min(end, start + 200))}`)
      return
    }
    const at = buffer.indexOf(RV_NEEDLE, start)
    let rv = 0
    if (at >= 0 && at < end) {
      for (let i = at + RV_NEEDLE.length; i < end; i++) {
        const c = buffer[i]
        if (c === 34) break
        rv = rv * 10 + (c - 48)
      }
    }
    if (rv <= 0) return this.fail(`no resourceVersion in ${buffer.toString('utf8', start, Math.min(end, start + 200))}`)
    if (this.fullParse) {
      const event = JSON.parse(buffer.toString('utf8', start, end))
      if (event.object?.metadata?.resourceVersion !== String(rv) || event.object?.metadata?.namespace === undefined || !event.object?.data?.ts) {
        this.fail(`malformed event at resourceVersion ${rv}`)
      }
    }
    if (rv <= this.lastRv) return this.fail(`resourceVersion ${rv} after ${this.lastRv}: out of order`)
    this.lastRv = rv
    if (rv <= this.run.measureAfter) return // warm-up
    this.count++
    this.rvSum += rv
    const ack = this.run.acks.get(rv)
    // delivered before this process saw the write's response: the latency is <= 0
    this.run.histogram.record(ack === undefined ? 0 : now - ack)
    if (this.count === this.run.expected) {
      this.run.complete++
      if (this.run.complete === this.run.onCompleteCount) this.run.onComplete()
    }
  }
}

export type P3Failure = 'open' | 'saturated' | 'lag' | 'incomplete' | 'error'

export interface P3Result {
  watchers: number
  ok: boolean
  failure?: P3Failure
  reason?: string
  writes: number
  writeSeconds: number
  achievedWriteRate: number
  deliverySeconds: number
  delivered: number
  histogram: Histogram
  serverCpuPercent: number
  benchCpuPercent: number
  benchElu: number
  serverPeakRssMiB: number
  writeAckP99: number
}

export async function p3Attempt(watcherCount: number): Promise<P3Result> {
  const ns = 'bench-watch'
  const base = `/api/v1/namespaces/${ns}/configmaps`
  const rate = CONFIG.writesPerSecond
  const writes = Math.round(rate * CONFIG.writeSeconds)
  const warmupWrites = Math.round(rate * CONFIG.warmupSeconds)
  const orch = await startOrch()
  const endpoint = orchEndpoint(orch)
  const setup = pool(endpoint, 4)
  const writer = pool(endpoint, CONCURRENCY)
  // one connection per watch: a streaming response holds its connection for as long as it lasts
  const watchPool = pool(endpoint, watcherCount, {bodyTimeout: 0, headersTimeout: 30_000})
  const histogram = new Histogram()
  const writeAcks = new Histogram()
  const result: P3Result = {
    watchers: watcherCount,
    ok: false,
    writes,
    writeSeconds: NaN,
    achievedWriteRate: NaN,
    deliverySeconds: NaN,
    delivered: 0,
    histogram,
    serverCpuPercent: NaN,
    benchCpuPercent: NaN,
    benchElu: NaN,
    serverPeakRssMiB: NaN,
    writeAckP99: NaN,
  }
  const watchers: Watcher[] = []
  let monitor: NodeJS.Timeout | undefined
  let pacer: NodeJS.Timeout | undefined
  try {
    await createNamespace(setup, ns)
    for (let k = 0; k < WATCH_OBJECTS; k++) await call(setup, 'POST', base, configMap(ns, `w-${k}`, {ts: '0', seq: '0'}))
    const listed = await call(setup, 'GET', base)
    const fromRv = listed.metadata.resourceVersion

    let completeResolve!: () => void
    const completed = new Promise<void>((r) => (completeResolve = r))
    const run: WatchRun = {
      measureAfter: Number.MAX_SAFE_INTEGER,
      acks: new Map(),
      histogram,
      expected: writes,
      complete: 0,
      onCompleteCount: watcherCount,
      onComplete: () => completeResolve(),
    }

    // open the watches in batches: a burst of 1,000 connects would overflow the listen backlog
    const openStarted = performance.now()
    const BATCH = 100
    for (let i = 0; i < watcherCount; i += BATCH) {
      const batch: Promise<void>[] = []
      for (let w = i; w < Math.min(watcherCount, i + BATCH); w++) {
        const watcher = new Watcher(w, run, w === 0)
        watchers.push(watcher)
        batch.push(watcher.started())
        watchPool.dispatch({method: 'GET', path: `${base}?watch=1&resourceVersion=${fromRv}`, headers: {accept: 'application/json'}}, watcher)
      }
      try {
        await Promise.all(batch)
      } catch (error) {
        result.failure = 'open'
        result.reason = `could not open watch ${watchers.length} of ${watcherCount}: ${(error as Error).message}`
        return result
      }
    }
    const openSeconds = (performance.now() - openStarted) / 1000

    // the writes: each an unconditional PUT of one of WATCH_OBJECTS ConfigMaps with a timestamp in
    // its data, paced by a timer; the ack time is taken when the response is in
    let failed: string | undefined
    const write = async (i: number, measured: boolean) => {
      const name = `w-${i % WATCH_OBJECTS}`
      const body = JSON.stringify(configMap(ns, name, {ts: new Date().toISOString(), seq: String(i)}))
      const sent = performance.now()
      const response = await writer.request({method: 'PUT', path: `${base}/${name}`, headers: JSON_HEADERS, body})
      const text = await response.body.text()
      const ackedAt = performance.now()
      if (response.statusCode !== 200) throw new Error(`PUT ${name}: ${response.statusCode} ${text.slice(0, 300)}`)
      const rv = Number(JSON.parse(text).metadata.resourceVersion)
      if (measured) {
        run.acks.set(rv, ackedAt)
        writeAcks.record(ackedAt - sent)
      }
      return rv
    }
    const progress = {issued: 0, acked: 0}
    const paced = (count: number, measured: boolean) =>
      new Promise<{seconds: number; maxRv: number}>((resolveWrites, rejectWrites) => {
        let issued = 0
        let done = 0
        progress.issued = 0
        progress.acked = 0
        let maxRv = 0
        const started = performance.now()
        const tick = () => {
          pacer = undefined
          if (failed) return rejectWrites(new Error(failed))
          const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * rate) + 1)
          while (issued < due) {
            progress.issued = ++issued
            write(issued - 1, measured).then(
              (rv) => {
                maxRv = Math.max(maxRv, rv)
                progress.acked++
                if (++done === count) resolveWrites({seconds: (performance.now() - started) / 1000, maxRv})
              },
              (error: Error) => {
                failed ??= error.message
                rejectWrites(error)
              },
            )
          }
          if (issued < count) pacer = setTimeout(tick, Math.max(0, started + (issued / rate) * 1000 - performance.now()))
        }
        tick()
      })

    if (warmupWrites > 0) {
      const warm = await paced(warmupWrites, false)
      run.measureAfter = warm.maxRv
    } else {
      run.measureAfter = Number(fromRv)
    }

    const benchCpu = process.cpuUsage()
    const elu = performance.eventLoopUtilization()
    const serverCpu = childCpuSeconds(orch.child.pid)
    const started = performance.now()
    let abort: (kind: P3Failure, reason: string) => void = () => {}
    const aborted = new Promise<never>((_, reject) => (abort = (kind, reason) => {
      result.failure ??= kind
      reject(new Error(reason))
    }))
    aborted.catch(() => {})
    monitor = setInterval(() => {
      const broken = watchers.find((w) => w.failure)
      if (broken) return abort('incomplete', `watcher ${broken.index}: ${broken.failure}`)
      const waiting = progress.issued - progress.acked
      if (waiting > SATURATION_SECONDS * rate) {
        const seconds = (performance.now() - started) / 1000
        return abort(
          'saturated',
          `the server cannot sustain ${rate} writes/s with ${watcherCount.toLocaleString('en-US')} watchers: after ${seconds.toFixed(1)} s, ` +
            `${waiting.toLocaleString('en-US')} writes were waiting for a response (${Math.round(progress.acked / seconds)} writes/s acknowledged)`,
        )
      }
      let delivered = 0
      for (const w of watchers) delivered += w.count
      const lagEvents = run.acks.size * watcherCount - delivered
      if (lagEvents > MAX_LAG_SECONDS * rate * watcherCount) {
        abort('lag', `delivery fell more than ${MAX_LAG_SECONDS} s behind the writes (${lagEvents.toLocaleString('en-US')} events pending)`)
      }
    }, 250)

    try {
      const writesDone = await Promise.race([paced(writes, true), aborted])
      result.writeSeconds = writesDone.seconds
      result.achievedWriteRate = writes / writesDone.seconds
      let drainTimer: NodeJS.Timeout | undefined
      const drained = new Promise<never>((_, reject) => {
        drainTimer = setTimeout(() => reject(new Error(`not every event was delivered within ${DRAIN_MS / 1000} s of the last write`)), DRAIN_MS)
      })
      try {
        await Promise.race([completed, aborted, drained])
      } finally {
        clearTimeout(drainTimer)
      }
    } catch (error) {
      result.failure ??= (error as Error).message.startsWith('not every event') ? 'lag' : 'error'
      result.reason = (error as Error).message
      result.achievedWriteRate = progress.acked / ((performance.now() - started) / 1000)
    }
    const finished = performance.now()
    clearInterval(monitor)
    const cpu = process.cpuUsage(benchCpu)
    const wall = (finished - started) / 1000
    result.deliverySeconds = wall
    result.serverCpuPercent = ((childCpuSeconds(orch.child.pid) - serverCpu) / wall) * 100
    result.benchCpuPercent = (cpuSeconds(cpu) / wall) * 100
    result.benchElu = performance.eventLoopUtilization(elu).utilization
    result.serverPeakRssMiB = childRssMiB(orch.child.pid)
    result.writeAckP99 = writeAcks.percentile(99)
    for (const w of watchers) result.delivered += w.count
    if (!result.reason) {
      // every watcher: every event, in order
      let ackSum = 0
      let ackMax = 0
      for (const rv of run.acks.keys()) {
        ackSum += rv
        ackMax = Math.max(ackMax, rv)
      }
      const wrong = watchers.find((w) => w.failure || w.count !== writes || w.rvSum !== ackSum || w.lastRv !== ackMax)
      if (wrong) {
        result.failure = 'incomplete'
        result.reason = `watcher ${wrong.index}: ${wrong.failure ?? `got ${wrong.count} of ${writes} events (last ${wrong.lastRv}, want ${ackMax})`}`
      } else if (result.achievedWriteRate < 0.95 * rate) {
        // every event arrived, but the writes fell behind their schedule: the server did not keep up
        result.failure = 'saturated'
        result.reason =
          `every watcher got every event in order, but the server acknowledged only ${result.achievedWriteRate.toFixed(0)} of ` +
          `${rate} writes/s with ${watcherCount.toLocaleString('en-US')} watchers (PUT p99 ${result.writeAckP99.toFixed(0)} ms)`
      } else {
        result.ok = true
      }
    }
    note(
      `${watcherCount.toLocaleString('en-US')} watchers (opened in ${openSeconds.toFixed(1)} s): ${result.ok ? 'every watcher got every event in order' : `FAILED: ${result.reason}`}`,
    )
    return result
  } finally {
    clearInterval(monitor)
    clearTimeout(pacer)
    for (const w of watchers) w.abort()
    await closePool(watchPool)
    await closePool(writer)
    await closePool(setup)
    await stopOrch(orch)
  }
}

/** The largest 1, 2 or 5 x 10^k at or below n (at least 1). */
export function niceFloor(n: number): number {
  if (n < 1) return 1
  const power = 10 ** Math.floor(Math.log10(n))
  for (const step of [5, 2, 1]) if (step * power <= n) return step * power
  return power
}

/** Tries the full watcher count; when it does not work, the next count tried is what the failed
 *  attempt's delivery rate suggests the server can carry (80 % of acked writes/s x watchers, divided
 *  by the write rate), at most half the last count: until one works or the time budget ends. */
export async function p3(deadline: number): Promise<{attempts: P3Result[]; best: P3Result | undefined; skipped: number[]}> {
  const attempts: P3Result[] = []
  // the longest an attempt can take: setup, warm-up, the writes, the drain
  const attemptBudgetMs = (CONFIG.warmupSeconds + CONFIG.writeSeconds) * 1000 + DRAIN_MS + 10_000
  let count = CONFIG.watchers
  for (;;) {
    const attempt = await p3Attempt(count)
    attempts.push(attempt)
    if (attempt.ok) return {attempts, best: attempt, skipped: []}
    if (count <= 1) return {attempts, best: undefined, skipped: []}
    // (when the watches could not even be opened, there is no rate to go by: half as many)
    const carried = (0.8 * attempt.achievedWriteRate * count) / CONFIG.writesPerSecond
    const next = Number.isFinite(carried) ? Math.min(Math.floor(count / 2), niceFloor(carried)) : Math.floor(count / 2)
    if (performance.now() + attemptBudgetMs > deadline) return {attempts, best: undefined, skipped: [next]}
    count = Math.max(1, next)
  }
}

