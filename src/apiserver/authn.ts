// Authentication of a request, as Kubernetes' union authenticator does it:
//   x509 client certificates: the TLS layer verifies them against the client CA (the server listens
//     with `clientCertServerOptions`: requestCert, rejectUnauthorized false, ca = the client CA), then
//     user = CN, groups = O. A presented certificate the TLS layer did not accept (unknown CA, expired,
//     not for client auth) is an error, not anonymity.
//   bearer tokens: the static token file (--token-auth-file) and bootstrap tokens
//     (--bootstrap-token / a file): `<id>.<secret>` → system:bootstrap:<id> in system:bootstrappers.
//     A bearer token no authenticator knows is an error ("invalid bearer token").
// The first that succeeds wins; every authenticated user gets system:authenticated. Without any
// credential the result is null: the caller treats the request as system:anonymous, allowed on
// `isAnonymousAllowedPath` paths only.
import {timingSafeEqual} from 'node:crypto'
import {readFileSync} from 'node:fs'
import type {IncomingHttpHeaders} from 'node:http'
import type {UserInfo} from '../api/types.js'

export const AUTHENTICATED_GROUP = 'system:authenticated'
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers'
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:'
export const ANONYMOUS_USER: Readonly<UserInfo> = Object.freeze({username: 'system:anonymous', groups: ['system:unauthenticated']})

export type AuthenticationResult = {user: UserInfo} | {error: string} | null

/** What authentication reads of a request: an http/https/http2 request whose socket is a TLSSocket. */
export interface AuthenticatableRequest {
  headers: IncomingHttpHeaders
  socket?: unknown
}

const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/'])

/** The paths an unauthenticated caller may reach (the system:public-info-viewer set). */
export function isAnonymousAllowedPath(path: string): boolean {
  const q = path.indexOf('?')
  return ANONYMOUS_PATHS.has(q < 0 ? path : path.slice(0, q))
}

/** TLS server options for client certificates: merge into the https/http2 server's options. */
export function clientCertServerOptions(clientCAPem: string | undefined): {requestCert: boolean; rejectUnauthorized: false; ca?: string} {
  // Without a client CA, requesting a certificate would verify it against Node's public roots.
  if (clientCAPem === undefined) return {requestCert: false, rejectUnauthorized: false}
  return {requestCert: true, rejectUnauthorized: false, ca: clientCAPem}
}

// ---------------------------------------------------------------------------------------------- token file

export interface StaticToken {
  token: string
  user: UserInfo
}

/** Splits CSV text into records (RFC 4180 quoting, leading spaces trimmed, blank lines skipped). */
export function parseCSV(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  let fieldStart = true
  let i = 0
  const endField = () => {
    record.push(field)
    field = ''
    fieldStart = true
  }
  const endRecord = () => {
    endField()
    if (!(record.length === 1 && record[0] === '')) records.push(record)
    record = []
  }
  while (i < text.length) {
    const c = text[i]
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
      } else field += c
      i++
      continue
    }
    if (fieldStart && (c === ' ' || c === '\t')) {
      i++
      continue
    }
    if (fieldStart && c === '"') {
      quoted = true
      fieldStart = false
      i++
      continue
    }
    fieldStart = false
    if (c === ',') endField()
    else if (c === '\n') endRecord()
    else if (c === '\r' && text[i + 1] === '\n') {
      endRecord()
      i++
    } else field += c
    i++
  }
  if (quoted) throw new Error('unterminated quoted field')
  if (field !== '' || record.length > 0) endRecord()
  return records
}

/** Parses a static token file's text: `token,user,uid[,"group1,group2"]` a line, as Kubernetes reads it. */
export function parseTokenFile(text: string, source = 'token file'): StaticToken[] {
  let records: string[][]
  try {
    records = parseCSV(text.replace(/^\uFEFF/, ''))
  } catch (e) {
    throw new Error(`${source}: ${(e as Error).message}`)
  }
  const byToken = new Map<string, StaticToken>()
  records.forEach((record, index) => {
    if (record.length < 3) {
      throw new Error(`${source} must have at least 3 columns (token, user name, user uid), found ${record.length} in record ${index + 1}`)
    }
    const [token, username, uid, groups] = record
    if (token === '') return // Kubernetes skips (and warns about) an empty token
    const user: UserInfo = {username, groups: groups === undefined || groups === '' ? [] : groups.split(',')}
    if (uid !== '') user.uid = uid
    byToken.set(token, {token, user}) // the last of duplicate tokens wins
  })
  return [...byToken.values()]
}

/** Reads a --token-auth-file. */
export function loadTokenFile(path: string): StaticToken[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new Error(`--token-auth-file ${path}: ${(e as Error).message}`)
  }
  return parseTokenFile(text, `token file ${path}`)
}

// ---------------------------------------------------------------------------------------------- bootstrap tokens

export interface BootstrapToken {
  id: string
  secret: string
}

const BOOTSTRAP_TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/

/** Parses `<id>.<secret>` (id [a-z0-9]{6}, secret [a-z0-9]{16}); null when it is not one. */
export function parseBootstrapToken(token: string): BootstrapToken | null {
  const match = BOOTSTRAP_TOKEN.exec(token)
  return match ? {id: match[1], secret: match[2]} : null
}

/** Parses --bootstrap-token values; throws on one of the wrong shape. */
export function parseBootstrapTokens(values: readonly string[], source = '--bootstrap-token'): BootstrapToken[] {
  return values.map((value, index) => {
    const token = parseBootstrapToken(value.trim())
    if (!token) throw new Error(`${source} ${index + 1}: must be of the form [a-z0-9]{6}.[a-z0-9]{16}`)
    return token
  })
}

/** Reads a bootstrap token file: one token a line; blank lines and lines starting with # are skipped. */
export function loadBootstrapTokenFile(path: string): BootstrapToken[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new Error(`bootstrap token file ${path}: ${(e as Error).message}`)
  }
  const tokens: BootstrapToken[] = []
  text.split(/\r?\n/).forEach((line, index) => {
    const value = line.trim()
    if (value === '' || value.startsWith('#')) return
    const token = parseBootstrapToken(value)
    if (!token) throw new Error(`bootstrap token file ${path} line ${index + 1}: must be of the form [a-z0-9]{6}.[a-z0-9]{16}`)
    tokens.push(token)
  })
  return tokens
}

// ---------------------------------------------------------------------------------------------- authenticator

export interface AuthenticatorOptions {
  /** tokens of --token-auth-file (loadTokenFile) */
  tokens?: readonly StaticToken[]
  /** bootstrap tokens (parseBootstrapTokens / loadBootstrapTokenFile) */
  bootstrapTokens?: readonly BootstrapToken[]
  /** accept verified client certificates (default true); the TLS server decides which CA verifies them */
  clientCertificates?: boolean
}

interface PeerCertificateLike {
  subject?: Record<string, string | string[] | undefined>
  valid_to?: string
  raw?: Buffer
  ext_key_usage?: string[]
}

interface TLSSocketLike {
  authorized?: boolean
  authorizationError?: Error | string | null
  getPeerCertificate(detailed?: boolean): PeerCertificateLike
}

function isTLSSocket(socket: unknown): socket is TLSSocketLike {
  return typeof socket === 'object' && socket !== null &&
    typeof (socket as {getPeerCertificate?: unknown}).getPeerCertificate === 'function'
}

function values(field: string | string[] | undefined): string[] {
  if (field === undefined) return []
  return Array.isArray(field) ? field : [field]
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user
  return {...user, groups: [...user.groups, AUTHENTICATED_GROUP]}
}

type Outcome = {user: UserInfo} | {error: string} | null

export class Authenticator {
  private readonly tokens: ReadonlyMap<string, UserInfo>
  private readonly bootstrap: ReadonlyMap<string, string>
  private readonly clientCertificates: boolean

  constructor(options: AuthenticatorOptions = {}) {
    this.tokens = new Map((options.tokens ?? []).map((t) => [t.token, t.user]))
    this.bootstrap = new Map((options.bootstrapTokens ?? []).map((t) => [t.id, t.secret]))
    this.clientCertificates = options.clientCertificates ?? true
  }

  /** {user} when a credential is valid, {error} when one was presented but is not, null when none was. */
  authenticate(request: AuthenticatableRequest): AuthenticationResult {
    const errors: string[] = []
    for (const outcome of [this.x509(request.socket), this.bearer(request.headers)]) {
      if (outcome === null) continue
      if ('user' in outcome) return {user: withAuthenticatedGroup(outcome.user)}
      errors.push(outcome.error)
    }
    return errors.length > 0 ? {error: errors.join('; ')} : null
  }

  /** A bearer token alone (TokenReview): the user it names, or why it names nobody. */
  authenticateToken(token: string): {user: UserInfo} | {error: string} {
    const outcome = token ? this.bearer({authorization: `Bearer ${token}`}) : null
    if (outcome === null) return {error: 'invalid bearer token'}
    return 'user' in outcome ? {user: withAuthenticatedGroup(outcome.user)} : outcome
  }

  /** per connection: the certificate's answer (a connection's client certificate never changes) and
   *  until when the certificate is valid */
  private readonly connections = new WeakMap<object, {outcome: Outcome; notAfter: number}>()

  private x509(socket: unknown): Outcome {
    if (!this.clientCertificates || !isTLSSocket(socket)) return null
    const known = this.connections.get(socket)
    if (known && Date.now() <= known.notAfter) return known.outcome
    const outcome = this.x509Uncached(socket)
    const notAfter = Date.parse(socket.getPeerCertificate(false).valid_to ?? '')
    this.connections.set(socket, {outcome, notAfter: Number.isFinite(notAfter) ? notAfter : 0})
    return outcome
  }

  private x509Uncached(socket: TLSSocketLike): Outcome {
    const peer = socket.getPeerCertificate(false)
    if (!peer || !peer.raw || peer.raw.length === 0) return null
    const subject = peer.subject ?? {}
    const commonName = values(subject.CN)[0] ?? ''
    if (!socket.authorized) {
      const why = socket.authorizationError instanceof Error ? socket.authorizationError.message : String(socket.authorizationError ?? 'not verified')
      return {error: `verifying certificate CN=${JSON.stringify(commonName)} failed: ${why}`}
    }
    // OpenSSL already checked the purpose (clientAuth) on a verified chain; this guards a server set up otherwise.
    if (peer.ext_key_usage && !peer.ext_key_usage.includes('1.3.6.1.5.5.7.3.2') && !peer.ext_key_usage.includes('2.5.29.37.0')) {
      return {error: `verifying certificate CN=${JSON.stringify(commonName)} failed: not valid for client authentication`}
    }
    // verified at the handshake; a connection may outlive its certificate
    if (peer.valid_to && Date.parse(peer.valid_to) < Date.now()) {
      return {error: `verifying certificate CN=${JSON.stringify(commonName)} failed: certificate has expired`}
    }
    if (commonName === '') return null // Kubernetes: no common name, no x509 user
    return {user: {username: commonName, groups: values(subject.O)}}
  }

  private bearer(headers: IncomingHttpHeaders): Outcome {
    const header = headers.authorization
    if (typeof header !== 'string') return null
    // As Kubernetes: "<scheme> <token>[ …]" split on single spaces, scheme case-insensitive.
    const parts = header.trim().split(' ')
    if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer' || parts[1] === '') return null
    const token = parts[1]
    const user = this.tokens.get(token)
    if (user) return {user: {...user, groups: [...user.groups]}}
    const bootstrap = parseBootstrapToken(token)
    if (bootstrap) {
      const secret = this.bootstrap.get(bootstrap.id)
      if (secret !== undefined && sameSecret(secret, bootstrap.secret)) {
        return {user: {username: BOOTSTRAP_USER_PREFIX + bootstrap.id, groups: [BOOTSTRAPPERS_GROUP]}}
      }
    }
    return {error: 'invalid bearer token'}
  }
}

/** Shorthand: `new Authenticator(options)`. */
export function createAuthenticator(options: AuthenticatorOptions = {}): Authenticator {
  return new Authenticator(options)
}
