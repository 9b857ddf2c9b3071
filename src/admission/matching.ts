// Which requests a webhook or an admission policy (and its binding) sees, as Kubernetes'
// admission/plugin/webhook/predicates and the policy matcher decide it: rules (operations, groups,
// versions, resources with subresource forms, scope, resourceNames), excluded rules, the namespace
// selector (a Namespace is matched by its own labels) and the object selector (old or new object).
import type {AnyObject} from '../api/types.js'
import {labelSelectorFromObject, type LabelSelectorObject} from '../machinery/labels.js'
import type {AdmissionAttributes} from './types.js'

export interface Rule {
  operations?: string[]
  apiGroups?: string[]
  apiVersions?: string[]
  resources?: string[]
  resourceNames?: string[]
  scope?: string
}

export interface MatchResources {
  resourceRules?: Rule[]
  excludeResourceRules?: Rule[]
  namespaceSelector?: AnyObject
  objectSelector?: AnyObject
  matchPolicy?: string
}

function listOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

function anyOrExact(values: string[], value: string): boolean {
  return values.some((v) => v === '*' || v === value)
}

/** `pods` matches the resource, `pods/status` a subresource, `*` every resource (no subresources),
 *  `pods/*` every subresource of pods, `*\/scale` every scale subresource, `*\/*` everything. */
export function resourceMatches(patterns: string[], resource: string, subresource: string): boolean {
  const wanted = subresource ? `${resource}/${subresource}` : resource
  for (const pattern of patterns) {
    if (pattern === '*/*' || pattern === wanted) return true
    if (pattern === '*' && !subresource) return true
    const [res, sub] = pattern.split('/', 2)
    if (sub === undefined) continue
    if (res === '*' && sub === subresource && subresource) return true
    if (sub === '*' && res === resource && subresource) return true
  }
  return false
}

function scopeMatches(scope: string | undefined, attributes: AdmissionAttributes): boolean {
  if (!scope || scope === '*') return true
  // a namespace is cluster-scoped; subresources take their parent's scope
  const namespaced = attributes.declaration.namespaced
  return scope === 'Namespaced' ? namespaced : !namespaced
}

/** One rule against a request. `*` on operations means every operation (also future ones). */
export function ruleMatches(rule: Rule, attributes: AdmissionAttributes, withNames = true): boolean {
  const {group, version, resource} = attributes.resource
  if (!anyOrExact(listOf(rule.operations), attributes.operation)) return false
  if (!anyOrExact(listOf(rule.apiGroups), group)) return false
  if (!anyOrExact(listOf(rule.apiVersions), version)) return false
  if (!resourceMatches(listOf(rule.resources), resource, attributes.subresource)) return false
  if (!scopeMatches(rule.scope, attributes)) return false
  const names = listOf(rule.resourceNames)
  if (withNames && names.length > 0 && !names.includes(attributes.name)) return false
  return true
}

function isEmptySelector(selector: AnyObject): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0
}

function labelsOf(object: AnyObject | null): Record<string, string> | undefined {
  const labels = object?.metadata?.labels
  return labels && typeof labels === 'object' ? labels : undefined
}

/** The object selector: true when either the new or the old object matches; a request without
 *  objects (or with objects that carry no metadata) does not match a non-empty selector. */
export function objectSelectorMatches(selector: AnyObject | undefined, attributes: AdmissionAttributes): boolean {
  if (selector === undefined || selector === null || isEmptySelector(selector)) return true
  const compiled = labelSelectorFromObject(selector as LabelSelectorObject)
  const candidates = [attributes.object, attributes.oldObject].filter((o): o is AnyObject => o !== null && typeof o === 'object')
  return candidates.some((o) => compiled.matches(labelsOf(o) ?? {}))
}

/** The namespace a policy works in: the request's, except for a Namespace, which Kubernetes admits in
 *  its own name but whose policies see no namespace (its params are looked up as cluster-wide). */
export function policyNamespace(attributes: AdmissionAttributes): string {
  const {group, resource} = attributes.resource
  return group === '' && resource === 'namespaces' ? '' : attributes.namespace
}

/** The namespace selector: a Namespace is matched by its own labels, other cluster-scoped objects
 *  always match, namespaced objects by their namespace's labels. */
export async function namespaceSelectorMatches(selector: AnyObject | undefined, attributes: AdmissionAttributes): Promise<boolean> {
  if (selector === undefined || selector === null || isEmptySelector(selector)) return true
  const compiled = labelSelectorFromObject(selector as LabelSelectorObject)
  const {group, resource} = attributes.resource
  if (group === '' && resource === 'namespaces') {
    return compiled.matches(labelsOf(attributes.object) ?? labelsOf(attributes.oldObject) ?? {})
  }
  if (!attributes.declaration.namespaced) return true
  const namespace = await attributes.namespaceObject()
  return compiled.matches(labelsOf(namespace) ?? {})
}

/** MatchResources: some included rule matches, no excluded one does, and both selectors match.
 *  `requireRules`: an absent resourceRules list matches nothing (policies) rather than everything
 *  (bindings, whose matchResources only narrows the policy's). */
export async function matchResources(match: MatchResources | undefined, attributes: AdmissionAttributes, requireRules: boolean): Promise<boolean> {
  if (!match) return !requireRules
  const included = match.resourceRules ?? []
  if (included.length === 0 ? requireRules : !included.some((rule) => ruleMatches(rule, attributes))) return false
  if ((match.excludeResourceRules ?? []).some((rule) => ruleMatches(rule, attributes))) return false
  if (!objectSelectorMatches(match.objectSelector, attributes)) return false
  return namespaceSelectorMatches(match.namespaceSelector, attributes)
}
