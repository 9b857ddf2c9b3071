// Authorization: may this authenticated user do what the request asks? It runs after authentication and
// before anything is served. There is no policy yet: every authenticated user may do everything. RBAC
// plugs in here (an `Authorizer` given to the ApiServer); a denial becomes Kubernetes' 403 Forbidden.
import type {UserInfo} from '../api/types.js'
import {ApiError, errors} from '../machinery/status.js'
import type {RequestInfo} from './requestinfo.js'

export interface AuthorizationDecision {
  allowed: boolean
  /** why not, appended to the Forbidden message */
  reason?: string
}

export type Authorizer = (user: UserInfo, info: RequestInfo) => Promise<AuthorizationDecision>

/** The authorizer in force until RBAC: allows every request of an authenticated user. */
export async function authorize(_user: UserInfo, _info: RequestInfo): Promise<AuthorizationDecision> {
  return {allowed: true}
}

/** Kubernetes' forbiddenMessage: who cannot do what, where. */
export function forbiddenMessage(user: UserInfo, info: RequestInfo): string {
  if (!info.isResourceRequest) return `User ${JSON.stringify(user.username)} cannot ${info.verb} path ${JSON.stringify(info.path)}`
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource
  const where = info.namespace ? `in the namespace ${JSON.stringify(info.namespace)}` : 'at the cluster scope'
  return `User ${JSON.stringify(user.username)} cannot ${info.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(info.group)} ${where}`
}

/** The 403 Status of a denied request, e.g. `configmaps "x" is forbidden: User "bob" cannot get resource
 *  "configmaps" in API group "" in the namespace "default"`. */
export function forbidden(user: UserInfo, info: RequestInfo, reason?: string): ApiError {
  const message = forbiddenMessage(user, info) + (reason ? `: ${reason}` : '')
  if (!info.isResourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${message}`)
  return errors.forbidden({group: info.group, resource: info.resource}, info.name, message)
}
