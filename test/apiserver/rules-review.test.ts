// SelfSubjectRulesReview and LocalSubjectAccessReview answered from an authorizer chain (unit level).
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AnyObject, UserInfo} from '../../src/api/types.js'
import {buildAuthorizer} from '../../src/apiserver/authorize.js'
import {defaultRBACObjects, localSubjectAccessReview, PodNodeGraph, selfSubjectRulesReview, staticSource} from '../../src/apiserver/authz/index.js'
import {isApiError} from '../../src/machinery/status.js'

const user = (username: string, ...groups: string[]): UserInfo => ({username, groups})
const bob = user('bob', 'system:authenticated')
const objects: AnyObject[] = [
  ...defaultRBACObjects(),
  {apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {namespace: 'team-a', name: 'cm'}, rules: [{verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['app']}]},
  {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {namespace: 'team-a', name: 'bob-cm'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'cm'}, subjects: [{kind: 'User', name: 'bob'}]},
  {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {namespace: 'team-b', name: 'dangling'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'gone'}, subjects: [{kind: 'User', name: 'bob'}]},
]
const authorizer = buildAuthorizer(['Node', 'RBAC'], staticSource(objects), new PodNodeGraph())
const review = (namespace?: string) => ({apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec: namespace === undefined ? {} : {namespace}})

function rejects(fn: () => unknown, code: number, message: string): void {
  assert.throws(fn, (e: unknown) => isApiError(e) && e.code === code && e.message === message)
}

describe('SelfSubjectRulesReview', () => {
  it('lists RBAC\'s rules in the namespace: "resourceRules" with resourceNames, "nonResourceRules", incomplete false', () => {
    const status = selfSubjectRulesReview(authorizer, bob, review('team-a')).status
    assert.equal(status.incomplete, false)
    assert.equal(status.evaluationError, undefined)
    assert.ok(status.resourceRules.some((r: AnyObject) => r.resources?.[0] === 'configmaps' && r.resourceNames?.[0] === 'app'))
    assert.ok(status.resourceRules.some((r: AnyObject) => r.resources?.includes('selfsubjectaccessreviews')))
    assert.ok(status.nonResourceRules.some((r: AnyObject) => r.nonResourceURLs?.includes('/version')))
    assert.ok(!status.resourceRules.some((r: AnyObject) => 'nonResourceURLs' in r), 'rules split by kind')
    // elsewhere only the cluster-wide rules
    assert.ok(!selfSubjectRulesReview(authorizer, bob, review('team-c')).status.resourceRules.some((r: AnyObject) => r.resources?.[0] === 'configmaps'))
  })

  it('reports a role it cannot resolve in evaluationError, still complete (as RBAC\'s RulesFor)', () => {
    const status = selfSubjectRulesReview(authorizer, bob, review('team-b')).status
    assert.equal(status.incomplete, false)
    assert.equal(status.evaluationError, 'role.rbac.orch.io "gone" not found')
  })

  it('for a node: "node authorizer does not support user rule resolution", incomplete', () => {
    const status = selfSubjectRulesReview(authorizer, user('system:node:n1', 'system:nodes', 'system:authenticated'), review('default')).status
    assert.equal(status.incomplete, true)
    assert.equal(status.evaluationError, 'node authorizer does not support user rule resolution')
  })

  it('AlwaysAllow lists everything; the answer has no spec', () => {
    const out = selfSubjectRulesReview(buildAuthorizer(['AlwaysAllow'], staticSource([]), new PodNodeGraph()), bob, review('x'))
    assert.deepEqual(out.spec, {})
    assert.deepEqual(out.status, {
      resourceRules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*']}],
      nonResourceRules: [{verbs: ['*'], nonResourceURLs: ['*']}],
      incomplete: false,
    })
  })

  it('"no namespace on request" and "no user present on request" are 400', () => {
    rejects(() => selfSubjectRulesReview(authorizer, bob, review()), 400, 'no namespace on request')
    rejects(() => selfSubjectRulesReview(authorizer, undefined, review('x')), 400, 'no user present on request')
  })
})

describe('LocalSubjectAccessReview', () => {
  const lsar = (metadata: AnyObject, spec: AnyObject) => ({apiVersion: 'authorization.orch.io/v1', kind: 'LocalSubjectAccessReview', metadata, spec})
  const attrs = (namespace: string) => ({resourceAttributes: {namespace, verb: 'get', resource: 'configmaps', name: 'app'}})

  it('answers for spec.user in the namespace', () => {
    const out = localSubjectAccessReview(authorizer, lsar({namespace: 'team-a'}, {user: 'bob', ...attrs('team-a')}), 'team-a')
    assert.equal(out.kind, 'LocalSubjectAccessReview')
    assert.equal(out.status.allowed, true)
    assert.deepEqual(out.metadata, {namespace: 'team-a'})
  })

  it('is 422 as Kubernetes\' ValidateLocalSubjectAccessReview: "must match metadata.namespace", "disallowed on this kind of request", "must be empty except for namespace"', () => {
    const prefix = 'LocalSubjectAccessReview.authorization.orch.io "" is invalid: '
    rejects(() => localSubjectAccessReview(authorizer, lsar({namespace: 'team-a'}, {user: 'bob', ...attrs('team-b')}), 'team-a'), 422,
      `${prefix}spec.resourceAttributes.namespace: Invalid value: "team-b": must match metadata.namespace`)
    rejects(() => localSubjectAccessReview(authorizer, lsar({namespace: 'team-a'}, {user: 'bob', nonResourceAttributes: {path: '/x', verb: 'get'}}), 'team-a'), 422,
      `${prefix}spec.nonResourceAttributes: Invalid value: {"path":"/x","verb":"get"}: disallowed on this kind of request`)
    rejects(() => localSubjectAccessReview(authorizer, lsar({namespace: 'team-a', name: 'n'}, {user: 'bob', ...attrs('team-a')}), 'team-a'), 422,
      `${prefix}metadata: Invalid value: {"namespace":"team-a","name":"n"}: must be empty except for namespace`)
  })
})
