// The ValidatingAdmissionPolicy status controller (Kubernetes' validatingadmissionpolicy-status):
// for each policy generation not yet observed, every expression is type-checked against each kind
// the policy's matchConstraints name, and status.typeChecking.expressionWarnings (fieldRef + one line
// per kind with the checker's error) and status.observedGeneration are written through /status.
import {allDeclarations, apiVersionOf, type AnyObject, type KindDeclaration} from '../../api/index.js'
import {ApiStatusError, type RestClient} from '../../client/index.js'
import type {ReconcileResult} from '../../controllers/controller.js'
import {WatchedKind} from '../../controllers/watched-kind.js'
import type {Logger} from '../../machinery/log.js'
import {typeCheck} from '../cel/typecheck.js'

const POLICIES = {group: 'admissionregistration.orch.io', version: 'v1', resource: 'validatingadmissionpolicies'} as const

/** The kinds a policy's rules name (wildcards name none: nothing to type against). */
export function matchedKinds(policy: AnyObject, declarations: readonly KindDeclaration[] = allDeclarations): KindDeclaration[] {
  const out = new Set<KindDeclaration>()
  for (const rule of policy.spec?.matchConstraints?.resourceRules ?? []) {
    const groups: string[] = rule.apiGroups ?? []
    const versions: string[] = rule.apiVersions ?? []
    for (const entry of rule.resources ?? []) {
      const resource = String(entry).split('/')[0]
      if (resource === '*') continue
      for (const d of declarations) {
        if (d.virtual || d.resource !== resource) continue
        if (!groups.includes('*') && !groups.includes(d.group)) continue
        if (!versions.includes('*') && !versions.includes(d.version)) continue
        out.add(d)
      }
    }
  }
  return [...out]
}

/** The expressions of a policy with their field paths and kinds. */
function expressions(spec: AnyObject): {fieldRef: string; expression: string; kind: string}[] {
  const out: {fieldRef: string; expression: string; kind: string}[] = []
  const add = (fieldRef: string, expression: unknown, kind: string) => {
    if (typeof expression === 'string' && expression.trim()) out.push({fieldRef, expression, kind})
  }
  ;(spec.validations ?? []).forEach((v: AnyObject, i: number) => {
    add(`spec.validations[${i}].expression`, v.expression, 'validation')
    add(`spec.validations[${i}].messageExpression`, v.messageExpression, 'messageExpression')
  })
  ;(spec.auditAnnotations ?? []).forEach((a: AnyObject, i: number) => add(`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression, 'auditAnnotation'))
  ;(spec.matchConditions ?? []).forEach((c: AnyObject, i: number) => add(`spec.matchConditions[${i}].expression`, c.expression, 'matchCondition'))
  ;(spec.variables ?? []).forEach((v: AnyObject, i: number) => add(`spec.variables[${i}].expression`, v.expression, 'variable'))
  return out
}

export function expressionWarnings(policy: AnyObject, declarations?: readonly KindDeclaration[]): {fieldRef: string; warning: string}[] {
  const kinds = matchedKinds(policy, declarations)
  const hasParams = Boolean(policy.spec?.paramKind)
  const warnings: {fieldRef: string; warning: string}[] = []
  for (const {fieldRef, expression, kind} of expressions(policy.spec ?? {})) {
    const lines = kinds.flatMap((d) => {
      const error = typeCheck(expression, d, {kind, hasParams})
      return error ? [`${apiVersionOf(d)}, Kind=${d.kind}: ${error}`] : []
    })
    if (lines.length > 0) warnings.push({fieldRef, warning: lines.join('\n')})
  }
  return warnings
}

export class PolicyStatusController {
  private readonly watched: WatchedKind

  constructor(
    private readonly client: RestClient,
    logger: Logger,
  ) {
    this.watched = new WatchedKind(client, {
      name: 'admissionpolicystatus',
      locator: POLICIES,
      logger,
      wants: (policy: AnyObject) => policy.status?.observedGeneration !== policy.metadata?.generation,
      reconcile: (key) => this.reconcile(key),
    })
  }

  start(): Promise<void> {
    return this.watched.start()
  }

  stop(): Promise<void> {
    return this.watched.stop()
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const policy = this.watched.informer.get(name)
    if (!policy || policy.status?.observedGeneration === policy.metadata?.generation) return
    const warnings = expressionWarnings(policy)
    const status = {...(policy.status ?? {}), observedGeneration: policy.metadata?.generation, typeChecking: warnings.length > 0 ? {expressionWarnings: warnings} : {}}
    try {
      await this.client.update({...POLICIES, name, subresource: 'status'}, {...policy, status})
    } catch (error) {
      if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) return
      throw error
    }
  }
}
