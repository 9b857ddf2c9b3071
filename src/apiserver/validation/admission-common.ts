// Validation shared by the admissionregistration kinds (Kubernetes'
// pkg/apis/admissionregistration/validation): rules with their wildcard rules, match resources,
// match conditions, variables, param references. CEL expressions are checked by `compile`, which the
// server provides (the admission layer's CEL environment): a compile error, or a result of the wrong
// type, is a 422 naming the field.
import type {AnyObject, FieldError} from '../../api/types.js'
import {duplicate, forbidden, invalid, notSupported, required, tooMany} from '../../machinery/field-errors.js'
import {isDNS1035Label, isDNS1123Subdomain, isQualifiedName, validateLabelSelector} from '../../machinery/validation.js'
import {list, obj, str, stringMap} from './common.js'

/** What the expressions of a field may refer to, for the compiler. */
export interface ExpressionScope {
  /** 'matchCondition' | 'validation' | 'messageExpression' | 'auditAnnotation' | 'variable' | 'mutation' */
  kind: string
  /** the policy has a paramKind: `params` is declared */
  hasParams: boolean
  /** names of the variables declared so far (variables see only earlier ones) */
  variables: readonly string[]
}

/** Compile errors of one expression (empty: it compiles). An error of the result's type comes alone
 *  and starts with `must evaluate to ` (Kubernetes reports it as is, not as `compilation failed: `). */
export type ExpressionCompiler = (expression: string, scope: ExpressionScope) => string[]

const RESULT_TYPE_ERROR = 'must evaluate to '

export const MAX_MATCH_CONDITIONS = 64
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE']
const SCOPES = ['*', 'Cluster', 'Namespaced']

function wildcardAlone(values: string[], path: string, what: string): FieldError[] {
  return values.includes('*') && values.length > 1 ? [invalid(path, values, `if '*' is present, must not specify other ${what}`)] : []
}

/** Kubernetes' validateResources: wildcard entries must not overlap. */
export function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = []
  if (resources.length === 0) errs.push(required(path))
  const withWildcardSub = new Set<string>()
  const subWithWildcardResource = new Set<string>()
  let doubleWildcard = false
  let singleWildcard = false
  let plainResource = false
  resources.forEach((entry, i) => {
    if (entry === '') {
      errs.push(required(`${path}[${i}]`))
      return
    }
    if (entry === '*/*') doubleWildcard = true
    if (entry === '*') singleWildcard = true
    const slash = entry.indexOf('/')
    if (slash < 0) {
      plainResource = entry !== '*'
      return
    }
    const resource = entry.slice(0, slash)
    const sub = entry.slice(slash + 1)
    if (withWildcardSub.has(resource)) errs.push(invalid(`${path}[${i}]`, entry, `if '${resource}/*' is present, must not specify ${entry}`))
    if (subWithWildcardResource.has(sub)) errs.push(invalid(`${path}[${i}]`, entry, `if '*/${sub}' is present, must not specify ${entry}`))
    if (sub === '*') withWildcardSub.add(resource)
    if (resource === '*') subWithWildcardResource.add(sub)
  })
  if (resources.length > 1 && doubleWildcard) errs.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"))
  if (singleWildcard && plainResource) errs.push(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
  return errs
}

/** A RuleWithOperations (or NamedRuleWithOperations, `withNames`). `allowedOperations` narrows the
 *  operations (mutating policies: no DELETE). */
export function validateRule(raw: unknown, path: string, allowedOperations: readonly string[] = OPERATIONS): FieldError[] {
  const rule = obj(raw)
  const errs: FieldError[] = []
  const operations = list(rule.operations).map(String)
  if (operations.length === 0) errs.push(required(`${path}.operations`))
  errs.push(...wildcardAlone(operations, `${path}.operations`, 'operations'))
  operations.forEach((op, i) => {
    if (!allowedOperations.includes(op)) errs.push(notSupported(`${path}.operations[${i}]`, op, allowedOperations))
  })
  const groups = list(rule.apiGroups).map(String)
  if (groups.length === 0) errs.push(required(`${path}.apiGroups`))
  errs.push(...wildcardAlone(groups, `${path}.apiGroups`, 'API groups'))
  const versions = list(rule.apiVersions).map(String)
  if (versions.length === 0) errs.push(required(`${path}.apiVersions`))
  errs.push(...wildcardAlone(versions, `${path}.apiVersions`, 'API versions'))
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(`${path}.apiVersions[${i}]`))
  })
  errs.push(...validateResources(list(rule.resources).map(String), `${path}.resources`))
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(rule.scope)) errs.push(notSupported(`${path}.scope`, rule.scope, SCOPES))
  return errs
}

/** apimachinery's IsValidPathSegmentName (path.ValidatePathSegmentName without prefix). */
export function isValidPathSegmentName(name: string): string[] {
  for (const illegal of ['.', '..']) if (name === illegal) return [`may not be '${illegal}'`]
  return ['/', '%'].filter((illegal) => name.includes(illegal)).map((illegal) => `may not contain '${illegal}'`)
}

/** A NamedRuleWithOperations (policies): resourceNames each a path segment, not repeated, then the rule. */
export function validateNamedRule(raw: unknown, path: string, allowedOperations?: readonly string[]): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  list(obj(raw).resourceNames).forEach((value, i) => {
    const name = String(value)
    for (const message of isValidPathSegmentName(name)) errs.push(invalid(`${path}.resourceNames[${i}]`, name, message))
    if (seen.has(name)) errs.push(duplicate(`${path}.resourceNames[${i}]`, name))
    seen.add(name)
  })
  errs.push(...validateRule(raw, path, allowedOperations))
  return errs
}

/** A metav1.LabelSelector, each error on its own sub-field as Kubernetes' ValidateLabelSelector
 *  reports it (the shared validator of src/machinery/validation.ts). */
export function validateLabelSelectorField(raw: unknown, path: string): FieldError[] {
  if (raw === undefined || raw === null) return []
  const selector = obj(raw)
  return validateLabelSelector(
    {
      matchLabels: stringMap(selector.matchLabels),
      matchExpressions: list(selector.matchExpressions).map((e) => {
        const requirement = obj(e)
        return {key: str(requirement.key), operator: str(requirement.operator), values: list(requirement.values).map(String)}
      }),
    },
    path,
  )
}

/** MatchResources of a policy (`rulesRequired`) or of a binding. */
export function validateMatchResources(raw: unknown, path: string, rulesRequired: boolean, allowedOperations?: readonly string[]): FieldError[] {
  if (raw === undefined || raw === null) return rulesRequired ? [required(path)] : []
  const match = obj(raw)
  const errs: FieldError[] = []
  const rules = list(match.resourceRules)
  if (rulesRequired && rules.length === 0) errs.push(required(`${path}.resourceRules`))
  rules.forEach((r, i) => errs.push(...validateNamedRule(r, `${path}.resourceRules[${i}]`, allowedOperations)))
  list(match.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRule(r, `${path}.excludeResourceRules[${i}]`, allowedOperations)))
  if (match.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(match.matchPolicy)) {
    errs.push(notSupported(`${path}.matchPolicy`, match.matchPolicy, ['Equivalent', 'Exact']))
  }
  errs.push(...validateLabelSelectorField(match.namespaceSelector, `${path}.namespaceSelector`))
  errs.push(...validateLabelSelectorField(match.objectSelector, `${path}.objectSelector`))
  return errs
}

/** matchConditions: at most 64, names qualified and unique, expressions compile. */
export function validateMatchConditions(raw: unknown, path: string, compile: ExpressionCompiler | undefined, hasParams: boolean): FieldError[] {
  const conditions = list(raw)
  const errs: FieldError[] = []
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, conditions.length, MAX_MATCH_CONDITIONS))
  const seen = new Set<string>()
  conditions.forEach((c, i) => {
    const condition = obj(c)
    const name = str(condition.name)
    if (name === '') errs.push(required(`${path}[${i}].name`))
    else {
      for (const message of isQualifiedName(name)) errs.push(invalid(`${path}[${i}].name`, name, message))
      if (seen.has(name)) errs.push(duplicate(`${path}[${i}].name`, name))
      seen.add(name)
    }
    errs.push(...validateExpression(condition.expression, `${path}[${i}].expression`, compile, {kind: 'matchCondition', hasParams, variables: []}))
  })
  return errs
}

/** A required CEL expression that compiles to its kind's type; `requiredDetail` is Kubernetes' detail
 *  of the Required error when it is blank (`expression is not specified`). */
export function validateExpression(raw: unknown, path: string, compile: ExpressionCompiler | undefined, scope: ExpressionScope, requiredDetail = ''): FieldError[] {
  const expression = str(raw)
  if (expression.trim() === '') return [required(path, requiredDetail)]
  if (!compile) return []
  const problems = compile(expression, scope)
  if (problems.length === 0) return []
  if (problems.length === 1 && problems[0].startsWith(RESULT_TYPE_ERROR)) return [invalid(path, expression, problems[0])]
  return [invalid(path, expression, `compilation failed: ${problems.join('; ')}`)]
}

const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/
/** CEL's reserved words (the grammar's RESERVED): never an identifier. */
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])

/** variables: names are CEL identifiers (not reserved words), unique; each expression sees only the
 *  variables before it. */
export function validateVariables(raw: unknown, path: string, compile: ExpressionCompiler | undefined, hasParams: boolean): {errs: FieldError[]; names: string[]} {
  const errs: FieldError[] = []
  const names: string[] = []
  list(raw).forEach((v, i) => {
    const variable = obj(v)
    const name = str(variable.name)
    if (name.trim() === '') errs.push(required(`${path}[${i}].name`, 'name is not specified'))
    else if (!CEL_IDENTIFIER.test(name) || CEL_RESERVED.has(name)) errs.push(invalid(`${path}[${i}].name`, name, 'name is not a valid CEL identifier'))
    else if (names.includes(name)) errs.push(duplicate(`${path}[${i}].name`, name))
    errs.push(...validateExpression(variable.expression, `${path}[${i}].expression`, compile, {kind: 'variable', hasParams, variables: [...names]}, 'expression is not specified'))
    if (name) names.push(name)
  })
  return {errs, names}
}

export function validateFailurePolicy(value: unknown, path: string): FieldError[] {
  return value === undefined || value === null || value === 'Fail' || value === 'Ignore' ? [] : [notSupported(path, value, ['Fail', 'Ignore'])]
}

/** spec.paramKind as Kubernetes' validateParamKind: apiVersion `group/version` or `version` (the group a
 *  DNS subdomain, the version a DNS-1035 label), kind required and, lowercased, a DNS-1035 label. */
export function validateParamKind(raw: unknown, path: string): FieldError[] {
  if (raw === undefined || raw === null) return []
  const paramKind = obj(raw)
  const errs: FieldError[] = []
  const apiVersion = str(paramKind.apiVersion)
  if (apiVersion === '') errs.push(required(`${path}.apiVersion`))
  else {
    const slashes = apiVersion.split('/').length - 1
    if (slashes > 1) errs.push(invalid(`${path}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`))
    else {
      const [group, version] = apiVersion === '/' ? ['', ''] : slashes === 0 ? ['', apiVersion] : apiVersion.split('/')
      if (group !== '') {
        const problems = isDNS1123Subdomain(group)
        if (problems.length > 0) errs.push(invalid(`${path}.apiVersion`, group, problems.join(',')))
      }
      if (version === '') errs.push(invalid(`${path}.apiVersion`, apiVersion, 'version must be specified'))
      else {
        const problems = isDNS1035Label(version)
        if (problems.length > 0) errs.push(invalid(`${path}.apiVersion`, version, problems.join(',')))
      }
    }
  }
  const kind = str(paramKind.kind)
  if (kind === '') errs.push(required(`${path}.kind`))
  else {
    const problems = isDNS1035Label(kind.toLowerCase())
    if (problems.length > 0) errs.push(invalid(`${path}.kind`, kind, `may have mixed case, but should otherwise match: ${problems.join(',')}`))
  }
  return errs
}

/** A binding's paramRef: name or selector (not both), parameterNotFoundAction required. */
export function validateParamRef(raw: unknown, path: string): FieldError[] {
  if (raw === undefined || raw === null) return []
  const ref = obj(raw)
  const errs: FieldError[] = []
  const hasName = str(ref.name) !== ''
  const hasSelector = ref.selector !== undefined && ref.selector !== null
  if (hasName && hasSelector) errs.push(forbidden(`${path}.name`, 'name and selector are mutually exclusive'))
  if (!hasName && !hasSelector) errs.push(required(path, 'one of name or selector must be specified'))
  if (hasName) for (const message of isDNS1123Subdomain(ref.name)) errs.push(invalid(`${path}.name`, ref.name, message))
  if (ref.namespace !== undefined && ref.namespace !== '' && isDNS1123Subdomain(str(ref.namespace)).length > 0) {
    errs.push(invalid(`${path}.namespace`, ref.namespace, 'a valid namespace name is required'))
  }
  errs.push(...validateLabelSelectorField(ref.selector, `${path}.selector`))
  const action = ref.parameterNotFoundAction
  if (action === undefined || action === null || action === '') errs.push(required(`${path}.parameterNotFoundAction`))
  else if (action !== 'Allow' && action !== 'Deny') errs.push(notSupported(`${path}.parameterNotFoundAction`, action, ['Allow', 'Deny']))
  return errs
}

export function validatePolicyName(raw: unknown, path: string): FieldError[] {
  const name = str(raw)
  if (name === '') return [required(path)]
  return isDNS1123Subdomain(name).map((message) => invalid(path, name, message))
}

export type {AnyObject}
