// User impersonation, as Kubernetes' WithImpersonation filter (apiserver pkg/endpoints/filters/
// impersonation.go) does it, after authentication and before authorization:
//   Impersonate-User (a user, or a service account `system:serviceaccount:NS:NAME`), Impersonate-Group
//   (repeatable), Impersonate-Uid and Impersonate-Extra-KEY (repeatable; KEY lower-cased, then
//   %-unescaped) name who the request is to be made as. Groups, extra or uid without a user is a 400
//   Status worded as Kubernetes words it (`requested [...] without impersonating a user`; Kubernetes
//   answers a plain-text 500, but a request's bad headers are bad input, which orch answers with a 4xx).
//   The authenticated user must be allowed to `impersonate` each thing asked for: `users` (core group,
//   name = the user), `serviceaccounts` (core, in the account's namespace), `groups` (core, name = the
//   group), `userextras/KEY` (authentication.orch.io, name = each value), `uids` (authentication.orch.io,
//   name = the uid); the first denial is the request's 403, as the authorizer words any other.
//   The request then goes on as the impersonated user: the groups given (a service account without
//   groups: system:serviceaccounts and system:serviceaccounts:NS), plus system:authenticated unless
//   system:authenticated or system:unauthenticated is among them (system:anonymous gets
//   system:unauthenticated instead), the uid and the extra. The Impersonate-* headers are removed.
import type {IncomingMessage} from 'node:http'
import type {UserInfo} from '../api/types.js'
import {errors, type ApiError} from '../machinery/status.js'
import {nameIsDNSLabel, nameIsDNSSubdomain} from '../machinery/validation.js'
import {ANONYMOUS_USER, AUTHENTICATED_GROUP} from './authn.js'
import {forbiddenError, serviceAccountUsername, SERVICE_ACCOUNT_USER_PREFIX, type AuthorizationAttributes, type FinalDecision} from './authz/index.js'

export const IMPERSONATE_USER_HEADER = 'impersonate-user'
export const IMPERSONATE_GROUP_HEADER = 'impersonate-group'
export const IMPERSONATE_UID_HEADER = 'impersonate-uid'
export const IMPERSONATE_EXTRA_HEADER_PREFIX = 'impersonate-extra-'

/** authentication.k8s.io renamed: the group of `uids` and `userextras` */
export const IMPERSONATION_AUTHENTICATION_GROUP = 'authentication.orch.io'
const authenticationVersion = `${IMPERSONATION_AUTHENTICATION_GROUP}/v1`

export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts'
const UNAUTHENTICATED_GROUP = ANONYMOUS_USER.groups[0]

/** One thing to impersonate (Kubernetes builds an ObjectReference for each). */
export interface ImpersonationTarget {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID'
  name: string
  /** a service account's namespace */
  namespace?: string
  /** a UserExtra's key */
  extraKey?: string
}



/** The Go %v of the ObjectReference Kubernetes builds for a target (its seven string fields). */
function describeTarget(target: ImpersonationTarget): string {
  const apiVersion = target.kind === 'UserExtra' || target.kind === 'UID' ? authenticationVersion : ''
  return `{${[target.kind, target.namespace ?? '', target.name, '', apiVersion, '', target.extraKey ?? ''].join(' ')}}`
}

/** Go's url.PathUnescape: undefined when a `%` is not followed by two hex digits. */
function pathUnescape(text: string): string | undefined {
  if (!text.includes('%')) return text
  const bytes: number[] = []
  const raw = Buffer.from(text, 'latin1')
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x25) {
      bytes.push(raw[i])
      continue
    }
    const hex = raw.subarray(i + 1, i + 3).toString('latin1')
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined
    bytes.push(parseInt(hex, 16))
    i += 2
  }
  return Buffer.from(bytes).toString('latin1')
}

/** Header text is bytes (Node hands them over as latin1): read as UTF-8, as Go strings hold them. */
function utf8(text: string): string {
  return Buffer.from(text, 'latin1').toString('utf8')
}

/** `system:serviceaccount:NS:NAME` with a valid namespace and name (serviceaccount.SplitUsername). */
export function splitServiceAccountUsername(username: string): {namespace: string; name: string} | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined
  const parts = username.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':')
  if (parts.length !== 2) return undefined
  const [namespace, name] = parts
  if (nameIsDNSLabel(namespace).length > 0 || nameIsDNSSubdomain(name).length > 0) return undefined
  return {namespace, name}
}

/** What the Impersonate-* headers ask for, in Kubernetes' order: the user, the groups, the extra
 *  values, the uid. Empty when the request impersonates nobody; throws a 400 for
 *  groups, extra or uid without a user. `headers` is a request's headersDistinct. */
export function impersonationTargets(headers: Record<string, string[] | undefined>): ImpersonationTarget[] {
  const targets: ImpersonationTarget[] = []
  const user = utf8(headers[IMPERSONATE_USER_HEADER]?.[0] ?? '')
  if (user) {
    const account = splitServiceAccountUsername(user)
    targets.push(account ? {kind: 'ServiceAccount', ...account} : {kind: 'User', name: user})
  }
  const groups = headers[IMPERSONATE_GROUP_HEADER] ?? []
  for (const group of groups) targets.push({kind: 'Group', name: utf8(group)})
  let hasExtra = false
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith(IMPERSONATE_EXTRA_HEADER_PREFIX)) continue
    hasExtra = true
    // header names arrive lower-cased (Kubernetes lower-cases the key too), then %-escapes are undone
    const encoded = header.slice(IMPERSONATE_EXTRA_HEADER_PREFIX.length)
    const key = utf8(pathUnescape(encoded) ?? encoded)
    for (const value of values ?? []) targets.push({kind: 'UserExtra', name: utf8(value), extraKey: key})
  }
  const uid = utf8(headers[IMPERSONATE_UID_HEADER]?.[0] ?? '')
  if (uid) targets.push({kind: 'UID', name: uid})
  if ((groups.length > 0 || hasExtra || uid) && !user) {
    throw errors.badRequest(`requested [${targets.map(describeTarget).join(' ')}] without impersonating a user`)
  }
  return targets
}

/** The attributes the real user is authorized for to impersonate one target. */
export function impersonationAttributes(requestor: UserInfo, target: ImpersonationTarget): AuthorizationAttributes {
  const attributes: AuthorizationAttributes = {user: requestor, verb: 'impersonate', isResourceRequest: true, apiGroup: '', apiVersion: '', name: target.name}
  switch (target.kind) {
    case 'ServiceAccount':
      return {...attributes, resource: 'serviceaccounts', namespace: target.namespace}
    case 'User':
      return {...attributes, resource: 'users'}
    case 'Group':
      return {...attributes, resource: 'groups'}
    case 'UserExtra':
      return {...attributes, apiGroup: IMPERSONATION_AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'userextras', subresource: target.extraKey}
    case 'UID':
      return {...attributes, apiGroup: IMPERSONATION_AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'uids'}
  }
}

/** The user the targets make, once every one of them was allowed. */
export function impersonatedUser(targets: readonly ImpersonationTarget[]): UserInfo {
  let username = ''
  let uid = ''
  let groups: string[] = []
  const extra: Record<string, string[]> = {}
  const groupsGiven = targets.some((t) => t.kind === 'Group')
  for (const target of targets) {
    switch (target.kind) {
      case 'ServiceAccount':
        username = serviceAccountUsername(target.namespace ?? '', target.name)
        if (!groupsGiven) groups = [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${target.namespace ?? ''}`]
        break
      case 'User':
        username = target.name
        break
      case 'Group':
        groups.push(target.name)
        break
      case 'UserExtra':
        ;(extra[target.extraKey ?? ''] ??= []).push(target.name)
        break
      case 'UID':
        uid = target.name
        break
    }
  }
  if (username !== ANONYMOUS_USER.username) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP)
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(UNAUTHENTICATED_GROUP)
  }
  const user: UserInfo = {username, groups}
  if (uid) user.uid = uid
  if (Object.keys(extra).length > 0) user.extra = extra
  return user
}

/** The request's Impersonate-* headers, gone (Kubernetes deletes them before the request goes on). */
function removeImpersonationHeaders(request: IncomingMessage): void {
  const isImpersonation = (name: string) =>
    name === IMPERSONATE_USER_HEADER || name === IMPERSONATE_GROUP_HEADER || name === IMPERSONATE_UID_HEADER || name.startsWith(IMPERSONATE_EXTRA_HEADER_PREFIX)
  for (const name of Object.keys(request.headers)) if (isImpersonation(name)) delete request.headers[name]
  const raw: string[] = []
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    if (!isImpersonation(request.rawHeaders[i].toLowerCase())) raw.push(request.rawHeaders[i], request.rawHeaders[i + 1])
  }
  request.rawHeaders = raw
}

/** What impersonation asks of the authorizer chain. */
export type ImpersonationAuthorizer = (attributes: AuthorizationAttributes) => FinalDecision

/**
 * The user a request goes on as: undefined when it impersonates nobody, else the impersonated user
 * (its Impersonate-* headers removed). Throws the 403 of the first target `requestor` may not
 * impersonate, or a 400 for headers without a user.
 */
export function impersonate(request: IncomingMessage, requestor: UserInfo, authorize: ImpersonationAuthorizer): UserInfo | undefined {
  // every request passes here: the common one, with no Impersonate-* header, is told apart from the
  // headers already parsed, without building headersDistinct
  if (!Object.keys(request.headers).some((name) => name.startsWith('impersonate-'))) return undefined
  const targets = impersonationTargets(request.headersDistinct)
  if (targets.length === 0) return undefined
  for (const target of targets) {
    const attributes = impersonationAttributes(requestor, target)
    const decision = authorize(attributes)
    if (decision.decision !== 'allow') throw impersonationForbidden(attributes, decision)
  }
  removeImpersonationHeaders(request)
  return impersonatedUser(targets)
}

function impersonationForbidden(attributes: AuthorizationAttributes, decision: FinalDecision): ApiError {
  // an authorizer error is a denial here too (Kubernetes answers Forbidden with the reason given)
  return forbiddenError(attributes, decision.reason)
}
