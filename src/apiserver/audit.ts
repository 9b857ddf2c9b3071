// The audit log (--audit-log-path): one JSON line per request in Kubernetes' audit.k8s.io/v1 Event
// shape at level Metadata (renamed audit.orch.io): who (user, groups, source IPs, user agent; and
// impersonatedUser when the request was made as someone else) did
// what (verb, requestURI, objectRef with resource, namespace, name, subresource), the answer
// (responseStatus.code, and the message of a failure), and annotations — the authorization decision
// and what admission policies add (`<policy>/<key>`). Denied and failed requests are logged too.
import {randomUUID} from 'node:crypto'
import {createWriteStream, openSync, type WriteStream} from 'node:fs'
import type {IncomingMessage} from 'node:http'
import type {UserInfo} from '../api/types.js'
import {formatMicroTime} from '../machinery/managed-fields.js'
import type {RequestInfo} from './requestinfo.js'

export interface AuditRecord {
  request: IncomingMessage
  info?: RequestInfo
  user?: UserInfo
  /** who the request was made as (Impersonate-User); `user` stays who authenticated */
  impersonatedUser?: UserInfo
  code: number
  /** the Status message of a failed request */
  message?: string
  /** a create's object name (its path names none) */
  objectName?: string
  annotations: Record<string, string>
  received: Date
  finished: Date
}

/** authentication/v1 UserInfo as the event carries it (the impersonated user's extra too, as Kubernetes' LogImpersonatedUser) */
function userInfo(user: UserInfo, withExtra: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {username: user.username}
  if (user.uid) out.uid = user.uid
  out.groups = [...user.groups]
  if (withExtra && user.extra && Object.keys(user.extra).length > 0) out.extra = structuredClone(user.extra)
  return out
}

/** The audit Event of one request (exported for tests). */
export function auditEvent(record: AuditRecord): Record<string, unknown> {
  const {request, info, user} = record
  const event: Record<string, unknown> = {
    kind: 'Event',
    apiVersion: 'audit.orch.io/v1',
    level: 'Metadata',
    auditID: randomUUID(),
    stage: 'ResponseComplete',
    requestURI: request.url ?? '',
    verb: info?.verb ?? (request.method ?? '').toLowerCase(),
    user: user ? userInfo(user, false) : {},
  }
  if (record.impersonatedUser) event.impersonatedUser = userInfo(record.impersonatedUser, true)
  event.sourceIPs = [request.socket.remoteAddress ?? '']
  const agent = request.headers['user-agent']
  if (agent) event.userAgent = agent
  if (info?.isResourceRequest) {
    const ref: Record<string, string> = {resource: info.resource}
    if (info.namespace) ref.namespace = info.namespace
    if (info.name || record.objectName) ref.name = info.name || record.objectName!
    if (info.group) ref.apiGroup = info.group
    if (info.version) ref.apiVersion = info.version
    if (info.subresource) ref.subresource = info.subresource
    event.objectRef = ref
  }
  event.responseStatus = record.message && record.code >= 400 ? {metadata: {}, code: record.code, status: 'Failure', message: record.message} : {metadata: {}, code: record.code}
  event.requestReceivedTimestamp = formatMicroTime(record.received)
  event.stageTimestamp = formatMicroTime(record.finished)
  if (Object.keys(record.annotations).length > 0) event.annotations = record.annotations
  return event
}

export class AuditLog {
  private readonly stream: WriteStream | NodeJS.WriteStream

  /** Opens (creates, 0600) the file at once, so a path that cannot be written stops the start. */
  constructor(path: string) {
    if (path === '-') {
      this.stream = process.stdout
      return
    }
    let fd: number
    try {
      fd = openSync(path, 'a', 0o600)
    } catch (error) {
      throw new Error(`--audit-log-path ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
    this.stream = createWriteStream(path, {fd})
  }

  record(record: AuditRecord): void {
    this.stream.write(JSON.stringify(auditEvent(record)) + '\n')
  }

  close(): Promise<void> {
    if (this.stream === process.stdout) return Promise.resolve()
    return new Promise((resolve) => (this.stream as WriteStream).end(() => resolve()))
  }
}
