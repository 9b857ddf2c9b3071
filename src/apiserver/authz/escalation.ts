// RBAC's privilege-escalation prevention, as Kubernetes' policybased storages for roles,
// clusterroles, rolebindings and clusterrolebindings (pkg/registry/rbac) make it: a user may only
// write a role whose rules he already holds, and only bind a role whose rules he holds, unless he
// is in system:masters, has `escalate` on the role resource (roles) or `bind` on the role named
// (bindings). It runs in the registry, after mutating admission and before validation, so every
// write path (PUT, every patch, server-side apply, dry runs) goes through it.
import {rbacGroup} from '../../api/rbac/shared.js'
import type {AnyObject, RequestContext, UserInfo} from '../../api/types.js'
import {goQuote} from '../../machinery/field-errors.js'
import {ApiError, errors, type GroupResource} from '../../machinery/status.js'
import {semanticEqual} from '../validation/common.js'
import {describeMissingRules, covers, goQuotedList} from './coverage.js'
import {MASTERS_GROUP} from './defaults.js'
import {rulesOf, type AuthorizationAttributes, type PolicyRule, type RBACAuthorizer} from './rbac.js'

/** What the checks ask: the server's authorizer chain, and a rule resolver over the RBAC objects. */
export interface EscalationDependencies {
  authorize(attributes: AuthorizationAttributes): {decision: string}
  /** an RBACAuthorizer whose role-not-found errors read as the registry's ('registry' style) */
  resolver: RBACAuthorizer
}

/** The write being checked: the request's context and the name in its URL ('' for a POST). */
export interface EscalationWrite {
  context: RequestContext
  name: string
}

export type RBACWriteCheck = (object: AnyObject, old: AnyObject | undefined, write: EscalationWrite) => void

/** EscalationAllowed: system:masters may grant anything. */
export function escalationAllowed(user: UserInfo): boolean {
  return (user.groups ?? []).includes(MASTERS_GROUP)
}

/** RoleEscalationAuthorized: the `escalate` verb on the role resource being written. */
export function roleEscalationAuthorized(deps: EscalationDependencies, user: UserInfo, resource: string, namespace: string, name: string): boolean {
  const attributes: AuthorizationAttributes = {user, verb: 'escalate', isResourceRequest: true, apiGroup: rbacGroup, apiVersion: '*', resource, namespace, name}
  return deps.authorize(attributes).decision === 'allow'
}

/** BindingAuthorized: the `bind` verb on the role a binding refers to, in the binding's namespace. */
export function bindingAuthorized(deps: EscalationDependencies, user: UserInfo, roleRef: AnyObject, namespace: string): boolean {
  const resource = roleRef?.kind === 'ClusterRole' ? 'clusterroles' : roleRef?.kind === 'Role' ? 'roles' : undefined
  if (!resource) return false
  const attributes: AuthorizationAttributes = {user, verb: 'bind', isResourceRequest: true, apiGroup: String(roleRef.apiGroup ?? ''), resource, namespace, name: String(roleRef.name ?? '')}
  return deps.authorize(attributes).decision === 'allow'
}

/** ConfirmNoEscalation: undefined when the user's rules in the namespace cover `rules`, else why not. */
export function confirmNoEscalation(resolver: RBACAuthorizer, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const {rules: owned, errors: resolution} = resolver.rulesFor(user, namespace)
  const {covered, missing} = covers(owned, rules)
  if (covered) return undefined
  const groups = goQuotedList(user.groups ?? [])
  let message = `user ${goQuote(user.username)} (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${describeMissingRules(missing)}`
  if (resolution.length > 0) {
    // a []error printed with %v holding the resolver's aggregate: `[a]`, `[[a, b]]`
    const unique = [...new Set(resolution)]
    const aggregate = unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`
    message += `; resolution errors: [${aggregate}]`
  }
  return message
}

/** IsOnlyMutatingGCFields: an update that changes only ownerReferences and finalizers (and what
 *  the server keeps itself) needs no check, so the garbage collector can always finish a deletion. */
export function isOnlyMutatingGCFields(object: AnyObject, old: AnyObject | undefined): boolean {
  if (!old) return false
  const strip = (o: AnyObject) => {
    const {ownerReferences: _o, finalizers: _f, selfLink: _s, managedFields: _m, ...metadata} = o.metadata ?? {}
    return {...o, metadata}
  }
  return semanticEqual(strip(object), strip(old))
}

function hasAggregationRule(role: AnyObject | undefined): boolean {
  const selectors = role?.aggregationRule?.clusterRoleSelectors
  return Array.isArray(selectors) && selectors.length > 0
}

const FULL_AUTHORITY: PolicyRule[] = [
  {verbs: ['*'], apiGroups: ['*'], resources: ['*']},
  {verbs: ['*'], nonResourceURLs: ['*']},
]

const resources = {
  roles: {group: rbacGroup, resource: 'roles'},
  clusterroles: {group: rbacGroup, resource: 'clusterroles'},
  rolebindings: {group: rbacGroup, resource: 'rolebindings'},
  clusterrolebindings: {group: rbacGroup, resource: 'clusterrolebindings'},
} satisfies Record<string, GroupResource>

/** The user of a write, or undefined for the server's own writes (bootstrap, controllers), which
 *  carry none and are not checked. */
function writer(write: EscalationWrite): UserInfo | undefined {
  return write.context.user
}

function namespaceOf(object: AnyObject): string {
  return object.metadata?.namespace ?? ''
}

/** The check of a Role or ClusterRole write. */
function roleCheck(deps: EscalationDependencies, kind: 'Role' | 'ClusterRole'): RBACWriteCheck {
  const gr = kind === 'Role' ? resources.roles : resources.clusterroles
  return (object, old, write) => {
    const user = writer(write)
    if (!user || escalationAllowed(user)) return
    const namespace = kind === 'Role' ? namespaceOf(object) : ''
    if (roleEscalationAuthorized(deps, user, gr.resource, namespace, write.name)) return
    if (isOnlyMutatingGCFields(object, old)) return
    const name = object.metadata?.name ?? ''
    const denied = confirmNoEscalation(deps.resolver, user, namespace, rulesOf(object))
    if (denied) throw errors.forbidden(gr, name, denied)
    // an aggregationRule gathers anything: setting one, or changing a role that has one, needs * on *.*
    if (kind === 'ClusterRole' && (hasAggregationRule(object) || hasAggregationRule(old))) {
      if (confirmNoEscalation(deps.resolver, user, namespace, FULL_AUTHORITY)) {
        throw errors.forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule')
      }
    }
  }
}

/** The rules a binding's roleRef names, or the registry's error for it (404 for a missing role,
 *  an unknown kind as the plain error Kubernetes answers with a 500). */
function referencedRules(deps: EscalationDependencies, roleRef: AnyObject | undefined, namespace: string): PolicyRule[] {
  const kind = roleRef?.kind
  const name = String(roleRef?.name ?? '')
  if (kind !== 'Role' && kind !== 'ClusterRole') {
    throw new ApiError(500, '', `unsupported role reference kind: ${goQuote(String(kind ?? ''))}`)
  }
  const resolved = deps.resolver.roleReferenceRules(roleRef, namespace)
  if (typeof resolved === 'string') throw errors.notFound(kind === 'Role' ? resources.roles : resources.clusterroles, name)
  return resolved
}

/** The check of a RoleBinding or ClusterRoleBinding write. */
function bindingCheck(deps: EscalationDependencies, kind: 'RoleBinding' | 'ClusterRoleBinding'): RBACWriteCheck {
  const gr = kind === 'RoleBinding' ? resources.rolebindings : resources.clusterrolebindings
  return (object, old, write) => {
    const user = writer(write)
    if (!user || escalationAllowed(user)) return
    if (isOnlyMutatingGCFields(object, old)) return
    const namespace = kind === 'RoleBinding' ? namespaceOf(object) : ''
    if (bindingAuthorized(deps, user, object.roleRef, namespace)) return
    const rules = referencedRules(deps, object.roleRef, namespace)
    const denied = confirmNoEscalation(deps.resolver, user, namespace, rules)
    if (denied) throw errors.forbidden(gr, object.metadata?.name ?? '', denied)
  }
}

/** The check for each rbac kind, by kind. */
export function rbacWriteChecks(deps: EscalationDependencies): Record<'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding', RBACWriteCheck> {
  return {
    Role: roleCheck(deps, 'Role'),
    ClusterRole: roleCheck(deps, 'ClusterRole'),
    RoleBinding: bindingCheck(deps, 'RoleBinding'),
    ClusterRoleBinding: bindingCheck(deps, 'ClusterRoleBinding'),
  }
}
