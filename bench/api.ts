// API benchmark: `npm run bench:api` (add `-- --quick` for a smoke run of under ~30 s). It starts a
// real `orch server` child (fresh temp data dir) and prints every figure next to a baseline measured
// in the same run on the same machine, so the ratios mean something anywhere:
//   P1  ConfigMap creates/s, 16 keep-alive connections (undici Pool), ~1 KiB bodies, vs a bare
//       node:http server in its own child process that JSON.parses the same bodies and answers 201
//       with them, driven by the same client code (goal: orch >= 0.5x bare);
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
// the run if it overstays.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdirSync, readFileSync, rmSync} from 'node:fs'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import {availableParallelism, loadavg} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Pool, type Dispatcher} from 'undici'
import {orchBin, startOrchServer, tempDir, type RunningOrch} from '../test/support/server.js'
import {handshakeRate} from './api-tls.js'
import {median, table, type Cell} from './report.js'

// ---------------------------------------------------------------------------------------------
// configuration

const argv = process.argv.slice(2)
function flag(name: string): string | undefined {
  const prefix = `--${name}=`
  const index = argv.findIndex((a) => a === `--${name}` || a.startsWith(prefix))
  if (index < 0) return undefined
  const arg = argv[index]
  if (arg.startsWith(prefix)) return arg.slice(prefix.length)
  const next = argv[index + 1]
  return next !== undefined && !next.startsWith('--') ? next : ''
}

const QUICK = flag('quick') !== undefined
const ONLY = new Set((flag('only') ?? 'p1,p4,p2,p3').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
const PROFILE_DIR = flag('profile-server') ? resolve(flag('profile-server')!) : undefined

const CONFIG = QUICK
  ? {
      createCount: 1_000,
      createWarmup: 200,
      createTrials: 1,
      handshakes: 300,
      listItems: 1_000,
      listRuns: 5,
      gzipRuns: 2,
      watchers: 50,
      writesPerSecond: 50,
      writeSeconds: 5,
      warmupSeconds: 0.5,
      watchdogMs: 90_000,
      budgetMs: 25_000,
    }
  : {
      createCount: 10_000,
      createWarmup: 1_000,
      createTrials: 3,
      handshakes: 2_000,
      listItems: 10_000,
      listRuns: 15,
      gzipRuns: 5,
      watchers: 1_000,
      writesPerSecond: 200,
      writeSeconds: 30,
      warmupSeconds: 1,
      watchdogMs: 290_000,
      /** fallback P3 attempts start only if they can end within this */
      budgetMs: 235_000,
    }
if (flag('watchers')) CONFIG.watchers = Number(flag('watchers'))

const CONCURRENCY = 16
/** ConfigMaps the P3 writer updates round-robin (unconditional PUT, so conflicts are rare) */
const WATCH_OBJECTS = 64
/** P3 gives up on a watcher count when delivery lags this far behind the acknowledged writes */
const MAX_LAG_SECONDS = 10
/** ... or when this many seconds' worth of writes wait for their response: the server cannot
 *  sustain the write rate with that many watchers */
const SATURATION_SECONDS = 5
/** after the last write, how long delivery may take before the attempt counts as failed */
const DRAIN_MS = 10_000
const BODY_BYTES = 1024

const SELF = fileURLToPath(import.meta.url)

// ---------------------------------------------------------------------------------------------
// output (tables and medians: bench/report.ts)

function note(text: string): void {
  console.log(`  ${text}`)
}

// ---------------------------------------------------------------------------------------------
// children: orch servers and the bare node:http server; all of them die with this process

/** What the bench uses of a running orch server (test/support/server.ts's RunningOrch has more). */
type OrchServer = Pick<RunningOrch, 'url' | 'dataDir' | 'child' | 'stop' | 'cleanup'> & {home?: string}

const orchServers = new Set<OrchServer>()
const bareChildren = new Set<ChildProcess>()
const pools = new Set<Dispatcher>()

function killEverything(): void {
  for (const server of orchServers) {
    server.child.kill('SIGKILL')
    rmSync(server.dataDir, {recursive: true, force: true})
    if (server.home) rmSync(server.home, {recursive: true, force: true})
  }
  orchServers.clear()
  for (const child of bareChildren) child.kill('SIGKILL')
  bareChildren.clear()
}
function installExitHooks(): void {
  process.once('exit', killEverything)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\nbench: ${signal}, stopping`)
      killEverything()
      process.exit(130)
    })
  }
}

async function startOrch(): Promise<OrchServer> {
  const server = PROFILE_DIR ? await startProfiledOrch(PROFILE_DIR) : await startOrchServer([])
  orchServers.add(server)
  return server
}

/** As startOrchServer, with `node --cpu-prof` (not allowed in NODE_OPTIONS): the profile is written
 *  when the server exits after SIGTERM. */
async function startProfiledOrch(profileDir: string): Promise<OrchServer> {
  mkdirSync(profileDir, {recursive: true})
  const dataDir = tempDir('orch-bench-')
  // its own HOME, as startOrchServer gives it: the server writes ~/.orch/config
  const home = join(dataDir, 'home')
  mkdirSync(home)
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, orchBin, 'server', '--data-dir', dataDir, '--port', '0'], {
    env: {...process.env, HOME: home},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)))
  const url = await new Promise<string>((resolveUrl, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /serving url=(\S+)/.exec(output)
      if (match) resolveUrl(match[1])
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`orch server exited with ${code} before serving:\n${output}`)))
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    const code = await exited
    clearTimeout(timer)
    return code
  }
  return {
    url,
    dataDir,
    child,
    stop,
    async cleanup() {
      await stop()
      rmSync(dataDir, {recursive: true, force: true})
    },
  }
}

async function stopOrch(server: OrchServer): Promise<void> {
  await server.cleanup()
  orchServers.delete(server)
}

/** The baseline server: node:http, JSON.parse of each body, 201 with the body. Runs in a child
 *  (this file with --bare-server) so that it has a process to itself, as orch does. With a PKI dir
 *  it is node:https with orch's serving certificate, asking for a client certificate as orch does. */
function runBareServer(pkiDir: string | undefined): void {
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'GET') {
      const small = Buffer.from('{"major":"1","minor":"0","gitVersion":"v1.0.0"}')
      response.writeHead(200, {'Content-Type': 'application/json', 'Content-Length': small.length})
      response.end(small)
      return
    }
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      try {
        JSON.parse(body.toString('utf8'))
      } catch {
        response.writeHead(400).end()
        return
      }
      response.writeHead(201, {'Content-Type': 'application/json', 'Content-Length': body.length})
      response.end(body)
    })
  }
  const server = pkiDir
    ? createHttpsServer(
        {
          cert: readFileSync(join(pkiDir, 'apiserver.crt')),
          key: readFileSync(join(pkiDir, 'apiserver.key')),
          ca: readFileSync(join(pkiDir, 'client-ca.crt')),
          requestCert: true,
          rejectUnauthorized: false,
        },
        handler,
      )
    : createServer(handler)
  server.listen(0, '127.0.0.1', () => {
    const address = server.address()
    process.stdout.write(`serving url=${pkiDir ? 'https' : 'http'}://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`)
  })
  // the parent holds our stdin: when it goes, so do we
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.stdin.resume()
}

async function startBare(pkiDir?: string): Promise<{url: string; child: ChildProcess}> {
  const child = spawn(process.execPath, [SELF, '--bare-server', ...(pkiDir ? ['--pki', pkiDir] : [])], {stdio: ['pipe', 'pipe', 'inherit']})
  bareChildren.add(child)
  const url = await new Promise<string>((resolveUrl, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /serving url=(\S+)/.exec(output)
      if (match) resolveUrl(match[1])
    })
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}: ${output}`)))
  })
  return {url, child}
}

function stopBare(child: ChildProcess): void {
  child.kill('SIGTERM')
  bareChildren.delete(child)
}

function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6
}

/** CPU seconds (user + system) a child has used so far, from /proc; NaN where there is no /proc. */
function childCpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[11], fields[12] are utime, stime (fields 14 and 15 of proc(5)), in clock ticks (100/s)
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

function childRssMiB(pid: number | undefined): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : NaN
  } catch {
    return NaN
  }
}

// ---------------------------------------------------------------------------------------------
// the client: undici pools. TLS is not served yet; when it is, an https URL plus these options
// (CA, client certificate) is all a run against it needs.

interface Endpoint {
  url: string
  tls?: {ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string}
}

/** How to reach an orch server: over https (which `orch server` serves), trust the CA in its data
 *  dir and present its admin client certificate. */
function orchEndpoint(server: OrchServer): Endpoint {
  if (!server.url.startsWith('https:')) return {url: server.url}
  const dir = pkiDir(server)
  return {
    url: server.url,
    tls: {ca: readFileSync(join(dir, 'ca.crt')), cert: readFileSync(join(dir, 'admin.crt')), key: readFileSync(join(dir, 'admin.key'))},
  }
}

function pkiDir(server: OrchServer): string {
  return join(server.dataDir, 'pki')
}

function pool(endpoint: Endpoint, connections: number, options: Pool.Options = {}): Pool {
  const created = new Pool(endpoint.url, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    ...(endpoint.tls ? {connect: {...endpoint.tls}} : {}),
    ...options,
  })
  pools.add(created)
  return created
}

async function closePool(p: Pool): Promise<void> {
  pools.delete(p)
  await p.destroy()
}

const JSON_HEADERS = {'content-type': 'application/json', accept: 'application/json'}

async function call(p: Pool, method: Dispatcher.HttpMethod, path: string, body?: unknown, expect: number[] = [200, 201]): Promise<any> {
  const response = await p.request({method, path, headers: JSON_HEADERS, body: body === undefined ? undefined : JSON.stringify(body)})
  const text = await response.body.text()
  if (!expect.includes(response.statusCode)) throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 400)}`)
  return text ? JSON.parse(text) : undefined
}

const PAYLOAD_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
function payload(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += PAYLOAD_ALPHABET[(i * 7) % PAYLOAD_ALPHABET.length]
  return out
}

/** A ConfigMap whose JSON is about BODY_BYTES long. */
function configMap(namespace: string, name: string, data: Record<string, string> = {}): Record<string, unknown> {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {name, namespace, labels: {app: 'orch-bench', bench: 'api'}},
    data: {...data, payload: ''},
  }
  object.data.payload = payload(Math.max(0, BODY_BYTES - JSON.stringify(object).length))
  return object
}

async function createNamespace(p: Pool, name: string): Promise<void> {
  await call(p, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}}, [201, 409])
}

/** POSTs `count` bodies from `concurrency` loops over the pool; returns seconds taken. */
async function createLoad(p: Pool, path: string, count: number, concurrency: number, bodyOf: (i: number) => string): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({length: concurrency}, async () => {
      while (next < count) {
        const i = next++
        const response = await p.request({method: 'POST', path, headers: JSON_HEADERS, body: bodyOf(i)})
        const text = await response.body.text()
        if (response.statusCode !== 201) throw new Error(`POST ${path}: ${response.statusCode} ${text.slice(0, 400)}`)
      }
    }),
  )
  return (performance.now() - started) / 1000
}

// ---------------------------------------------------------------------------------------------
// P1: creates/s vs bare node:http

interface P1Result {
  orch: number
  bare: number
  /** bare node:http without TLS (NaN when orch itself serves plain http) */
  plain: number
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
  const orchPool = pool(endpoint, CONCURRENCY)
  const barePool = pool({url: bare.url, tls: endpoint.tls}, CONCURRENCY)
  const plainPool = plain ? pool({url: plain.url}, CONCURRENCY) : undefined
  const rows: Cell[][] = []
  const ratios: number[] = []
  const orchRates: number[] = []
  const bareRates: number[] = []
  const plainRates: number[] = []
  try {
    await createNamespace(orchPool, ns)
    const body = (run: string) => (i: number) => JSON.stringify(configMap(ns, `${run}-${i}`))
    await createLoad(orchPool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    await createLoad(barePool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
    if (plainPool) await createLoad(plainPool, path, CONFIG.createWarmup, CONCURRENCY, body('warmup'))
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
      const orchRate = CONFIG.createCount / orchSeconds
      const bareRate = CONFIG.createCount / bareSeconds
      orchRates.push(orchRate)
      bareRates.push(bareRate)
      ratios.push(orchRate / bareRate)
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
      ])
    }
  } finally {
    await closePool(orchPool)
    await closePool(barePool)
    if (plainPool) await closePool(plainPool)
    stopBare(bare.child)
    if (plain) stopBare(plain.child)
    await stopOrch(orch)
  }
  return {orch: median(orchRates), bare: median(bareRates), plain: median(plainRates), ratio: median(ratios), rows, tls}
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
// P3: watch fan-out over HTTP

/** Latencies in 0.1 ms buckets up to 10 s (and the max beyond): bounded memory however many events. */
class Histogram {
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

const RV_NEEDLE = Buffer.from('"resourceVersion":"')
const MODIFIED_PREFIX = Buffer.from('{"type":"MODIFIED",')

interface WatchRun {
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
class Watcher implements Dispatcher.DispatchHandler {
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

type P3Failure = 'open' | 'saturated' | 'lag' | 'incomplete' | 'error'

interface P3Result {
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

async function p3Attempt(watcherCount: number): Promise<P3Result> {
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
function niceFloor(n: number): number {
  if (n < 1) return 1
  const power = 10 ** Math.floor(Math.log10(n))
  for (const step of [5, 2, 1]) if (step * power <= n) return step * power
  return power
}

/** Tries the full watcher count; when it does not work, the next count tried is what the failed
 *  attempt's delivery rate suggests the server can carry (80 % of acked writes/s x watchers, divided
 *  by the write rate), at most half the last count: until one works or the time budget ends. */
async function p3(deadline: number): Promise<{attempts: P3Result[]; best: P3Result | undefined; skipped: number[]}> {
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
      ['trial', 'orch creates/s', 'server CPU %', 'client CPU %', `bare node:${r.tls ? 'https' : 'http'} req/s`, 'server CPU %', 'client CPU %', 'orch/bare', 'bare node:http req/s (no TLS)'],
      r.rows,
    )
    const bareName = `bare node:${r.tls ? 'https' : 'http'}`
    table('P1 summary (medians)', ['figure', 'value'], [
      ['orch ConfigMap creates/s', r.orch],
      [`${bareName} (JSON.parse, 201 + body) req/s`, r.bare],
      ...(r.tls ? [['bare node:http, no TLS, req/s (for context)', r.plain] as Cell[]] : []),
      ['orch/bare (median of per-trial ratios)', r.ratio],
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
  runBareServer(flag('pki') || undefined)
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
