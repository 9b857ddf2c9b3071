// Authorization of a request: after authentication, before anything is served. `--authorization-mode`
// picks the chain: Node,RBAC (default, Kubernetes' own default for kubeadm clusters) or AlwaysAllow.
// A denial becomes Kubernetes' 403 Forbidden naming user, verb, resource and subresource; an
// authorizer that fails with nothing allowing the request is a 500, as Kubernetes' WithAuthorization.
import type {UserInfo} from '../api/types.js'
import {ApiError, errors} from '../machinery/status.js'
import {Authorizer, attributesFor, forbiddenError, MASTERS_GROUP, NodeAuthorizer, RBACAuthorizer, type AttributeAuthorizer, type AuthorizationResult, type NodeGraph, type RBACSource} from './authz/index.js'
import type {RequestInfo} from './requestinfo.js'

export const AUTHORIZATION_MODES = ['Node', 'RBAC', 'AlwaysAllow'] as const
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number]
export const DEFAULT_AUTHORIZATION_MODES: readonly AuthorizationMode[] = ['Node', 'RBAC']

/** Parses --authorization-mode (comma list, order kept). */
export function parseAuthorizationModes(text: string): AuthorizationMode[] {
  const modes = text.split(',').map((s) => s.trim()).filter(Boolean)
  if (modes.length === 0) throw new Error('--authorization-mode: at least one mode is required')
  for (const mode of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) {
      throw new Error(`--authorization-mode: unknown mode "${mode}" (known: ${AUTHORIZATION_MODES.join(', ')})`)
    }
  }
  if (new Set(modes).size !== modes.length) throw new Error('--authorization-mode: a mode is listed twice')
  return modes as AuthorizationMode[]
}

const alwaysAllow: AttributeAuthorizer = {
  authorize: (): AuthorizationResult => ({decision: 'allow', reason: ''}),
  // Kubernetes' alwaysAllowAuthorizer.RulesFor: everything
  resolveRules: () => ({
    resourceRules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*']}],
    nonResourceRules: [{verbs: ['*'], nonResourceURLs: ['*']}],
    incomplete: false,
    errors: [],
  }),
}

/** Kubernetes' superuser group (system:masters): kube-apiserver puts an authorizer allowing it before
 *  the chosen modes (authorizerfactory.NewPrivilegedGroups), so its members are never checked against RBAC. */
const privilegedGroups: AttributeAuthorizer = {
  authorize: (attributes): AuthorizationResult =>
    attributes.user.groups?.includes(MASTERS_GROUP) ? {decision: 'allow', reason: ''} : {decision: 'no-opinion', reason: ''},
}

/** The chain for the given modes over the server's RBAC objects and pods, after the privileged group. */
export function buildAuthorizer(modes: readonly AuthorizationMode[], source: RBACSource, graph: NodeGraph): Authorizer {
  return new Authorizer([
    privilegedGroups,
    ...modes.map((mode) => (mode === 'Node' ? new NodeAuthorizer(graph) : mode === 'RBAC' ? new RBACAuthorizer(source) : alwaysAllow)),
  ])
}

/** What the server asks per request: nothing when allowed, else the error to answer with. With
 *  `annotations` it also records the decision and the authorizer's reason for the audit log, as
 *  Kubernetes' WithAuthorization does (`authorization.orch.io/decision`: allow or forbid;
 *  `authorization.orch.io/reason`: the reason alone, "internal error" when the authorizer failed). */
export type RequestAuthorizer = (user: UserInfo, info: RequestInfo, annotations?: Record<string, string>) => ApiError | undefined

export const DECISION_ANNOTATION = 'authorization.orch.io/decision'
export const REASON_ANNOTATION = 'authorization.orch.io/reason'

export function requestAuthorizer(authorizer: Pick<Authorizer, 'authorize'>): RequestAuthorizer {
  return (user, info, annotations) => {
    const attributes = attributesFor(user, info)
    const decision = authorizer.authorize(attributes)
    if (decision.decision === 'allow') {
      if (annotations) {
        annotations[DECISION_ANNOTATION] = 'allow'
        annotations[REASON_ANNOTATION] = decision.reason
      }
      return undefined
    }
    if (decision.error && !decision.reason) {
      if (annotations) annotations[REASON_ANNOTATION] = 'internal error'
      return errors.internal(`Internal error occurred: ${decision.error}`)
    }
    if (annotations) {
      annotations[DECISION_ANNOTATION] = 'forbid'
      annotations[REASON_ANNOTATION] = decision.reason
    }
    return forbiddenError(attributes, decision.reason)
  }
}

/** Allows everything (AlwaysAllow alone, and servers built without a chain in unit tests). */
export const allowAll: RequestAuthorizer = (_user, _info, annotations) => {
  if (annotations) {
    annotations[DECISION_ANNOTATION] = 'allow'
    annotations[REASON_ANNOTATION] = ''
  }
  return undefined
}
