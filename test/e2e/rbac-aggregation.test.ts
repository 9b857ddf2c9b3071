// The default admin/edit/view ClusterRoles filled by the clusterrole-aggregation controller,
// SelfSubjectRulesReview, LocalSubjectAccessReview and `orch auth can-i --list`, end to end.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const JANE = 'jane-token-aggregation-0123456789'
const RBAC = '/apis/rbac.orch.io/v1'
const AUTHZ = '/apis/authorization.orch.io/v1'
const jane = {as: {token: JANE}}

describe('RBAC aggregation and rules reviews', () => {
  let server: OrchServer
  let janeEnv: {KUBECONFIG: string; HOME: string}

  const rulesOf = async (name: string) => (await call(server.url, 'GET', `${RBAC}/clusterroles/${name}`)).json.rules ?? []

  before(async () => {
    const files = tempDir('orch-aggregation-')
    const tokens = join(files, 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--controllers=clusterrole-aggregation', '--token-auth-file', tokens])
    const kubeconfig = join(files, 'config')
    writeFileSync(kubeconfig, readFileSync(server.kubeconfig, 'utf8').replace(/client-certificate-data: .*\n/, '').replace(/client-key-data: .*\n/, `token: ${JANE}\n`))
    janeEnv = {KUBECONFIG: kubeconfig, HOME: files}
    const binding = {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'RoleBinding',
      metadata: {name: 'jane-view', namespace: 'default'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    }
    assert.equal((await call(server.url, 'POST', `${RBAC}/namespaces/default/rolebindings`, binding)).status, 201)
  })
  after(async () => server.cleanup())

  it('"aggregationRule.clusterRoleSelectors": view, edit and admin get the union of the rules of the roles labelled aggregate-to-*', async () => {
    const view = await until('view filled', async () => ((await rulesOf('view')).length > 0 ? rulesOf('view') : undefined))
    const source = await rulesOf('system:aggregate-to-view')
    assert.deepEqual(view, source)
    // edit = system:aggregate-to-edit then view (by name), each rule once; admin = edit then system:aggregate-to-admin
    const edit = await until('edit filled', async () => ((await rulesOf('edit')).length === (await rulesOf('system:aggregate-to-edit')).length + view.length ? rulesOf('edit') : undefined))
    assert.deepEqual(edit, [...(await rulesOf('system:aggregate-to-edit')), ...view])
    const adminRules = [...edit, ...(await rulesOf('system:aggregate-to-admin'))]
    await until('admin filled', async () => JSON.stringify(await rulesOf('admin')) === JSON.stringify(adminRules))
    const role = (await call(server.url, 'GET', `${RBAC}/clusterroles/view`)).json
    assert.equal(role.metadata.labels['rbac.authorization.orch.io/aggregate-to-edit'], 'true')
    assert.ok(role.metadata.managedFields.some((f: {manager: string}) => f.manager === 'clusterrole-aggregation-controller'))
  })

  it('view can read configmaps but not write them', async () => {
    await until('jane may list configmaps', async () => (await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {}, jane)).status === 200)
    const create = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}}, {}, jane)
    assert.equal(create.status, 403)
    assert.equal(create.json.message, 'configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "default"')
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/other/configmaps', undefined, {}, jane)).status, 403, 'only where bound')
  })

  it('a new role labelled aggregate-to-view is added to view, and taken out again when deleted', async () => {
    const extra = {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'ClusterRole',
      metadata: {name: 'view-leases', labels: {'rbac.authorization.orch.io/aggregate-to-view': 'true'}},
      rules: [{apiGroups: ['coordination.orch.io'], resources: ['leases'], verbs: ['get', 'list', 'watch']}],
    }
    assert.equal((await call(server.url, 'POST', `${RBAC}/clusterroles`, extra)).status, 201)
    await until('view has the leases rule', async () => (await rulesOf('view')).some((r: {resources?: string[]}) => r.resources?.includes('leases')))
    await until('jane may list leases', async () => (await call(server.url, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases', undefined, {}, jane)).status === 200)
    assert.equal((await call(server.url, 'DELETE', `${RBAC}/clusterroles/view-leases`)).status, 200)
    await until('view without the leases rule', async () => !(await rulesOf('view')).some((r: {resources?: string[]}) => r.resources?.includes('leases')))
  })

  it('SelfSubjectRulesReview lists the caller\'s resource and non-resource rules in spec.namespace', async () => {
    const review = {apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec: {namespace: 'default'}}
    const answer = await call(server.url, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, review, {}, jane)
    assert.equal(answer.status, 201, answer.text)
    assert.equal(answer.json.kind, 'SelfSubjectRulesReview')
    assert.equal(answer.json.status.incomplete, false)
    assert.ok(answer.json.status.resourceRules.some((r: {resources?: string[]; verbs: string[]}) => r.resources?.includes('configmaps') && r.verbs.includes('list')))
    assert.ok(answer.json.status.resourceRules.some((r: {resources?: string[]}) => r.resources?.includes('selfsubjectrulesreviews')))
    assert.ok(answer.json.status.nonResourceRules.some((r: {nonResourceURLs?: string[]}) => r.nonResourceURLs?.includes('/healthz')))
    const elsewhere = await call(server.url, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, {...review, spec: {namespace: 'other'}}, {}, jane)
    assert.ok(!elsewhere.json.status.resourceRules.some((r: {resources?: string[]}) => r.resources?.includes('configmaps')))
    const noNamespace = await call(server.url, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, {...review, spec: {}}, {}, jane)
    assert.equal(noNamespace.status, 400)
    assert.equal(noNamespace.json.message, 'no namespace on request')
  })

  it('LocalSubjectAccessReview answers in the namespace of its path; "the namespace of the provided object does not match" is 400, "must match metadata.namespace" 422', async () => {
    const lsar = (namespace: string, metadata: Record<string, unknown> = {}) => ({
      apiVersion: 'authorization.orch.io/v1',
      kind: 'LocalSubjectAccessReview',
      metadata,
      spec: {user: 'jane', resourceAttributes: {namespace, verb: 'get', resource: 'configmaps'}},
    })
    const ok = await call(server.url, 'POST', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, lsar('default'))
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.json.metadata.namespace, 'default')
    assert.equal(ok.json.status.allowed, true)
    const mismatch = await call(server.url, 'POST', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, lsar('other'))
    assert.equal(mismatch.status, 422)
    assert.equal(mismatch.json.message, 'LocalSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace')
    const wrongMeta = await call(server.url, 'POST', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, lsar('other', {namespace: 'other'}))
    assert.equal(wrongMeta.status, 400)
    assert.equal(wrongMeta.json.message, 'the namespace of the provided object does not match the namespace sent on the request')
    assert.equal((await call(server.url, 'POST', `${AUTHZ}/localsubjectaccessreviews`, lsar(''))).status, 405, 'only under a namespace')
  })

  it('discovery lists selfsubjectrulesreviews and the namespaced localsubjectaccessreviews', async () => {
    const resources = (await call(server.url, 'GET', AUTHZ)).json.resources as {name: string; namespaced: boolean; verbs: string[]}[]
    assert.deepEqual(resources.find((r) => r.name === 'localsubjectaccessreviews')?.namespaced, true)
    assert.deepEqual(resources.find((r) => r.name === 'selfsubjectrulesreviews')?.verbs, ['create'])
  })

  it('orch auth can-i --list prints kubectl\'s table: Resources  Non-Resource URLs  Resource Names  Verbs', async () => {
    const out = await runOrch(['auth', 'can-i', '--list', '-n', 'default'], {env: janeEnv})
    assert.equal(out.code, 0, out.stderr)
    const lines = out.stdout.split('\n')
    assert.match(lines[0], /^Resources {3,}Non-Resource URLs {3}Resource Names {3}Verbs$/)
    assert.ok(lines.some((l) => /^configmaps +\[\] +\[\] +\[get list watch\]$/.test(l)), out.stdout)
    assert.ok(lines.some((l) => /^statefulsets\.apps\/scale +\[\] +\[\] +\[get list watch\]$/.test(l)), out.stdout)
    assert.ok(lines.some((l) => /^ +\[\/healthz\] +\[\] +\[get\]$/.test(l)), out.stdout)
    const bad = await runOrch(['auth', 'can-i', '--list', '-A'], {env: janeEnv})
    assert.equal(bad.code, 1)
    assert.equal(bad.stderr, "error: list option can't be specified with neither quiet, all-namespaces nor subresource options\n")
  })
})
