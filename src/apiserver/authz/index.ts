// Authorization: the Node authorizer, then RBAC, as Kubernetes' union authorizer chains them. The
// first that allows or denies decides; when none has an opinion the request is denied, with the
// reasons the authorizers gave. forbiddenMessage / forbiddenError render the 403 as Kubernetes'
// responsewriters.Forbidden does.
import type {UserInfo} from '../../api/types.js'
import {goQuote} from '../../machinery/field-errors.js'
import {ApiError} from '../../machinery/status.js'
import type {RequestInfo} from '../requestinfo.js'
import {NodeAuthorizer} from './node.js'
import type {NodeGraph} from './node-graph.js'
import {RBACAuthorizer, type AttributeAuthorizer, type AuthorizationAttributes, type AuthorizationResult, type RBACSource, type ResolvedRules} from './rbac.js'

export * from './rbac.js'
export * from './node.js'
export * from './node-graph.js'
export * from './defaults.js'
export * from './review.js'
export * from './rules-review.js'
export * from './aggregated-roles.js'
export * from './escalation.js'
export * from './coverage.js'

export interface AuthorizerOptions {
  /** roles and bindings: `registrySource(server.registries)` in the server */
  source: RBACSource
  /** which pods are bound to which node, and what they use: `PodNodeGraph.attach(pods)` in the server */
  graph: NodeGraph
}

/** The final answer for a request: anything but allow is a 403 (or a 500 when `error` is set and
 *  nothing allowed, as Kubernetes' WithAuthorization answers an evaluation error). */
export interface FinalDecision {
  decision: 'allow' | 'deny'
  reason: string
  error?: string
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** utilerrors.NewAggregate(...).Error() */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)]
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`
}

export class Authorizer {
  readonly chain: readonly AttributeAuthorizer[]
  readonly rbac: RBACAuthorizer | undefined

  /** Node then RBAC from their inputs, or any chain of authorizers in order. */
  constructor(options: AuthorizerOptions | readonly AttributeAuthorizer[]) {
    if (Array.isArray(options)) {
      this.chain = [...(options as readonly AttributeAuthorizer[])]
      this.rbac = this.chain.find((a): a is RBACAuthorizer => a instanceof RBACAuthorizer)
    } else {
      const {source, graph} = options as AuthorizerOptions
      this.rbac = new RBACAuthorizer(source)
      this.chain = [new NodeAuthorizer(graph), this.rbac]
    }
  }

  /** Kubernetes' unionAuthzHandler: the first allow or deny with its own reason; otherwise
   *  no-opinion with every reason given (one a line) and every error. SubjectAccessReviews answer
   *  from this (no-opinion is allowed=false, denied=false). */
  evaluate(attributes: AuthorizationAttributes): AuthorizationResult {
    const reasons: string[] = []
    const errors: string[] = []
    for (const authorizer of this.chain) {
      let result: AuthorizationResult
      try {
        result = authorizer.authorize(attributes)
      } catch (error) {
        errors.push(errorMessage(error))
        continue
      }
      if (result.error) errors.push(result.error)
      if (result.reason) reasons.push(result.reason)
      if (result.decision === 'allow' || result.decision === 'deny') {
        return result.error ? {decision: result.decision, reason: result.reason, error: result.error} : {decision: result.decision, reason: result.reason}
      }
    }
    const out: AuthorizationResult = {decision: 'no-opinion', reason: reasons.join('\n')}
    if (errors.length > 0) out.error = aggregate(errors)
    return out
  }

  /** Kubernetes' unionAuthzRulesHandler.RulesFor over the authorizers that resolve rules (the
   *  privileged-group authorizer does not): their rules in chain order, incomplete when any is. */
  resolveRules(user: UserInfo, namespace: string): ResolvedRules {
    const out: ResolvedRules = {resourceRules: [], nonResourceRules: [], incomplete: false, errors: []}
    for (const authorizer of this.chain) {
      if (!authorizer.resolveRules) continue
      const rules = authorizer.resolveRules(user, namespace)
      out.resourceRules.push(...rules.resourceRules)
      out.nonResourceRules.push(...rules.nonResourceRules)
      if (rules.incomplete) out.incomplete = true
      out.errors.push(...rules.errors)
    }
    return out
  }

  /** The decision for a request: allow, or deny (explicitly, or because nobody allowed it). */
  authorize(attributes: AuthorizationAttributes): FinalDecision {
    const result = this.evaluate(attributes)
    const out: FinalDecision = {decision: result.decision === 'allow' ? 'allow' : 'deny', reason: result.reason}
    if (result.error) out.error = result.error
    return out
  }
}

/** The attributes of an API request, from its parsed path (Kubernetes' GetAuthorizerAttributes). */
export function attributesFor(user: UserInfo, info: RequestInfo): AuthorizationAttributes {
  if (!info.isResourceRequest) return {user, verb: info.verb, isResourceRequest: false, path: info.path}
  return {
    user,
    verb: info.verb,
    isResourceRequest: true,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    ...(info.fieldSelector ? {fieldSelector: info.fieldSelector} : {}),
    path: info.path,
  }
}

/** Kubernetes avoids emitting error text that looks like HTML (quotes are fine). */
function sanitize(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** `User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"` and
 *  its cluster-scope and non-resource forms (responsewriters' forbiddenMessage). */
export function forbiddenReason(attributes: AuthorizationAttributes): string {
  const user = goQuote(attributes.user?.username ?? '')
  if (!attributes.isResourceRequest) return `User ${user} cannot ${attributes.verb} path ${goQuote(attributes.path ?? '')}`
  const resource = attributes.subresource ? `${attributes.resource ?? ''}/${attributes.subresource}` : (attributes.resource ?? '')
  const head = `User ${user} cannot ${attributes.verb} resource ${goQuote(resource)} in API group ${goQuote(attributes.apiGroup ?? '')}`
  return attributes.namespace ? `${head} in the namespace ${goQuote(attributes.namespace)}` : `${head} at the cluster scope`
}

/** The whole 403 message, as Kubernetes' NewForbidden wraps it:
 *  `configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"`,
 *  `forbidden: User "bob" cannot get path "/apis"`, with `: <reason>` after when the authorizers
 *  gave one. */
export function forbiddenMessage(attributes: AuthorizationAttributes, reason = ''): string {
  const detail = reason ? `${sanitize(forbiddenReason(attributes))}: ${reason}` : sanitize(forbiddenReason(attributes))
  const group = attributes.isResourceRequest ? (attributes.apiGroup ?? '') : ''
  const resource = attributes.isResourceRequest ? (attributes.resource ?? '') : ''
  if (!group && !resource) return `forbidden: ${detail}`
  const qualified = group ? `${resource}.${group}` : resource
  const name = attributes.isResourceRequest ? (attributes.name ?? '') : ''
  return name ? `${qualified} ${goQuote(name)} is forbidden: ${detail}` : `${qualified} is forbidden: ${detail}`
}

/** The 403 Status error for a denied request (details: name, group, kind = the resource; `{}` for
 *  non-resource requests, as Kubernetes sends). */
export function forbiddenError(attributes: AuthorizationAttributes, reason = ''): ApiError {
  const details: {name?: string; group?: string; kind?: string} = {}
  if (attributes.isResourceRequest) {
    if (attributes.name) details.name = attributes.name
    if (attributes.apiGroup) details.group = attributes.apiGroup
    if (attributes.resource) details.kind = attributes.resource
  }
  return new ApiError(403, 'Forbidden', forbiddenMessage(attributes, reason), details)
}
