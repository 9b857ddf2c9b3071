// API benchmark: `npm run bench:api` (add `-- --quick` for a smoke run of under ~30 s). It starts a
// real `orch server` child (fresh temp data dir) and prints every figure next to a baseline measured
// in the same run on the same machine, so the ratios mean something anywhere:
//   P1  ConfigMap creates/s, 16 keep-alive connections (undici Pool), ~1 KiB bodies, vs a bare
//       node:http server in its own child process that JSON.parses the same bodies and answers 201
//       with them, driven by the same client code (goal: orch >= 0.5x bare); for context, the same
//       bare server with a durable SQLite insert per body (the least any durable create costs);
//   P2  a list of 10,000 ~1 KiB ConfigMaps (one namespace, full body read): a consistent list (the
//       watch cache once it has caught up with storage, as Kubernetes' ConsistentListFromCache), from
//       the watch cache (resourceVersion=0) and one storage page of every item, vs an in-process
//       JSON.stringify of the same list (goal <= 2x);
//   P4  a TLS handshake plus a small GET on a new connection each time, 16 at a time, vs the bare
//       node:https server with the same certificates (bench/api-tls.ts);
//   P3  1,000 concurrent watch streams on one namespace while ConfigMaps are updated 200 times a second
//       for 30 s: every watcher must get every event in order; latency from write-ack to delivery, per
//       watcher per event, measured here in one clock (goal: p99 <= 100 ms). If that many watchers
//       cannot run, the bench says so and falls back to the largest count that works.
// Flags: --quick, --only=p1,p2,p3,p4, --watchers=N, --profile-server=DIR (orch children run with
// --cpu-prof into DIR). Every child is killed on exit, error, SIGINT and SIGTERM; a watchdog ends
// the run if it overstays. P3 is in bench/api-p3.ts, flags and settings in bench/api-config.ts,
// children and client pools in bench/api-support.ts.
import {availableParallelism, loadavg} from 'node:os'
import type {Pool} from 'undici'
import {argv, BODY_BYTES, CONCURRENCY, CONFIG, flag, note, ONLY, QUICK} from './api-config.js'
import {p3} from './api-p3.js'
import {
  call,
  childCpuSeconds,
  closePool,
  configMap,
  cpuSeconds,
  createLoad,
  createNamespace,
  installExitHooks,
  killEverything,
  orchEndpoint,
  pkiDir,
  pool,
  runBareServer,
  startBare,
  startOrch,
  stopBare,
  stopOrch,
} from './api-support.js'
import {handshakeRate} from './api-tls.js'
import {median, table, type Cell} from './report.js'
// ---------------------------------------------------------------------------------------------
// P1: creates/s vs bare node:http

interface P1Result {
  orch: number
  bare: number
  /** bare node:http without TLS (NaN when orch itself serves plain http) */
  plain: number
  /** the bare server plus a durable SQLite insert per body: the floor of any durable create */
  durable: number
  /** durable/bare, median of the per-trial ratios */
  durableRatio: number
  ratio: number
  rows: Cell[][]
  tls: boolean
}

async function p1(): Promise<P1Result> {
  const ns = 'bench-create'
  const path = `/api/v1/namespaces/${ns}/configmaps`
  const orch = await startOrch()
  const endpoint = orchEndpoint(orch)
  const tls = endpoint.tls !== undefined
  // the baseline speaks what orch speaks (https with the same certificates, or http); plain http is
  // measured too, to show what TLS costs
  const bare = await startBare(tls ? pkiDir(orch) : undefined)
  const plain = tls ? await startBare() : undefined
  const durable = await startBare(tls ? pkiDir(orch) : undefined, true)
  const orchPool = pool(endpoint, CONCURRENCY)
  const barePool = pool({url: bare.url, tls: endpoint.tls}, CONCURRENCY)
  const durablePool = pool({url: durable.url, tls: endpoint.tls}, CONCURRENCY)
  const plainPool = plain ? pool({url: plain.url}, CONCURRENCY) : undefined
  const rows: Cell[][] = []
  const ratios: number[] = []
  const orchRates: number[] = []
  const bareRates: number[] = []
  const plainRates: number[] = []
  const durableRates: number[] = []
  const durableRatios: number[] = []
  try {
    await createNamespace(orchPool, ns)
    const body = (run: string) => (i: number) => JSON.stringify(configMap(ns, `${run}-${i}`))
    await createLoad(orchPool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    await createLoad(barePool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    if (plainPool) await createLoad(plainPool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    await createLoad(durablePool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    // alternate, and take each ratio within one trial: the machine's speed drifts less between neighbours
    for (let trial = 0; trial < CONFIG.createTrials; trial++) {
      const orchCpu = childCpuSeconds(orch.child.pid)
      let benchCpu = process.cpuUsage()
      const orchSeconds = await createLoad(orchPool, path, CONFIG.createCount, CONCURRENCY, body(`t${trial}`))
      const orchServerCpu = childCpuSeconds(orch.child.pid) - orchCpu
      const orchClientCpu = cpuSeconds(process.cpuUsage(benchCpu))
      const bareCpu = childCpuSeconds(bare.child.pid)
      benchCpu = process.cpuUsage()
      const bareSeconds = await createLoad(barePool, path, CONFIG.createCount, CONCURRENCY, body(`t${trial}`))
      const bareServerCpu = childCpuSeconds(bare.child.pid) - bareCpu
      const bareClientCpu = cpuSeconds(process.cpuUsage(benchCpu))
      const plainRate = plainPool ? CONFIG.createCount / (await createLoad(plainPool, path, CONFIG.createCount, CONCURRENCY, body(`t${trial}`))) : NaN
      plainRates.push(plainRate)
      const durableRate = CONFIG.createCount / (await createLoad(durablePool, path, CONFIG.createCount, CONCURRENCY, body(`t${trial}`)))
      durableRates.push(durableRate)
      const orchRate = CONFIG.createCount / orchSeconds
      const bareRate = CONFIG.createCount / bareSeconds
      orchRates.push(orchRate)
      bareRates.push(bareRate)
      ratios.push(orchRate / bareRate)
      durableRatios.push(durableRate / bareRate)
      const percent = (cpu: number, seconds: number) => (cpu / seconds) * 100
      rows.push([
        trial + 1,
        orchRate,
        percent(orchServerCpu, orchSeconds),
        percent(orchClientCpu, orchSeconds),
        bareRate,
        percent(bareServerCpu, bareSeconds),
        percent(bareClientCpu, bareSeconds),
        orchRate / bareRate,
        plainRate,
        durableRate,
      ])
    }
  } finally {
    await closePool(orchPool)
    await closePool(barePool)
    if (plainPool) await closePool(plainPool)
    await closePool(durablePool)
    stopBare(bare.child)
    stopBare(durable.child)
    if (plain) stopBare(plain.child)
    await stopOrch(orch)
  }
  return {
    orch: median(orchRates),
    bare: median(bareRates),
    plain: median(plainRates),
    durable: median(durableRates),
    durableRatio: median(durableRatios),
    ratio: median(ratios),
    rows,
    tls,
  }
}

// ---------------------------------------------------------------------------------------------
// P4: TLS handshake + request vs bare node:https

async function p4(): Promise<{rows: Cell[][]; ratio: number; orch: number; bare: number}> {
  const orch = await startOrch()
  const endpoint = orchEndpoint(orch)
  const bare = await startBare(pkiDir(orch))
  const rows: Cell[][] = []
  const ratios: number[] = []
  const orchRates: number[] = []
  const bareRates: number[] = []
  try {
    const tls = endpoint.tls ?? {}
    await handshakeRate({url: endpoint.url, tls}, '/version', 100, CONCURRENCY)
    await handshakeRate({url: bare.url, tls}, '/version', 100, CONCURRENCY)
    for (let trial = 0; trial < CONFIG.createTrials; trial++) {
      const orchRate = await handshakeRate({url: endpoint.url, tls}, '/version', CONFIG.handshakes, CONCURRENCY)
      const bareRate = await handshakeRate({url: bare.url, tls}, '/version', CONFIG.handshakes, CONCURRENCY)
      orchRates.push(orchRate)
      bareRates.push(bareRate)
      ratios.push(orchRate / bareRate)
      rows.push([trial + 1, orchRate, bareRate, orchRate / bareRate])
    }
  } finally {
    stopBare(bare.child)
    await stopOrch(orch)
  }
  return {rows, ratio: median(ratios), orch: median(orchRates), bare: median(bareRates)}
}

// ---------------------------------------------------------------------------------------------
// P2: list of 10,000 vs JSON.stringify

interface P2Result {
  items: number
  bytes: number
  stringifyMs: number
  storeMs: number
  cacheMs: number
  /** one page holding every item: storage itself (a limit is never served from the cache) */
  pagedMs: number
  gzipMs: number
  gzipBytes: number
  createRate: number
}

async function timedGet(p: Pool, path: string, headers: Record<string, string> = {}): Promise<{ms: number; bytes: number}> {
  const started = performance.now()
  const response = await p.request({method: 'GET', path, headers: {accept: 'application/json', ...headers}})
  let bytes = 0
  for await (const chunk of response.body) bytes += (chunk as Buffer).length
  const ms = performance.now() - started
  if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode}`)
  return {ms, bytes}
}

async function p2(): Promise<P2Result> {
  const ns = 'bench-list'
  const path = `/api/v1/namespaces/${ns}/configmaps`
  const orch = await startOrch()
  const endpoint = orchEndpoint(orch)
  const writers = pool(endpoint, CONCURRENCY)
  const reader = pool(endpoint, 1)
  try {
    await createNamespace(writers, ns)
    const createSeconds = await createLoad(writers, path, CONFIG.listItems, CONCURRENCY, (i) =>
      JSON.stringify(configMap(ns, `cm-${String(i).padStart(6, '0')}`)),
    )
    // the baseline serialises exactly what the server sends
    const list = await call(reader, 'GET', path)
    if (list.items?.length !== CONFIG.listItems) throw new Error(`list returned ${list.items?.length} items, want ${CONFIG.listItems}`)
    const cached = await call(reader, 'GET', `${path}?resourceVersion=0`)
    if (cached.items?.length !== CONFIG.listItems) throw new Error(`resourceVersion=0 list returned ${cached.items?.length} items`)

    const stringify: number[] = []
    const store: number[] = []
    const cache: number[] = []
    const paged: number[] = []
    let bytes = 0
    const stringifyOnce = () => {
      const started = performance.now()
      const text = JSON.stringify(list)
      const ms = performance.now() - started
      if (text.length < CONFIG.listItems) throw new Error('unreachable')
      return ms
    }
    // two unmeasured rounds (JIT), then interleaved measured rounds
    for (let round = -2; round < CONFIG.listRuns; round++) {
      const s = stringifyOnce()
      const a = await timedGet(reader, path)
      const b = await timedGet(reader, `${path}?resourceVersion=0`)
      const c = await timedGet(reader, `${path}?limit=${CONFIG.listItems + 1}`)
      if (round < 0) continue
      stringify.push(s)
      store.push(a.ms)
      cache.push(b.ms)
      paged.push(c.ms)
      bytes = a.bytes
    }
    // what client-go asks for by default: the server gzips the whole list before sending it
    const gzip: number[] = []
    let gzipBytes = 0
    for (let round = 0; round < CONFIG.gzipRuns; round++) {
      const g = await timedGet(reader, path, {'accept-encoding': 'gzip'})
      gzip.push(g.ms)
      gzipBytes = g.bytes
    }
    return {
      items: CONFIG.listItems,
      bytes,
      stringifyMs: median(stringify),
      storeMs: median(store),
      cacheMs: median(cache),
      pagedMs: median(paged),
      gzipMs: median(gzip),
      gzipBytes,
      createRate: CONFIG.listItems / createSeconds,
    }
  } finally {
    await closePool(writers)
    await closePool(reader)
    await stopOrch(orch)
  }
}

// ---------------------------------------------------------------------------------------------

function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met'
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${CONFIG.watchdogMs / 1000} s, giving up`)
    killEverything()
    process.exit(1)
  }, CONFIG.watchdogMs)
  watchdog.unref()
  const startedAt = performance.now()

  console.log(
    `api bench${QUICK ? ' (--quick)' : ''}: orch server child, ~${BODY_BYTES} B ConfigMaps, undici ${CONCURRENCY}-connection pool; node ${process.version}`,
  )
  console.log(`machine: ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`)
  const goals: Cell[][] = []

  if (ONLY.has('p1')) {
    const r = await p1()
    table(
      `P1 creates: ${CONFIG.createCount.toLocaleString('en-US')} POSTs per run, ${CONCURRENCY} connections (after ${CONFIG.createWarmup.toLocaleString('en-US')} warm-up each)` +
        (r.tls ? '; orch and the baseline over https with client certificates' : ''),
      ['trial', 'orch creates/s', 'server CPU %', 'client CPU %', `bare node:${r.tls ? 'https' : 'http'} req/s`, 'server CPU %', 'client CPU %', 'orch/bare', 'bare node:http req/s (no TLS)', 'bare + durable insert req/s'],
      r.rows,
    )
    const bareName = `bare node:${r.tls ? 'https' : 'http'}`
    table('P1 summary (medians)', ['figure', 'value'], [
      ['orch ConfigMap creates/s', r.orch],
      [`${bareName} (JSON.parse, 201 + body) req/s`, r.bare],
      ...(r.tls ? [['bare node:http, no TLS, req/s (for context)', r.plain] as Cell[]] : []),
      [`${bareName} + a durable SQLite insert per body, req/s (for context)`, r.durable],
      ['orch/bare (median of per-trial ratios)', r.ratio],
      ['bare + durable insert / bare: the floor of any durable create (median)', r.durableRatio],
    ])
    goals.push([`P1 creates/s vs ${bareName}`, '>= 0.50x', `${r.ratio.toFixed(2)}x`, verdict(r.ratio >= 0.5)])
  }

  if (ONLY.has('p4')) {
    const r = await p4()
    table(
      `P4 TLS handshake + GET /version on a new connection each (${CONFIG.handshakes.toLocaleString('en-US')} per run, ${CONCURRENCY} at a time, client certificate, P-256)`,
      ['trial', 'orch handshakes+requests/s', 'bare node:https /s', 'orch/bare'],
      r.rows,
    )
    goals.push(['P4 handshake+request vs bare node:https', '(no goal set)', `${r.ratio.toFixed(2)}x`, 'n/a'])
  }

  if (ONLY.has('p2')) {
    const r = await p2()
    const mib = (r.bytes / 1024 / 1024).toFixed(1)
    table(
      `P2 list of ${r.items.toLocaleString('en-US')} ConfigMaps in one namespace (${mib} MiB; median of ${CONFIG.listRuns} runs, body read in full)`,
      ['operation', 'ms/op', 'x JSON.stringify'],
      [
        ['baseline: JSON.stringify of the same list, in-process', r.stringifyMs, 1],
        ['GET list (consistent: the watch cache once caught up with storage)', r.storeMs, r.storeMs / r.stringifyMs],
        ['GET list ?resourceVersion=0 (watch cache)', r.cacheMs, r.cacheMs / r.stringifyMs],
        ['GET list ?limit=N+1 (storage: one page of every item)', r.pagedMs, r.pagedMs / r.stringifyMs],
        [`GET list, Accept-Encoding: gzip (${(r.gzipBytes / 1024 / 1024).toFixed(1)} MiB sent; median of ${CONFIG.gzipRuns})`, r.gzipMs, r.gzipMs / r.stringifyMs],
      ],
    )
    note(`(setup: ${r.items.toLocaleString('en-US')} creates at ${Math.round(r.createRate).toLocaleString('en-US')}/s)`)
    goals.push(['P2 list vs JSON.stringify (consistent list)', '<= 2.00x', `${(r.storeMs / r.stringifyMs).toFixed(2)}x`, verdict(r.storeMs / r.stringifyMs <= 2)])
    goals.push(['P2 list vs JSON.stringify (rv=0, cache)', '<= 2.00x', `${(r.cacheMs / r.stringifyMs).toFixed(2)}x`, verdict(r.cacheMs / r.stringifyMs <= 2)])
  }

  if (ONLY.has('p3')) {
    console.log(
      `\nP3 watch: ${CONFIG.writesPerSecond} writes/s for ${CONFIG.writeSeconds} s (after ${CONFIG.warmupSeconds} s of warm-up writes), ` +
        `${CONFIG.watchers.toLocaleString('en-US')} watchers on one namespace`,
    )
    const {attempts, best, skipped} = await p3(startedAt + CONFIG.budgetMs)
    const rows: Cell[][] = attempts.map((a) => [
      a.watchers,
      a.ok ? 'yes' : `no: ${a.failure}`,
      a.achievedWriteRate,
      a.delivered,
      a.delivered / a.deliverySeconds,
      a.histogram.percentile(50),
      a.histogram.percentile(99),
      a.histogram.max,
      a.writeAckP99,
      a.serverCpuPercent,
      ((a.serverCpuPercent / 100) * a.deliverySeconds * 1e6) / a.delivered,
      a.benchCpuPercent,
      a.serverPeakRssMiB,
    ])
    table(
      'P3 results (latency: write-ack -> delivery, per watcher per event, ms)',
      ['watchers', 'complete', 'writes/s acked', 'events', 'events/s', 'p50', 'p99', 'max', 'PUT p99', 'orch CPU %', 'orch CPU us/event', 'bench CPU %', 'orch peak RSS MiB'],
      rows,
    )
    note('events/s: events delivered (summed over watchers) per second of the measured phase; PUT p99: write request -> response;')
    note('orch CPU us/event: the server process\'s CPU time (user + system, without the kernel\'s loopback softirq work) per delivered event')
    const full = attempts[0]
    if (!full.ok) {
      const where =
        full.failure === 'open'
          ? 'this bench process could not hold that many watch streams'
          : full.failure === 'saturated'
            ? 'the server could not keep up (the bench process could: see bench CPU %)'
            : 'not every watcher got every event in time'
      note(`${full.watchers.toLocaleString('en-US')} watchers did NOT work on this machine (${where}): ${full.reason}`)
      note(best ? `largest count that worked: ${best.watchers.toLocaleString('en-US')} watchers` : 'no watcher count tried worked')
      if (skipped.length > 0) note(`not tried, for lack of time in the run's budget: ${skipped.join(', ')} watchers (and fewer)`)
    }
    if (best) {
      const p99 = best.histogram.percentile(99)
      goals.push([
        `P3 p99 at ${best.watchers.toLocaleString('en-US')} watchers x ${CONFIG.writesPerSecond} writes/s`,
        '<= 100 ms',
        `${p99.toFixed(1)} ms`,
        best.watchers < 1_000 ? (QUICK ? 'n/a (--quick)' : 'NOT met (fewer watchers)') : verdict(p99 <= 100),
      ])
    } else {
      goals.push([`P3 ${CONFIG.watchers} watchers x ${CONFIG.writesPerSecond} writes/s`, '<= 100 ms p99', 'did not complete', verdict(false)])
    }
  }

  if (goals.length > 0) table('goals', ['goal', 'target', 'measured', 'verdict'], goals)
  console.log(`\n(total ${((performance.now() - startedAt) / 1000).toFixed(0)} s; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at end)`)
  clearTimeout(watchdog)
}

if (argv.includes('--bare-server')) {
  runBareServer(flag('pki') || undefined, flag('durable') || undefined)
} else {
  installExitHooks()
  main().then(
    () => {
      killEverything()
      process.exit(0)
    },
    (error: unknown) => {
      console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      killEverything()
      process.exit(1)
    },
  )
}
