// The clusterrole-aggregation controller's union of rules (Kubernetes' syncClusterRole).
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {defaultClusterRoles} from '../../src/apiserver/authz/index.js'
import {aggregatedRules} from '../../src/controllers/clusterroleaggregation.js'

const role = (name: string, labels: Record<string, string>, rules: AnyObject[], aggregationRule?: AnyObject): AnyObject => ({
  kind: 'ClusterRole',
  metadata: {name, labels},
  rules,
  ...(aggregationRule ? {aggregationRule} : {}),
})
const read = (resource: string) => ({apiGroups: [''], resources: [resource], verbs: ['get']})

describe('clusterrole-aggregation', () => {
  it('"the union of the rules of all ClusterRoles matching any selector": selectors in order, roles by name, each rule once, itself skipped', () => {
    const aggregate = role('agg', {a: 'true'}, [read('stale')], {clusterRoleSelectors: [{matchLabels: {b: 'true'}}, {matchLabels: {a: 'true'}}]})
    const roles = [
      aggregate,
      role('z-a', {a: 'true'}, [read('pods'), read('configmaps')]),
      role('m-b', {b: 'true'}, [read('configmaps')]),
      role('c-b', {b: 'true'}, [read('services'), {resources: ['configmaps'], verbs: ['get'], apiGroups: [''], resourceNames: []}]),
      role('other', {}, [read('nodes')]),
    ]
    assert.deepEqual(aggregatedRules(aggregate, roles), [read('services'), {resources: ['configmaps'], verbs: ['get'], apiGroups: [''], resourceNames: []}, read('pods')])
  })

  it('matches nothing for no selectors; matchExpressions select too', () => {
    assert.deepEqual(aggregatedRules(role('agg', {}, [], {clusterRoleSelectors: []}), [role('x', {a: 'true'}, [read('pods')])]), [])
    const byExpression = role('agg', {}, [], {clusterRoleSelectors: [{matchExpressions: [{key: 'a', operator: 'Exists'}]}]})
    assert.deepEqual(aggregatedRules(byExpression, [byExpression, role('x', {a: 'v'}, [read('pods')])]), [read('pods')])
  })

  it('the default view, edit and admin aggregate Kubernetes\' chain: view into edit into admin', () => {
    const defaults = defaultClusterRoles()
    const find = (name: string) => defaults.find((r) => r.metadata?.name === name)!
    const view = {...find('view'), rules: aggregatedRules(find('view'), defaults)}
    assert.deepEqual(view.rules, find('system:aggregate-to-view').rules)
    const withView = defaults.map((r) => (r.metadata?.name === 'view' ? view : r))
    assert.deepEqual(aggregatedRules(find('edit'), withView), [...find('system:aggregate-to-edit').rules, ...view.rules])
    assert.equal(find('edit').metadata?.labels['rbac.authorization.orch.io/aggregate-to-admin'], 'true')
    assert.equal(find('admin').rules, undefined, 'filled by the controller, as Kubernetes leaves rules null')
  })
})
