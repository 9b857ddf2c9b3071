// The agent's own authentication and authorization, as the kubelet's: client certificates verified
// against the cluster's client CA (CN = user, O = groups), bearer tokens checked with a TokenReview
// against the server, and authorization mode AlwaysAllow or Webhook (a SubjectAccessReview for
// resource `nodes`, subresource by path, name = this node). Webhook answers are cached: allowed for
// cacheAuthorizedTTL, denied for cacheUnauthorizedTTL; token reviews for the authentication TTL.
import type {IncomingMessage} from 'node:http'
import type {TLSSocket} from 'node:tls'
import type {AnyObject} from '../../api/types.js'
import type {RestClient} from '../../client/index.js'

export interface AgentUser {
  username: string
  uid?: string
  groups: string[]
  extra?: Record<string, string[]>
}

export interface AgentAuthOptions {
  /** the API server (TokenReview, SubjectAccessReview); absent: standalone, only certificates count */
  client?: RestClient
  nodeName: string
  authorizationMode: 'AlwaysAllow' | 'Webhook'
  cacheAuthorizedTTLMs: number
  cacheUnauthorizedTTLMs: number
  /** how long a token review is trusted */
  tokenCacheTTLMs: number
  now?: () => number
}

interface Cached<T> {
  value: T
  until: number
}

/** The kubelet's subresource for a path (checkpoint, stats, metrics, logs, spec; everything else proxy,
 *  `/containerLogs` included, as the kubelet's GetRequestAttributes maps it). */
export function subresourceOf(path: string): string {
  const first = path.split('/')[1] ?? ''
  const named: Record<string, string> = {checkpoint: 'checkpoint', stats: 'stats', metrics: 'metrics', logs: 'log', spec: 'spec', pods: 'proxy', containerLogs: 'proxy'}
  return named[first] ?? 'proxy'
}

export function verbOf(method: string | undefined): string {
  switch (method) {
    case 'POST':
      return 'create'
    case 'PUT':
      return 'update'
    case 'PATCH':
      return 'patch'
    case 'DELETE':
      return 'delete'
    default:
      return 'get'
  }
}

export class AgentAuth {
  private readonly tokens = new Map<string, Cached<AgentUser | undefined>>()
  private readonly decisions = new Map<string, Cached<{allowed: boolean; reason: string}>>()
  private readonly now: () => number

  constructor(private readonly options: AgentAuthOptions) {
    this.now = options.now ?? Date.now
  }

  /** The caller, or undefined (401). */
  async authenticate(request: IncomingMessage): Promise<AgentUser | undefined> {
    const socket = request.socket as TLSSocket
    if (typeof socket.getPeerCertificate === 'function' && socket.authorized) {
      const peer = socket.getPeerCertificate(false)
      const cn = Array.isArray(peer.subject?.CN) ? peer.subject.CN[0] : peer.subject?.CN
      if (cn) {
        const o = peer.subject?.O
        return {username: cn, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated']}
      }
    }
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null
    if (!match || !this.options.client) return undefined
    return this.reviewToken(match[1])
  }

  private async reviewToken(token: string): Promise<AgentUser | undefined> {
    const cached = this.tokens.get(token)
    if (cached && cached.until > this.now()) return cached.value
    const review = await this.options.client!.create<AnyObject>(
      {group: 'authentication.orch.io', version: 'v1', resource: 'tokenreviews'},
      {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token}},
    )
    const user = review.status?.authenticated === true ? (review.status.user as AgentUser) : undefined
    this.tokens.set(token, {value: user, until: this.now() + this.options.tokenCacheTTLMs})
    return user
  }

  /** Whether the user may do `verb` on nodes/<subresource> of this node. */
  async authorize(user: AgentUser, verb: string, subresource: string): Promise<{allowed: boolean; reason: string}> {
    if (this.options.authorizationMode === 'AlwaysAllow') return {allowed: true, reason: ''}
    if (!this.options.client) return {allowed: false, reason: 'no API server to ask (standalone)'}
    const key = JSON.stringify([user.username, [...user.groups].sort(), verb, subresource])
    const cached = this.decisions.get(key)
    if (cached && cached.until > this.now()) return cached.value
    const review = await this.options.client.create<AnyObject>(
      {group: 'authorization.orch.io', version: 'v1', resource: 'subjectaccessreviews'},
      {
        apiVersion: 'authorization.orch.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          resourceAttributes: {verb, group: '', version: 'v1', resource: 'nodes', subresource, name: this.options.nodeName},
        },
      },
    )
    const value = {allowed: review.status?.allowed === true, reason: String(review.status?.reason ?? '')}
    const ttl = value.allowed ? this.options.cacheAuthorizedTTLMs : this.options.cacheUnauthorizedTTLMs
    this.decisions.set(key, {value, until: this.now() + ttl})
    return value
  }
}
