// MutatingAdmissionPolicy: for every binding whose policy matches (CREATE, UPDATE, CONNECT only),
// once per param object, the mutations in order: JSONPatch (CEL returning JSONPatch values, applied
// as RFC 6902) or ApplyConfiguration (CEL object initialisation merged with server-side-apply
// semantics; a configuration that would set an atomic list, map or struct is refused). Each
// evaluation has its own cost budget. Errors obey failurePolicy as Kubernetes' generic policy
// dispatcher has them: every binding is run, the errors of the Fail policies are collected
// (a misconfigured policy or binding as `failed to configure policy|binding: ...`; a match condition
// or mutation that fails with reason Invalid), and the first answers the request: 403, its reason,
// every error a cause. reinvocationPolicy IfNeeded runs a policy once more when a later policy changed
// the object after it.
import {isDeepStrictEqual} from 'node:util'
import type {AnyObject, ObjectSchema, Schema} from '../../api/types.js'
import {apply} from '../../machinery/apply.js'
import type {Logger} from '../../machinery/log.js'
import {applyJsonPatch} from '../../machinery/patch.js'
import {ApiError, type StatusReason} from '../../machinery/status.js'
import type {AdmissionAttributes, MutatingPlugin} from '../types.js'
import {policyNamespace} from '../matching.js'
import {activationFor, bindingMatches, compileBase, compileOne, CompileCache, evaluateMatchConditions, run, type Compiled, type CompiledBase} from './compiled.js'
import {POLICY_EVALUATION_BUDGET, type CelEngine, type PolicyAuthorizer} from './engine.js'
import {resolveParams, type ParamLookup} from './params.js'
import {isPolicyResource} from './validating.js'

interface CompiledMutation {
  patchType: 'JSONPatch' | 'ApplyConfiguration'
  compiled: Compiled
}

interface CompiledPolicy extends CompiledBase {
  mutations: CompiledMutation[]
}

export interface MutatingPolicySources {
  policies(): AnyObject[]
  bindings(): AnyObject[]
  params: ParamLookup
  engine: CelEngine
  authorizer?: PolicyAuthorizer
  logger: Logger
}

function compilePolicy(engine: CelEngine, policy: AnyObject): CompiledPolicy {
  const spec = policy.spec ?? {}
  const base = compileBase(engine, spec)
  const variables = base.variables.map((v) => v.name)
  const mutations = (Array.isArray(spec.mutations) ? spec.mutations : []).map((m: AnyObject) => {
    const patchType = m.patchType === 'ApplyConfiguration' ? 'ApplyConfiguration' : 'JSONPatch'
    const expression = patchType === 'ApplyConfiguration' ? m.applyConfiguration?.expression : m.jsonPatch?.expression
    return {patchType, compiled: compileOne(engine, expression, {kind: patchType === 'ApplyConfiguration' ? 'applyConfiguration' : 'jsonPatch', hasParams: base.hasParams, variables})} as CompiledMutation
  })
  return {...base, mutations}
}

/** The first path in `config` that would set an atomic list, map or struct (undefined: none). */
export function atomicPath(config: unknown, schema: Schema | undefined, path: string): string | undefined {
  if (!schema || config === null || typeof config !== 'object') return undefined
  if (schema.type === 'object') {
    if (schema.structType === 'atomic' && path) return path
    for (const [key, value] of Object.entries(config as AnyObject)) {
      if (path === '' && (key === 'apiVersion' || key === 'kind')) continue
      const found = atomicPath(value, (schema as ObjectSchema).fields[key], path ? `${path}.${key}` : key)
      if (found) return found
    }
    return undefined
  }
  if (schema.type === 'map') {
    if (schema.mapType === 'atomic') return path
    for (const [key, value] of Object.entries(config as AnyObject)) {
      const found = atomicPath(value, schema.values, `${path}[${key}]`)
      if (found) return found
    }
    return undefined
  }
  if (schema.type === 'array') {
    if (schema.listType === undefined || schema.listType === 'atomic') return path
    for (const [index, value] of (config as unknown[]).entries()) {
      const found = atomicPath(value, schema.items, `${path}[${index}]`)
      if (found) return found
    }
  }
  return undefined
}

/** An error of a Fail policy: Kubernetes' generic.PolicyError. */
interface PolicyError {
  policy: string
  /** absent for an error of the policy itself (its paramKind) */
  binding?: string
  message: string
  /** '' leaves admission.NewForbidden's Forbidden */
  reason: StatusReason
}

function policyErrorMessage(e: PolicyError): string {
  return e.binding === undefined ? `policy "${e.policy}" denied request: ${e.message}` : `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`
}

/** The request's answer to the errors of the Fail policies (none: undefined). */
function policyErrorsAnswer(errors: PolicyError[], attributes: AdmissionAttributes): ApiError | undefined {
  if (errors.length === 0) return undefined
  const messages = errors.map(policyErrorMessage)
  return new ApiError(403, errors[0].reason || 'Forbidden', messages[0], {
    name: attributes.name || attributes.object?.metadata?.name || '',
    group: attributes.resource.group,
    kind: attributes.resource.resource,
    causes: messages.map((message) => ({message})),
  })
}

export class MutatingPolicyPlugin implements MutatingPlugin {
  readonly name = 'MutatingAdmissionPolicy'
  private readonly cache = new CompileCache<CompiledPolicy>()

  constructor(private readonly sources: MutatingPolicySources) {}

  async admit(attributes: AdmissionAttributes): Promise<AnyObject | void> {
    if (isPolicyResource(attributes) || attributes.operation === 'DELETE' || !attributes.object) return
    const bindings = this.sources.bindings()
    if (bindings.length === 0) return
    const policies = new Map(this.sources.policies().map((p) => [p.metadata?.name as string, p]))
    this.cache.retain([...policies.values()])
    // which (policy, binding) last left the object as it is, for IfNeeded reinvocation
    const ranAt: {policy: AnyObject; binding: AnyObject; after: AnyObject}[] = []
    const errors: PolicyError[] = []
    for (const binding of bindings) {
      const policy = policies.get(binding.spec?.policyName)
      if (!policy) continue
      if (await this.evaluateBinding(policy, binding, attributes, errors)) ranAt.push({policy, binding, after: structuredClone(attributes.object!)})
    }
    const failed = policyErrorsAnswer(errors, attributes)
    if (failed) throw failed
    for (const run of ranAt) {
      if (run.policy.spec?.reinvocationPolicy !== 'IfNeeded') continue
      if (isDeepStrictEqual(run.after, attributes.object)) continue
      await this.evaluateBinding(run.policy, run.binding, attributes, errors)
    }
    const failedAgain = policyErrorsAnswer(errors, attributes)
    if (failedAgain) throw failedAgain
    return attributes.object ?? undefined
  }

  /** Runs one binding's mutations, adding the errors of a Fail policy to `errors`; true when it matched. */
  private async evaluateBinding(policy: AnyObject, binding: AnyObject, attributes: AdmissionAttributes, errors: PolicyError[]): Promise<boolean> {
    const policyName: string = policy.metadata?.name
    const bindingName: string = binding.metadata?.name
    const spec = policy.spec ?? {}
    if (!(await bindingMatches(policy, binding, attributes))) return false
    const ignore = spec.failurePolicy === 'Ignore'
    const failed = (why: string, reason: StatusReason, of: 'policy' | 'binding' = 'binding'): false => {
      this.sources.logger.warn('mutating admission policy failed', {policy: policyName, binding: bindingName, failurePolicy: ignore ? 'Ignore' : 'Fail', error: why})
      if (!ignore) errors.push({policy: policyName, binding: of === 'binding' ? bindingName : undefined, message: why, reason})
      return false
    }
    const resolved = resolveParams(spec, binding, policyNamespace(attributes), this.sources.params)
    if ('error' in resolved) return failed(`failed to configure ${resolved.of}: ${resolved.error}`, '', resolved.of)
    const compiled = this.cache.get(policy, () => compilePolicy(this.sources.engine, policy))
    let matchedAny = false
    for (const params of resolved.params) {
      const budget = {remaining: POLICY_EVALUATION_BUDGET}
      const activation = await activationFor(attributes, compiled, params, this.sources.authorizer)
      const matched = evaluateMatchConditions(compiled.matchConditions, activation, budget)
      if ('error' in matched) {
        failed(matched.error, 'Invalid')
        continue
      }
      if (!matched.match) continue
      matchedAny = true
      for (const [index, mutation] of compiled.mutations.entries()) {
        // each mutation sees the object as the previous one left it (a fresh activation: contexts are cached per activation)
        const current = {...activation, object: attributes.object}
        try {
          const result = run(mutation.compiled, current, budget)
          attributes.object = mutation.patchType === 'JSONPatch' ? this.jsonPatch(attributes.object!, result) : this.applyConfiguration(attributes, result)
        } catch (error) {
          failed(`mutation ${index} failed: ${(error as Error).message}`, 'Invalid')
        }
      }
    }
    return matchedAny
  }

  private jsonPatch(object: AnyObject, result: unknown): AnyObject {
    if (!Array.isArray(result)) throw new Error('a JSONPatch mutation must evaluate to a list of JSONPatch')
    const operations = result.map((p: AnyObject) => {
      const op: AnyObject = {op: p.op, path: p.path}
      if (p.value !== undefined) op.value = normalize(p.value)
      if (p.from) op.from = p.from
      return op
    })
    return applyJsonPatch(object, operations) as AnyObject
  }

  private applyConfiguration(attributes: AdmissionAttributes, result: unknown): AnyObject {
    if (result === null || typeof result !== 'object' || Array.isArray(result)) throw new Error('an ApplyConfiguration mutation must evaluate to an Object')
    const config = normalize(result) as AnyObject
    const schema = attributes.declaration.schema
    const atomic = atomicPath(config, schema, '')
    if (atomic) throw new Error(`may not mutate atomic arrays, maps or structs: ${atomic}`)
    const object = attributes.object!
    const applied = {...config, apiVersion: object.apiVersion, kind: object.kind, metadata: {...(config.metadata ?? {}), name: object.metadata?.name}}
    const outcome = apply(object, applied, schema, 'mutating-admission-policy', {force: true, now: new Date(), apiVersion: String(object.apiVersion), kind: String(object.kind)})
    if ('conflicts' in outcome) throw new Error('the apply configuration conflicts with the object')
    const merged = outcome.object
    // a policy's merge is not a field manager of the object
    if (object.metadata?.managedFields) merged.metadata = {...merged.metadata, managedFields: object.metadata.managedFields}
    else if (merged.metadata) delete merged.metadata.managedFields
    return merged
  }
}

/** CEL integers may come back as bigint: JSON numbers for the object. */
function normalize(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (Array.isArray(value)) return value.map(normalize)
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]))
  return value
}
