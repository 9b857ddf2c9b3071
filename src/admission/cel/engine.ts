// The CEL environment of admission policies, on @marcbachmann/cel-js: variables object, oldObject,
// request, params (only with a paramKind), namespaceObject, variables (lazy, each evaluated once),
// authorizer (not in messageExpression), Kubernetes' libraries (libraries.ts), object
// initialisation for ApplyConfiguration and JSONPatch (object-syntax.ts), and a cost budget: every
// evaluation step costs one unit; one expression may spend PER_CALL_LIMIT, one (policy, binding,
// param) evaluation the budget it is given. An expression must also evaluate to its kind's type, as
// Kubernetes' ExpressionAccessor.ReturnTypes: match conditions and validations bool, messageExpression
// string, an audit annotation's valueExpression string or null, a JSONPatch mutation list(JSONPatch),
// an ApplyConfiguration an Object; otherwise it does not compile (`must evaluate to bool but got
// string`). A result of type dyn is accepted: orch's environment types less than Kubernetes' (variables,
// params, request and namespaceObject are dyn here), so a dyn result may be well typed there.
import {Environment} from '@marcbachmann/cel-js'
import type {AnyObject, Schema} from '../../api/types.js'
import {CelEvaluationError, type Activation, type CelEngine, type CelProgram, type CostBudget, type ExpressionScope, type PolicyAuthorizer} from '../policy/engine.js'
import {namespace as namespaceDeclaration} from '../../api/core/namespace.js'
import {registerAuthorizer, CelAuthorizer} from './authorizer.js'
import {registerLibraries} from './libraries.js'
import {rewriteObjectInitialisers, TYPED_INITIALISERS} from './object-syntax.js'
import {fromCel, toCel, unescapeObject} from './values.js'

/** Kubernetes' PerCallLimit: what one expression may cost. */
export const PER_CALL_LIMIT = 1_000_000
export const COST_LIMIT_MESSAGE = 'operation cancelled: actual cost limit exceeded'
export const BUDGET_MESSAGE = 'validation failed due to running out of cost budget, no further validation rules will be run'

type Env = InstanceType<typeof Environment>

/** The evaluation in progress (evaluation is synchronous, so one at a time). */
let metering: {budget: CostBudget; spent: number} | undefined
let meteringInstalled = false

/** Every evaluation step goes through the evaluator's run(); counting there bounds any expression. */
function installMetering(env: Env): void {
  if (meteringInstalled) return
  let evaluator: object | undefined
  const probe = env.clone()
  probe.registerFunction({
    name: '__orchProbe',
    returnType: 'bool',
    params: [],
    // cel-js calls a function's handler with the evaluator as `this`: that is how it is found
    handler: function (this: object) {
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      evaluator = this
      return true
    },
  })
  probe.evaluate('__orchProbe()', {})
  const proto = Object.getPrototypeOf(evaluator) as {run(ast: unknown, ctx: unknown): unknown}
  const run = proto.run
  proto.run = function (this: unknown, ast: unknown, ctx: unknown) {
    if (metering) {
      metering.spent++
      if (--metering.budget.remaining < 0) throw new CelEvaluationError(BUDGET_MESSAGE, true)
      if (metering.spent > PER_CALL_LIMIT) throw new CelEvaluationError(COST_LIMIT_MESSAGE, true)
    }
    return run.call(this, ast, ctx)
  }
  meteringInstalled = true
}

function baseEnvironment(hasParams: boolean, hasAuthorizer: boolean): Env {
  const env = new Environment({unlistedVariablesAreDyn: false, homogeneousAggregateLiterals: false, enableOptionalTypes: true})
  for (const name of ['object', 'oldObject', 'request', 'namespaceObject', 'variables']) env.registerVariable(name, 'dyn')
  if (hasParams) env.registerVariable('params', 'dyn')
  registerLibraries(env)
  registerAuthorizer(env, hasAuthorizer)
  return env
}

/** A CEL string with its literals blanked, so identifiers can be searched for. */
function withoutStrings(expression: string): string {
  return expression.replace(/(['"])(?:\\.|(?!\1)[^\\])*\1/g, '""')
}

/** Lazily evaluated variables: each is computed once, when an expression first reads it. */
function lazyVariables(activation: Activation, context: Record<string, unknown>, budget: CostBudget): Record<string, unknown> {
  const evaluate = (program: CelProgram) =>
    program instanceof CompiledExpression ? program.evaluateWith(context, budget) : program.evaluate(activation, budget)
  const values: Record<string, unknown> = {}
  for (const {name, program} of activation.variables) {
    let computed = false
    let value: unknown
    Object.defineProperty(values, name, {
      enumerable: true,
      get: () => {
        if (!computed) {
          value = toCel(fromCel(evaluate(program)))
          computed = true
        }
        return value
      },
    })
  }
  return values
}

class CompiledExpression implements CelProgram {
  constructor(
    private readonly run: (context: Record<string, unknown>) => unknown,
    private readonly kind: string,
  ) {}

  /** Runs against an already built CEL context (variables share it). */
  evaluateWith(context: Record<string, unknown>, budget: CostBudget): unknown {
    const outer = metering
    metering = {budget, spent: 0}
    try {
      return this.run(context)
    } catch (error) {
      if (error instanceof CelEvaluationError) throw error
      const message = (error as Error).message?.split('\n')[0] ?? String(error)
      throw new CelEvaluationError(message)
    } finally {
      metering = outer
    }
  }

  evaluate(activation: Activation, budget: CostBudget): unknown {
    const context = contextFor(activation, this.kind, budget)
    const result = fromCel(this.evaluateWith(context, budget))
    return this.kind === 'applyConfiguration' || this.kind === 'jsonPatch' ? unescapeObject(result) : result
  }
}

/** CEL forms of the JSON objects of a request: the same object is converted once, however many
 *  bindings and expressions read it. */
const converted = new WeakMap<object, unknown>()
function cel(value: AnyObject | null | undefined, schema?: Schema): unknown {
  if (value === null || value === undefined) return null
  let known = converted.get(value)
  if (known === undefined) {
    known = toCel(value, schema)
    converted.set(value, known)
  }
  return known
}

/** The context of one activation (its match conditions, validations and annotations share it). */
const contexts = new WeakMap<Activation, Map<string, Record<string, unknown>>>()

function contextFor(activation: Activation, kind: string, budget: CostBudget): Record<string, unknown> {
  const flavour = kind === 'messageExpression' ? 'message' : 'full'
  let byFlavour = contexts.get(activation)
  const known = byFlavour?.get(flavour)
  if (known) return known
  const objectSchema = activation.objectSchema
  const context: Record<string, unknown> = {
    object: cel(activation.object, objectSchema),
    oldObject: cel(activation.oldObject, objectSchema),
    request: cel(activation.request),
    namespaceObject: cel(activation.namespaceObject, namespaceDeclaration.schema),
  }
  if (!byFlavour) contexts.set(activation, (byFlavour = new Map()))
  byFlavour.set(flavour, context)
  if (activation.params !== undefined) context.params = activation.params === null ? null : cel(activation.params, activation.paramsSchema)
  if (kind !== 'messageExpression' && activation.authorizer) {
    context.authorizer = new CelAuthorizer(activation.authorizer as PolicyAuthorizer, activation.request as AnyObject, activation.requestResource)
  }
  context.variables = lazyVariables(activation, context, budget)
  return context
}

export class AdmissionCelEngine implements CelEngine {
  private readonly environments = new Map<string, Env>()
  private readonly typedEnvironments = new Map<string, Env>()

  /** The environment that types object initialisers (for the result type of mutations only). */
  private typedEnvironment(hasParams: boolean, hasAuthorizer: boolean): Env {
    const key = `${hasParams}/${hasAuthorizer}`
    let env = this.typedEnvironments.get(key)
    if (!env) {
      env = this.environment(hasParams, hasAuthorizer).clone()
      env.registerType('JSONPatch', {fields: {op: 'string', path: 'string', from: 'string', value: 'dyn'}})
      env.registerType('Object', {fields: {}})
      env.registerType('ObjectField', {fields: {}})
      env.registerFunction(`${TYPED_INITIALISERS.JSONPatch}(dyn): JSONPatch`, (fields: unknown) => fields)
      env.registerFunction(`${TYPED_INITIALISERS.Object}(dyn): Object`, (fields: unknown) => fields)
      env.registerFunction(`${TYPED_INITIALISERS.ObjectField}(dyn): ObjectField`, (fields: unknown) => fields)
      this.typedEnvironments.set(key, env)
    }
    return env
  }

  /** The type cel-js infers for an expression that checked (mutations: with typed initialisers). */
  private resultType(expression: string, scope: ExpressionScope, checkedType: string | undefined): string | undefined {
    if (scope.kind !== 'applyConfiguration' && scope.kind !== 'jsonPatch') return checkedType
    try {
      const typed = this.typedEnvironment(scope.hasParams, true).check(rewriteObjectInitialisers(expression, {typed: true}))
      return typed.valid ? typed.type : undefined
    } catch {
      return undefined
    }
  }

  private environment(hasParams: boolean, hasAuthorizer: boolean): Env {
    const key = `${hasParams}/${hasAuthorizer}`
    let env = this.environments.get(key)
    if (!env) {
      env = baseEnvironment(hasParams, hasAuthorizer)
      installMetering(env)
      this.environments.set(key, env)
    }
    return env
  }

  compile(expression: string, scope: ExpressionScope): CelProgram | {errors: string[]} {
    const source = scope.kind === 'applyConfiguration' || scope.kind === 'jsonPatch' ? rewriteObjectInitialisers(expression) : expression
    const env = this.environment(scope.hasParams, scope.kind !== 'messageExpression')
    const errors: string[] = []
    const known = new Set(scope.variables)
    for (const match of withoutStrings(source).matchAll(/\bvariables\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
      if (!known.has(match[1])) errors.push(`undefined field '${match[1]}'`)
    }
    if (!scope.hasParams && /\bparams\b/.test(withoutStrings(source))) errors.push("undeclared reference to 'params' (the policy has no paramKind)")
    let program: ((context: Record<string, unknown>) => unknown) | undefined
    try {
      const parsed = env.parse(source)
      const checked = parsed.check()
      if (!checked.valid) errors.push(firstLine(checked.error))
      else if (errors.length === 0) {
        const wrongType = resultTypeError(scope.kind, this.resultType(expression, scope, checked.type), expression)
        if (wrongType) errors.push(wrongType)
      }
      program = (context) => parsed(context)
    } catch (error) {
      errors.push(firstLine(error))
    }
    if (errors.length > 0 || !program) return {errors}
    return new CompiledExpression(program, scope.kind)
  }
}

/** What an expression of a kind must evaluate to: the types as cel-go names them (for the message)
 *  and a test of the type cel-js infers. */
const RESULT_TYPES: Record<string, {names: string[]; accepts(type: string): boolean}> = {
  matchCondition: {names: ['bool'], accepts: (t) => t === 'bool'},
  validation: {names: ['bool'], accepts: (t) => t === 'bool'},
  messageExpression: {names: ['string'], accepts: (t) => t === 'string'},
  auditAnnotation: {names: ['string', 'null_type'], accepts: (t) => t === 'string' || t === 'null'},
  // a list of dyn (a list built from dyn values, or the empty list) may hold JSONPatch values
  jsonPatch: {names: ['list(JSONPatch)'], accepts: (t) => /^list(<(JSONPatch|dyn|T)>)?$/.test(t)},
  applyConfiguration: {names: ['Object'], accepts: (t) => t === 'Object'},
}

/** A cel-js type name as cel-go prints it: `list(map(string, int))`, `null_type`, `optional_type(int)`. */
function celGoTypeName(type: string, expression: string): string {
  if (type === 'ObjectField') return /^\s*(Object(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\{/.exec(expression)?.[1] ?? 'Object.<field>'
  return type
    .replace(/\bnull\b/g, 'null_type')
    .replace(/\boptional</g, 'optional_type<')
    .replace(/\bT\b/g, 'dyn')
    .replace(/\blist\b(?!<)/g, 'list<dyn>')
    .replace(/\bmap\b(?!<)/g, 'map<dyn, dyn>')
    .replace(/</g, '(')
    .replace(/>/g, ')')
}

/** Kubernetes' message for an expression of the wrong type (undefined: the type is right). */
function resultTypeError(kind: string, type: string | undefined, expression: string): string | undefined {
  const wanted = RESULT_TYPES[kind]
  if (!wanted || type === undefined || type === 'dyn' || wanted.accepts(type)) return undefined
  const got = celGoTypeName(type, expression)
  return wanted.names.length === 1 ? `must evaluate to ${wanted.names[0]} but got ${got}` : `must evaluate to one of [${wanted.names.join(' ')}] but got ${got}`
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.split('\n').filter((l) => l.trim() !== '').slice(0, 3).join(' ').replace(/\s+/g, ' ').trim()
}

let shared: AdmissionCelEngine | undefined

/** The process-wide engine (environments are built once). */
export function celEngine(): AdmissionCelEngine {
  shared ??= new AdmissionCelEngine()
  return shared
}
