// Role, ClusterRole, RoleBinding, ClusterRoleBinding (rbac.orch.io/v1): Kubernetes' rbac validation
// (pkg/apis/rbac/validation), besides the object metadata the registry checks:
//   - a rule needs verbs; nonResourceURLs only in ClusterRoles and never with apiGroups, resources or
//     resourceNames; a resource rule needs apiGroups and resources;
//   - a ClusterRole's aggregationRule needs at least one clusterRoleSelector, each a valid selector;
//   - a binding's roleRef: apiGroup rbac.orch.io, kind Role or ClusterRole (ClusterRole only in a
//     ClusterRoleBinding), a name that is a path segment; it never changes on update;
//   - subjects: User / Group (apiGroup rbac.orch.io) or ServiceAccount (core group, a DNS subdomain
//     name, a namespace in a ClusterRoleBinding), each with a name.
import {rbacGroup} from '../../api/rbac/shared.js'
import type {AnyObject, FieldError} from '../../api/types.js'
import {goQuote, GoSyntaxValue, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {isDNS1123Subdomain} from '../../machinery/validation.js'
import {isValidPathSegmentName, validateLabelSelectorField} from './admission-common.js'
import {list, obj, str, type KindValidator} from './common.js'

function strings(value: unknown): string[] {
  return list(value).filter((v): v is string => typeof v === 'string')
}

/** ValidatePolicyRule */
export function validatePolicyRule(raw: unknown, namespaced: boolean, path: string): FieldError[] {
  const rule = obj(raw)
  const errs: FieldError[] = []
  if (strings(rule.verbs).length === 0) errs.push(required(`${path}.verbs`, 'verbs must contain at least one value'))
  const urls = strings(rule.nonResourceURLs)
  if (urls.length > 0) {
    // an internal []string: Kubernetes prints it with %#v
    const value = new GoSyntaxValue(`[]string{${urls.map(goQuote).join(', ')}}`)
    if (namespaced) errs.push(invalid(`${path}.nonResourceURLs`, value, 'namespaced rules cannot apply to non-resource URLs'))
    if (list(rule.apiGroups).length > 0 || list(rule.resources).length > 0 || list(rule.resourceNames).length > 0) {
      errs.push(invalid(`${path}.nonResourceURLs`, value, 'rules cannot apply to both regular resources and non-resource URLs'))
    }
    return errs
  }
  if (list(rule.apiGroups).length === 0) errs.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'))
  if (list(rule.resources).length === 0) errs.push(required(`${path}.resources`, 'resource rules must supply at least one resource'))
  return errs
}

function validateRules(role: AnyObject, namespaced: boolean): FieldError[] {
  return list(role.rules).flatMap((rule, i) => validatePolicyRule(rule, namespaced, `rules[${i}]`))
}

function validateAggregationRule(role: AnyObject): FieldError[] {
  if (role.aggregationRule === undefined || role.aggregationRule === null) return []
  const selectors = list(obj(role.aggregationRule).clusterRoleSelectors)
  const path = 'aggregationRule.clusterRoleSelectors'
  if (selectors.length === 0) return [required(path, 'at least one clusterRoleSelector required if aggregationRule is non-nil')]
  return selectors.flatMap((selector, i) => validateLabelSelectorField(selector, `${path}[${i}]`))
}

/** Go's %#v of the internal rbac.RoleRef, as `cannot change roleRef` prints it. */
function roleRefValue(roleRef: AnyObject): GoSyntaxValue {
  return new GoSyntaxValue(`rbac.RoleRef{APIGroup:${goQuote(str(roleRef.apiGroup))}, Kind:${goQuote(str(roleRef.kind))}, Name:${goQuote(str(roleRef.name))}}`)
}

function validateSubject(raw: unknown, namespaced: boolean, path: string): FieldError[] {
  const subject = obj(raw)
  const errs: FieldError[] = []
  const name = str(subject.name)
  const apiGroup = str(subject.apiGroup)
  if (name === '') errs.push(required(`${path}.name`))
  switch (subject.kind) {
    case 'ServiceAccount':
      if (name !== '') for (const message of isDNS1123Subdomain(name)) errs.push(invalid(`${path}.name`, name, message))
      if (apiGroup !== '') errs.push(notSupported(`${path}.apiGroup`, apiGroup, ['']))
      if (!namespaced && str(subject.namespace) === '') errs.push(required(`${path}.namespace`))
      break
    case 'User':
    case 'Group':
      if (apiGroup !== rbacGroup) errs.push(notSupported(`${path}.apiGroup`, apiGroup, [rbacGroup]))
      break
    default:
      errs.push(notSupported(`${path}.kind`, str(subject.kind), ['ServiceAccount', 'User', 'Group']))
  }
  return errs
}

/** ValidateRoleBinding / ValidateClusterRoleBinding (namespaced = a RoleBinding). */
export function validateBinding(binding: AnyObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = []
  const roleRef = obj(binding.roleRef)
  const apiGroup = str(roleRef.apiGroup)
  if (apiGroup !== rbacGroup) errs.push(notSupported('roleRef.apiGroup', apiGroup, [rbacGroup]))
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole']
  if (!kinds.includes(str(roleRef.kind))) errs.push(notSupported('roleRef.kind', str(roleRef.kind), kinds))
  const name = str(roleRef.name)
  if (name === '') errs.push(required('roleRef.name'))
  else for (const message of isValidPathSegmentName(name)) errs.push(invalid('roleRef.name', name, message))
  list(binding.subjects).forEach((subject, i) => errs.push(...validateSubject(subject, namespaced, `subjects[${i}]`)))
  return errs
}

function roleRefChanged(binding: AnyObject, old: AnyObject): FieldError[] {
  const next = obj(binding.roleRef)
  const before = obj(old.roleRef)
  const same = (['apiGroup', 'kind', 'name'] as const).every((k) => str(next[k]) === str(before[k]))
  return same ? [] : [invalid('roleRef', roleRefValue(next), 'cannot change roleRef')]
}

export const roleValidator: KindValidator = {
  create: (role) => validateRules(role, true),
  update: (role) => validateRules(role, true),
}

export const clusterRoleValidator: KindValidator = {
  create: (role) => [...validateRules(role, false), ...validateAggregationRule(role)],
  update: (role) => [...validateRules(role, false), ...validateAggregationRule(role)],
}

export const roleBindingValidator: KindValidator = {
  create: (binding) => validateBinding(binding, true),
  update: (binding, old) => [...validateBinding(binding, true), ...roleRefChanged(binding, old)],
}

export const clusterRoleBindingValidator: KindValidator = {
  create: (binding) => validateBinding(binding, false),
  update: (binding, old) => [...validateBinding(binding, false), ...roleRefChanged(binding, old)],
}
