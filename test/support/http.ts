// Small HTTP(S) helpers for end-to-end tests against a running orch server. `orch server` serves HTTPS
// only; a server started by startOrchServer registers its credentials here (registerServer), and requests
// to its URL then trust its CA and present its admin client certificate, unless `as` says otherwise:
// 'anonymous' (no credential), {token} (a bearer token) or {cert, key} (another client certificate).
import {request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions as NodeRequestOptions} from 'node:http'
import {request as httpsRequest} from 'node:https'
import {gunzipSync} from 'node:zlib'
import {Agent, fetch as undiciFetch, type Dispatcher, type RequestInit as UndiciRequestInit} from 'undici'
import {until} from './until.js'

export interface HttpResult {
  status: number
  headers: Record<string, string | string[] | undefined>
  raw: Buffer
  text: string
  json: any
}

/** What a client needs for one server: the CA its serving certificate verifies against (undefined: the
 *  system roots) and the admin client certificate and key. PEM. */
export interface ServerCredentials {
  ca?: string
  cert?: string
  key?: string
}

/** Who a request is from: the server's admin (default), nobody, a bearer token, or a client certificate. */
export type Caller = 'admin' | 'anonymous' | {token: string} | {cert: string; key: string}

export interface RequestOptions {
  as?: Caller
}

const servers = new Map<string, ServerCredentials>()
const agents = new Map<string, Agent>()

function origin(base: string): string {
  return new URL(base).origin
}

/** Makes requests to `url` (its origin) use these credentials. */
export function registerServer(url: string, credentials: ServerCredentials): void {
  servers.set(origin(url), credentials)
}

/** Forgets a server's credentials and closes the connections kept to it. */
export function forgetServer(url: string): void {
  const key = origin(url)
  servers.delete(key)
  for (const [name, agent] of agents) {
    if (name.startsWith(`${key}|`)) {
      agents.delete(name)
      void agent.destroy().catch(() => {})
    }
  }
}

/** The credentials registered for a URL's server, if any. */
export function serverCredentials(url: string): ServerCredentials | undefined {
  return servers.get(origin(url))
}

/** TLS options (ca, cert, key) and headers (Authorization) for a request to `base` made as `as`. */
export function tlsOptions(base: string, as: Caller = 'admin'): {ca?: string; cert?: string; key?: string; headers: Record<string, string>} {
  const known = servers.get(origin(base))
  const out: {ca?: string; cert?: string; key?: string; headers: Record<string, string>} = {headers: {}}
  if (known?.ca !== undefined) out.ca = known.ca
  if (as === 'admin') {
    if (known?.cert !== undefined && known.key !== undefined) {
      out.cert = known.cert
      out.key = known.key
    }
  } else if (as !== 'anonymous') {
    if ('token' in as) out.headers.Authorization = `Bearer ${as.token}`
    else {
      out.cert = as.cert
      out.key = as.key
    }
  }
  return out
}

/** The undici dispatcher for an https URL (one per server and caller, kept for reuse); undefined for http. */
function dispatcherFor(base: string, as: Caller): Dispatcher | undefined {
  if (!base.startsWith('https:')) return undefined
  const {ca, cert, key} = tlsOptions(base, as)
  const name = `${origin(base)}|${typeof as === 'string' ? as : 'token' in as ? 'token' : `cert:${as.cert}`}`
  let agent = agents.get(name)
  if (!agent) {
    agent = new Agent({connect: {ca, cert, key}})
    agents.set(name, agent)
  }
  return agent
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  options: RequestOptions = {},
): Promise<HttpResult> {
  const as = options.as ?? 'admin'
  const init: UndiciRequestInit = {method, headers: {...tlsOptions(base, as).headers, ...headers}}
  if (body !== undefined) {
    init.body = typeof body === 'string' || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body)
    ;(init.headers as Record<string, string>)['Content-Type'] ??= 'application/json'
  }
  const dispatcher = dispatcherFor(base, as)
  if (dispatcher) init.dispatcher = dispatcher
  const response = await undiciFetch(base + path, init)
  const raw = Buffer.from(await response.arrayBuffer())
  const text = raw.toString('utf8')
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  const out: Record<string, string> = {}
  response.headers.forEach((v, k) => (out[k] = v))
  return {status: response.status, headers: out, raw, text, json}
}

/** node:http or node:https request to base + path, with the TLS options and headers of `as`. */
function nodeRequest(base: string, path: string, options: NodeRequestOptions, as: Caller, onResponse: (res: IncomingMessage) => void): ClientRequest {
  const {headers, ...tls} = tlsOptions(base, as)
  const merged = {...options, headers: {...headers, ...(options.headers as Record<string, string | string[]> | undefined)}}
  return base.startsWith('https:') ? httpsRequest(base + path, {...merged, ...tls}, onResponse) : httpRequest(base + path, merged, onResponse)
}

/**
 * A request over node:http(s): it does not ask for decompression (Content-Encoding stays as sent; a
 * gzip body's text is its decompressed form), and a header given as an array goes out as one line per
 * element, as client-go sends Impersonate-Group (fetch would join them into one comma-separated line).
 */
export function nodeCall(base: string, method: string, path: string, headers: Record<string, string | string[]>, body?: unknown, options: RequestOptions = {}): Promise<HttpResult> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const sent = payload ? {'Content-Type': 'application/json', ...headers} : headers
  return new Promise((resolve, reject) => {
    const req = nodeRequest(base, path, {method, headers: sent}, options.as ?? 'admin', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const raw = Buffer.concat(chunks)
        const decoded = res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw
        let json: any
        try {
          json = JSON.parse(decoded.toString())
        } catch {
          json = undefined
        }
        resolve({status: res.statusCode ?? 0, headers: res.headers, raw, text: decoded.toString(), json})
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** A GET that does not decompress, to see Content-Encoding as sent. */
export function rawGet(base: string, path: string, headers: Record<string, string>, options: RequestOptions = {}): Promise<HttpResult> {
  return nodeCall(base, 'GET', path, headers, undefined, options)
}

export interface WatchStream {
  events: any[]
  /** resolves when at least n events have arrived */
  waitFor(n: number): Promise<any[]>
  /** resolves when the server ends the stream */
  ended: Promise<void>
  status: number
  headers: Record<string, string | string[] | undefined>
  close(): void
}

/** Opens a watch (or any streaming GET) and collects newline-delimited JSON documents. */
export function openWatch(base: string, path: string, headers: Record<string, string> = {}, options: RequestOptions = {}): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const req = nodeRequest(base, path, {method: 'GET', headers}, options.as ?? 'admin', (res) => {
      const events: any[] = []
      const waiters: {n: number; resolve: (e: any[]) => void}[] = []
      let buffer = ''
      let endResolve: () => void
      const ended = new Promise<void>((r) => (endResolve = r))
      const check = () => {
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (events.length >= waiters[i].n) waiters.splice(i, 1)[0].resolve(events.slice())
        }
      }
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString()
        let index
        while ((index = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, index).trim()
          buffer = buffer.slice(index + 1)
          if (line) events.push(JSON.parse(line))
        }
        check()
      })
      res.on('end', () => {
        if (buffer.trim()) events.push(JSON.parse(buffer))
        check()
        endResolve()
      })
      res.on('error', () => endResolve())
      resolve({
        events,
        status: res.statusCode ?? 0,
        headers: res.headers,
        ended,
        waitFor(n) {
          if (events.length >= n) return Promise.resolve(events.slice())
          return new Promise((r) => waiters.push({n, resolve: r}))
        },
        close() {
          req.destroy()
          endResolve()
        },
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Lists the collection at `path`, then watches it from the list's resourceVersion, until check(items)
 * gives a value (not undefined/false), which it returns. Fails at once when the watch ends or sends
 * an ERROR, and after timeoutMs with the last state seen.
 */
export async function waitForCollection<T>(base: string, path: string, check: (items: any[]) => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const list = await call(base, 'GET', path)
  if (list.status !== 200) throw new Error(`GET ${path}: ${list.status} ${list.text}`)
  const state = new Map<string, any>(list.json.items.map((i: any) => [i.metadata.name, i]))
  const first = check([...state.values()])
  if (first !== undefined && first !== false) return first
  const stream = await openWatch(base, `${path}${path.includes('?') ? '&' : '?'}watch=1&resourceVersion=${list.json.metadata.resourceVersion}`)
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), timeoutMs)))
  try {
    for (let seen = 0; ; ) {
      const events = await Promise.race([stream.waitFor(seen + 1), expired, stream.ended.then(() => 'ended' as const)])
      if (!Array.isArray(events)) {
        const summary = [...state.values()].map((o) => ({name: o.metadata.name, status: o.status, labels: o.metadata.labels}))
        throw new Error(`${events === 'ended' ? 'the watch ended' : 'timed out'} waiting for ${what}; last seen: ${JSON.stringify(summary)}`)
      }
      for (; seen < events.length; seen++) {
        const {type, object}: {type: string; object: any} = events[seen]
        if (type === 'DELETED') state.delete(object.metadata.name)
        else if (type === 'ADDED' || type === 'MODIFIED') state.set(object.metadata.name, object)
        else if (type === 'ERROR') throw new Error(`watching for ${what}: ${JSON.stringify(object)}`)
      }
      const result = check([...state.values()])
      if (result !== undefined && result !== false) return result
    }
  } finally {
    clearTimeout(timer)
    stream.close()
  }
}

/** The first answer of `request` that passes `check`, asked again every 20 ms; fails with the last answer after `timeoutMs`. */
export async function eventually(request: () => Promise<HttpResult>, check: (result: HttpResult) => boolean, what: string, timeoutMs = 10_000): Promise<HttpResult> {
  let last: HttpResult | undefined
  return until(what, async () => {
    last = await request()
    return check(last) ? last : undefined
  }, {timeoutMs, intervalMs: 20, detail: () => `last answer ${last?.status} ${last?.text}`})
}
