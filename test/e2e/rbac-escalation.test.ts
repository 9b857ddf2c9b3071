// RBAC privilege-escalation prevention end to end, with token users: a user may only grant (in a
// Role, ClusterRole or binding) the rights he holds, unless he has `escalate` (roles) or `bind`
// (the role a binding names); system:masters may do all. Every write path is checked: POST, PUT,
// merge patch, server-side apply, dry runs. roleRef never changes (422).
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call, type Caller} from '../support/http.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const G = 'rbac.orch.io'
const users = {alice: 'alice-token-0123456789', bob: 'bob-token-0123456789', carol: 'carol-token-0123456789', dave: 'dave-token-0123456789'}
const as = (user: keyof typeof users): {as: Caller} => ({as: {token: users[user]}})
const rbac = (namespace: string, resource: string) => `/apis/${G}/v1/namespaces/${namespace}/${resource}`

function roleBinding(name: string, roleRef: {kind: string; name: string}, subject: string) {
  return {apiVersion: `${G}/v1`, kind: 'RoleBinding', metadata: {name}, roleRef: {apiGroup: G, ...roleRef}, subjects: [{kind: 'User', apiGroup: G, name: subject}]}
}

function role(name: string, rules: Record<string, string[]>[]) {
  return {apiVersion: `${G}/v1`, kind: 'Role', metadata: {name}, rules}
}

describe('RBAC escalation prevention', () => {
  let server: OrchServer

  /** As the admin: a Role with the rules in the namespace, bound to the user. */
  async function grant(namespace: string, user: string, rules: Record<string, string[]>[]): Promise<void> {
    const name = `${user}-grant-${Math.random().toString(36).slice(2, 7)}`
    assert.equal((await call(server.url, 'POST', rbac(namespace, 'roles'), role(name, rules))).status, 201)
    const bound = await call(server.url, 'POST', rbac(namespace, 'rolebindings'), roleBinding(name, {kind: 'Role', name}, user))
    assert.equal(bound.status, 201, bound.text)
  }

  before(async () => {
    const tokens = join(tempDir('orch-escalation-'), 'tokens.csv')
    writeFileSync(tokens, Object.entries(users).map(([user, token]) => `${token},${user},uid-${user},"devs"`).join('\n') + '\n')
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
    for (const name of ['ns1', 'ns2', 'ns3', 'ns4']) {
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})).status, 201)
    }
  })
  after(async () => server.cleanup())

  it('user "alice" (groups=...) is attempting to grant RBAC permissions not currently held: binding cluster-admin with only create on rolebindings is 403, on every write path', async () => {
    await grant('ns1', 'alice', [{apiGroups: [G], resources: ['rolebindings'], verbs: ['create', 'get', 'update', 'patch']}])
    const body = roleBinding('alice-admin', {kind: 'ClusterRole', name: 'cluster-admin'}, 'alice')
    const created = await call(server.url, 'POST', rbac('ns1', 'rolebindings'), body, {}, as('alice'))
    assert.equal(created.status, 403, created.text)
    assert.equal(created.json.reason, 'Forbidden')
    assert.equal(
      created.json.message,
      'rolebindings.rbac.orch.io "alice-admin" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}',
    )
    assert.deepEqual(created.json.details, {name: 'alice-admin', group: G, kind: 'rolebindings'})
    const dryRun = await call(server.url, 'POST', `${rbac('ns1', 'rolebindings')}?dryRun=All`, body, {}, as('alice'))
    assert.equal(dryRun.status, 403, dryRun.text)
    const applied = await call(server.url, 'PATCH', `${rbac('ns1', 'rolebindings')}/alice-admin?fieldManager=alice`, body, {'Content-Type': 'application/apply-patch+yaml'}, as('alice'))
    assert.equal(applied.status, 403, applied.text)
    const put = await call(server.url, 'PUT', `${rbac('ns1', 'rolebindings')}/alice-admin`, body, {}, as('alice'))
    assert.equal(put.status, 403, put.text)
    // nothing was stored, and alice still cannot list configmaps there
    assert.equal((await call(server.url, 'GET', `${rbac('ns1', 'rolebindings')}/alice-admin`)).status, 404)
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/ns1/configmaps', undefined, {}, as('alice'))).status, 403)
    // a ClusterRoleBinding is refused the same way (alice holds nothing cluster-wide)
    const crb = {apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'alice-admin'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}, subjects: [{kind: 'User', apiGroup: G, name: 'alice'}]}
    await grantCluster('alice', [{apiGroups: [G], resources: ['clusterrolebindings'], verbs: ['create']}])
    const clusterWide = await call(server.url, 'POST', `/apis/${G}/v1/clusterrolebindings`, crb, {}, as('alice'))
    assert.equal(clusterWide.status, 403, clusterWide.text)
    assert.match(clusterWide.json.message, /^clusterrolebindings\.rbac\.orch\.io "alice-admin" is forbidden: user "alice" .* is attempting to grant RBAC permissions not currently held:\n/)
  })

  /** As the admin: a ClusterRole with the rules, bound to the user cluster-wide. */
  async function grantCluster(user: string, rules: Record<string, string[]>[]): Promise<void> {
    const name = `${user}-cluster-grant`
    assert.equal((await call(server.url, 'POST', `/apis/${G}/v1/clusterroles`, {apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: {name}, rules})).status, 201)
    const crb = {apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: {name}, roleRef: {apiGroup: G, kind: 'ClusterRole', name}, subjects: [{kind: 'User', apiGroup: G, name: user}]}
    assert.equal((await call(server.url, 'POST', `/apis/${G}/v1/clusterrolebindings`, crb)).status, 201)
  }

  it('with bind on that clusterrole (by name) the binding is allowed', async () => {
    await grant('ns1', 'alice', [{apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin']}])
    const body = roleBinding('alice-admin', {kind: 'ClusterRole', name: 'cluster-admin'}, 'alice')
    const created = await call(server.url, 'POST', rbac('ns1', 'rolebindings'), body, {}, as('alice'))
    assert.equal(created.status, 201, created.text)
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/ns1/configmaps', undefined, {}, as('alice'))).status, 200)
  })

  it('escalate on roles allows a Role with more rights than the user holds; without it a Role, a PUT and a patch adding verbs are 403', async () => {
    await grant('ns2', 'bob', [{apiGroups: [G], resources: ['roles'], verbs: ['create', 'get', 'update', 'patch']}])
    const wide = role('wide', [{apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list']}])
    const refused = await call(server.url, 'POST', rbac('ns2', 'roles'), wide, {}, as('bob'))
    assert.equal(refused.status, 403, refused.text)
    assert.match(refused.json.message, /^roles\.rbac\.orch\.io "wide" is forbidden: user "bob" .*not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get" "list"\]\}$/)
    // a role he may create (a subset of his own rights), then patched to add verbs he lacks
    assert.equal((await call(server.url, 'POST', rbac('ns2', 'roles'), role('narrow', [{apiGroups: [G], resources: ['roles'], verbs: ['get']}]), {}, as('bob'))).status, 201)
    const patched = await call(server.url, 'PATCH', `${rbac('ns2', 'roles')}/narrow`, {rules: [{apiGroups: [G], resources: ['roles'], verbs: ['get', 'delete']}]}, {'Content-Type': 'application/merge-patch+json'}, as('bob'))
    assert.equal(patched.status, 403, patched.text)
    assert.match(patched.json.message, /\{APIGroups:\["rbac\.orch\.io"\], Resources:\["roles"\], Verbs:\["delete"\]\}$/)
    const jsonPatch = await call(server.url, 'PATCH', `${rbac('ns2', 'roles')}/narrow?dryRun=All`, [{op: 'add', path: '/rules/0/verbs/-', value: 'delete'}], {'Content-Type': 'application/json-patch+json'}, as('bob'))
    assert.equal(jsonPatch.status, 403, jsonPatch.text)
    await grant('ns2', 'bob', [{apiGroups: [G], resources: ['roles'], verbs: ['escalate']}])
    const allowed = await call(server.url, 'POST', rbac('ns2', 'roles'), wide, {}, as('bob'))
    assert.equal(allowed.status, 201, allowed.text)
  })

  it('a user holding all the rights of a role may bind it; one more right is 403', async () => {
    await grant('ns3', 'carol', [
      {apiGroups: [''], resources: ['pods'], verbs: ['get', 'list']},
      {apiGroups: [G], resources: ['rolebindings'], verbs: ['create']},
    ])
    assert.equal((await call(server.url, 'POST', rbac('ns3', 'roles'), role('pod-reader', [{apiGroups: [''], resources: ['pods'], verbs: ['get']}]))).status, 201)
    assert.equal((await call(server.url, 'POST', rbac('ns3', 'roles'), role('pod-deleter', [{apiGroups: [''], resources: ['pods'], verbs: ['delete']}]))).status, 201)
    const held = await call(server.url, 'POST', rbac('ns3', 'rolebindings'), roleBinding('readers', {kind: 'Role', name: 'pod-reader'}, 'dave'), {}, as('carol'))
    assert.equal(held.status, 201, held.text)
    const more = await call(server.url, 'POST', rbac('ns3', 'rolebindings'), roleBinding('deleters', {kind: 'Role', name: 'pod-deleter'}, 'dave'), {}, as('carol'))
    assert.equal(more.status, 403, more.text)
    // a roleRef to a role that does not exist is the registry's 404, as Kubernetes answers it
    const missing = await call(server.url, 'POST', rbac('ns3', 'rolebindings'), roleBinding('ghost', {kind: 'Role', name: 'ghost'}, 'dave'), {}, as('carol'))
    assert.equal(missing.status, 404, missing.text)
    assert.equal(missing.json.message, 'roles.rbac.orch.io "ghost" not found')
  })

  it('the admin (system:masters) may grant anything', async () => {
    const crb = {apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'dave-admin'}, roleRef: {apiGroup: G, kind: 'ClusterRole', name: 'cluster-admin'}, subjects: [{kind: 'User', apiGroup: G, name: 'dave'}]}
    assert.equal((await call(server.url, 'POST', `/apis/${G}/v1/clusterrolebindings`, crb)).status, 201)
    const aggregated = {apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: {name: 'aggregated'}, aggregationRule: {clusterRoleSelectors: [{matchLabels: {x: 'y'}}]}}
    assert.equal((await call(server.url, 'POST', `/apis/${G}/v1/clusterroles`, aggregated)).status, 201)
  })

  it('roleRef: Invalid value: rbac.RoleRef{...}: cannot change roleRef (422)', async () => {
    const current = (await call(server.url, 'GET', `${rbac('ns3', 'rolebindings')}/readers`)).json
    const changed = await call(server.url, 'PUT', `${rbac('ns3', 'rolebindings')}/readers`, {...current, roleRef: {apiGroup: G, kind: 'Role', name: 'pod-deleter'}})
    assert.equal(changed.status, 422, changed.text)
    assert.equal(changed.json.message, 'RoleBinding.rbac.orch.io "readers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.orch.io", Kind:"Role", Name:"pod-deleter"}: cannot change roleRef')
    const badKind = await call(server.url, 'POST', `/apis/${G}/v1/clusterrolebindings`, {apiVersion: `${G}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'bad'}, roleRef: {apiGroup: G, kind: 'Role', name: 'x'}, subjects: [{kind: 'ServiceAccount', name: 'sa'}]})
    assert.equal(badKind.status, 422, badKind.text)
    assert.deepEqual(badKind.json.details.causes.map((c: {field: string}) => c.field), ['roleRef.kind', 'subjects[0].namespace'])
  })
})
