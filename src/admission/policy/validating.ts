// ValidatingAdmissionPolicy: for every binding whose policy and match resources match the request,
// once per param object: match conditions, then the validations and audit annotations, each
// (policy, binding, param) evaluation with its own CEL cost budget. A failed validation is acted on
// per the binding's validationActions — Deny rejects (the first failure's reason decides the HTTP
// code), Warn adds a Warning header, Audit an audit annotation. Errors and misconfiguration obey
// the policy's failurePolicy. Policies never match policies or bindings themselves.
import type {AnyObject} from '../../api/types.js'
import type {Logger} from '../../machinery/log.js'
import {ApiError, type StatusReason} from '../../machinery/status.js'
import type {AdmissionAttributes, ValidatingPlugin} from '../types.js'
import {activationFor, bindingMatches, compileBase, compileOne, CompileCache, evaluateMatchConditions, run, type Compiled, type CompiledBase} from './compiled.js'
import {POLICY_EVALUATION_BUDGET, type CelEngine, type PolicyAuthorizer} from './engine.js'
import {resolveParams, type ParamLookup} from './params.js'

export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.orch.io/validation_failure'
const MAX_AUDIT_VALUE_BYTES = 10 * 1024
const REASON_CODES: Record<string, number> = {Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413}

interface CompiledValidation {
  expression: string
  compiled: Compiled
  message?: string
  messageExpression?: Compiled
  reason: string
}

interface CompiledPolicy extends CompiledBase {
  validations: CompiledValidation[]
  auditAnnotations: {key: string; compiled: Compiled}[]
}

export interface ValidatingPolicySources {
  policies(): AnyObject[]
  bindings(): AnyObject[]
  params: ParamLookup
  engine: CelEngine
  authorizer?: PolicyAuthorizer
  logger: Logger
}

export function isPolicyResource(attributes: AdmissionAttributes): boolean {
  const {group, resource} = attributes.resource
  return group === 'admissionregistration.orch.io' && /^(validating|mutating)admissionpolic(y|ies)(bindings)?$/.test(resource)
}

function compilePolicy(engine: CelEngine, policy: AnyObject): CompiledPolicy {
  const spec = policy.spec ?? {}
  const base = compileBase(engine, spec)
  const scope = (kind: string) => ({kind, hasParams: base.hasParams, variables: base.variables.map((v) => v.name)})
  const validations = (Array.isArray(spec.validations) ? spec.validations : []).map((v: AnyObject) => ({
    expression: String(v.expression ?? ''),
    compiled: compileOne(engine, v.expression, scope('validation')),
    message: typeof v.message === 'string' && v.message ? v.message : undefined,
    messageExpression: v.messageExpression ? compileOne(engine, v.messageExpression, scope('messageExpression')) : undefined,
    reason: typeof v.reason === 'string' && v.reason ? v.reason : 'Invalid',
  }))
  const auditAnnotations = (Array.isArray(spec.auditAnnotations) ? spec.auditAnnotations : []).map((a: AnyObject) => ({
    key: String(a.key),
    compiled: compileOne(engine, a.valueExpression, scope('auditAnnotation')),
  }))
  return {...base, validations, auditAnnotations}
}

interface Failure {
  message: string
  reason: string
  expressionIndex: number
}

/** Kubernetes' default message: `failed expression: <expression>` (the rule text, one line). */
function defaultMessage(validation: CompiledValidation): string {
  return `failed expression: ${validation.expression.replace(/\s+/g, ' ').trim()}`
}

export class ValidatingPolicyPlugin implements ValidatingPlugin {
  readonly name = 'ValidatingAdmissionPolicy'
  private readonly cache = new CompileCache<CompiledPolicy>()

  constructor(private readonly sources: ValidatingPolicySources) {}

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (isPolicyResource(attributes)) return
    const bindings = this.sources.bindings()
    if (bindings.length === 0) return
    const policies = new Map(this.sources.policies().map((p) => [p.metadata?.name as string, p]))
    this.cache.retain([...policies.values()])
    const auditValues = new Map<string, Set<string>>()
    const auditFailures: AnyObject[] = []
    for (const binding of bindings) {
      const policy = policies.get(binding.spec?.policyName)
      if (!policy) continue
      await this.evaluateBinding(policy, binding, attributes, auditValues, auditFailures)
    }
    for (const [key, values] of auditValues) {
      const joined = [...values].join(', ')
      attributes.annotate(key, joined.length > MAX_AUDIT_VALUE_BYTES ? joined.slice(0, MAX_AUDIT_VALUE_BYTES) : joined)
    }
  }

  private async evaluateBinding(
    policy: AnyObject,
    binding: AnyObject,
    attributes: AdmissionAttributes,
    auditValues: Map<string, Set<string>>,
    auditFailures: AnyObject[],
  ): Promise<void> {
    const policyName: string = policy.metadata?.name
    const bindingName: string = binding.metadata?.name
    const spec = policy.spec ?? {}
    if (!(await bindingMatches(policy, binding, attributes))) return
    const ignore = spec.failurePolicy === 'Ignore'
    const prefix = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request`
    const failed = (why: string) => {
      this.sources.logger.warn('admission policy failed', {policy: policyName, binding: bindingName, failurePolicy: ignore ? 'Ignore' : 'Fail', error: why})
      if (!ignore) throw new ApiError(403, 'Forbidden', `${prefix}: ${why}`)
    }
    const resolved = resolveParams(spec, binding, attributes.namespace, this.sources.params)
    if ('error' in resolved) return failed(resolved.error)
    const compiled = this.cache.get(policy, () => compilePolicy(this.sources.engine, policy))
    const actions: string[] = Array.isArray(binding.spec?.validationActions) ? binding.spec.validationActions : ['Deny']
    for (const params of resolved.params) {
      const budget = {remaining: POLICY_EVALUATION_BUDGET}
      const activation = await activationFor(attributes, compiled, params, this.sources.authorizer)
      const matched = evaluateMatchConditions(compiled.matchConditions, activation, budget)
      if ('error' in matched) {
        failed(matched.error)
        continue
      }
      if (!matched.match) continue
      const failures: Failure[] = []
      for (const [index, validation] of compiled.validations.entries()) {
        let value: unknown
        try {
          value = run(validation.compiled, activation, budget)
        } catch (error) {
          failed(`expression '${validation.expression}' resulted in error: ${(error as Error).message}`)
          continue
        }
        if (value === true) continue
        if (value !== false) {
          failed(`expression '${validation.expression}' resulted in a non-bool value`)
          continue
        }
        failures.push({message: this.messageOf(validation, activation, budget), reason: validation.reason, expressionIndex: index})
      }
      for (const annotation of compiled.auditAnnotations) {
        try {
          const value = run(annotation.compiled, activation, budget)
          if (value === null || value === undefined || value === '') continue
          if (typeof value !== 'string') throw new Error('valueExpression must evaluate to a string or null')
          const key = `${policyName}/${annotation.key}`
          auditValues.set(key, (auditValues.get(key) ?? new Set()).add(value))
        } catch (error) {
          failed(`auditAnnotation '${annotation.key}' resulted in error: ${(error as Error).message}`)
        }
      }
      if (failures.length === 0) continue
      if (actions.includes('Audit')) {
        for (const f of failures) auditFailures.push({message: f.message, policy: policyName, binding: bindingName, expressionIndex: f.expressionIndex, validationActions: actions})
        // recorded now: a Deny below ends the request
        attributes.annotate(VALIDATION_FAILURE_ANNOTATION, JSON.stringify(auditFailures))
      }
      if (actions.includes('Warn')) {
        for (const f of failures) attributes.warn(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${f.message}`)
      }
      if (actions.includes('Deny')) {
        const first = failures[0]
        const code = REASON_CODES[first.reason] ?? 422
        throw new ApiError(code, first.reason as StatusReason, `${prefix}: ${first.message}`)
      }
    }
  }

  /** messageExpression first (when it yields a one-line, non-blank string), then message, then the default. */
  private messageOf(validation: CompiledValidation, activation: Parameters<typeof run>[1], budget: Parameters<typeof run>[2]): string {
    if (validation.messageExpression) {
      try {
        const value = run(validation.messageExpression, activation, budget)
        if (typeof value === 'string' && value.trim() !== '' && !/[\r\n]/.test(value)) return value
      } catch {
        // as if unset
      }
    }
    return validation.message ?? defaultMessage(validation)
  }
}
