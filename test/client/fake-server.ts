// A test double of the API server for one resource (core v1 configmaps), speaking the Kubernetes wire
// protocol: Status bodies for failures, list paging with continue tokens (410 Expired when a token is
// too old), watches as chunked JSON streams with history replay from a resourceVersion, bookmarks and a
// 410 Expired ERROR event for a compacted resourceVersion, and Warning headers. It stands in for the
// server only until the end-to-end tests against `orch server` exist.
import {EventEmitter, once} from 'node:events'
import {createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import {setTimeout as delay} from 'node:timers/promises'
import {errors, successStatus, type Status} from '../../src/machinery/status.js'

export type Obj = Record<string, any>
type EventType = 'ADDED' | 'MODIFIED' | 'DELETED'

interface HistoryEvent {
  rv: number
  type: EventType
  object: Obj
}

interface Watcher {
  namespace?: string
  bookmarks: boolean
  res: ServerResponse
  queue: (string | null)[]
  flushing: boolean
  closed: boolean
  /** the end is queued: nothing more is sent */
  ending: boolean
  timer?: NodeJS.Timeout
}

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
}

export interface FakeServerOptions {
  /** serve HTTPS with this key pair; ask for (and accept) client certificates signed by `ca` */
  tls?: {cert: string; key: string; ca: string}
  /** require `Authorization: Bearer <token>` */
  token?: string
}

const gr = {group: '', resource: 'configmaps'}
const continueTooOld =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'

export class FakeServer extends EventEmitter {
  url = ''
  readonly requests: RecordedRequest[] = []
  /** Warning header values put on every answer */
  warnings: string[] = []
  /** write each batch of watch events in three pieces, split inside a UTF-8 character when there is one */
  splitEvents = false
  /** continue tokens are answered 410 Expired */
  expireContinueTokens = false
  /** watch requests are answered with this Status instead of a stream */
  failWatchesWith?: Status
  /** record events but deliver none to open watches (they reach a watch only through a later replay) */
  suspended = false
  /** client certificate subjects (CN) seen on TLS connections */
  readonly clientCNs: string[] = []

  private readonly objects = new Map<string, Obj>()
  private history: HistoryEvent[] = []
  private compactedRv = 0
  private rv = 100
  private uid = 0
  private readonly watchers = new Set<Watcher>()
  private readonly server: Server

  constructor(private readonly options: FakeServerOptions = {}) {
    super()
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((e) => {
        if (!res.headersSent) this.sendStatus(res, errors.internal(String(e)).toStatus())
        else res.destroy()
      })
    }
    this.server = options.tls
      ? createHttpsServer({...options.tls, requestCert: true, rejectUnauthorized: false}, handler)
      : createHttpServer(handler)
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    const {port} = this.server.address() as AddressInfo
    this.url = `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${port}`
    return this
  }

  async close(): Promise<void> {
    for (const w of this.watchers) this.endWatcher(w)
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  get resourceVersion(): string {
    return String(this.rv)
  }

  get openWatches(): number {
    return this.watchers.size
  }

  /** The query of every watch request so far. */
  get watchRequests(): URLSearchParams[] {
    return this.requests.filter((r) => r.query.get('watch') === '1' || r.query.get('watch') === 'true').map((r) => r.query)
  }

  /** Resolves with the query of the next watch the server opens (call it before causing the watch). */
  async nextWatch(): Promise<URLSearchParams> {
    const [query] = (await once(this, 'watch')) as [URLSearchParams]
    return query
  }

  // ---------- state changes (as if made by another client) ----------

  put(object: Obj): Obj {
    const ns = object.metadata.namespace ?? 'default'
    const key = `${ns}/${object.metadata.name}`
    const old = this.objects.get(key)
    const stored: Obj = {
      ...object,
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        ...object.metadata,
        namespace: ns,
        uid: old?.metadata.uid ?? `uid-${++this.uid}`,
        creationTimestamp: old?.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z',
        resourceVersion: String(++this.rv),
      },
    }
    this.objects.set(key, stored)
    this.record(old ? 'MODIFIED' : 'ADDED', stored)
    return stored
  }

  remove(namespace: string, name: string): Obj | undefined {
    const key = `${namespace}/${name}`
    const old = this.objects.get(key)
    if (!old) return undefined
    this.objects.delete(key)
    const last = {...old, metadata: {...old.metadata, resourceVersion: String(++this.rv)}}
    this.record('DELETED', last)
    return last
  }

  /** Sends an event as it is, without changing the store (a server repeating or reordering events). */
  event(type: EventType, object: Obj): void {
    this.record(type, object)
  }

  /** Forgets the history up to now: watches from an older resourceVersion get 410 Expired. */
  compact(): void {
    this.history = []
    this.compactedRv = this.rv
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that allows bookmarks. */
  bookmark(): void {
    const line = JSON.stringify({type: 'BOOKMARK', object: {kind: 'ConfigMap', apiVersion: 'v1', metadata: {resourceVersion: this.resourceVersion}}})
    for (const w of this.watchers) if (w.bookmarks) this.send(w, line + '\n')
  }

  /** Ends every open watch stream normally (as a server does at timeoutSeconds or on shutdown). */
  closeWatches(): void {
    for (const w of this.watchers) this.endWatcher(w)
  }

  /** Compacts, then tells every open watch its resourceVersion is gone (ERROR 410 Expired) and ends it. */
  expireWatches(): void {
    this.compact()
    for (const w of this.watchers) {
      this.send(w, JSON.stringify({type: 'ERROR', object: errors.gone(`too old resource version: ${this.rv - 1} (${this.rv})`).toStatus()}) + '\n')
      this.endWatcher(w)
    }
  }

  private record(type: EventType, object: Obj): void {
    this.history.push({rv: this.rv, type, object})
    if (this.suspended) return
    for (const w of this.watchers) {
      if (!w.namespace || w.namespace === object.metadata.namespace) this.send(w, JSON.stringify({type, object}) + '\n')
    }
  }

  // ---------- watch streams ----------

  private send(w: Watcher, data: string | null): void {
    if (w.closed || w.ending) return
    w.queue.push(data)
    if (data === null) w.ending = true
    if (!w.flushing) {
      w.flushing = true
      // events queued in the same tick go out in one write: several events per chunk
      setImmediate(() => void this.flush(w))
    }
  }

  private async flush(w: Watcher): Promise<void> {
    while (w.queue.length > 0) {
      const items = w.queue.splice(0)
      const end = items.includes(null)
      const data = Buffer.from(items.filter((i): i is string => i !== null).join(''))
      if (data.length > 0) {
        for (const piece of this.splitEvents ? splitPieces(data) : [data]) {
          if (w.res.destroyed) break
          await new Promise<void>((resolve) => w.res.write(piece, () => resolve()))
          // let the piece reach the client as its own read before the next one is written
          if (this.splitEvents) await delay(5)
        }
      }
      if (end) {
        w.closed = true
        this.watchers.delete(w)
        clearTimeout(w.timer)
        w.res.end()
        return
      }
    }
    w.flushing = false
  }

  private endWatcher(w: Watcher): void {
    this.send(w, null)
  }

  private startWatch(res: ServerResponse, namespace: string | undefined, query: URLSearchParams): void {
    this.emit('watchRequest', query)
    if (this.failWatchesWith) return this.sendStatus(res, this.failWatchesWith)
    const rvText = query.get('resourceVersion') ?? ''
    res.writeHead(200, {'content-type': 'application/json', ...this.warningHeaders()})
    res.flushHeaders()
    const w: Watcher = {
      namespace,
      bookmarks: query.get('allowWatchBookmarks') === 'true',
      res,
      queue: [],
      flushing: false,
      closed: false,
      ending: false,
    }
    this.watchers.add(w)
    res.on('close', () => {
      this.watchers.delete(w)
      w.closed = true
      clearTimeout(w.timer)
      this.emit('watchClosed')
    })
    const timeout = Number(query.get('timeoutSeconds') ?? 0)
    if (timeout > 0) w.timer = setTimeout(() => this.endWatcher(w), timeout * 1000)
    const inScope = (o: Obj) => !namespace || o.metadata.namespace === namespace
    if (rvText === '' || rvText === '0') {
      // no resourceVersion: the current state as synthetic ADDED events, then the changes
      for (const o of [...this.objects.values()].filter(inScope)) this.send(w, JSON.stringify({type: 'ADDED', object: o}) + '\n')
    } else {
      const from = Number(rvText)
      if (from < this.compactedRv) {
        this.send(w, JSON.stringify({type: 'ERROR', object: errors.expired(`too old resource version: ${from} (${this.compactedRv})`).toStatus()}) + '\n')
        this.endWatcher(w)
      } else {
        for (const e of this.history) {
          if (e.rv > from && inScope(e.object)) this.send(w, JSON.stringify({type: e.type, object: e.object}) + '\n')
        }
      }
    }
    this.emit('watch', query)
  }

  // ---------- requests ----------

  private warningHeaders(): Record<string, string[]> {
    return this.warnings.length > 0 ? {warning: this.warnings} : {}
  }

  private sendJson(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body)
    res.writeHead(code, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...this.warningHeaders()})
    res.end(text)
  }

  private sendStatus(res: ServerResponse, status: Status): void {
    this.sendJson(res, status.code, status)
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    this.requests.push({method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers})
    const socket = req.socket as {getPeerCertificate?: () => {subject?: {CN?: string}}}
    const cn = socket.getPeerCertificate?.()?.subject?.CN
    if (cn) this.clientCNs.push(cn)
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')

    if (this.options.token && req.headers.authorization !== `Bearer ${this.options.token}`) {
      return this.sendStatus(res, errors.unauthorized().toStatus())
    }
    if (url.pathname === '/broken') {
      res.writeHead(502, {'content-type': 'text/plain'})
      return void res.end('upstream\nconnect error')
    }
    const m = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/configmaps(?:\/([^/]+))?$/.exec(url.pathname)
    if (!m) return this.sendStatus(res, errors.pathNotFound(url.pathname).toStatus())
    const namespace = m[1] ? decodeURIComponent(m[1]) : undefined
    const name = m[2] ? decodeURIComponent(m[2]) : undefined
    const query = url.searchParams

    if (req.method === 'GET' && !name) {
      if (query.get('watch') === '1' || query.get('watch') === 'true') return this.startWatch(res, namespace, query)
      return this.list(res, namespace, query)
    }
    if (req.method === 'POST' && !name && namespace) {
      const object = JSON.parse(body) as Obj
      const objectName = object.metadata?.name as string
      if (this.objects.has(`${namespace}/${objectName}`)) return this.sendStatus(res, errors.alreadyExists(gr, objectName).toStatus())
      const dry = query.get('dryRun') === 'All'
      const stored = dry ? object : this.put({...object, metadata: {...object.metadata, namespace}})
      return this.sendJson(res, 201, stored)
    }
    if (!name || !namespace) return this.sendStatus(res, errors.methodNotAllowed().toStatus())
    const key = `${namespace}/${name}`
    const current = this.objects.get(key)
    if (req.method === 'GET') {
      return current ? this.sendJson(res, 200, current) : this.sendStatus(res, errors.notFound(gr, name).toStatus())
    }
    if (!current) return this.sendStatus(res, errors.notFound(gr, name).toStatus())
    if (req.method === 'PUT') {
      const object = JSON.parse(body) as Obj
      const rv = object.metadata?.resourceVersion
      if (rv && rv !== current.metadata.resourceVersion) return this.sendStatus(res, errors.staleResourceVersion(gr, name).toStatus())
      return this.sendJson(res, 200, this.put({...object, metadata: {...object.metadata, namespace}}))
    }
    if (req.method === 'PATCH') {
      if (req.headers['content-type'] !== 'application/merge-patch+json') {
        return this.sendStatus(res, errors.unsupportedMediaType(req.headers['content-type'] ?? '', ['application/merge-patch+json']).toStatus())
      }
      return this.sendJson(res, 200, this.put(mergePatch(current, JSON.parse(body)) as Obj))
    }
    if (req.method === 'DELETE') {
      this.remove(namespace, name)
      return this.sendStatus(res, {...successStatus({name, kind: 'configmaps', uid: current.metadata.uid}), code: 200})
    }
    return this.sendStatus(res, errors.methodNotAllowed().toStatus())
  }

  private list(res: ServerResponse, namespace: string | undefined, query: URLSearchParams): void {
    let snapshotRv = this.resourceVersion
    let after = ''
    const token = query.get('continue')
    if (token) {
      if (this.expireContinueTokens) return this.sendStatus(res, errors.expired(continueTooOld).toStatus())
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {rv: string; start: string}
      snapshotRv = decoded.rv
      after = decoded.start
    }
    const selector = query.get('labelSelector') ?? ''
    const wanted = selector === '' ? [] : selector.split(',').map((term) => term.split('='))
    const keys = [...this.objects.keys()]
      .sort()
      .filter((k) => k > after)
      .filter((k) => !namespace || k.startsWith(`${namespace}/`))
      .filter((k) => wanted.every(([label, value]) => this.objects.get(k)!.metadata.labels?.[label] === value))
    const limit = Number(query.get('limit') ?? 0)
    const page = limit > 0 ? keys.slice(0, limit) : keys
    const metadata: Obj = {resourceVersion: snapshotRv}
    if (page.length < keys.length) {
      metadata.continue = Buffer.from(JSON.stringify({rv: snapshotRv, start: page[page.length - 1]})).toString('base64url')
      metadata.remainingItemCount = keys.length - page.length
    }
    const items = page.map((k) => {
      const {apiVersion: _a, kind: _k, ...rest} = this.objects.get(k)!
      return rest
    })
    this.sendJson(res, 200, {kind: 'ConfigMapList', apiVersion: 'v1', metadata, items})
  }
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch
  const out: Obj = typeof target === 'object' && target !== null && !Array.isArray(target) ? {...(target as Obj)} : {}
  for (const [k, v] of Object.entries(patch as Obj)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

/** Three pieces of a buffer; the first cut falls inside a multi-byte UTF-8 character when there is one. */
function splitPieces(data: Buffer): Buffer[] {
  let first = data.findIndex((byte) => byte >= 0x80 && byte < 0xc0)
  if (first <= 0) first = Math.max(1, Math.floor(data.length / 3))
  const second = Math.max(first + 1, Math.floor((data.length * 2) / 3))
  return [data.subarray(0, first), data.subarray(first, second), data.subarray(second)].filter((p) => p.length > 0)
}

export async function startFakeServer(options: FakeServerOptions = {}): Promise<FakeServer> {
  return new FakeServer(options).start()
}

/** Records handler calls and lets a test await the nth one. */
export class Recorder<T> extends EventEmitter {
  readonly calls: T[] = []

  push(call: T): void {
    this.calls.push(call)
    this.emit('call')
  }

  async waitFor(count: number): Promise<T[]> {
    while (this.calls.length < count) await once(this, 'call')
    return this.calls.slice(0, count)
  }
}
