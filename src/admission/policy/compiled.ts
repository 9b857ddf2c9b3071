// A policy's expressions compiled once per version of the policy (cached by uid and
// resourceVersion), and what policies share at request time: params, match conditions, variables,
// the activation.
import {randomUUID} from 'node:crypto'
import type {AnyObject, Schema} from '../../api/types.js'
import {matchResources} from '../matching.js'
import {admissionReview} from '../webhook.js'
import type {AdmissionAttributes} from '../types.js'
import type {Activation, CelEngine, CelProgram, CostBudget, ExpressionScope, PolicyAuthorizer} from './engine.js'
import {CelEvaluationError} from './engine.js'

/** A compiled expression, or why it did not compile (evaluating it is then an error). */
export type Compiled = {program: CelProgram} | {errors: string[]}

export function compileOne(engine: CelEngine, expression: unknown, scope: ExpressionScope): Compiled {
  if (typeof expression !== 'string' || expression.trim() === '') return {errors: ['expression is empty']}
  try {
    const result = engine.compile(expression, scope)
    return 'errors' in result ? result : {program: result}
  } catch (error) {
    return {errors: [(error as Error).message]}
  }
}

/** Runs a compiled expression; a compile error is an evaluation error. */
export function run(compiled: Compiled, activation: Activation, budget: CostBudget): unknown {
  if ('errors' in compiled) throw new CelEvaluationError(`compilation failed: ${compiled.errors.join('; ')}`)
  return compiled.program.evaluate(activation, budget)
}

/** Per-policy compile cache: recompiled when the policy's resourceVersion changes. */
export class CompileCache<T> {
  private readonly entries = new Map<string, {version: string; value: T}>()

  get(policy: AnyObject, build: () => T): T {
    const uid = policy.metadata?.uid ?? policy.metadata?.name ?? ''
    const version = policy.metadata?.resourceVersion ?? ''
    const known = this.entries.get(uid)
    if (known && known.version === version) return known.value
    const value = build()
    this.entries.set(uid, {version, value})
    return value
  }

  /** Forgets policies no longer present. */
  retain(policies: AnyObject[]): void {
    const live = new Set(policies.map((p) => p.metadata?.uid ?? p.metadata?.name ?? ''))
    for (const uid of this.entries.keys()) if (!live.has(uid)) this.entries.delete(uid)
  }
}

export interface CompiledBase {
  matchConditions: {name: string; expression: string; compiled: Compiled}[]
  variables: {name: string; compiled: Compiled}[]
  hasParams: boolean
}

export function compileBase(engine: CelEngine, spec: AnyObject): CompiledBase {
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null
  const variables: {name: string; compiled: Compiled}[] = []
  for (const variable of Array.isArray(spec.variables) ? spec.variables : []) {
    variables.push({name: variable.name, compiled: compileOne(engine, variable.expression, {kind: 'variable', hasParams, variables: variables.map((v) => v.name)})})
  }
  const matchConditions = (Array.isArray(spec.matchConditions) ? spec.matchConditions : []).map((c: AnyObject) => ({
    name: String(c.name),
    expression: String(c.expression),
    compiled: compileOne(engine, c.expression, {kind: 'matchCondition', hasParams, variables: []}),
  }))
  return {matchConditions, variables, hasParams}
}

/** The variables as the engine evaluates them: a variable that did not compile fails when used. */
function variablePrograms(base: CompiledBase): Activation['variables'] {
  return base.variables.map((v) => ({
    name: v.name,
    program: 'errors' in v.compiled ? failing(v.name, v.compiled.errors) : v.compiled.program,
  }))
}

function failing(name: string, errors: string[]): CelProgram {
  return {
    evaluate() {
      throw new CelEvaluationError(`variable "${name}" did not compile: ${errors.join('; ')}`)
    },
  }
}

/** A param object's schema, attached by the param lookup (undefined: untyped). */
export const PARAM_SCHEMA = Symbol('paramSchema')
function paramSchemaOf(params: AnyObject): Schema | undefined {
  return (params as AnyObject & {[PARAM_SCHEMA]?: Schema})[PARAM_SCHEMA]
}

/** The AdmissionRequest CEL's `request` shows, built once per request (and per object: a mutation
 *  makes a new one). */
const requests = new WeakMap<AdmissionAttributes, {object: AnyObject | null; request: AnyObject}>()
function requestOf(attributes: AdmissionAttributes): AnyObject {
  const known = requests.get(attributes)
  if (known && known.object === attributes.object) return known.request
  const request = admissionReview(randomUUID(), attributes).request as AnyObject
  requests.set(attributes, {object: attributes.object, request})
  return request
}

/** The activation of one (policy, binding, param) evaluation. */
export async function activationFor(
  attributes: AdmissionAttributes,
  base: CompiledBase,
  params: AnyObject | null,
  authorizer: PolicyAuthorizer | undefined,
): Promise<Activation> {
  return {
    object: attributes.object,
    oldObject: attributes.oldObject,
    request: requestOf(attributes),
    params: base.hasParams ? params : undefined,
    namespaceObject: attributes.namespace ? await attributes.namespaceObject() : null,
    variables: variablePrograms(base),
    authorizer,
    objectSchema: attributes.declaration.schema,
    paramsSchema: params ? paramSchemaOf(params) : undefined,
    requestResource: {
      group: attributes.resource.group,
      resource: attributes.resource.resource,
      subresource: attributes.subresource,
      namespace: attributes.namespace,
      name: attributes.name,
    },
  }
}

/** The policy's matchConstraints and the binding's matchResources (when set) both match. */
export async function bindingMatches(policy: AnyObject, binding: AnyObject, attributes: AdmissionAttributes): Promise<boolean> {
  if (!(await matchResources(policy.spec?.matchConstraints, attributes, true))) return false
  return !binding.spec?.matchResources || matchResources(binding.spec.matchResources, attributes, false)
}

export type ConditionsResult = {match: true} | {match: false} | {error: string}

/** matchConditions in order: any false skips; all true match; an error (none false) is an error. */
export function evaluateMatchConditions(conditions: CompiledBase['matchConditions'], activation: Activation, budget: CostBudget): ConditionsResult {
  // Kubernetes' matcher: a false condition skips whatever errors others gave; else every error counts,
  // in the CEL filter's words, aggregated as utilerrors.NewAggregate prints them
  const errors: string[] = []
  for (const condition of conditions) {
    try {
      const value = run(condition.compiled, activation, budget)
      if (value === false) return {match: false}
      if (value !== true) errors.push(`expression '${condition.expression}' resulted in error: no such overload`)
    } catch (error) {
      errors.push(`expression '${condition.expression}' resulted in error: ${(error as Error).message}`)
    }
  }
  if (errors.length === 0) return {match: true}
  return {error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}
}
