// Encoding benchmark: `npm run bench:encoding` (add `-- --quick` for a smoke run). It starts a real
// `orch server` child (fresh temp data dir, no controllers, CBORServingAndStorage=true so CBOR is served),
// creates 10,000 ConfigMaps of ~1 KiB, and measures in one run, JSON against protobuf and CBOR:
//   L  a list of the 10,000 (HTTPS, keep-alive, no gzip): bytes on the wire and wall time per list, from
//      sending the request to the decoded list (full body read + JSON.parse / our protobuf decodeObject /
//      our decodeCbor), with the client-side decode alone alongside; from the watch cache
//      (resourceVersion=0) and from storage (a consistent read, no resourceVersion);
//   W  a watch replaying 1,000 MODIFIED events (the 1,000 updates made before, from the resourceVersion
//      they started at): bytes received and time from the request to the 1,000th decoded event, through
//      the client's own stream decoders (JsonStreamDecoder, protobuf frames, CBOR sequence);
//   E  in process, no I/O: encoding the same 10,000 objects as one list (JSON.stringify, encodeObject and
//      the server's streaming encodeListChunks, encodeCbor) and decoding them back.
// Runs of the three encodings are interleaved and each figure is the median, so drift on the machine
// hits all three alike; ratios are to JSON. Every child is killed on exit, error, SIGINT and SIGTERM.
import {availableParallelism, cpus} from 'node:os'
import {performance} from 'node:perf_hooks'
import {Pool} from 'undici'
import {configMap} from '../src/api/core/configmap.js'
import type {AnyObject} from '../src/api/types.js'
import {RestClient} from '../src/client/index.js'
import {watchStreamDecoder} from '../src/client/watch.js'
import {decodeCbor, encodeCbor} from '../src/machinery/cbor.js'
import {decodeObject, encodeListChunks, encodeObject} from '../src/machinery/protobuf.js'
import {startOrchServer, type OrchServer} from '../test/support/server.js'
import {cleanUpOnExit} from './report.js'

const QUICK = process.argv.includes('--quick')
const CONFIG = QUICK
  ? {objects: 2_000, updates: 300, listRuns: 3, watchRuns: 2, encodeRuns: 3, watchdogMs: 120_000}
  : {objects: 10_000, updates: 1_000, listRuns: 9, watchRuns: 5, encodeRuns: 9, watchdogMs: 590_000}
const NAMESPACE = 'bench-encoding'
const CONCURRENCY = 16
/** the value of each ConfigMap's data, sized so that the object is about 1 KiB as JSON */
const PAYLOAD = 'x'.repeat(380)

type Wire = 'json' | 'protobuf' | 'cbor'
const WIRES: Wire[] = ['json', 'protobuf', 'cbor']
const ACCEPT: Record<Wire, string> = {json: 'application/json', protobuf: 'application/vnd.orch.protobuf', cbor: 'application/cbor'}
const EXPECTED_TYPE: Record<Wire, {list: string; watch: string}> = {
  json: {list: 'application/json', watch: 'application/json'},
  protobuf: {list: 'application/vnd.orch.protobuf', watch: 'application/vnd.orch.protobuf;stream=watch'},
  cbor: {list: 'application/cbor', watch: 'application/cbor-seq'},
}
const DECODE: Record<Wire, (body: Buffer) => AnyObject> = {
  json: (body) => JSON.parse(body.toString('utf8')),
  protobuf: (body) => decodeObject(configMap, body),
  cbor: (body) => decodeCbor(body) as AnyObject,
}

// ---------------------------------------------------------------------------------------------
// helpers

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
const ratio = (value: number, base: number) => `${(value / base).toFixed(2)}x`

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [line(header), ...rows.map(line)].join('\n')
}

let server: OrchServer | undefined
function killServer(): void {
  if (server && server.child.exitCode === null) server.child.kill('SIGKILL')
}
cleanUpOnExit(killServer)
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${CONFIG.watchdogMs / 1000}s, giving up`)
  killServer()
  process.exit(1)
}, CONFIG.watchdogMs)
watchdog.unref()

/** Runs `fn` over 0..count-1 with at most `limit` in flight. */
async function pooled(count: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({length: limit}, async () => {
      while (next < count) await fn(next++)
    }),
  )
}

const cmName = (i: number) => `cm-${String(i).padStart(5, '0')}`
const cmBody = (i: number, generation = 0): AnyObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {name: cmName(i), labels: {app: 'bench', shard: String(i % 16)}, annotations: {'bench.orch.io/generation': String(generation)}},
  data: {payload: PAYLOAD, index: String(i)},
})

// ---------------------------------------------------------------------------------------------
// measurements

interface ListSample {
  bytes: number
  totalMs: number
  decodeMs: number
}

async function listOnce(pool: Pool, wire: Wire, query: string, expected: number): Promise<ListSample> {
  const start = performance.now()
  const response = await pool.request({method: 'GET', path: `/api/v1/namespaces/${NAMESPACE}/configmaps${query}`, headers: {accept: ACCEPT[wire]}})
  const chunks: Buffer[] = []
  for await (const chunk of response.body) chunks.push(chunk as Buffer)
  const body = Buffer.concat(chunks)
  const read = performance.now()
  if (response.statusCode !== 200) throw new Error(`list ${wire}: HTTP ${response.statusCode}: ${body.toString('utf8').slice(0, 300)}`)
  const type = String(response.headers['content-type'])
  if (type !== EXPECTED_TYPE[wire].list) throw new Error(`list ${wire}: the server answered ${type}`)
  const list = DECODE[wire](body)
  const end = performance.now()
  if (list.items?.length !== expected) throw new Error(`list ${wire}: ${list.items?.length} items, expected ${expected}`)
  return {bytes: body.length, totalMs: end - start, decodeMs: end - read}
}

interface WatchSample {
  bytes: number
  ms: number
}

async function watchOnce(pool: Pool, wire: Wire, fromRv: string, events: number): Promise<WatchSample> {
  const controller = new AbortController()
  const start = performance.now()
  const response = await pool.request({
    method: 'GET',
    path: `/api/v1/namespaces/${NAMESPACE}/configmaps?watch=1&resourceVersion=${fromRv}`,
    headers: {accept: ACCEPT[wire]},
    signal: controller.signal,
    bodyTimeout: 0,
  })
  const type = String(response.headers['content-type'])
  if (response.statusCode !== 200 || type !== EXPECTED_TYPE[wire].watch) {
    controller.abort()
    throw new Error(`watch ${wire}: HTTP ${response.statusCode}, ${type}`)
  }
  const decoder = watchStreamDecoder(type, {group: '', version: 'v1', resource: 'configmaps'})
  let bytes = 0
  let seen = 0
  try {
    for await (const chunk of response.body) {
      bytes += (chunk as Buffer).length
      for (const value of decoder.push(chunk as Buffer)) {
        const event = value as {type: string; object: AnyObject}
        if (event.type !== 'MODIFIED') throw new Error(`watch ${wire}: unexpected ${event.type} event`)
        seen++
      }
      if (seen >= events) break
    }
  } finally {
    controller.abort()
    response.body.destroy()
  }
  const elapsed = performance.now() - start
  if (seen < events) throw new Error(`watch ${wire}: ${seen} events, expected ${events}`)
  return {bytes, ms: elapsed}
}

function timeIt<T>(fn: () => T): {ms: number; value: T} {
  const start = performance.now()
  const value = fn()
  return {ms: performance.now() - start, value}
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  console.log(`bench:encoding${QUICK ? ' (quick)' : ''}: node ${process.version}, ${availableParallelism()} CPUs (${cpu})`)
  server = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'])
  const tls = {ca: server.ca, cert: server.cert, key: server.key}
  const client = new RestClient({server: server.url, ca: Buffer.from(tls.ca), cert: Buffer.from(tls.cert), key: Buffer.from(tls.key)}, {connections: CONCURRENCY})
  const pool = new Pool(server.url, {connections: 4, connect: tls})
  try {
    const ns = {group: '', version: 'v1', resource: 'configmaps', namespace: NAMESPACE}
    await client.create({group: '', version: 'v1', resource: 'namespaces'}, {apiVersion: 'v1', kind: 'Namespace', metadata: {name: NAMESPACE}})
    let t = performance.now()
    await pooled(CONFIG.objects, CONCURRENCY, async (i) => {
      await client.create(ns, cmBody(i))
    })
    const sampleSize = JSON.stringify(await client.get({...ns, name: cmName(0)})).length
    console.log(`created ${CONFIG.objects} ConfigMaps (${sampleSize} bytes each as stored JSON) in ${((performance.now() - t) / 1000).toFixed(1)} s`)

    // the updates the watch replays: from the resourceVersion after the creates
    const fromRv: string = (await client.list(ns, {limit: 1})).metadata.resourceVersion!
    t = performance.now()
    await pooled(CONFIG.updates, CONCURRENCY, async (i) => {
      await client.patch({...ns, name: cmName(i)}, 'merge', {metadata: {annotations: {'bench.orch.io/generation': '1'}}})
    })
    console.log(`updated ${CONFIG.updates} of them in ${((performance.now() - t) / 1000).toFixed(1)} s (the watch replays these)\n`)

    // L: lists, interleaved, after one warm-up each
    const lists: Record<string, Record<Wire, ListSample[]>> = {}
    for (const [source, query] of [['watch cache (resourceVersion=0)', '?resourceVersion=0'], ['storage (consistent read)', '']] as const) {
      lists[source] = {json: [], protobuf: [], cbor: []}
      for (const wire of WIRES) await listOnce(pool, wire, query, CONFIG.objects)
      for (let run = 0; run < CONFIG.listRuns; run++) {
        for (let k = 0; k < WIRES.length; k++) {
          const wire = WIRES[(run + k) % WIRES.length]
          lists[source][wire].push(await listOnce(pool, wire, query, CONFIG.objects))
        }
      }
    }

    // W: watches replaying the updates
    const watches: Record<Wire, WatchSample[]> = {json: [], protobuf: [], cbor: []}
    for (const wire of WIRES) await watchOnce(pool, wire, fromRv, CONFIG.updates)
    for (let run = 0; run < CONFIG.watchRuns; run++) {
      for (let k = 0; k < WIRES.length; k++) {
        const wire = WIRES[(run + k) % WIRES.length]
        watches[wire].push(await watchOnce(pool, wire, fromRv, CONFIG.updates))
      }
    }

    // E: in process, the same objects as the server lists them
    const list = DECODE.json((await pool.request({method: 'GET', path: `/api/v1/namespaces/${NAMESPACE}/configmaps?resourceVersion=0`}).then((r) => r.body.arrayBuffer().then(Buffer.from))))
    const listMeta = list.metadata as Record<string, unknown>
    const encoders: Record<string, () => Buffer | Uint8Array | string> = {
      'JSON.stringify': () => JSON.stringify(list),
      'protobuf encodeObject': () => encodeObject(configMap, list),
      'protobuf encodeListChunks': () => Buffer.concat([...encodeListChunks(configMap, listMeta, list.items)]),
      encodeCbor: () => encodeCbor(list),
    }
    const encoded = {
      json: Buffer.from(JSON.stringify(list)),
      protobuf: Buffer.from(encodeObject(configMap, list)),
      cbor: encodeCbor(list),
    }
    const decoders: Record<string, () => unknown> = {
      'JSON.parse': () => JSON.parse(encoded.json.toString('utf8')),
      'protobuf decodeObject': () => decodeObject(configMap, encoded.protobuf),
      decodeCbor: () => decodeCbor(encoded.cbor),
    }
    const encodeTimes: Record<string, number[]> = {}
    const decodeTimes: Record<string, number[]> = {}
    const sizes: Record<string, number> = {}
    for (const name of Object.keys(encoders)) {
      encodeTimes[name] = []
      const out = encoders[name]()
      sizes[name] = typeof out === 'string' ? Buffer.byteLength(out) : out.length
    }
    for (const name of Object.keys(decoders)) {
      decodeTimes[name] = []
      decoders[name]()
    }
    for (let run = 0; run < CONFIG.encodeRuns; run++) {
      for (const name of Object.keys(encoders)) encodeTimes[name].push(timeIt(encoders[name]).ms)
      for (const name of Object.keys(decoders)) decodeTimes[name].push(timeIt(decoders[name]).ms)
    }

    // ---------- report ----------
    for (const [source, samples] of Object.entries(lists)) {
      const base = {bytes: median(samples.json.map((s) => s.bytes)), total: median(samples.json.map((s) => s.totalMs)), decode: median(samples.json.map((s) => s.decodeMs))}
      console.log(`L  list of ${CONFIG.objects} ConfigMaps from the ${source}, median of ${CONFIG.listRuns}:`)
      console.log(
        table(
          ['encoding', 'bytes', 'vs JSON', 'time/list', 'vs JSON', 'of which decode', 'vs JSON'],
          WIRES.map((wire) => {
            const bytes = median(samples[wire].map((s) => s.bytes))
            const total = median(samples[wire].map((s) => s.totalMs))
            const decode = median(samples[wire].map((s) => s.decodeMs))
            return [wire, kib(bytes), ratio(bytes, base.bytes), ms(total), ratio(total, base.total), ms(decode), ratio(decode, base.decode)]
          }),
        ),
      )
      console.log()
    }
    const wBase = {bytes: median(watches.json.map((s) => s.bytes)), ms: median(watches.json.map((s) => s.ms))}
    console.log(`W  watch replaying ${CONFIG.updates} MODIFIED events, time to the last decoded event, median of ${CONFIG.watchRuns}:`)
    console.log(
      table(
        ['encoding', 'bytes', 'vs JSON', 'time', 'vs JSON', 'per event'],
        WIRES.map((wire) => {
          const bytes = median(watches[wire].map((s) => s.bytes))
          const time = median(watches[wire].map((s) => s.ms))
          return [wire, kib(bytes), ratio(bytes, wBase.bytes), ms(time), ratio(time, wBase.ms), `${((time * 1000) / CONFIG.updates).toFixed(0)} µs`]
        }),
      ),
    )
    console.log()
    const eBase = median(encodeTimes['JSON.stringify'])
    console.log(`E  in process, one list of ${CONFIG.objects} objects, median of ${CONFIG.encodeRuns}:`)
    console.log(
      table(
        ['encode', 'bytes', 'vs JSON', 'time', 'vs JSON'],
        Object.keys(encoders).map((name) => [name, kib(sizes[name]), ratio(sizes[name], sizes['JSON.stringify']), ms(median(encodeTimes[name])), ratio(median(encodeTimes[name]), eBase)]),
      ),
    )
    const dBase = median(decodeTimes['JSON.parse'])
    console.log(
      table(
        ['decode', 'time', 'vs JSON'],
        Object.keys(decoders).map((name) => [name, ms(median(decodeTimes[name])), ratio(median(decodeTimes[name]), dBase)]),
      ),
    )
    console.log()

    const cache = lists['watch cache (resourceVersion=0)']
    const pbSmaller = median(cache.protobuf.map((s) => s.bytes)) < median(cache.json.map((s) => s.bytes))
    const pbFaster = median(cache.protobuf.map((s) => s.totalMs)) < median(cache.json.map((s) => s.totalMs))
    const pbWatchFaster = median(watches.protobuf.map((s) => s.ms)) < wBase.ms
    console.log(
      `goal "protobuf faster and smaller than JSON" (list from the cache): smaller ${pbSmaller ? 'yes' : 'NO'}, faster ${pbFaster ? 'yes' : 'NO'}; watch faster ${pbWatchFaster ? 'yes' : 'NO'}`,
    )
  } finally {
    await pool.close()
    await client.close()
    await server.cleanup()
    server = undefined
  }
}

main().then(
  () => {
    clearTimeout(watchdog)
    process.exit(0)
  },
  (error) => {
    console.error(`bench: ${(error as Error).stack ?? error}`)
    killServer()
    process.exit(1)
  },
)
