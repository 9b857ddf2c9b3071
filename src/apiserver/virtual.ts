// The virtual kinds: SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview and
// SelfSubjectRulesReview (answered by the authorizer chain) and TokenReview (answered by the
// authenticator). A POST gets the review back with its
// status; nothing is stored.
import type {AnyObject, UserInfo} from '../api/types.js'
import {errors} from '../machinery/status.js'
import type {Authenticator} from './authn.js'
import {localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview, type ReviewAuthorizer, type RulesReviewAuthorizer} from './authz/index.js'
import type {VirtualKindHandler} from './handlers.js'

export interface VirtualKindSources {
  authorizer: ReviewAuthorizer & RulesReviewAuthorizer
  authenticator: Pick<Authenticator, 'authenticateToken'>
}

function tokenReview(authenticator: VirtualKindSources['authenticator'], body: AnyObject): AnyObject {
  const token = body.spec?.token
  if (typeof token !== 'string' || token === '') throw errors.badRequest('token is required for TokenReview in authentication.orch.io')
  const result = authenticator.authenticateToken(token)
  const audiences: string[] = Array.isArray(body.spec.audiences) ? body.spec.audiences : []
  const status: AnyObject =
    'user' in result
      ? {authenticated: true, user: userInfoOf(result.user), ...(audiences.length > 0 ? {audiences} : {})}
      : {user: {}, error: result.error}
  return {metadata: structuredClone(body.metadata ?? {}), spec: structuredClone(body.spec), status}
}

function userInfoOf(user: UserInfo): AnyObject {
  const out: AnyObject = {username: user.username, groups: [...user.groups]}
  if (user.uid) out.uid = user.uid
  if (user.extra && Object.keys(user.extra).length > 0) out.extra = structuredClone(user.extra)
  return out
}

/** resource.group -> handler */
export function virtualKindHandlers(sources: VirtualKindSources): Map<string, VirtualKindHandler> {
  return new Map<string, VirtualKindHandler>([
    ['subjectaccessreviews.authorization.orch.io', (body) => subjectAccessReview(sources.authorizer, body)],
    ['selfsubjectaccessreviews.authorization.orch.io', (body, user) => selfSubjectAccessReview(sources.authorizer, user, body)],
    ['localsubjectaccessreviews.authorization.orch.io', (body, _user, namespace) => localSubjectAccessReview(sources.authorizer, body, namespace)],
    ['selfsubjectrulesreviews.authorization.orch.io', (body, user) => selfSubjectRulesReview(sources.authorizer, user, body)],
    ['tokenreviews.authentication.orch.io', (body) => tokenReview(sources.authenticator, body)],
    ['selfsubjectreviews.authentication.orch.io', (body, user) => {
      if (!user) throw errors.badRequest('no user present on request')
      return {metadata: structuredClone(body.metadata ?? {}), status: {userInfo: userInfoOf(user)}}
    }],
  ])
}
