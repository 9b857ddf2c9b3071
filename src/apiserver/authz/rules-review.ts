// SelfSubjectRulesReview: "what may I do in this namespace?", answered from the rules of the
// authorizers that can list them (Kubernetes' pkg/registry/authorization/selfsubjectrulesreview over
// the union RuleResolver: RBAC's rules, the Node authorizer's "incomplete" for nodes, everything for
// AlwaysAllow). Nothing is stored.
import type {AnyObject, UserInfo} from '../../api/types.js'
import {errors} from '../../machinery/status.js'
import type {ResolvedRules} from './rbac.js'

export interface RulesReviewAuthorizer {
  resolveRules(user: UserInfo, namespace: string): ResolvedRules
}

/** utilerrors.NewAggregate(...).Error() over the flattened errors: one as is, several deduplicated
 *  in brackets. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)]
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`
}

/** Kubernetes' SubjectRulesReviewStatus: both rule lists always present, evaluationError when set. */
export function rulesReviewStatus(rules: ResolvedRules): AnyObject {
  const status: AnyObject = {
    resourceRules: rules.resourceRules.map((r) => structuredClone(r)),
    nonResourceRules: rules.nonResourceRules.map((r) => structuredClone(r)),
    incomplete: rules.incomplete,
  }
  if (rules.errors.length > 0) status.evaluationError = aggregate(rules.errors)
  return status
}

/** Answers a SelfSubjectRulesReview for the caller: 400 without a caller or without
 *  spec.namespace. As Kubernetes, the answer carries only the status (spec and metadata empty). */
export function selfSubjectRulesReview(authorizer: RulesReviewAuthorizer, user: UserInfo | undefined, body: AnyObject): AnyObject {
  if (!user) throw errors.badRequest('no user present on request')
  const namespace = typeof body.spec?.namespace === 'string' ? body.spec.namespace : ''
  if (!namespace) throw errors.badRequest('no namespace on request')
  return {metadata: {}, spec: {}, status: rulesReviewStatus(authorizer.resolveRules(user, namespace))}
}
