// clusterrole-aggregation: a ClusterRole with aggregationRule.clusterRoleSelectors gets as its rules
// the union of the rules of every other ClusterRole any selector matches, as Kubernetes'
// pkg/controller/clusterroleaggregation: selectors in order, the roles each matches by name, each
// rule once (the first time it is met). The rules are written by server-side apply as field manager
// clusterrole-aggregation-controller, forced. Any ClusterRole change requeues every aggregated role
// (a label, a rule or a role coming or going may change any union).
import type {AnyObject} from '../api/types.js'
import {Informer, type RestClient} from '../client/index.js'
import {labelSelectorFromObject, type LabelSelectorObject} from '../machinery/labels.js'
import type {Logger} from '../machinery/log.js'
import {Controller} from './controller.js'

export const CLUSTER_ROLE_LOCATOR = {group: 'rbac.orch.io', version: 'v1', resource: 'clusterroles'} as const
export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller'

const RULE_LISTS = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : []
}

/** equality.Semantic.DeepEqual of two PolicyRules: a missing list equals an empty one. */
export function sameRule(a: AnyObject, b: AnyObject): boolean {
  return RULE_LISTS.every((key) => {
    const x = stringList(a?.[key])
    const y = stringList(b?.[key])
    return x.length === y.length && x.every((v, i) => v === y[i])
  })
}

function sameRules(a: readonly AnyObject[], b: readonly AnyObject[]): boolean {
  return a.length === b.length && a.every((rule, i) => sameRule(rule, b[i]))
}

function byName(a: AnyObject, b: AnyObject): number {
  const x: string = a.metadata?.name ?? ''
  const y: string = b.metadata?.name ?? ''
  return x < y ? -1 : x > y ? 1 : 0
}

/** The rules an aggregated role should hold, from all ClusterRoles (throws on a selector that does
 *  not parse, as LabelSelectorAsSelector fails). */
export function aggregatedRules(role: AnyObject, clusterRoles: readonly AnyObject[]): AnyObject[] {
  const rules: AnyObject[] = []
  const selectors: unknown[] = Array.isArray(role.aggregationRule?.clusterRoleSelectors) ? role.aggregationRule.clusterRoleSelectors : []
  for (const selectorObject of selectors) {
    const selector = labelSelectorFromObject(selectorObject as LabelSelectorObject)
    const matching = clusterRoles.filter((r) => selector.matches(r.metadata?.labels ?? {})).sort(byName)
    for (const other of matching) {
      if (other.metadata?.name === role.metadata?.name) continue
      for (const rule of Array.isArray(other.rules) ? other.rules : []) {
        if (!rules.some((existing) => sameRule(existing, rule))) rules.push(rule)
      }
    }
  }
  return rules
}

export class ClusterRoleAggregationController {
  readonly informer: Informer<AnyObject>
  private readonly controller: Controller

  constructor(
    private readonly client: RestClient,
    logger: Logger,
  ) {
    this.controller = new Controller({name: 'clusterrole-aggregation', logger, reconcile: (name) => this.sync(name)})
    const enqueueAggregated = () => {
      for (const role of this.informer.list()) if (role.aggregationRule) this.controller.enqueue(role.metadata?.name ?? '')
    }
    this.informer = new Informer<AnyObject>(client, CLUSTER_ROLE_LOCATOR, {
      onAdd: enqueueAggregated,
      onUpdate: enqueueAggregated,
      onDelete: enqueueAggregated,
    })
  }

  async start(): Promise<void> {
    this.informer.start()
    await this.informer.waitForSync()
    this.controller.start()
  }

  async stop(): Promise<void> {
    await this.controller.stop()
    await this.informer.stop()
  }

  async sync(name: string): Promise<void> {
    const role = this.informer.get(name)
    if (!role?.aggregationRule) return
    const rules = aggregatedRules(role, this.informer.list())
    if (sameRules(rules, Array.isArray(role.rules) ? role.rules : [])) return
    const applied: AnyObject = {apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name}}
    // an empty union leaves rules out, so the apply takes away the ones this manager set before
    if (rules.length > 0) applied.rules = rules
    await this.client.patch({...CLUSTER_ROLE_LOCATOR, name}, 'apply', applied, {fieldManager: AGGREGATION_FIELD_MANAGER, force: true})
  }
}
