// The API benchmark's children (orch servers, the bare baseline server) and its client pools.
// Every child dies with the bench process.
import Database from 'better-sqlite3'
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Pool, type Dispatcher} from 'undici'
import {startOrchServer, type RunningOrch} from '../test/support/server.js'
import {BODY_BYTES, PROFILE_DIR} from './api-config.js'
import {cleanUpOnExit} from './report.js'

/** bench/api.js runs the bare server when given --bare-server */
const BENCH_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'api.js')
// ---------------------------------------------------------------------------------------------
// children: orch servers and the bare node:http server; all of them die with this process

/** What the bench uses of a running orch server (test/support/server.ts's RunningOrch has more). */
export type OrchServer = Pick<RunningOrch, 'url' | 'dataDir' | 'child' | 'stop' | 'cleanup'> & {home?: string}

export const orchServers = new Set<OrchServer>()
export const bareChildren = new Set<ChildProcess>()
/** the data dirs of durable bare servers, removed when they exit (or by killEverything) */
const bareDirs = new Map<ChildProcess, string>()
export const pools = new Set<Dispatcher>()

export function killEverything(): void {
  for (const server of orchServers) {
    server.child.kill('SIGKILL')
    rmSync(server.dataDir, {recursive: true, force: true})
    if (server.home) rmSync(server.home, {recursive: true, force: true})
  }
  orchServers.clear()
  for (const child of bareChildren) child.kill('SIGKILL')
  bareChildren.clear()
  for (const dir of bareDirs.values()) rmSync(dir, {recursive: true, force: true})
  bareDirs.clear()
}
export function installExitHooks(): void {
  cleanUpOnExit(killEverything)
}

export async function startOrch(): Promise<OrchServer> {
  // a profiled server writes its profile when it exits after SIGTERM
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, {recursive: true})
  const server = await startOrchServer([], {nodeArgs: PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []})
  orchServers.add(server)
  return server
}

export async function stopOrch(server: OrchServer): Promise<void> {
  await server.cleanup()
  orchServers.delete(server)
}

/** The baseline server: node:http, JSON.parse of each body, 201 with the body. Runs in a child
 *  (this file with --bare-server) so that it has a process to itself, as orch does. With a PKI dir
 *  it is node:https with orch's serving certificate, asking for a client certificate as orch does.
 *  `durable` adds the least any durable create needs: each body is inserted into SQLite (WAL,
 *  synchronous=FULL, as orch's store) and answered once its commit is on disk, the bodies that arrived
 *  in one event-loop turn sharing a commit, as orch's store batches them. */
export function runBareServer(pkiDir: string | undefined, durableDir: string | undefined): void {
  const store = durableDir ? durableStore(durableDir) : undefined
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
      if (store) store.add(request.url ?? '', body, response)
      else answerCreated(response, body)
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

/** 201 with the body, as the bare server answers a create */
function answerCreated(response: ServerResponse, body: Buffer): void {
  response.writeHead(201, {'Content-Type': 'application/json', 'Content-Length': body.length})
  response.end(body)
}

function durableStore(dir: string): {add(path: string, body: Buffer, response: ServerResponse): void} {
  const db = new Database(join(dir, 'bare.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('CREATE TABLE objects (key TEXT PRIMARY KEY, revision INTEGER NOT NULL, value BLOB NOT NULL)')
  const insert = db.prepare('INSERT INTO objects (key, revision, value) VALUES (?, ?, ?)')
  let revision = 0
  let pending: {key: string; body: Buffer; response: ServerResponse}[] = []
  const commit = db.transaction((batch: typeof pending) => {
    for (const write of batch) insert.run(write.key, ++revision, write.body)
  })
  const flush = () => {
    const batch = pending
    pending = []
    commit(batch)
    for (const {body, response} of batch) answerCreated(response, body)
  }
  let sequence = 0
  return {
    add(path, body, response) {
      if (pending.length === 0) setImmediate(flush)
      pending.push({key: `${path}/${sequence++}`, body, response})
    },
  }
}

/** The bare server in a child; `durable`: with its SQLite database in a temporary dir (removed with it). */
export async function startBare(pkiDir?: string, durable = false): Promise<{url: string; child: ChildProcess}> {
  const durableDir = durable ? mkdtempSync(join(tmpdir(), 'orch-bench-durable-')) : undefined
  const args = [BENCH_SCRIPT, '--bare-server', ...(pkiDir ? ['--pki', pkiDir] : []), ...(durableDir ? ['--durable', durableDir] : [])]
  const child = spawn(process.execPath, args, {stdio: ['pipe', 'pipe', 'inherit']})
  bareChildren.add(child)
  if (durableDir) {
    bareDirs.set(child, durableDir)
    child.once('exit', () => {
      rmSync(durableDir, {recursive: true, force: true})
      bareDirs.delete(child)
    })
  }
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

export function stopBare(child: ChildProcess): void {
  child.kill('SIGTERM')
  bareChildren.delete(child)
}

export function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6
}

/** CPU seconds (user + system) a child has used so far, from /proc; NaN where there is no /proc. */
export function childCpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[11], fields[12] are utime, stime (fields 14 and 15 of proc(5)), in clock ticks (100/s)
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

export function childRssMiB(pid: number | undefined): number {
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

export interface Endpoint {
  url: string
  tls?: {ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string}
}

/** How to reach an orch server: over https (which `orch server` serves), trust the CA in its data
 *  dir and present its admin client certificate. */
export function orchEndpoint(server: OrchServer): Endpoint {
  if (!server.url.startsWith('https:')) return {url: server.url}
  const dir = pkiDir(server)
  return {
    url: server.url,
    tls: {ca: readFileSync(join(dir, 'ca.crt')), cert: readFileSync(join(dir, 'admin.crt')), key: readFileSync(join(dir, 'admin.key'))},
  }
}

export function pkiDir(server: OrchServer): string {
  return join(server.dataDir, 'pki')
}

export function pool(endpoint: Endpoint, connections: number, options: Pool.Options = {}): Pool {
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

export async function closePool(p: Pool): Promise<void> {
  pools.delete(p)
  await p.destroy()
}

export const JSON_HEADERS = {'content-type': 'application/json', accept: 'application/json'}

export async function call(p: Pool, method: Dispatcher.HttpMethod, path: string, body?: unknown, expect: number[] = [200, 201]): Promise<any> {
  const response = await p.request({method, path, headers: JSON_HEADERS, body: body === undefined ? undefined : JSON.stringify(body)})
  const text = await response.body.text()
  if (!expect.includes(response.statusCode)) throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 400)}`)
  return text ? JSON.parse(text) : undefined
}

export const PAYLOAD_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
export function payload(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += PAYLOAD_ALPHABET[(i * 7) % PAYLOAD_ALPHABET.length]
  return out
}

/** A ConfigMap whose JSON is about BODY_BYTES long. */
export function configMap(namespace: string, name: string, data: Record<string, string> = {}): Record<string, unknown> {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {name, namespace, labels: {app: 'orch-bench', bench: 'api'}},
    data: {...data, payload: ''},
  }
  object.data.payload = payload(Math.max(0, BODY_BYTES - JSON.stringify(object).length))
  return object
}

export async function createNamespace(p: Pool, name: string): Promise<void> {
  await call(p, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}}, [201, 409])
}

/** POSTs `count` bodies from `concurrency` loops over the pool; returns seconds taken. */
export async function createLoad(p: Pool, path: string, count: number, concurrency: number, bodyOf: (i: number) => string): Promise<number> {
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

