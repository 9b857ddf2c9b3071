import {after, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {declarations as rbacDeclarations} from '../../src/api/rbac/index.js'
import type {AnyObject, KindDeclaration, UserInfo} from '../../src/api/types.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {resolveRequestInfo} from '../../src/apiserver/requestinfo.js'
import {
  attributesFor,
  Authorizer,
  AUTOUPDATE_ANNOTATION,
  BOOTSTRAPPING_LABEL,
  defaultClusterRoleBindings,
  defaultClusterRoles,
  defaultRBACObjects,
  forbiddenError,
  forbiddenMessage,
  NodeAuthorizer,
  PodNodeGraph,
  RBACAuthorizer,
  registrySource,
  selfSubjectAccessReview,
  staticSource,
  subjectAccessReview,
  type AuthorizationAttributes,
} from '../../src/apiserver/authz/index.js'
import {isApiError} from '../../src/machinery/status.js'
import {openSqliteStore} from '../../src/storage/sqlite.js'

const rbac = 'rbac.orch.io/v1'
const user = (username: string, ...groups: string[]): UserInfo => ({username, groups})
const bob = user('bob', 'system:authenticated')

function res(u: UserInfo, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes {
  return {user: u, verb, isResourceRequest: true, apiGroup: '', resource, ...extra}
}
function path(u: UserInfo, verb: string, p: string): AuthorizationAttributes {
  return {user: u, verb, isResourceRequest: false, path: p}
}

function role(namespace: string, name: string, rules: AnyObject[]): AnyObject {
  return {apiVersion: rbac, kind: 'Role', metadata: {namespace, name}, rules}
}
function clusterRole(name: string, rules: AnyObject[]): AnyObject {
  return {apiVersion: rbac, kind: 'ClusterRole', metadata: {name}, rules}
}
function roleBinding(namespace: string, name: string, roleRef: AnyObject, subjects: AnyObject[]): AnyObject {
  return {apiVersion: rbac, kind: 'RoleBinding', metadata: {namespace, name}, roleRef: {apiGroup: 'rbac.orch.io', ...roleRef}, subjects}
}
function clusterRoleBinding(name: string, roleName: string, subjects: AnyObject[]): AnyObject {
  return {apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: {name}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: roleName}, subjects}
}
const User = (name: string) => ({kind: 'User', apiGroup: 'rbac.orch.io', name})
const Group = (name: string) => ({kind: 'Group', apiGroup: 'rbac.orch.io', name})

const fixtures: AnyObject[] = [
  ...defaultRBACObjects(),
  role('team-a', 'pod-reader', [{verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods']}]),
  roleBinding('team-a', 'read-pods', {kind: 'Role', name: 'pod-reader'}, [User('bob')]),
  clusterRole('configmap-editor', [{verbs: ['get', 'update'], apiGroups: [''], resources: ['configmaps']}]),
  roleBinding('team-a', 'devs-edit', {kind: 'ClusterRole', name: 'configmap-editor'}, [Group('devs')]),
  clusterRole('app-config-reader', [{verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config']}]),
  clusterRoleBinding('carol-app-config', 'app-config-reader', [User('carol')]),
  clusterRole('csr-approver', [{verbs: ['update'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests/approval']}]),
  clusterRoleBinding('approver', 'csr-approver', [User('approver')]),
  clusterRole('status-writer', [{verbs: ['patch'], apiGroups: ['*'], resources: ['*/status']}]),
  clusterRoleBinding('status-writer', 'status-writer', [User('statusbot')]),
  clusterRole('logs', [{verbs: ['get'], nonResourceURLs: ['/logs*', '/metrics']}]),
  clusterRoleBinding('logs', 'logs', [User('ops')]),
  role('team-a', 'builder', [{verbs: ['create'], apiGroups: ['apps'], resources: ['deployments']}]),
  roleBinding('team-a', 'builder', {kind: 'Role', name: 'builder'}, [{kind: 'ServiceAccount', name: 'builder'}]),
  roleBinding('team-a', 'dangling', {kind: 'Role', name: 'ghost'}, [User('dave')]),
]

const boundPod = (name: string, nodeName: string): AnyObject => ({metadata: {namespace: 'team-a', name}, spec: {nodeName}})
const graph = PodNodeGraph.of([boundPod('web-1', 'node-a'), boundPod('web-2', 'node-b')])
const authorizer = new Authorizer({source: staticSource(fixtures), graph})
const allowed = (a: AuthorizationAttributes) => authorizer.authorize(a).decision === 'allow'

describe('RBAC authorizer', () => {
  it('lets system:masters do everything through cluster-admin', () => {
    const admin = user('admin', 'system:masters', 'system:authenticated')
    const result = authorizer.authorize(res(admin, 'delete', 'certificatesigningrequests', {apiGroup: 'certificates.orch.io', name: 'x'}))
    assert.deepEqual(result, {
      decision: 'allow',
      reason: 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"',
    })
    for (const a of [
      res(admin, 'deletecollection', 'pods', {namespace: 'kube'}),
      res(admin, 'update', 'nodes', {subresource: 'status', name: 'n'}),
      res(admin, 'escalate', 'clusterroles', {apiGroup: 'rbac.orch.io'}),
      path(admin, 'get', '/anything/at/all'),
      path(admin, 'post', '/'),
    ]) {
      assert.ok(allowed(a), JSON.stringify(a))
    }
    assert.ok(!allowed(res(user('admin', 'system:authenticated'), 'get', 'pods', {namespace: 'x'})), 'the group, not the name, grants it')
  })

  it('grants a Role only in its namespace', () => {
    const rbacOnly = new RBACAuthorizer(staticSource(fixtures))
    assert.deepEqual(rbacOnly.authorize(res(bob, 'get', 'pods', {namespace: 'team-a', name: 'web-1'})), {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "read-pods/team-a" of Role "pod-reader" to User "bob"',
    })
    assert.ok(allowed(res(bob, 'watch', 'pods', {namespace: 'team-a'})))
    assert.deepEqual(rbacOnly.authorize(res(bob, 'get', 'pods', {namespace: 'team-b', name: 'web-1'})), {decision: 'no-opinion', reason: ''})
    assert.ok(!allowed(res(bob, 'list', 'pods')), 'all namespaces is cluster scope')
    assert.ok(!allowed(res(bob, 'delete', 'pods', {namespace: 'team-a', name: 'web-1'})))
    assert.ok(!allowed(res(bob, 'get', 'pods', {namespace: 'team-a', apiGroup: 'apps'})))
    assert.ok(!allowed(res(bob, 'get', 'pods', {namespace: 'team-a', subresource: 'log', name: 'web-1'})), 'pods does not cover pods/log')
  })

  it('scopes a RoleBinding to a ClusterRole to the binding namespace', () => {
    const dev = user('erin', 'devs')
    assert.deepEqual(authorizer.authorize(res(dev, 'update', 'configmaps', {namespace: 'team-a', name: 'c'})), {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "devs-edit/team-a" of ClusterRole "configmap-editor" to Group "devs"',
    })
    assert.ok(!allowed(res(dev, 'update', 'configmaps', {namespace: 'team-b', name: 'c'})))
    assert.ok(!allowed(res(dev, 'get', 'configmaps', {name: 'c'})))
  })

  it('limits a rule with resourceNames to those names', () => {
    const carol = user('carol')
    assert.ok(allowed(res(carol, 'get', 'configmaps', {namespace: 'any', name: 'app-config'})))
    assert.ok(!allowed(res(carol, 'get', 'configmaps', {namespace: 'any', name: 'other'})))
    assert.ok(!allowed(res(carol, 'list', 'configmaps', {namespace: 'any'})), 'a list has no name')
  })

  it('matches subresources separately: resource/sub and */sub', () => {
    const approver = user('approver')
    const csr = {apiGroup: 'certificates.orch.io', name: 'csr-1'}
    assert.ok(allowed(res(approver, 'update', 'certificatesigningrequests', {...csr, subresource: 'approval'})))
    assert.ok(!allowed(res(approver, 'update', 'certificatesigningrequests', {...csr, subresource: 'status'})))
    assert.ok(!allowed(res(approver, 'update', 'certificatesigningrequests', csr)))
    const bot = user('statusbot')
    assert.ok(allowed(res(bot, 'patch', 'pods', {namespace: 'x', name: 'p', subresource: 'status'})))
    assert.ok(allowed(res(bot, 'patch', 'deployments', {apiGroup: 'apps', namespace: 'x', name: 'd', subresource: 'status'})))
    assert.ok(!allowed(res(bot, 'patch', 'pods', {namespace: 'x', name: 'p'})))
    assert.ok(!allowed(res(bot, 'patch', 'pods', {namespace: 'x', name: 'p', subresource: 'ephemeralcontainers'})))
  })

  it('matches nonResourceURLs exactly or by a * suffix', () => {
    const ops = user('ops')
    for (const p of ['/logs', '/logs/', '/logs/kubelet.log', '/logsfoo', '/metrics']) assert.ok(allowed(path(ops, 'get', p)), p)
    assert.ok(!allowed(path(ops, 'get', '/metrics/extra')))
    assert.ok(!allowed(path(ops, 'post', '/metrics')))
    // the default discovery roles
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/openapi/v3', '/version', '/healthz', '/readyz']) {
      assert.ok(allowed(path(bob, 'get', p)), p)
    }
    assert.ok(!allowed(path(bob, 'get', '/apisx')))
    assert.ok(!allowed(path(bob, 'get', '/metrics')))
    const anonymous = user('system:anonymous', 'system:unauthenticated')
    assert.ok(allowed(path(anonymous, 'get', '/healthz')))
    assert.ok(!allowed(path(anonymous, 'get', '/apis')))
  })

  it('binds ServiceAccount subjects, a missing namespace taking the binding namespace', () => {
    const sa = user('system:serviceaccount:team-a:builder', 'system:serviceaccounts')
    assert.deepEqual(authorizer.authorize(res(sa, 'create', 'deployments', {apiGroup: 'apps', namespace: 'team-a'})), {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "builder/team-a" of Role "builder" to ServiceAccount "builder/team-a"',
    })
    assert.ok(!allowed(res(user('system:serviceaccount:team-b:builder'), 'create', 'deployments', {apiGroup: 'apps', namespace: 'team-a'})))
  })

  it('reports roles it cannot resolve as the reason', () => {
    const result = authorizer.authorize(res(user('dave'), 'get', 'pods', {namespace: 'team-a'}))
    assert.deepEqual(result, {decision: 'deny', reason: 'RBAC: role.rbac.orch.io "ghost" not found'})
    const two = new RBACAuthorizer(
      staticSource([
        clusterRoleBinding('a', 'missing-1', [User('dave')]),
        clusterRoleBinding('b', 'missing-2', [User('dave')]),
        clusterRoleBinding('c', 'missing-1', [User('dave')]),
      ]),
    )
    assert.equal(
      two.authorize(res(user('dave'), 'get', 'pods')).reason,
      'RBAC: [clusterrole.rbac.orch.io "missing-1" not found, clusterrole.rbac.orch.io "missing-2" not found]',
    )
  })

  it('lists the rules that apply (rulesFor)', () => {
    const {rules, errors} = authorizer.rbac!.rulesFor(bob, 'team-a')
    assert.deepEqual(errors, [])
    assert.ok(rules.some((r) => r.resources?.includes('pods')))
    assert.ok(rules.some((r) => r.nonResourceURLs?.includes('/apis/*')))
  })
})

describe('Node authorizer', () => {
  const nodeA = user('system:node:node-a', 'system:nodes', 'system:authenticated')
  const node = new NodeAuthorizer(graph)
  const lease = {apiGroup: 'coordination.orch.io', namespace: 'orch-node-lease'}

  it('lets a node write Nodes (NodeRestriction keeps it to its own), its own Lease and its pods\' status, not another node\'s', () => {
    assert.ok(allowed(res(nodeA, 'create', 'nodes')))
    assert.ok(allowed(res(nodeA, 'update', 'nodes', {name: 'node-a'})))
    assert.ok(allowed(res(nodeA, 'patch', 'nodes', {name: 'node-a', subresource: 'status'})))
    // "nodes and node status (enable the NodeRestriction admission plugin to limit a kubelet to modify
    // its own node)": the authorizer allows another node's writes, admission refuses them
    assert.ok(allowed(res(nodeA, 'patch', 'nodes', {name: 'node-b', subresource: 'status'})))
    assert.ok(allowed(res(nodeA, 'update', 'nodes', {name: 'node-b'})))
    assert.ok(!allowed(res(nodeA, 'delete', 'nodes', {name: 'node-a'})))

    for (const verb of ['get', 'update', 'patch', 'delete']) assert.ok(allowed(res(nodeA, verb, 'leases', {...lease, name: 'node-a'})), verb)
    assert.ok(allowed(res(nodeA, 'create', 'leases', lease)))
    assert.ok(!allowed(res(nodeA, 'update', 'leases', {...lease, name: 'node-b'})))
    assert.ok(!allowed(res(nodeA, 'create', 'leases', {...lease, name: 'node-b'})))
    assert.ok(!allowed(res(nodeA, 'update', 'leases', {...lease, namespace: 'default', name: 'node-a'})))
    assert.ok(!allowed(res(nodeA, 'list', 'leases', lease)))
    assert.deepEqual(node.authorize(res(nodeA, 'update', 'leases', {...lease, name: 'node-b'})), {
      decision: 'no-opinion',
      reason: 'can only access node lease with the same name as the requesting node',
    })

    assert.ok(allowed(res(nodeA, 'update', 'pods', {namespace: 'team-a', name: 'web-1', subresource: 'status'})))
    assert.ok(allowed(res(nodeA, 'patch', 'pods', {namespace: 'team-a', name: 'web-1', subresource: 'status'})))
    // authorizePod allows status writes of any pod: NodeRestriction's admitPodStatus keeps them to its own
    assert.ok(allowed(res(nodeA, 'patch', 'pods', {namespace: 'team-a', name: 'web-2', subresource: 'status'})))
    assert.ok(!allowed(res(nodeA, 'update', 'pods', {namespace: 'team-a', name: 'web-1'})))
  })

  it('lets a node read and report what it needs, and nothing else', () => {
    assert.ok(allowed(res(nodeA, 'list', 'services')))
    assert.ok(allowed(res(nodeA, 'get', 'services', {namespace: 'x', name: 'y'})))
    assert.ok(allowed(res(nodeA, 'create', 'events', {namespace: 'team-a'})))
    assert.ok(allowed(res(nodeA, 'create', 'certificatesigningrequests', {apiGroup: 'certificates.orch.io'})))
    assert.ok(allowed(res(nodeA, 'watch', 'certificatesigningrequests', {apiGroup: 'certificates.orch.io'})))
    assert.ok(allowed(res(nodeA, 'create', 'tokenreviews', {apiGroup: 'authentication.orch.io'})))
    assert.ok(allowed(res(nodeA, 'create', 'subjectaccessreviews', {apiGroup: 'authorization.orch.io'})))
    assert.ok(!allowed(res(nodeA, 'get', 'secrets', {namespace: 'x', name: 'y'})))
    assert.ok(allowed(res(nodeA, 'delete', 'pods', {namespace: 'team-a', name: 'web-1'})), 'a pod bound to it, once stopped')
    assert.ok(allowed(res(nodeA, 'delete', 'pods', {namespace: 'team-a', name: 'web-2'})), "another node's pod: NodeRestriction refuses it")
    assert.ok(allowed(res(nodeA, 'create', 'pods', {namespace: 'team-a'})), 'mirror pods of static pods')
    assert.ok(!allowed(res(nodeA, 'update', 'certificatesigningrequests', {apiGroup: 'certificates.orch.io', name: 'c', subresource: 'approval'})))
  })

  it('has no opinion about anyone else', () => {
    assert.deepEqual(node.authorize(res(bob, 'get', 'pods', {namespace: 'x'})), {decision: 'no-opinion', reason: ''})
    assert.deepEqual(node.authorize(res(user('system:node:node-a'), 'get', 'pods')), {decision: 'no-opinion', reason: ''}, 'not in system:nodes')
    assert.deepEqual(node.authorize(res(user('system:node:', 'system:nodes'), 'get', 'pods')), {
      decision: 'no-opinion',
      reason: 'unknown node for user "system:node:"',
    })
  })
})

describe('default roles and bindings', () => {
  it('are marked as bootstrap defaults and bind every role they name', () => {
    const roles = defaultClusterRoles()
    const bindings = defaultClusterRoleBindings()
    for (const o of [...roles, ...bindings]) {
      assert.equal(o.metadata!.labels[BOOTSTRAPPING_LABEL], 'rbac-defaults')
      assert.equal(o.metadata!.annotations[AUTOUPDATE_ANNOTATION], 'true')
    }
    const names = roles.map((r) => r.metadata!.name)
    assert.deepEqual(names, [
      'cluster-admin',
      'system:node',
      'system:node-bootstrapper',
      'system:certificates.orch.io:certificatesigningrequests:nodeclient',
      'system:certificates.orch.io:certificatesigningrequests:selfnodeclient',
      'system:certificates.orch.io:apiserver-client-approver',
      'system:certificates.orch.io:apiserver-client-agent-approver',
      'system:certificates.orch.io:agent-serving-approver',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:monitoring',
      'admin',
      'edit',
      'view',
      'system:aggregate-to-admin',
      'system:aggregate-to-edit',
      'system:aggregate-to-view',
    ])
    for (const b of bindings) assert.ok(names.includes(b.roleRef.name), b.metadata!.name)
    assert.notEqual(defaultClusterRoles()[0], roles[0], 'fresh objects each call')
  })

  it('let bootstrappers request node client certificates and users review themselves', () => {
    const bootstrap = user('system:bootstrap:abcdef', 'system:bootstrappers', 'system:authenticated')
    const csr = {apiGroup: 'certificates.orch.io'}
    assert.ok(allowed(res(bootstrap, 'create', 'certificatesigningrequests', csr)))
    assert.ok(allowed(res(bootstrap, 'create', 'certificatesigningrequests', {...csr, name: 'c', subresource: 'nodeclient'})))
    assert.ok(!allowed(res(bootstrap, 'update', 'certificatesigningrequests', {...csr, name: 'c', subresource: 'approval'})))
    assert.ok(allowed(res(bob, 'create', 'selfsubjectaccessreviews', {apiGroup: 'authorization.orch.io'})))
    assert.ok(!allowed(res(bob, 'create', 'subjectaccessreviews', {apiGroup: 'authorization.orch.io'})))
  })

  it('do not let a node write another node\'s Lease through RBAC (system:node is bound to nobody)', () => {
    const nodeA = user('system:node:node-a', 'system:nodes', 'system:authenticated')
    assert.ok(!allowed(res(nodeA, 'update', 'leases', {apiGroup: 'coordination.orch.io', namespace: 'orch-node-lease', name: 'node-b'})))
  })
})

describe('SubjectAccessReview', () => {
  const review = (spec: AnyObject, metadata: AnyObject = {}) => ({apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', metadata, spec})

  it('answers for the user and groups in spec', () => {
    const out = subjectAccessReview(authorizer, review({user: 'bob', resourceAttributes: {namespace: 'team-a', verb: 'list', resource: 'pods'}}))
    assert.equal(out.kind, 'SubjectAccessReview')
    assert.deepEqual(out.spec, {user: 'bob', resourceAttributes: {namespace: 'team-a', verb: 'list', resource: 'pods'}})
    assert.deepEqual(out.status, {allowed: true, reason: 'RBAC: allowed by RoleBinding "read-pods/team-a" of Role "pod-reader" to User "bob"'})
    assert.deepEqual(subjectAccessReview(authorizer, review({user: 'bob', resourceAttributes: {namespace: 'team-b', verb: 'list', resource: 'pods'}})).status, {
      allowed: false,
    })
    assert.equal(
      subjectAccessReview(authorizer, review({groups: ['system:masters'], nonResourceAttributes: {path: '/metrics', verb: 'get'}})).status.allowed,
      true,
    )
    const node = subjectAccessReview(
      authorizer,
      review({user: 'system:node:node-a', groups: ['system:nodes'], resourceAttributes: {verb: 'get', resource: 'pods', namespace: 'team-a', name: 'web-2'}}),
    )
    assert.deepEqual(node.status, {allowed: false, reason: "no relationship found between node 'node-a' and this object"})
  })

  it('rejects reviews without exactly one kind of attributes or without a subject', () => {
    const invalid = (body: AnyObject, message: string) =>
      assert.throws(
        () => subjectAccessReview(authorizer, body),
        (e: unknown) => isApiError(e) && e.code === 422 && e.message === message,
      )
    invalid(
      review({user: 'bob', resourceAttributes: {verb: 'get', resource: 'pods'}, nonResourceAttributes: {path: '/apis', verb: 'get'}}),
      'SubjectAccessReview.authorization.orch.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"path":"/apis","verb":"get"}: cannot be specified in combination with resourceAttributes',
    )
    invalid(
      review({}),
      'SubjectAccessReview.authorization.orch.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    )
    invalid(
      review({user: 'bob', resourceAttributes: {verb: 'list', resource: 'pods', fieldSelector: {}}}),
      'SubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required',
    )
    invalid(
      review({user: 'bob', nonResourceAttributes: {path: '/', verb: 'get'}}, {name: 'x'}),
      'SubjectAccessReview.authorization.orch.io "" is invalid: metadata: Invalid value: {"name":"x"}: must be empty',
    )
    // what kubectl sends is fine
    assert.doesNotThrow(() => subjectAccessReview(authorizer, review({user: 'bob', nonResourceAttributes: {path: '/', verb: 'get'}}, {creationTimestamp: null})))
  })

  it('answers SelfSubjectAccessReviews for the caller', () => {
    const body = {spec: {resourceAttributes: {namespace: 'team-a', verb: 'get', resource: 'pods', name: 'web-1'}}}
    const out = selfSubjectAccessReview(authorizer, bob, body)
    assert.equal(out.kind, 'SelfSubjectAccessReview')
    assert.equal(out.status.allowed, true)
    assert.deepEqual(selfSubjectAccessReview(authorizer, user('eve'), body).status, {allowed: false})
    assert.throws(
      () => selfSubjectAccessReview(authorizer, undefined, body),
      (e: unknown) => isApiError(e) && e.code === 400 && e.message === 'no user present on request',
    )
    assert.throws(
      () => selfSubjectAccessReview(authorizer, bob, {spec: {}}),
      (e: unknown) =>
        isApiError(e) &&
        e.message === 'SelfSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    )
  })
})

describe('forbidden messages', () => {
  it('read as Kubernetes writes them', () => {
    const bob = user('bob')
    const cases: [AuthorizationAttributes, string][] = [
      [
        res(bob, 'get', 'configmaps', {namespace: 'default', name: 'x'}),
        'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"',
      ],
      [res(bob, 'list', 'configmaps', {namespace: 'default'}), 'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default"'],
      [res(bob, 'list', 'nodes'), 'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope'],
      [
        res(bob, 'update', 'certificatesigningrequests', {apiGroup: 'certificates.orch.io', name: 'csr-1', subresource: 'approval'}),
        'certificatesigningrequests.certificates.orch.io "csr-1" is forbidden: User "bob" cannot update resource "certificatesigningrequests/approval" in API group "certificates.orch.io" at the cluster scope',
      ],
      [path(bob, 'get', '/apis'), 'forbidden: User "bob" cannot get path "/apis"'],
      [path(bob, 'get', '/<b>&'), 'forbidden: User "bob" cannot get path "/&lt;b&gt;&amp;"'],
    ]
    for (const [attributes, message] of cases) {
      const decision = authorizer.authorize(attributes)
      assert.equal(decision.decision, 'deny')
      assert.equal(forbiddenMessage(attributes, decision.reason), message)
    }
  })

  it('append the reason when there is one', () => {
    const a = res(user('dave'), 'get', 'pods', {namespace: 'team-a', name: 'p'})
    const {reason} = authorizer.authorize(a)
    assert.equal(
      forbiddenMessage(a, reason),
      'pods "p" is forbidden: User "dave" cannot get resource "pods" in API group "" in the namespace "team-a": RBAC: role.rbac.orch.io "ghost" not found',
    )
  })

  it('come as a 403 Status, from the request path too', () => {
    const info = resolveRequestInfo('PUT', '/apis/certificates.orch.io/v1/certificatesigningrequests/csr-1/approval', new URLSearchParams())
    const status = forbiddenError(attributesFor(bob, info)).toStatus()
    assert.deepEqual(status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'certificatesigningrequests.certificates.orch.io "csr-1" is forbidden: User "bob" cannot update resource "certificatesigningrequests/approval" in API group "certificates.orch.io" at the cluster scope',
      reason: 'Forbidden',
      details: {name: 'csr-1', group: 'certificates.orch.io', kind: 'certificatesigningrequests'},
      code: 403,
    })
    const nonResource = forbiddenError(attributesFor(bob, resolveRequestInfo('GET', '/metrics', new URLSearchParams()))).toStatus()
    assert.equal(nonResource.message, 'forbidden: User "bob" cannot get path "/metrics"')
    assert.deepEqual(nonResource.details, {})
  })
})

describe('registrySource', () => {
  const dirs: string[] = []
  after(() => {
    for (const d of dirs) rmSync(d, {recursive: true, force: true})
  })

  it('decides from the rbac registries\' watch caches and follows their changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-authz-'))
    dirs.push(dir)
    const store = openSqliteStore({dataDir: dir})
    // RBAC names are path segments in Kubernetes (system:node has a colon)
    const declarations: KindDeclaration[] = rbacDeclarations.map((d) => ({...d, nameRule: 'path-segment'}))
    const registries = new Map(
      declarations.map((d) => [
        d,
        new ResourceRegistry(d, {store, now: () => new Date(), namespaceOf: async (name) => ({apiVersion: 'v1', kind: 'Namespace', metadata: {name}})}),
      ]),
    )
    const byKind = (kind: string) => [...registries.values()].find((r) => r.declaration.kind === kind)!
    const context = {context: {now: new Date()}}
    try {
      for (const object of defaultRBACObjects()) await byKind(object.kind!).create('', object, context)
      await byKind('Role').create('team-a', role('team-a', 'pod-reader', [{verbs: ['get'], apiGroups: [''], resources: ['pods']}]), context)
      await byKind('RoleBinding').create('team-a', roleBinding('team-a', 'read-pods', {kind: 'Role', name: 'pod-reader'}, [User('bob')]), context)
      await Promise.all([...registries.values()].map((r) => r.cache.start()))

      const source = registrySource(registries)
      const fromCache = new Authorizer({source, graph: new PodNodeGraph()})
      const getPod = res(bob, 'get', 'pods', {namespace: 'team-a', name: 'web-1'})
      assert.deepEqual(fromCache.authorize(getPod), {
        decision: 'allow',
        reason: 'RBAC: allowed by RoleBinding "read-pods/team-a" of Role "pod-reader" to User "bob"',
      })
      assert.ok(fromCache.authorize(res(user('admin', 'system:masters'), 'delete', 'nodes', {name: 'n'})).decision === 'allow')
      assert.equal(source.roleBindings('team-b').length, 0)

      // a write elsewhere moves every cache's revision, not its objects: the index is kept, not rebuilt
      const bindings = source.clusterRoleBindings()
      await byKind('Role').create('team-a', role('team-a', 'other', [{verbs: ['get'], apiGroups: [''], resources: ['configmaps']}]), context)
      await byKind('ClusterRoleBinding').cache.waitUntil(await store.currentRevision(), 3_000)
      assert.equal(source.clusterRoleBindings(), bindings, 'the same index after a write to another resource')
      assert.equal(source.roles('team-a').length, 2, 'the roles index follows the roles written')

      await byKind('RoleBinding').delete('team-a', 'read-pods', context)
      const revision = await store.currentRevision()
      await byKind('RoleBinding').cache.waitUntil(revision, 3_000)
      assert.deepEqual(fromCache.authorize(getPod), {decision: 'deny', reason: ''})
    } finally {
      for (const r of registries.values()) r.cache.stop()
      await store.close()
    }
  })
})
