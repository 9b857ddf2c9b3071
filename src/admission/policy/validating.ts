// ValidatingAdmissionPolicy: for every binding whose policy and match resources match the request,
// once per param object: match conditions, then the validations and audit annotations, each
// (policy, binding, param) evaluation with its own CEL cost budget. A failed validation is a deny
// decision acted on per the binding's validationActions — Deny rejects, Warn adds a Warning header,
// Audit an audit annotation. As in Kubernetes, an error (a match condition, validation or expression
// that cannot be evaluated) under failurePolicy Fail is a deny decision too, and goes through the
// validationActions the same way (reason Invalid); under Ignore it is skipped. A misconfigured policy
// or binding (paramKind or params not found) and an audit annotation that fails are denied under Fail
// whatever the actions (`failed to configure policy|binding: ...`). Every binding is evaluated; the
// first denial then answers the request, its reason deciding the code (Invalid, the default, 422).
// Policies never match policies or bindings themselves.
import type {AnyObject} from '../../api/types.js'
import type {Logger} from '../../machinery/log.js'
import {ApiError, type StatusReason} from '../../machinery/status.js'
import type {AdmissionAttributes, ValidatingPlugin} from '../types.js'
import {admissionForbidden} from '../forbidden.js'
import {policyNamespace} from '../matching.js'
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
  auditAnnotations: {key: string; valueExpression: string; compiled: Compiled}[]
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
    valueExpression: String(a.valueExpression ?? ''),
    compiled: compileOne(engine, a.valueExpression, scope('auditAnnotation')),
  }))
  return {...base, validations, auditAnnotations}
}

/** A deny decision of one (policy, binding, param) evaluation: a failed validation, or an error. */
interface Decision {
  message: string
  /** the validation's reason; '' for an error (answered as Invalid) */
  reason: string
  expressionIndex: number
}

/** A decision that denies the request, with what it came from. */
interface Denial {
  policy: string
  /** absent for an error of the policy itself (its paramKind) */
  binding?: string
  message: string
  reason: string
}

/** Kubernetes' default message: `failed expression: <expression>` (the rule text, one line). */
function defaultMessage(validation: CompiledValidation): string {
  return `failed expression: ${validation.expression.replace(/\s+/g, ' ').trim()}`
}

/** The CEL type name of a value that is neither a string nor null, for the audit annotation error. */
function celTypeName(value: unknown): string {
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return 'int'
  if (typeof value === 'number') return 'double'
  if (Array.isArray(value)) return 'list'
  if (value instanceof Uint8Array) return 'bytes'
  return typeof value === 'object' ? 'map' : 'dyn'
}

/** Kubernetes' answer to a denial: admission.NewForbidden's details with the reason's code. */
function denialError(denial: Denial, attributes: AdmissionAttributes): ApiError {
  const message = denial.binding === undefined
    ? `ValidatingAdmissionPolicy '${denial.policy}' denied request: ${denial.message}`
    : `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`
  const reason = (denial.reason || 'Invalid') as StatusReason
  // admission.NewForbidden's words (`configmaps "x" is forbidden: ...`) with the validation's reason
  // and code, and the policy's message alone as the cause
  const forbidden = admissionForbidden(attributes, message)
  return new ApiError(REASON_CODES[reason] ?? 422, reason, forbidden.message, {...forbidden.details, causes: [{message}]})
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
    const denials: Denial[] = []
    for (const binding of bindings) {
      const policy = policies.get(binding.spec?.policyName)
      if (!policy) continue
      await this.evaluateBinding(policy, binding, attributes, {auditValues, auditFailures, denials})
    }
    for (const [key, values] of auditValues) {
      const joined = [...values].join(', ')
      attributes.annotate(key, joined.length > MAX_AUDIT_VALUE_BYTES ? joined.slice(0, MAX_AUDIT_VALUE_BYTES) : joined)
    }
    if (denials.length > 0) throw denialError(denials[0], attributes)
  }

  private async evaluateBinding(
    policy: AnyObject,
    binding: AnyObject,
    attributes: AdmissionAttributes,
    out: {auditValues: Map<string, Set<string>>; auditFailures: AnyObject[]; denials: Denial[]},
  ): Promise<void> {
    const policyName: string = policy.metadata?.name
    const bindingName: string = binding.metadata?.name
    const spec = policy.spec ?? {}
    if (!(await bindingMatches(policy, binding, attributes))) return
    const ignore = spec.failurePolicy === 'Ignore'
    const logged = (why: string) =>
      this.sources.logger.warn('admission policy failed', {policy: policyName, binding: bindingName, failurePolicy: ignore ? 'Ignore' : 'Fail', error: why})
    const resolved = resolveParams(spec, binding, policyNamespace(attributes), this.sources.params)
    if ('error' in resolved) {
      logged(resolved.error)
      if (!ignore) {
        out.denials.push({policy: policyName, binding: resolved.of === 'binding' ? bindingName : undefined, message: `failed to configure ${resolved.of}: ${resolved.error}`, reason: ''})
      }
      return
    }
    const compiled = this.cache.get(policy, () => compilePolicy(this.sources.engine, policy))
    const actions: string[] = Array.isArray(binding.spec?.validationActions) ? binding.spec.validationActions : ['Deny']
    for (const params of resolved.params) {
      const budget = {remaining: POLICY_EVALUATION_BUDGET}
      const activation = await activationFor(attributes, compiled, params, this.sources.authorizer)
      const decisions: Decision[] = []
      /** an error: a deny decision under Fail (through the validationActions), nothing under Ignore */
      const errored = (why: string, expressionIndex: number) => {
        logged(why)
        if (!ignore) decisions.push({message: why, reason: '', expressionIndex})
      }
      const matched = evaluateMatchConditions(compiled.matchConditions, activation, budget)
      if ('error' in matched) errored(matched.error, 0)
      else if (!matched.match) continue
      else {
        for (const [index, validation] of compiled.validations.entries()) {
          let value: unknown
          try {
            value = run(validation.compiled, activation, budget)
          } catch (error) {
            errored(`expression '${validation.expression}' resulted in error: ${(error as Error).message}`, index)
            continue
          }
          // anything but true (a dyn result may be of another type) fails the validation
          if (value === true) continue
          decisions.push({message: this.messageOf(validation, activation, budget), reason: validation.reason, expressionIndex: index})
        }
        for (const annotation of compiled.auditAnnotations) {
          let value: unknown
          try {
            value = run(annotation.compiled, activation, budget)
          } catch (error) {
            logged(`auditAnnotation '${annotation.key}' resulted in error: ${(error as Error).message}`)
            // Kubernetes: an audit annotation error denies under Fail, whatever the validationActions
            if (!ignore) out.denials.push({policy: policyName, binding: bindingName, message: `expression '${annotation.valueExpression}' resulted in error: ${(error as Error).message}`, reason: ''})
            continue
          }
          if (value === null || value === undefined) continue
          if (typeof value !== 'string') {
            const why = `valueExpression '${annotation.valueExpression}' resulted in unsupported return type: ${celTypeName(value)}. Return type must be either string or null.`
            logged(why)
            out.denials.push({policy: policyName, binding: bindingName, message: why, reason: ''})
            continue
          }
          const trimmed = value.trim()
          if (trimmed === '') continue
          const key = `${policyName}/${annotation.key}`
          out.auditValues.set(key, (out.auditValues.get(key) ?? new Set()).add(trimmed))
        }
      }
      if (decisions.length === 0) continue
      if (actions.includes('Audit')) {
        for (const d of decisions) out.auditFailures.push({message: d.message, policy: policyName, binding: bindingName, expressionIndex: d.expressionIndex, validationActions: actions})
        attributes.annotate(VALIDATION_FAILURE_ANNOTATION, JSON.stringify(out.auditFailures))
      }
      if (actions.includes('Warn')) {
        for (const d of decisions) attributes.warn(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${d.message}`)
      }
      if (actions.includes('Deny')) {
        for (const d of decisions) out.denials.push({policy: policyName, binding: bindingName, message: d.message, reason: d.reason})
      }
    }
  }

  /** messageExpression first (when it yields a one-line, non-blank string, trimmed), then message, then the default. */
  private messageOf(validation: CompiledValidation, activation: Parameters<typeof run>[1], budget: Parameters<typeof run>[2]): string {
    if (validation.messageExpression) {
      try {
        const value = run(validation.messageExpression, activation, budget)
        const message = typeof value === 'string' ? value.trim() : ''
        if (message !== '' && !/[\r\n]/.test(message)) return message
      } catch {
        // as if unset
      }
    }
    return validation.message?.trim() || defaultMessage(validation)
  }
}
