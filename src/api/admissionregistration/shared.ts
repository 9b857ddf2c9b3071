// Types shared by the admissionregistration kinds (document 3, "Shared admission types"), with the
// field numbers of admissionregistration/v1 generated.proto (v1beta1 uses the same messages and numbers).
//
// Go-embedded structs: NamedRuleWithOperations embeds RuleWithOperations, which embeds Rule. In JSON their
// fields sit inline in the outer object; in protobuf each is a nested message (field 2). Their fields are
// flattened here into the embedding struct, marked `embeddedIn` (see inline()).
import {labelSelector} from '../meta.js'
import type {ArraySchema, Field, ObjectSchema, TableColumn} from '../types.js'

export const admissionGroup = 'admissionregistration.orch.io'

export const failurePolicies = ['Ignore', 'Fail'] as const
export const matchPolicies = ['Exact', 'Equivalent'] as const
export const scopes = ['Cluster', 'Namespaced', '*'] as const
export const operations = ['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const
export const sideEffectClasses = ['Unknown', 'None', 'Some', 'NoneOnDryRun'] as const
export const reinvocationPolicies = ['Never', 'IfNeeded'] as const

function atomicStrings(proto: number, required = false): Field & ArraySchema {
  return {type: 'array', items: {type: 'string'}, proto, listType: 'atomic', ...(required ? {required: true} : {})}
}

export const serviceReference: ObjectSchema = {
  type: 'object',
  name: 'ServiceReference',
  fields: {
    namespace: {type: 'string', proto: 1, required: true},
    name: {type: 'string', proto: 2, required: true},
    path: {type: 'string', proto: 3},
    port: {type: 'integer', format: 'int32', proto: 4},
  },
}

export const webhookClientConfig: ObjectSchema = {
  type: 'object',
  name: 'WebhookClientConfig',
  fields: {
    url: {type: 'string', proto: 3},
    service: {...serviceReference, proto: 1},
    caBundle: {type: 'string', format: 'byte', proto: 2},
  },
}

/** The fields of `struct`, embedded (Go `json:",inline"`) at `proto` of the struct that spreads them: each
 *  marked embeddedIn that message, fields already embedded inside `struct` one step further in. */
function inline(proto: number, struct: ObjectSchema): Record<string, Field> {
  const out: Record<string, Field> = {}
  for (const [name, field] of Object.entries(struct.fields)) {
    const within = field.embeddedIn
    out[name] = {...field, embeddedIn: within ? {proto, name: struct.name, inner: within} : {proto, name: struct.name}}
  }
  return out
}

export const rule: ObjectSchema = {
  type: 'object',
  name: 'Rule',
  fields: {
    apiGroups: atomicStrings(1, true),
    apiVersions: atomicStrings(2, true),
    resources: atomicStrings(3, true),
    scope: {type: 'string', proto: 4, enum: scopes},
  },
}

/** RuleWithOperations (webhooks): operations plus an inline Rule. */
export const ruleWithOperations: ObjectSchema = {
  type: 'object',
  name: 'RuleWithOperations',
  fields: {
    operations: {type: 'array', items: {type: 'string', enum: operations}, proto: 1, listType: 'atomic', required: true},
    ...inline(2, rule),
  },
}

/** NamedRuleWithOperations (policies): resourceNames plus an inline RuleWithOperations. */
export const namedRuleWithOperations: ObjectSchema = {
  type: 'object',
  name: 'NamedRuleWithOperations',
  structType: 'atomic',
  fields: {
    resourceNames: atomicStrings(1),
    ...inline(2, ruleWithOperations),
  },
}

export const matchCondition: ObjectSchema = {
  type: 'object',
  name: 'MatchCondition',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    expression: {type: 'string', proto: 2, required: true},
  },
}

/** matchConditions: merged by name everywhere they appear */
export function matchConditionList(proto: number): Field & ArraySchema {
  return {type: 'array', items: matchCondition, proto, patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name']}
}

export const matchResources: ObjectSchema = {
  type: 'object',
  name: 'MatchResources',
  structType: 'atomic',
  fields: {
    namespaceSelector: {...labelSelector, proto: 1},
    objectSelector: {...labelSelector, proto: 2},
    resourceRules: {type: 'array', items: namedRuleWithOperations, proto: 3, listType: 'atomic'},
    excludeResourceRules: {type: 'array', items: namedRuleWithOperations, proto: 4, listType: 'atomic'},
    matchPolicy: {type: 'string', proto: 7, enum: matchPolicies},
  },
}

export const paramKind: ObjectSchema = {
  type: 'object',
  name: 'ParamKind',
  structType: 'atomic',
  fields: {
    apiVersion: {type: 'string', proto: 1},
    kind: {type: 'string', proto: 2},
  },
}

export const paramRef: ObjectSchema = {
  type: 'object',
  name: 'ParamRef',
  structType: 'atomic',
  fields: {
    name: {type: 'string', proto: 1},
    namespace: {type: 'string', proto: 2},
    selector: {...labelSelector, proto: 3},
    parameterNotFoundAction: {type: 'string', proto: 4, enum: ['Allow', 'Deny']},
  },
}

export const variable: ObjectSchema = {
  type: 'object',
  name: 'Variable',
  structType: 'atomic',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    expression: {type: 'string', proto: 2, required: true},
  },
}

// ---------- defaults (Kubernetes' SetDefaults_Rule, SetDefaults_MatchResources, SetDefaults_ServiceReference) ----------

/** Rule.scope defaults to `*`; `r` is a JSON rule (RuleWithOperations or NamedRuleWithOperations, Rule inline). */
export function defaultRule(r: any): void {
  if (r && typeof r === 'object') r.scope ??= '*'
}

/** MatchResources: matchPolicy Equivalent, empty selectors, rule scopes. */
export function defaultMatchResources(m: any): void {
  if (!m || typeof m !== 'object') return
  m.matchPolicy ??= 'Equivalent'
  m.namespaceSelector ??= {}
  m.objectSelector ??= {}
  for (const r of Array.isArray(m.resourceRules) ? m.resourceRules : []) defaultRule(r)
  for (const r of Array.isArray(m.excludeResourceRules) ? m.excludeResourceRules : []) defaultRule(r)
}

export function defaultServiceReference(s: any): void {
  if (s && typeof s === 'object') s.port ??= 443
}

// ---------- table cells (as kubectl's server-side printers compute them) ----------

/** Go's `%v` of a []string: `[a b]`. */
function goStrings(values: unknown): string {
  return `[${Array.isArray(values) ? values.join(' ') : ''}]`
}

/** The generated String() of a *metav1.LabelSelector, which the binding printers put in the ParamRef cell. */
export function goLabelSelectorString(selector: any): string {
  if (selector == null) return 'nil'
  const labels = selector.matchLabels ?? {}
  const keys = Object.keys(labels).sort()
  const labelText = keys.map((k) => `${k}: ${labels[k]},`).join('')
  const expressions = (Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [])
    .map((e: any) => `LabelSelectorRequirement{Key:${e?.key ?? ''},Operator:${e?.operator ?? ''},Values:${goStrings(e?.values)},},`)
    .join('')
  return `&LabelSelector{MatchLabels:map[string]string{${labelText}},MatchExpressions:[]LabelSelectorRequirement{${expressions}},}`
}

export function paramKindCell(kind: any): string {
  return kind ? `${kind.apiVersion ?? ''}/${kind.kind ?? ''}` : '<unset>'
}

export function paramRefCell(ref: any): string {
  if (!ref) return '<unset>'
  if (ref.name) return ref.namespace ? `${ref.namespace}/${ref.name}` : `*/${ref.name}`
  if (ref.selector) return goLabelSelectorString(ref.selector)
  return '<unset>'
}

export const paramKindColumn: TableColumn = {
  name: 'ParamKind',
  type: 'string',
  description: 'the kind of the resources that parameterize this policy',
  priority: 0,
  cell: (o) => paramKindCell(o.spec?.paramKind),
}

export const policyNameColumn: TableColumn = {
  name: 'PolicyName',
  type: 'string',
  description: 'the policy this binding binds',
  priority: 0,
  cell: (o) => o.spec?.policyName ?? '',
}

export const paramRefColumn: TableColumn = {
  name: 'ParamRef',
  type: 'string',
  description: 'the parameter resource(s) this binding configures the policy with',
  priority: 0,
  cell: (o) => paramRefCell(o.spec?.paramRef),
}
