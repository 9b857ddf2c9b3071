// RBAC's escalation prevention in units: Covers, the message ConfirmNoEscalation gives, the checks
// per kind over a static set of roles and bindings, and the rbac kinds' validation.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AnyObject, UserInfo} from '../../src/api/types.js'
import {
  Authorizer,
  compactString,
  confirmNoEscalation,
  covers,
  describeMissingRules,
  RBACAuthorizer,
  rbacWriteChecks,
  staticSource,
  type PolicyRule,
} from '../../src/apiserver/authz/index.js'
import {clusterRoleBindingValidator, clusterRoleValidator, roleBindingValidator, roleValidator} from '../../src/apiserver/validation/rbac.js'
import {formatFieldError} from '../../src/machinery/field-errors.js'
import {ApiError} from '../../src/machinery/status.js'

const G = 'rbac.orch.io'

describe('Covers (component-helpers policy_comparator)', () => {
  const owner: PolicyRule[] = [
    {verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status']},
    {verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web']},
    {verbs: ['get'], nonResourceURLs: ['/healthz', '/logs/*']},
  ]
  it('verbs, apiGroups and resources covered piece by piece; */sub covers any resource\'s sub', () => {
    assert.equal(covers(owner, [{verbs: ['get'], apiGroups: [''], resources: ['pods', 'services/status']}]).covered, true)
    const {covered, missing} = covers(owner, [{verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'services']}])
    assert.equal(covered, false)
    assert.deepEqual(missing, [
      {apiGroups: [''], resources: ['pods'], verbs: ['delete']},
      {apiGroups: [''], resources: ['services'], verbs: ['get']},
      {apiGroups: [''], resources: ['services'], verbs: ['delete']},
    ])
  })
  it('a rule limited to resourceNames covers only those names, never the whole resource', () => {
    assert.equal(covers(owner, [{verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web']}]).covered, true)
    assert.equal(covers(owner, [{verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments']}]).covered, false)
    assert.equal(covers(owner, [{verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['db']}]).covered, false)
  })
  it('nonResourceURLs: exact, or a prefix before a trailing *', () => {
    assert.equal(covers(owner, [{verbs: ['get'], nonResourceURLs: ['/healthz', '/logs/a/b']}]).covered, true)
    assert.equal(covers(owner, [{verbs: ['get'], nonResourceURLs: ['/metrics']}]).covered, false)
    assert.equal(covers(owner, [{verbs: ['post'], nonResourceURLs: ['/healthz']}]).covered, false)
  })
  it('* on *.* covers everything, nothing covers * unless the owner has it', () => {
    const admin: PolicyRule[] = [{verbs: ['*'], apiGroups: ['*'], resources: ['*']}, {verbs: ['*'], nonResourceURLs: ['*']}]
    assert.equal(covers(admin, [...owner, {verbs: ['escalate'], apiGroups: [G], resources: ['roles']}]).covered, true)
    assert.equal(covers(owner, [{verbs: ['get'], apiGroups: [''], resources: ['*']}]).covered, false)
  })
  it('missing rules print as Kubernetes lists them: compacted by resource, CompactString, sorted', () => {
    const {missing} = covers([], [{verbs: ['get', 'list'], apiGroups: [''], resources: ['pods']}, {verbs: ['get'], nonResourceURLs: ['/x']}])
    assert.equal(describeMissingRules(missing), '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}\n{NonResourceURLs:["/x"], Verbs:["get"]}')
    assert.equal(compactString({verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['a"b']}), '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a\\"b"], Verbs:["get"]}')
  })
  it('isSimpleResourceRule: pieces naming one resource name compact by group, resource and that name', () => {
    const {missing} = covers([], [{verbs: ['get', 'update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['x', 'y']}])
    assert.equal(
      describeMissingRules(missing),
      '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["x"], Verbs:["get" "update"]}\n{APIGroups:[""], Resources:["configmaps"], ResourceNames:["y"], Verbs:["get" "update"]}',
    )
  })
})

const alice: UserInfo = {username: 'alice', groups: ['devs', 'system:authenticated']}
const clusterAdmin = {kind: 'ClusterRole', metadata: {name: 'cluster-admin'}, rules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*']}, {verbs: ['*'], nonResourceURLs: ['*']}]}
const binder = (name: string, rules: PolicyRule[], namespace = 'ns1'): AnyObject[] => [
  {kind: 'Role', metadata: {name, namespace}, rules},
  {kind: 'RoleBinding', metadata: {name, namespace}, roleRef: {apiGroup: G, kind: 'Role', name}, subjects: [{kind: 'User', apiGroup: G, name: 'alice'}]},
]

function checksOver(objects: AnyObject[]) {
  const source = staticSource([clusterAdmin, ...objects])
  const authorizer = new Authorizer([new RBACAuthorizer(source)])
  return rbacWriteChecks({authorize: (a) => authorizer.authorize(a), resolver: new RBACAuthorizer(source, 'registry')})
}

function forbidden(fn: () => void): ApiError {
  try {
    fn()
  } catch (error) {
    assert.ok(error instanceof ApiError)
    return error
  }
  assert.fail('expected a refusal')
}

const write = (user: UserInfo | undefined, name = '') => ({context: {user, now: new Date()}, name})
const binding = (roleRef: AnyObject, namespace = 'ns1') => ({kind: 'RoleBinding', metadata: {name: 'b', namespace}, roleRef, subjects: [{kind: 'User', apiGroup: G, name: 'alice'}]})

describe('escalation checks (pkg/registry/rbac policybased storages)', () => {
  const onlyCreateBindings = binder('create-bindings', [{verbs: ['create'], apiGroups: [G], resources: ['rolebindings']}])

  it('user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held: a RoleBinding of cluster-admin', () => {
    const checks = checksOver(onlyCreateBindings)
    const error = forbidden(() => checks.RoleBinding(binding({apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}), undefined, write(alice)))
    assert.equal(error.code, 403)
    assert.equal(
      error.message,
      'rolebindings.rbac.orch.io "b" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}',
    )
  })

  it('bind on the referenced role (by name, in the binding\'s namespace) allows the binding', () => {
    const canBind = binder('binder', [{verbs: ['bind'], apiGroups: [G], resources: ['clusterroles'], resourceNames: ['cluster-admin']}])
    const checks = checksOver(canBind)
    checks.RoleBinding(binding({apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}), undefined, write(alice))
    // in another namespace the grant does not apply
    forbidden(() => checks.RoleBinding(binding({apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}, 'ns2'), undefined, write(alice)))
  })

  it('a user holding every rule of the role may bind it; system:masters and the server\'s own writes are not checked', () => {
    const viewer = {kind: 'ClusterRole', metadata: {name: 'pod-reader'}, rules: [{verbs: ['get'], apiGroups: [''], resources: ['pods']}]}
    const checks = checksOver([viewer, ...binder('reads', [{verbs: ['get', 'list'], apiGroups: [''], resources: ['pods']}])])
    checks.RoleBinding(binding({apiGroup: G, kind: 'ClusterRole', name: 'pod-reader'}), undefined, write(alice))
    checks.ClusterRoleBinding({kind: 'ClusterRoleBinding', metadata: {name: 'x'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}}, undefined, write({username: 'root', groups: ['system:masters']}))
    checks.ClusterRoleBinding({kind: 'ClusterRoleBinding', metadata: {name: 'x'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}}, undefined, write(undefined))
    // the same rules held only in ns1 do not cover a ClusterRoleBinding
    forbidden(() => checks.ClusterRoleBinding({kind: 'ClusterRoleBinding', metadata: {name: 'x'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'pod-reader'}}, undefined, write(alice)))
  })

  it('an unresolvable roleRef: 404 for a missing role, the unsupported-kind error as a 500', () => {
    const checks = checksOver(onlyCreateBindings)
    const missing = forbidden(() => checks.RoleBinding(binding({apiGroup: G, kind: 'Role', name: 'nope'}), undefined, write(alice)))
    assert.equal(missing.code, 404)
    assert.equal(missing.message, 'roles.rbac.orch.io "nope" not found')
    const odd = forbidden(() => checks.RoleBinding(binding({apiGroup: G, kind: 'Thing', name: 'x'}), undefined, write(alice)))
    assert.equal(odd.code, 500)
    assert.equal(odd.message, 'unsupported role reference kind: "Thing"')
  })

  it('a Role with rules the user lacks is refused unless he has escalate; an update changing only finalizers is not checked', () => {
    const role = {kind: 'Role', metadata: {name: 'r', namespace: 'ns1'}, rules: [{verbs: ['delete'], apiGroups: [''], resources: ['secrets']}]}
    const checks = checksOver(binder('edit-roles', [{verbs: ['create', 'update'], apiGroups: [G], resources: ['roles']}]))
    const error = forbidden(() => checks.Role(role, undefined, write(alice)))
    assert.match(error.message, /^roles\.rbac\.orch\.io "r" is forbidden: user "alice" .*not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["delete"\]\}$/)
    checks.Role({...role, metadata: {...role.metadata, finalizers: ['x']}}, role, write(alice, 'r'))
    const escalator = checksOver(binder('escalate', [{verbs: ['escalate'], apiGroups: [G], resources: ['roles']}]))
    escalator.Role(role, undefined, write(alice))
  })

  it('must have cluster-admin privileges to use the aggregationRule', () => {
    const checks = checksOver([
      {kind: 'ClusterRole', metadata: {name: 'crs'}, rules: [{verbs: ['create', 'update'], apiGroups: [G], resources: ['clusterroles']}]},
      {kind: 'ClusterRoleBinding', metadata: {name: 'crs'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'crs'}, subjects: [{kind: 'User', apiGroup: G, name: 'alice'}]},
    ])
    const aggregated = {kind: 'ClusterRole', metadata: {name: 'agg'}, aggregationRule: {clusterRoleSelectors: [{matchLabels: {a: 'b'}}]}, rules: []}
    const error = forbidden(() => checks.ClusterRole(aggregated, undefined, write(alice)))
    assert.equal(error.message, 'clusterroles.rbac.orch.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule')
  })

  it('resolution errors follow the missing rules', () => {
    const source = staticSource([{kind: 'RoleBinding', metadata: {name: 'dangling', namespace: 'ns1'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'gone'}, subjects: [{kind: 'User', apiGroup: G, name: 'alice'}]}])
    const message = confirmNoEscalation(new RBACAuthorizer(source, 'registry'), alice, 'ns1', [{verbs: ['get'], apiGroups: [''], resources: ['pods']}])
    assert.equal(message, 'user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [clusterroles.rbac.orch.io "gone" not found]')
  })
})

describe('rbac validation (pkg/apis/rbac/validation)', () => {
  const messages = (errors: {type: string; field: string; message: string}[]) => errors.map((e) => formatFieldError(e as never))
  const context = {now: new Date()}
  it('rules: verbs must contain at least one value; namespaced rules cannot apply to non-resource URLs; resource rules need apiGroups and resources', () => {
    const role = {rules: [{resources: ['pods']}, {verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods']}]}
    assert.deepEqual(messages(roleValidator.create!(role, context)), [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
      'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
    ])
    assert.deepEqual(messages(clusterRoleValidator.create!({rules: [{verbs: ['get'], nonResourceURLs: ['/x']}], aggregationRule: {}}, context)), [
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ])
  })
  it('roleRef: Invalid value: rbac.RoleRef{...}: cannot change roleRef; roleRef kind, apiGroup and name', () => {
    const old = {roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'edit'}, subjects: []}
    const next = {roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'view'}, subjects: []}
    assert.deepEqual(messages(roleBindingValidator.update!(next, old, context)), ['roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.orch.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef'])
    assert.deepEqual(messages(clusterRoleBindingValidator.create!({roleRef: {apiGroup: 'x', kind: 'Role', name: 'a/b'}}, context)), [
      'roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.orch.io"',
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      `roleRef.name: Invalid value: "a/b": may not contain '/'`,
    ])
  })
  it('subjects: kinds, names, apiGroups, and a ServiceAccount\'s namespace in a ClusterRoleBinding', () => {
    const subjects = [{kind: 'ServiceAccount', name: 'sa'}, {kind: 'User', name: '', apiGroup: 'x'}, {kind: 'Robot', name: 'r'}]
    assert.deepEqual(messages(clusterRoleBindingValidator.create!({roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'v'}, subjects}, context)), [
      'subjects[0].namespace: Required value',
      'subjects[1].name: Required value',
      'subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.orch.io"',
      'subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ])
    assert.deepEqual(messages(roleBindingValidator.create!({roleRef: {apiGroup: G, kind: 'Role', name: 'v'}, subjects: [{kind: 'ServiceAccount', name: 'sa'}]}, context)), [])
  })
})
