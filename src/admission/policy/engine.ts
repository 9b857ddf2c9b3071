// What admission policies need from a CEL environment: compile an expression for a scope (which
// variables exist), and evaluate it against an activation within a cost budget. src/admission/cel
// provides it (celEngine()); the policy plugins and the validators only see this interface.
import type {AnyObject, Schema} from '../../api/types.js'

/** What an expression may refer to. */
export interface ExpressionScope {
  /** 'matchCondition' | 'validation' | 'messageExpression' | 'auditAnnotation' | 'variable' | 'jsonPatch' | 'applyConfiguration' */
  kind: string
  /** the policy has a paramKind: `params` is declared */
  hasParams: boolean
  /** names of the variables declared so far (variables see only the earlier ones) */
  variables: readonly string[]
}

/** A per-evaluation cost budget, shared by the expressions of one (policy, binding, param) evaluation. */
export interface CostBudget {
  remaining: number
}

/** Kubernetes' RuntimeCELCostBudget: what one policy evaluation may spend in all. */
export const POLICY_EVALUATION_BUDGET = 10_000_000

/** The authorizer CEL's `authorizer` variable asks (synchronously: the server's authorizer is). */
export type PolicyAuthorizer = (check: {
  user: {username: string; uid?: string; groups: string[]; extra?: Record<string, string[]>}
  verb: string
  group?: string
  resource?: string
  subresource?: string
  namespace?: string
  name?: string
  /** a non-resource path */
  path?: string
}) => {decision: 'allow' | 'deny' | 'no-opinion'; reason: string; error?: string}

export interface Activation {
  object: AnyObject | null
  oldObject: AnyObject | null
  /** the AdmissionRequest */
  request: AnyObject
  /** undefined when the policy has no paramKind (no `params` variable), null when there is none */
  params: AnyObject | null | undefined
  namespaceObject: AnyObject | null
  /** the policy's variables, evaluated lazily (at most once each) when an expression uses them */
  variables: {name: string; program: CelProgram}[]
  authorizer?: PolicyAuthorizer
  /** the request's own resource (authorizer.requestResource) */
  requestResource?: {group: string; resource: string; subresource: string; namespace: string; name: string}
  /** the schemas of object/oldObject and of params, for typed access (int64 fields, escaping, full metadata) */
  objectSchema?: Schema
  paramsSchema?: Schema
}

export class CelEvaluationError extends Error {
  /** the budget ran out */
  readonly costExceeded: boolean
  constructor(message: string, costExceeded = false) {
    super(message)
    this.name = 'CelEvaluationError'
    this.costExceeded = costExceeded
  }
}

export interface CelProgram {
  /** the result (JSON-like: booleans, numbers as number or bigint, strings, lists, maps, null);
   *  throws CelEvaluationError on a runtime error or when the budget runs out */
  evaluate(activation: Activation, budget: CostBudget): unknown
}

export interface CelEngine {
  compile(expression: string, scope: ExpressionScope): CelProgram | {errors: string[]}
}
