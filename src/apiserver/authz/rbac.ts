// RBAC authorization, as Kubernetes' plugin/pkg/auth/authorizer/rbac does it: the rules of every
// ClusterRoleBinding that names the user apply everywhere; the rules of the RoleBindings in the
// request's namespace apply there only (a RoleBinding to a ClusterRole grants that role's rules in
// the binding's namespace). The first rule that allows the request decides; nothing here denies.
// Rules match as rbac's RuleAllows: verbs, apiGroups, resources (`pods/status` for a subresource,
// `*`, `*/status`), resourceNames, and nonResourceURLs (`*` as a suffix).
import {rbacGroup} from '../../api/rbac/shared.js'
import type {AnyObject, UserInfo} from '../../api/types.js'
import {goQuote} from '../../machinery/field-errors.js'
import type {FieldRequirement} from '../../machinery/fields.js'
import type {ResourceRegistry} from '../registry.js'

// ---------------------------------------------------------------------------------------- attributes

export type Decision = 'allow' | 'deny' | 'no-opinion'

/** What is being asked, by whom: Kubernetes' authorizer.Attributes. */
export interface AuthorizationAttributes {
  user: UserInfo
  verb: string
  isResourceRequest: boolean
  /** '' for the core group */
  apiGroup?: string
  apiVersion?: string
  /** plural resource, without the subresource */
  resource?: string
  subresource?: string
  /** '' or absent for cluster-scoped requests (and for namespaced lists across all namespaces) */
  namespace?: string
  name?: string
  /** the requirements of a list, watch or deletecollection's field selector (none when it did not
   *  parse), as Kubernetes' AuthorizeWithSelectors hands them to authorizers */
  fieldSelector?: readonly FieldRequirement[]
  /** the URL path of a non-resource request */
  path?: string
}

export interface AuthorizationResult {
  decision: Decision
  /** why; '' when the authorizer has nothing to say */
  reason: string
  /** the authorizer could not evaluate the request (Kubernetes' returned error) */
  error?: string
}

/** A rule as a rules review reports it (Kubernetes' ResourceRuleInfo / NonResourceRuleInfo). */
export interface ResourceRuleInfo {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
}

export interface NonResourceRuleInfo {
  verbs: string[]
  nonResourceURLs?: string[]
}

/** Kubernetes' RuleResolver answer: the rules a user has in a namespace, whether the list may miss
 *  some, and the errors met on the way. */
export interface ResolvedRules {
  resourceRules: ResourceRuleInfo[]
  nonResourceRules: NonResourceRuleInfo[]
  incomplete: boolean
  errors: string[]
}

/** One link of the chain: Node, RBAC, … Those that can also list a user's rules (Kubernetes'
 *  RuleResolver) answer SelfSubjectRulesReviews through resolveRules. */
export interface AttributeAuthorizer {
  authorize(attributes: AuthorizationAttributes): AuthorizationResult
  resolveRules?(user: UserInfo, namespace: string): ResolvedRules
}

// ------------------------------------------------------------------------------------------- rules

export interface PolicyRule {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
  nonResourceURLs?: string[]
}

export const ALL = '*'

/** A rule's string list (verbs, apiGroups, ...): what is not a string is no entry. */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return stringList(rule.verbs).some((v) => v === ALL || v === verb)
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return stringList(rule.apiGroups).some((g) => g === ALL || g === group)
}

// `combined` is `resource` or `resource/subresource`; a rule's `*/sub` matches any resource's sub.
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of stringList(rule.resources)) {
    if (r === ALL || r === combined) return true
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true
  }
  return false
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = stringList(rule.resourceNames)
  return names.length === 0 || names.includes(name)
}

// `*` matches every path; `/apis/*` every path starting `/apis/` (trailing stars trimmed).
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const url of stringList(rule.nonResourceURLs)) {
    if (url === ALL || url === path) return true
    if (url.endsWith('*') && path.startsWith(url.replace(/\*+$/, ''))) return true
  }
  return false
}

/** rbac's RuleAllows. */
export function ruleAllows(attributes: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attributes.verb)) return false
  if (!attributes.isResourceRequest) return nonResourceURLMatches(rule, attributes.path ?? '')
  const subresource = attributes.subresource ?? ''
  const resource = attributes.resource ?? ''
  const combined = subresource ? `${resource}/${subresource}` : resource
  return (
    apiGroupMatches(rule, attributes.apiGroup ?? '') &&
    resourceMatches(rule, combined, subresource) &&
    resourceNameMatches(rule, attributes.name ?? '')
  )
}

/** rbac's RulesAllow: does any of the rules allow the request? */
export function rulesAllow(attributes: AuthorizationAttributes, rules: readonly PolicyRule[]): boolean {
  return rules.some((rule) => ruleAllows(attributes, rule))
}

// ----------------------------------------------------------------------------------------- subjects

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:'

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`
}

/** Kubernetes' appliesToUser. A ServiceAccount subject without a namespace takes the binding's. */
export function subjectAppliesTo(user: UserInfo, subject: AnyObject, namespace: string): boolean {
  switch (subject?.kind) {
    case 'User':
      return user.username === subject.name
    case 'Group':
      return (user.groups ?? []).includes(subject.name)
    case 'ServiceAccount': {
      const saNamespace = subject.namespace || namespace
      if (!saNamespace) return false
      return user.username === serviceAccountUsername(saNamespace, subject.name ?? '')
    }
    default:
      return false
  }
}

function describeSubject(subject: AnyObject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') {
    return `${subject.kind} ${goQuote(`${subject.name ?? ''}/${subject.namespace || bindingNamespace}`)}`
  }
  return `${subject.kind} ${goQuote(subject.name ?? '')}`
}

/** Which binding, through which subject, granted a rule. */
export interface RuleSource {
  kind: 'ClusterRoleBinding' | 'RoleBinding'
  binding: AnyObject
  subject: AnyObject
}

/** `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, `RoleBinding "x/ns" of Role "y" to User "u"`
 *  (Kubernetes' describers: a RoleBinding is named name/namespace). */
export function describeBinding(source: RuleSource): string {
  const {binding, subject} = source
  const name = binding.metadata?.name ?? ''
  const namespace = binding.metadata?.namespace ?? ''
  const ref = `${binding.roleRef?.kind ?? ''} ${goQuote(binding.roleRef?.name ?? '')}`
  if (source.kind === 'RoleBinding') {
    return `RoleBinding ${goQuote(`${name}/${namespace}`)} of ${ref} to ${describeSubject(subject, namespace)}`
  }
  return `ClusterRoleBinding ${goQuote(name)} of ${ref} to ${describeSubject(subject, '')}`
}

// ------------------------------------------------------------------------------------------- source

/** Where the authorizer reads roles and bindings from. The optional getters are fast paths. */
export interface RBACSource {
  roles(namespace: string): AnyObject[]
  clusterRoles(): AnyObject[]
  roleBindings(namespace: string): AnyObject[]
  clusterRoleBindings(): AnyObject[]
  role?(namespace: string, name: string): AnyObject | undefined
  clusterRole?(name: string): AnyObject | undefined
}

/** A source over fixed objects (Role, ClusterRole, RoleBinding, ClusterRoleBinding, by `kind`). */
export function staticSource(objects: readonly AnyObject[]): RBACSource {
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind)
  const inNamespace = (kind: string, namespace: string) => ofKind(kind).filter((o) => (o.metadata?.namespace ?? '') === namespace)
  return {
    roles: (namespace) => inNamespace('Role', namespace),
    clusterRoles: () => ofKind('ClusterRole'),
    roleBindings: (namespace) => inNamespace('RoleBinding', namespace),
    clusterRoleBindings: () => ofKind('ClusterRoleBinding'),
  }
}

/** The part of a ResourceRegistry the source reads: its declaration and its watch cache. */
export type CachedRegistry = Pick<ResourceRegistry, 'declaration' | 'cache' | 'key'>

interface Index {
  all: AnyObject[]
  byNamespace: Map<string, AnyObject[]>
}

/** Objects of one registry's watch cache, grouped by namespace; rebuilt only when its objects changed
 *  (not when the store's revision moved for a write elsewhere: on SQLite every commit moves every cache). */
function cacheIndex(registry: CachedRegistry): () => Index {
  let changes = -1
  let index: Index = {all: [], byNamespace: new Map()}
  return () => {
    const cache = registry.cache
    if (cache.changes === changes) return index
    const all: AnyObject[] = []
    const byNamespace = new Map<string, AnyObject[]>()
    for (const {object} of cache.list().items) {
      all.push(object)
      const namespace = object.metadata?.namespace ?? ''
      const bucket = byNamespace.get(namespace)
      if (bucket) bucket.push(object)
      else byNamespace.set(namespace, [object])
    }
    changes = cache.changes
    index = {all, byNamespace}
    return index
  }
}

/** A source over the four rbac registries' watch caches: decisions cost no storage reads. The
 *  caches must be started (the server starts every registry's cache before it serves). Objects are
 *  the cache's own: read them, never change them. */
export function registrySource(registries: Iterable<CachedRegistry> | ReadonlyMap<unknown, CachedRegistry>): RBACSource {
  const all: CachedRegistry[] = [...(registries instanceof Map ? registries.values() : (registries as Iterable<CachedRegistry>))]
  const find = (resource: string): CachedRegistry => {
    const registry = all.find((r) => r.declaration.group === rbacGroup && r.declaration.resource === resource)
    if (!registry) throw new Error(`no registry for ${resource}.${rbacGroup}`)
    return registry
  }
  const roles = find('roles')
  const clusterRoles = find('clusterroles')
  const roleIndex = cacheIndex(roles)
  const clusterRoleIndex = cacheIndex(clusterRoles)
  const roleBindingIndex = cacheIndex(find('rolebindings'))
  const clusterRoleBindingIndex = cacheIndex(find('clusterrolebindings'))
  return {
    roles: (namespace) => roleIndex().byNamespace.get(namespace) ?? [],
    clusterRoles: () => clusterRoleIndex().all,
    roleBindings: (namespace) => roleBindingIndex().byNamespace.get(namespace) ?? [],
    clusterRoleBindings: () => clusterRoleBindingIndex().all,
    role: (namespace, name) => roles.cache.get(roles.key(namespace, name))?.object,
    clusterRole: (name) => clusterRoles.cache.get(clusterRoles.key('', name))?.object,
  }
}

// --------------------------------------------------------------------------------------- authorizer

/** Called for each rule in turn (or with an error when a role cannot be resolved); false stops. */
export type RuleVisitor = (source: RuleSource | undefined, rule: PolicyRule | undefined, error: string | undefined) => boolean

/** utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets. */
function aggregate(messages: string[]): string {
  if (messages.length === 1) return messages[0]
  const unique = [...new Set(messages)]
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`
}

/** How a missing role reads: as the authorizer's listers say it (`role.rbac.orch.io "x" not found`)
 *  or as the registry does (`roles.rbac.orch.io "x" not found`), which the escalation checks use. */
export type NotFoundStyle = 'lister' | 'registry'

export class RBACAuthorizer implements AttributeAuthorizer {
  constructor(
    readonly source: RBACSource,
    private readonly notFoundStyle: NotFoundStyle = 'lister',
  ) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationResult {
    let allowedBy: string | undefined
    const errors: string[] = []
    this.visitRulesFor(attributes.user, attributes.namespace ?? '', (source, rule, error) => {
      if (rule && source && ruleAllows(attributes, rule)) {
        allowedBy = describeBinding(source)
        return false
      }
      if (error) errors.push(error)
      return true
    })
    if (allowedBy !== undefined) return {decision: 'allow', reason: `RBAC: allowed by ${allowedBy}`}
    return {decision: 'no-opinion', reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : ''}
  }

  /** The rules that apply to the user in the namespace ('' = cluster-wide only), with resolution
   *  errors (Kubernetes' RulesFor, for rules reviews). */
  rulesFor(user: UserInfo, namespace: string): {rules: PolicyRule[]; errors: string[]} {
    const rules: PolicyRule[] = []
    const errors: string[] = []
    this.visitRulesFor(user, namespace, (_source, rule, error) => {
      if (rule) rules.push(rule)
      if (error) errors.push(error)
      return true
    })
    return {rules, errors}
  }

  /** Kubernetes' RBACAuthorizer.RulesFor: each rule with resources as a resource rule, each with
   *  nonResourceURLs as a non-resource rule (a rule with both is both); never incomplete. */
  resolveRules(user: UserInfo, namespace: string): ResolvedRules {
    const {rules, errors} = this.rulesFor(user, namespace)
    const resourceRules: ResourceRuleInfo[] = []
    const nonResourceRules: NonResourceRuleInfo[] = []
    for (const rule of rules) {
      const verbs = stringList(rule.verbs)
      if (stringList(rule.resources).length > 0) {
        const info: ResourceRuleInfo = {verbs}
        if (stringList(rule.apiGroups).length > 0) info.apiGroups = stringList(rule.apiGroups)
        info.resources = stringList(rule.resources)
        if (stringList(rule.resourceNames).length > 0) info.resourceNames = stringList(rule.resourceNames)
        resourceRules.push(info)
      }
      if (stringList(rule.nonResourceURLs).length > 0) nonResourceRules.push({verbs, nonResourceURLs: stringList(rule.nonResourceURLs)})
    }
    // the visitor's errors as one aggregate (Kubernetes' NewAggregate), kept apart for the union to flatten
    return {resourceRules, nonResourceRules, incomplete: false, errors: [...new Set(errors)]}
  }

  /** Kubernetes' VisitRulesFor: ClusterRoleBindings first, then the namespace's RoleBindings. */
  visitRulesFor(user: UserInfo, namespace: string, visitor: RuleVisitor): void {
    for (const binding of this.source.clusterRoleBindings()) {
      const subject = appliesTo(user, binding.subjects, '')
      if (!subject) continue
      const resolved = this.roleReferenceRules(binding.roleRef, '')
      if (typeof resolved === 'string') {
        if (!visitor(undefined, undefined, resolved)) return
        continue
      }
      const source: RuleSource = {kind: 'ClusterRoleBinding', binding, subject}
      for (const rule of resolved) if (!visitor(source, rule, undefined)) return
    }
    if (!namespace) return
    for (const binding of this.source.roleBindings(namespace)) {
      const subject = appliesTo(user, binding.subjects, namespace)
      if (!subject) continue
      const resolved = this.roleReferenceRules(binding.roleRef, namespace)
      if (typeof resolved === 'string') {
        if (!visitor(undefined, undefined, resolved)) return
        continue
      }
      const source: RuleSource = {kind: 'RoleBinding', binding, subject}
      for (const rule of resolved) if (!visitor(source, rule, undefined)) return
    }
  }

  /** The rules a roleRef names, or the error Kubernetes' GetRoleReferenceRules returns. */
  roleReferenceRules(roleRef: AnyObject | undefined, bindingNamespace: string): PolicyRule[] | string {
    const name = roleRef?.name ?? ''
    switch (roleRef?.kind) {
      case 'Role': {
        const role = this.source.role
          ? this.source.role(bindingNamespace, name)
          : this.source.roles(bindingNamespace).find((r) => r.metadata?.name === name)
        if (!role) return `${this.notFoundStyle === 'lister' ? 'role' : 'roles'}.${rbacGroup} ${goQuote(name)} not found`
        return rulesOf(role)
      }
      case 'ClusterRole': {
        const role = this.source.clusterRole ? this.source.clusterRole(name) : this.source.clusterRoles().find((r) => r.metadata?.name === name)
        if (!role) return `${this.notFoundStyle === 'lister' ? 'clusterrole' : 'clusterroles'}.${rbacGroup} ${goQuote(name)} not found`
        return rulesOf(role)
      }
      default:
        return `unsupported role reference kind: ${goQuote(String(roleRef?.kind ?? ''))}`
    }
  }
}

/** A role's rules, what is not an object left out. */
export function rulesOf(role: AnyObject): PolicyRule[] {
  return Array.isArray(role.rules) ? role.rules.filter((r: unknown) => r && typeof r === 'object') : []
}

function appliesTo(user: UserInfo, subjects: unknown, namespace: string): AnyObject | undefined {
  if (!Array.isArray(subjects)) return undefined
  return subjects.find((s) => s && typeof s === 'object' && subjectAppliesTo(user, s, namespace))
}
