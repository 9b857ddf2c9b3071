// The request authorizer: the Node,RBAC chain per request; a denial is Kubernetes' 403 message.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {allowAll, buildAuthorizer, parseAuthorizationModes, requestAuthorizer} from '../../src/apiserver/authorize.js'
import {defaultClusterRoleBindings, defaultClusterRoles, PodNodeGraph} from '../../src/apiserver/authz/index.js'
import type {RBACSource} from '../../src/apiserver/authz/index.js'
import {resolveRequestInfo} from '../../src/apiserver/requestinfo.js'

const bob = {username: 'bob', groups: ['system:authenticated']}
const admin = {username: 'orch-admin', groups: ['system:masters', 'system:authenticated']}
const info = (method: string, path: string) => resolveRequestInfo(method, path, new URLSearchParams(path.split('?')[1] ?? ''))

const clusterRoles = defaultClusterRoles()
const source: RBACSource = {
  roles: () => [],
  clusterRoles: () => clusterRoles,
  roleBindings: () => [],
  clusterRoleBindings: () => defaultClusterRoleBindings(),
  role: () => undefined,
  clusterRole: (name) => clusterRoles.find((r) => r.metadata?.name === name),
}
const authorize = requestAuthorizer(buildAuthorizer(['Node', 'RBAC'], source, new PodNodeGraph()))

describe('authorize', () => {
  it('cluster-admin is bound to system:masters: an admin may do everything', () => {
    assert.equal(authorize(admin, info('DELETE', '/api/v1/namespaces/default/configmaps/x')), undefined)
    assert.equal(authorize(admin, info('GET', '/metrics')), undefined)
  })

  it('system:masters is allowed before Node and RBAC are asked, as kube-apiserver\'s privileged-group authorizer', () => {
    const noBindings: RBACSource = {...source, clusterRoleBindings: () => []}
    const withoutRBAC = requestAuthorizer(buildAuthorizer(['Node', 'RBAC'], noBindings, new PodNodeGraph()))
    assert.equal(withoutRBAC(admin, info('DELETE', '/api/v1/namespaces/default/configmaps/x')), undefined)
    assert.equal(withoutRBAC(bob, info('DELETE', '/api/v1/namespaces/default/configmaps/x'))?.code, 403)
  })

  it('every authenticated user may use discovery and create SelfSubjectAccessReviews', () => {
    assert.equal(authorize(bob, info('GET', '/apis')), undefined)
    assert.equal(authorize(bob, info('POST', '/apis/authorization.orch.io/v1/selfsubjectaccessreviews')), undefined)
  })

  it('a denial names user, verb, resource, subresource and namespace as Kubernetes does', () => {
    const named = authorize(bob, info('GET', '/api/v1/namespaces/default/configmaps/x'))!
    assert.equal(named.code, 403)
    assert.equal(named.reason, 'Forbidden')
    assert.equal(named.message, 'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"')
    assert.deepEqual(named.toStatus().details, {name: 'x', kind: 'configmaps'})
    assert.equal(
      authorize(bob, info('PUT', '/apis/apps/v1/namespaces/web/statefulsets/db/scale'))!.message,
      'statefulsets.apps "db" is forbidden: User "bob" cannot update resource "statefulsets/scale" in API group "apps" in the namespace "web"',
    )
    assert.equal(authorize(bob, info('GET', '/api/v1/nodes'))!.message, 'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope')
    assert.equal(authorize(bob, info('GET', '/metrics'))!.message, 'forbidden: User "bob" cannot get path "/metrics"')
  })

  it('AlwaysAllow allows every request', () => {
    assert.equal(allowAll(bob, info('DELETE', '/api/v1/nodes/a')), undefined)
    const chain = requestAuthorizer(buildAuthorizer(['AlwaysAllow'], source, new PodNodeGraph()))
    assert.equal(chain(bob, info('DELETE', '/api/v1/nodes/a')), undefined)
  })

  it('--authorization-mode takes Node, RBAC and AlwaysAllow and refuses anything else', () => {
    assert.deepEqual(parseAuthorizationModes('Node,RBAC'), ['Node', 'RBAC'])
    assert.deepEqual(parseAuthorizationModes('AlwaysAllow'), ['AlwaysAllow'])
    assert.throws(() => parseAuthorizationModes('ABAC'), /unknown mode "ABAC"/)
    assert.throws(() => parseAuthorizationModes(''), /at least one mode/)
  })
})
