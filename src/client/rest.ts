// The REST client: one undici Pool per server, TLS from the client config, bearer tokens, Kubernetes paths
// built from a resource locator, and every non-2xx answer turned into an ApiStatusError carrying the
// Status the server sent. `Warning` response headers (RFC 7234) are handed to an optional callback.
import {STATUS_CODES} from 'node:http'
import {Pool, type Dispatcher} from 'undici'
import {ApiError, type Status, type StatusDetails, type StatusReason} from '../machinery/status.js'
import {decodeCbor} from '../machinery/cbor.js'
import {decodeObject, PROTOBUF_MAGIC, readTypeMeta} from '../machinery/protobuf.js'
import {allDeclarations, apiVersionOf} from '../api/index.js'
import type {AnyObject} from '../api/types.js'
import type {ClientConfig, ImpersonationConfig} from './kubeconfig.js'
import {checkCertificateAuthority, checkClientKeyPair} from './tls-material.js'

/** Which resource (collection or object) a call is about. Core group is ''. */
export interface ResourceLocator {
  group: string
  version: string
  /** plural resource name, e.g. configmaps */
  resource: string
  /** absent: cluster-scoped resources, or all namespaces for a list */
  namespace?: string
  name?: string
  subresource?: string
}

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export type QueryValue = string | number | boolean | undefined | null
export type Query = Record<string, QueryValue>

export interface RawRequest {
  method: HttpMethod
  /** absolute API path, e.g. /api/v1/namespaces; the server URL's own path is put in front */
  path: string
  query?: Query
  /** a Buffer or string is sent as is; anything else as JSON */
  body?: unknown
  /** default application/json when there is a body */
  contentType?: string
  /** default application/json */
  accept?: string
  headers?: Record<string, string>
  signal?: AbortSignal
  /** milliseconds without progress before the request fails; 0 = none (watches) */
  timeoutMs?: number
}

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

export interface StreamResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Dispatcher.ResponseData['body']
}

/** Query parameters of the standard operations; each call sends those that are set. */
export interface CallOptions {
  labelSelector?: string
  fieldSelector?: string
  limit?: number
  continue?: string
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan' | string
  timeoutSeconds?: number
  /** true sends dryRun=All */
  dryRun?: boolean | 'All'
  fieldManager?: string
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict'
  /** server-side apply: take over conflicting fields */
  force?: boolean
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  gracePeriodSeconds?: number
  /** delete only when the object still has this uid / resourceVersion (sent as DeleteOptions) */
  preconditions?: {uid?: string; resourceVersion?: string}
  pretty?: boolean
  headers?: Record<string, string>
  signal?: AbortSignal
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply'

export const patchContentTypes: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
}

export interface ListMeta {
  resourceVersion?: string
  continue?: string
  remainingItemCount?: number
}

export interface ObjectList<T> {
  apiVersion?: string
  kind?: string
  metadata: ListMeta
  items: T[]
}

export interface RestClientOptions {
  /** called once per warning a response carries (RFC 7234 `299 - "text"`) */
  onWarning?: (warning: string, request: {method: string; path: string}) => void
  userAgent?: string
  /** milliseconds a non-watch request may wait for headers or body progress (default 60 s) */
  timeoutMs?: number
  /** most connections to the server (default 10) */
  connections?: number
  /** the encoding asked for in responses (default json); requests are sent as JSON */
  wire?: Wire
}

export type Wire = 'json' | 'protobuf' | 'cbor'

/** The Accept header that asks for each wire encoding (JSON where the server has no such form). */
export const WIRE_ACCEPT: Record<Wire, string> = {
  json: 'application/json',
  protobuf: 'application/vnd.orch.protobuf, application/json',
  cbor: 'application/cbor, application/json',
}

/** Decodes a response body by its Content-Type. A protobuf body must start with the magic prefix. */
export function decodeResponseBody(contentType: string | undefined, body: Buffer): unknown {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  if (type === 'application/vnd.orch.protobuf' || type === 'application/vnd.kubernetes.protobuf') {
    if (body.length < 4 || !body.subarray(0, 4).equals(Buffer.from(PROTOBUF_MAGIC))) {
      throw new Error('the server answered protobuf without the expected magic prefix (0x6b 0x38 0x73 0x00); refusing to decode it')
    }
    const {apiVersion, kind} = readTypeMeta(body)
    const declaration = allDeclarations.find((d) => apiVersionOf(d) === apiVersion && (d.kind === kind || `${d.kind}List` === kind))
    return decodeObject(declaration, body)
  }
  if (type === 'application/cbor') return decodeCbor(body)
  const text = body.toString('utf8')
  if (text.trim() === '') return {}
  return JSON.parse(text)
}

// ---------- errors ----------

const reasonForCode: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim()
}

/** A failure the API server answered with: the decoded Status (code, reason, message, details). */
export class ApiStatusError extends ApiError {
  readonly status: Status

  constructor(status: Status) {
    const code = status.code
    const message = oneLine(status.message || STATUS_CODES[code] || `HTTP ${code}`)
    super(code, status.reason ?? '', message, status.details)
    this.name = 'ApiStatusError'
    this.status = status
  }

  /** From an HTTP answer: the Status in the body, else one made of the HTTP status text and a body snippet. */
  static fromResponse(code: number, body: Buffer | string, contentType?: string): ApiStatusError {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    let decoded: unknown
    if (typeof body !== 'string' && contentType && !contentType.startsWith('application/json')) {
      try {
        decoded = decodeResponseBody(contentType, body)
      } catch {
        decoded = undefined
      }
    } else {
      decoded = parseJson(text)
    }
    const status = asStatus(decoded)
    if (status) {
      if (!status.code) status.code = code
      return new ApiStatusError(status)
    }
    const statusText = STATUS_CODES[code] ?? `HTTP ${code}`
    const snippet = oneLine(text).slice(0, 200)
    return new ApiStatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code,
      reason: reasonForCode[code] ?? '',
      message: snippet ? `${statusText}: ${snippet}` : statusText,
    })
  }
}

export function isApiStatusError(error: unknown): error is ApiStatusError {
  return error instanceof ApiStatusError
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The value as a Status when it is one (kind Status), else undefined. */
export function asStatus(value: unknown): Status | undefined {
  if (typeof value !== 'object' || value === null || (value as AnyObject).kind !== 'Status') return undefined
  const v = value as AnyObject
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: typeof v.metadata === 'object' && v.metadata !== null ? v.metadata : {},
    status: v.status === 'Success' ? 'Success' : 'Failure',
    message: typeof v.message === 'string' ? v.message : undefined,
    reason: typeof v.reason === 'string' ? (v.reason as StatusReason) : undefined,
    details: typeof v.details === 'object' && v.details !== null ? (v.details as StatusDetails) : undefined,
    code: typeof v.code === 'number' ? v.code : 0,
  }
}

// ---------- warnings ----------

/**
 * The texts of the RFC 7234 warnings in Warning header values (`299 - "text"`, comma-separated, with
 * an optional quoted date). Like client-go, only code 299 (miscellaneous persistent warning) is kept.
 */
export function parseWarningHeaders(values: string | string[] | undefined): string[] {
  if (values === undefined) return []
  const out: string[] = []
  for (const value of Array.isArray(values) ? values : [values]) {
    let i = 0
    while (i < value.length) {
      const m = /^[\s,]*(\d{3})\s+(\S+)\s+"/.exec(value.slice(i))
      if (!m) break
      i += m[0].length
      let text = ''
      let closed = false
      while (i < value.length) {
        const c = value[i++]
        if (c === '\\' && i < value.length) text += value[i++]
        else if (c === '"') {
          closed = true
          break
        } else text += c
      }
      if (!closed) break
      // an optional warn-date: a second quoted string
      const date = /^\s+"[^"]*"/.exec(value.slice(i))
      if (date) i += date[0].length
      if (m[1] === '299' && text !== '') out.push(text)
    }
  }
  return out
}

// ---------- paths ----------

/** The API path of a locator: /api/v1/... for the core group, /apis/{group}/{version}/... otherwise. */
export function resourcePath(locator: ResourceLocator): string {
  let path = locator.group === '' ? `/api/${locator.version}` : `/apis/${locator.group}/${locator.version}`
  if (locator.namespace) path += `/namespaces/${encodeURIComponent(locator.namespace)}`
  path += `/${locator.resource}`
  if (locator.name) path += `/${encodeURIComponent(locator.name)}`
  if (locator.subresource) {
    if (!locator.name) throw new Error(`subresource ${locator.subresource} of ${locator.resource} needs a name`)
    path += `/${locator.subresource}`
  }
  return path
}

/** The query parameters of call options (only those that are set). */
export function optionsQuery(options: CallOptions): Query {
  return {
    labelSelector: options.labelSelector || undefined,
    fieldSelector: options.fieldSelector || undefined,
    limit: options.limit,
    continue: options.continue || undefined,
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch || undefined,
    timeoutSeconds: options.timeoutSeconds,
    dryRun: options.dryRun === true ? 'All' : options.dryRun || undefined,
    fieldManager: options.fieldManager || undefined,
    fieldValidation: options.fieldValidation,
    force: options.force,
    propagationPolicy: options.propagationPolicy,
    gracePeriodSeconds: options.gracePeriodSeconds,
    pretty: options.pretty ? 'true' : undefined,
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    params.append(key, String(value))
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

// ---------- the client ----------

/** Bytes allowed in a header name as is (RFC 7230 token characters); the rest of an extra key is %-escaped. */
const headerKeyByte = /^[A-Za-z0-9!#$&'*+\-.^_`|~]$/

/** The Impersonate-* headers of client-go's impersonating round tripper: one Impersonate-Group line per
 *  group, one Impersonate-Extra-KEY line per value (KEY %-escaped where it is no header token, and `%`). */
export function impersonationHeaders(impersonate: ImpersonationConfig): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {'impersonate-user': impersonate.user}
  if (impersonate.uid) headers['impersonate-uid'] = impersonate.uid
  if (impersonate.groups && impersonate.groups.length > 0) headers['impersonate-group'] = [...impersonate.groups]
  for (const [key, values] of Object.entries(impersonate.extra ?? {})) {
    let escaped = ''
    for (const byte of Buffer.from(key, 'utf8')) {
      const c = String.fromCharCode(byte)
      escaped += headerKeyByte.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    }
    if (values.length > 0) headers[`impersonate-extra-${escaped}`] = [...values]
  }
  return headers
}

export class RestClient {
  readonly server: string
  readonly namespace: string
  private readonly pool: Pool
  private readonly basePath: string
  private readonly token?: string
  private readonly options: RestClientOptions
  /** what this client was made from (another client to the same cluster's parts can reuse it) */
  readonly config: Omit<ClientConfig, 'namespace'>

  /** the encoding this client asks for in responses (watches included) */
  get wire(): Wire {
    return this.options.wire ?? 'json'
  }

  constructor(config: Omit<ClientConfig, 'namespace'> & {namespace?: string}, options: RestClientOptions = {}) {
    let url: URL
    try {
      url = new URL(config.server)
    } catch {
      throw new Error(`server "${config.server}" is not a URL (expected e.g. https://127.0.0.1:6443)`)
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new Error(`server "${config.server}": the scheme must be https or http`)
    }
    this.server = config.server
    this.config = config
    this.namespace = config.namespace || 'default'
    this.basePath = url.pathname.replace(/\/+$/, '')
    this.token = config.token
    this.options = options
    // as client-go's TLSConfigFor: the CA, then the client certificate and key (both, or neither is used)
    if (config.ca) checkCertificateAuthority(config.ca)
    if (config.cert && config.key) checkClientKeyPair(config.cert, config.key)
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 10,
      connect: {
        ca: config.ca,
        cert: config.cert,
        key: config.key,
        rejectUnauthorized: !config.insecureSkipTLSVerify,
      },
    })
  }

  private headersFor(request: RawRequest, hasBody: boolean): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {
      accept: request.accept ?? 'application/json',
      'user-agent': this.options.userAgent ?? 'orch-client',
    }
    if (hasBody) headers['content-type'] = request.contentType ?? 'application/json'
    if (this.token) headers.authorization = `Bearer ${this.token}`
    if (this.config.impersonate) Object.assign(headers, impersonationHeaders(this.config.impersonate))
    return {...headers, ...request.headers}
  }

  private reportWarnings(request: RawRequest, headers: Record<string, string | string[] | undefined>): void {
    const onWarning = this.options.onWarning
    if (!onWarning) return
    for (const warning of parseWarningHeaders(headers.warning)) {
      onWarning(warning, {method: request.method, path: request.path})
    }
  }

  /** Sends a request and leaves the body unread: for watches and other long answers. Never throws on status. */
  async stream(request: RawRequest): Promise<StreamResponse> {
    let body: string | Buffer | undefined
    if (request.body !== undefined) {
      body =
        typeof request.body === 'string' || Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body)
    }
    const timeout = request.timeoutMs ?? this.options.timeoutMs ?? 60_000
    const response = await this.pool.request({
      method: request.method,
      path: this.basePath + request.path + queryString(request.query),
      headers: this.headersFor(request, body !== undefined),
      body,
      signal: request.signal,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    })
    const headers = response.headers as Record<string, string | string[] | undefined>
    this.reportWarnings(request, headers)
    return {status: response.statusCode, headers, body: response.body}
  }

  /** Sends a request and reads the whole answer. Never throws on status (the JSON helpers do). */
  async request(request: RawRequest): Promise<RawResponse> {
    const response = await this.stream(request)
    const body = Buffer.from(await response.body.arrayBuffer())
    return {status: response.status, headers: response.headers, body}
  }

  /** A request whose 2xx answer is JSON; other answers throw ApiStatusError. */
  async requestJson<T = AnyObject>(request: RawRequest): Promise<T> {
    const wire = this.wire
    const response = await this.request(wire !== 'json' && !request.accept ? {...request, accept: WIRE_ACCEPT[wire]} : request)
    const contentType = String(response.headers['content-type'] ?? '')
    if (response.status < 200 || response.status > 299) throw ApiStatusError.fromResponse(response.status, response.body, contentType)
    try {
      return decodeResponseBody(contentType, response.body) as T
    } catch (error) {
      const text = response.body.toString('utf8')
      if (contentType.startsWith('application/json') || contentType === '') {
        throw new Error(`${request.method} ${request.path}: the server answered ${response.status} with invalid JSON: ${oneLine(text).slice(0, 200)}`)
      }
      throw new Error(`${request.method} ${request.path}: ${(error as Error).message}`)
    }
  }

  get<T = AnyObject>(locator: ResourceLocator, options: CallOptions = {}): Promise<T> {
    return this.requestJson<T>({
      method: 'GET',
      path: resourcePath(locator),
      query: {resourceVersion: options.resourceVersion, pretty: options.pretty ? 'true' : undefined},
      headers: options.headers,
      signal: options.signal,
    })
  }

  list<T = AnyObject>(locator: ResourceLocator, options: CallOptions = {}): Promise<ObjectList<T>> {
    return this.requestJson<ObjectList<T>>({
      method: 'GET',
      path: resourcePath({...locator, name: undefined, subresource: undefined}),
      query: optionsQuery(options),
      headers: options.headers,
      signal: options.signal,
    })
  }

  /**
   * Every item of a collection, read in pages of `limit` (default 500) with continue tokens. When a
   * continue token has expired (410) the list starts over once without a limit, as Kubernetes advises.
   * The result's metadata is the first page's (the snapshot all pages were read at), without continue.
   */
  async listAll<T = AnyObject>(locator: ResourceLocator, options: CallOptions = {}): Promise<ObjectList<T>> {
    const limit = options.limit ?? 500
    const first = await this.list<T>(locator, {...options, limit, continue: undefined})
    const items = [...(first.items ?? [])]
    let token = first.metadata?.continue
    while (token) {
      let page: ObjectList<T>
      try {
        page = await this.list<T>(locator, {...options, limit, continue: token, resourceVersion: undefined, resourceVersionMatch: undefined})
      } catch (e) {
        if (isApiStatusError(e) && e.code === 410) {
          const whole = await this.list<T>(locator, {...options, limit: undefined, continue: undefined})
          return {...whole, items: whole.items ?? [], metadata: {...whole.metadata, continue: undefined}}
        }
        throw e
      }
      items.push(...(page.items ?? []))
      token = page.metadata?.continue
    }
    const metadata: ListMeta = {...first.metadata}
    delete metadata.continue
    delete metadata.remainingItemCount
    return {...first, metadata, items}
  }

  create<T = AnyObject>(locator: ResourceLocator, body: unknown, options: CallOptions = {}): Promise<T> {
    return this.requestJson<T>({
      method: 'POST',
      path: resourcePath({...locator, name: locator.subresource ? locator.name : undefined}),
      query: writeQuery(options),
      body,
      headers: options.headers,
      signal: options.signal,
    })
  }

  update<T = AnyObject>(locator: ResourceLocator, body: unknown, options: CallOptions = {}): Promise<T> {
    return this.requestJson<T>({
      method: 'PUT',
      path: resourcePath(locator),
      query: writeQuery(options),
      body,
      headers: options.headers,
      signal: options.signal,
    })
  }

  /** PATCH with the given patch type; `apply` (server-side apply) needs options.fieldManager. */
  patch<T = AnyObject>(locator: ResourceLocator, type: PatchType, patch: unknown, options: CallOptions = {}): Promise<T> {
    return this.requestJson<T>({
      method: 'PATCH',
      path: resourcePath(locator),
      query: {...writeQuery(options), force: options.force},
      body: patch,
      contentType: patchContentTypes[type],
      headers: options.headers,
      signal: options.signal,
    })
  }

  /** DELETE one object; answers the object (when deletion is graceful or pending) or a Success Status. */
  delete<T = AnyObject>(locator: ResourceLocator, options: CallOptions = {}): Promise<T> {
    return this.requestJson<T>({
      method: 'DELETE',
      path: resourcePath(locator),
      query: {
        dryRun: options.dryRun === true ? 'All' : options.dryRun || undefined,
        propagationPolicy: options.propagationPolicy,
        gracePeriodSeconds: options.gracePeriodSeconds,
        pretty: options.pretty ? 'true' : undefined,
      },
      body: options.preconditions
        ? {kind: 'DeleteOptions', apiVersion: 'v1', preconditions: options.preconditions}
        : undefined,
      headers: options.headers,
      signal: options.signal,
    })
  }

  /** Waits for requests in flight, then closes the connections. Stop watches first. */
  close(): Promise<void> {
    return this.pool.close()
  }

  /** Closes the connections at once, failing requests in flight. */
  destroy(): Promise<void> {
    return this.pool.destroy()
  }
}

function writeQuery(options: CallOptions): Query {
  return {
    dryRun: options.dryRun === true ? 'All' : options.dryRun || undefined,
    fieldManager: options.fieldManager || undefined,
    fieldValidation: options.fieldValidation,
    pretty: options.pretty ? 'true' : undefined,
  }
}
