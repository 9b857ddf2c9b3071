// ValidatingAdmissionPolicy(+Binding) (admissionregistration.orch.io/v1) and
// MutatingAdmissionPolicy(+Binding) (v1beta1): Kubernetes' validation of their specs, with every CEL
// expression compiled (a compile error, or a result of the wrong type, is 422 naming the field and the
// compiler's message).
import type {AnyObject, FieldError} from '../../api/types.js'
import {byteLength, duplicate, invalid, notSupported, required, tooLong} from '../../machinery/field-errors.js'
import {
  validateExpression,
  validateFailurePolicy,
  validateMatchConditions,
  validateMatchResources,
  validateParamKind,
  validateParamRef,
  validatePolicyName,
  validateVariables,
  type ExpressionCompiler,
} from './admission-common.js'
import {list, obj, str, type KindValidator} from './common.js'

const REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge']
const AUDIT_KEY = /^[A-Za-z0-9][-A-Za-z0-9_.]*$/
const MAX_AUDIT_KEY_BYTES = 63
const MAX_VALUE_EXPRESSION_BYTES = 5 * 1024
const MAX_AUDIT_ANNOTATIONS = 20
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn']
const MUTATING_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE']

type Compile = () => ExpressionCompiler | undefined

export function validateValidatingPolicy(policy: AnyObject, compile: ExpressionCompiler | undefined): FieldError[] {
  const spec = obj(policy.spec)
  const errs: FieldError[] = []
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null
  errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'))
  errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true))
  errs.push(...validateFailurePolicy(spec.failurePolicy, 'spec.failurePolicy'))
  errs.push(...validateMatchConditions(spec.matchConditions, 'spec.matchConditions', compile, hasParams))
  const {errs: variableErrs, names} = validateVariables(spec.variables, 'spec.variables', compile, hasParams)
  errs.push(...variableErrs)
  const validations = list(spec.validations)
  const auditAnnotations = list(spec.auditAnnotations)
  if (validations.length === 0 && auditAnnotations.length === 0) {
    // as Kubernetes reports it: on both fields
    errs.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'))
    errs.push(required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'))
    return errs
  }
  validations.forEach((v, i) => {
    const validation = obj(v)
    const path = `spec.validations[${i}]`
    const expression = str(validation.expression)
    errs.push(...validateExpression(expression, `${path}.expression`, compile, {kind: 'validation', hasParams, variables: names}, 'expression is not specified'))
    const messageExpression = str(validation.messageExpression)
    if (messageExpression !== '' && messageExpression.trim() === '') errs.push(invalid(`${path}.messageExpression`, messageExpression, 'must be non-empty if specified'))
    else if (messageExpression !== '') errs.push(...validateExpression(messageExpression, `${path}.messageExpression`, compile, {kind: 'messageExpression', hasParams, variables: names}))
    const message = str(validation.message)
    if (message !== '' && message.trim() === '') errs.push(invalid(`${path}.message`, message, 'message must be non-empty if specified'))
    else if (/[\r\n]/.test(message.trim())) errs.push(invalid(`${path}.message`, message, 'message must not contain line breaks'))
    else if (/[\r\n]/.test(expression.trim()) && message === '') errs.push(required(`${path}.message`, 'message must be specified if expression contains line breaks'))
    if (validation.reason !== undefined && validation.reason !== null && !REASONS.includes(validation.reason)) {
      errs.push(notSupported(`${path}.reason`, validation.reason, REASONS))
    }
  })
  if (auditAnnotations.length > MAX_AUDIT_ANNOTATIONS) {
    errs.push(invalid('spec.auditAnnotations', auditAnnotations, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`))
  }
  const keys = new Set<string>()
  auditAnnotations.forEach((a, i) => {
    const annotation = obj(a)
    const path = `spec.auditAnnotations[${i}]`
    const key = str(annotation.key)
    if (key === '') errs.push(required(`${path}.key`))
    else {
      if (!AUDIT_KEY.test(key)) errs.push(invalid(`${path}.key`, key, "must be a valid qualified name (regex used for validation is '[A-Za-z0-9][-A-Za-z0-9_.]*')"))
      if (byteLength(key) > MAX_AUDIT_KEY_BYTES) errs.push(tooLong(`${path}.key`, key, MAX_AUDIT_KEY_BYTES))
      if (keys.has(key)) errs.push(duplicate(`${path}.key`, key))
      keys.add(key)
    }
    const valueExpression = str(annotation.valueExpression)
    if (valueExpression.trim() === '') errs.push(required(`${path}.valueExpression`, 'valueExpression is not specified'))
    else if (byteLength(valueExpression.trim()) > MAX_VALUE_EXPRESSION_BYTES) {
      errs.push(required(`${path}.valueExpression`, `must not exceed ${MAX_VALUE_EXPRESSION_BYTES} bytes in length`))
    } else errs.push(...validateExpression(valueExpression, `${path}.valueExpression`, compile, {kind: 'auditAnnotation', hasParams, variables: names}))
  })
  return errs
}

export function validateValidatingBinding(binding: AnyObject): FieldError[] {
  const spec = obj(binding.spec)
  const errs: FieldError[] = [...validatePolicyName(spec.policyName, 'spec.policyName')]
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'))
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources', false))
  const actions = list(spec.validationActions).map(String)
  if (actions.length === 0) errs.push(required('spec.validationActions', 'at least one validation action is required'))
  const seen = new Set<string>()
  actions.forEach((action, i) => {
    if (!VALIDATION_ACTIONS.includes(action)) errs.push(notSupported(`spec.validationActions[${i}]`, action, VALIDATION_ACTIONS))
    if (seen.has(action)) errs.push(duplicate(`spec.validationActions[${i}]`, action))
    seen.add(action)
  })
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'))
  }
  return errs
}

export function validateMutatingPolicy(policy: AnyObject, compile: ExpressionCompiler | undefined): FieldError[] {
  const spec = obj(policy.spec)
  const errs: FieldError[] = []
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null
  errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'))
  errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true, MUTATING_OPERATIONS))
  errs.push(...validateFailurePolicy(spec.failurePolicy, 'spec.failurePolicy'))
  errs.push(...validateMatchConditions(spec.matchConditions, 'spec.matchConditions', compile, hasParams))
  const {errs: variableErrs, names} = validateVariables(spec.variables, 'spec.variables', compile, hasParams)
  errs.push(...variableErrs)
  const reinvocation = spec.reinvocationPolicy
  if (reinvocation === undefined || reinvocation === null || reinvocation === '') errs.push(required('spec.reinvocationPolicy'))
  else if (reinvocation !== 'Never' && reinvocation !== 'IfNeeded') errs.push(notSupported('spec.reinvocationPolicy', reinvocation, ['IfNeeded', 'Never']))
  const mutations = list(spec.mutations)
  if (mutations.length === 0) errs.push(required('spec.mutations', 'mutations must contain at least one item'))
  mutations.forEach((m, i) => {
    const mutation = obj(m)
    const path = `spec.mutations[${i}]`
    const type = mutation.patchType
    const scope = {kind: 'mutation', hasParams, variables: names}
    if (type === 'ApplyConfiguration') {
      if (mutation.jsonPatch) errs.push(invalid(`${path}.jsonPatch`, mutation.jsonPatch, 'must not be set when patchType is ApplyConfiguration'))
      errs.push(...validateExpression(obj(mutation.applyConfiguration).expression, `${path}.applyConfiguration.expression`, compile, {...scope, kind: 'applyConfiguration'}))
    } else if (type === 'JSONPatch') {
      if (mutation.applyConfiguration) errs.push(invalid(`${path}.applyConfiguration`, mutation.applyConfiguration, 'must not be set when patchType is JSONPatch'))
      errs.push(...validateExpression(obj(mutation.jsonPatch).expression, `${path}.jsonPatch.expression`, compile, {...scope, kind: 'jsonPatch'}))
    } else if (type === undefined || type === null || type === '') {
      errs.push(required(`${path}.patchType`))
    } else {
      errs.push(notSupported(`${path}.patchType`, type, ['ApplyConfiguration', 'JSONPatch']))
    }
  })
  return errs
}

export function validateMutatingBinding(binding: AnyObject): FieldError[] {
  const spec = obj(binding.spec)
  return [
    ...validatePolicyName(spec.policyName, 'spec.policyName'),
    ...validateParamRef(spec.paramRef, 'spec.paramRef'),
    ...validateMatchResources(spec.matchResources, 'spec.matchResources', false, MUTATING_OPERATIONS),
  ]
}

export function validatingPolicyValidator(compile: Compile): KindValidator {
  return {
    create: (object) => validateValidatingPolicy(object, compile()),
    // status (the type-checking controller's) is not the spec's to re-check
    update: (object, _old, context) => (context.subresource === 'status' ? [] : validateValidatingPolicy(object, compile())),
  }
}

export function mutatingPolicyValidator(compile: Compile): KindValidator {
  return {
    create: (object) => validateMutatingPolicy(object, compile()),
    update: (object, _old, context) => (context.subresource === 'status' ? [] : validateMutatingPolicy(object, compile())),
  }
}

export const validatingBindingValidator: KindValidator = {create: validateValidatingBinding, update: validateValidatingBinding}
export const mutatingBindingValidator: KindValidator = {create: validateMutatingBinding, update: validateMutatingBinding}
