// User impersonation end to end (Kubernetes' WithImpersonation): the Impersonate-User, -Group, -Uid and
// -Extra-* headers against a real `orch server`, each impersonated thing authorized for the real user
// with verb `impersonate`; the impersonated user then is who RBAC, the Node authorizer, SelfSubjectReview
// and SelfSubjectAccessReview see, and who the audit log names as impersonatedUser. Also `orch --as`.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createSignedCert} from '../../src/machinery/pki.js'
import {call, nodeCall, type Caller, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const JANE = 'jane-token-0123456789'
const BOB = 'bob-token-0123456789'
const SSR = '/apis/authentication.orch.io/v1/selfsubjectreviews'
const SSAR = '/apis/authorization.orch.io/v1/selfsubjectaccessreviews'
const RBAC = '/apis/rbac.orch.io/v1'
const selfSubjectReview = {apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview'}

function send(base: string, method: string, path: string, headers: Record<string, string | string[]>, body?: unknown, as: Caller = 'admin'): Promise<HttpResult> {
  return nodeCall(base, method, path, headers, body, {as})
}

describe('user impersonation (Impersonate-User, -Group, -Uid, -Extra-*)', () => {
  let server: OrchServer
  let auditPath: string
  let nodeA: Caller

  /** The userInfo a SelfSubjectReview answers for these headers (made as `as`). */
  async function whoIs(headers: Record<string, string | string[]>, as: Caller = 'admin'): Promise<HttpResult> {
    return send(server.url, 'POST', SSR, headers, selfSubjectReview, as)
  }

  /** Grants bob `impersonate` by a ClusterRole and waits until RBAC sees it (probe: a request that needs it). */
  async function grantBob(name: string, rules: unknown[], probe: () => Promise<HttpResult>): Promise<void> {
    const role = {apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name}, rules}
    assert.equal((await call(server.url, 'POST', `${RBAC}/clusterroles`, role)).status, 201)
    const binding = {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: {name},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'bob'}],
    }
    assert.equal((await call(server.url, 'POST', `${RBAC}/clusterrolebindings`, binding)).status, 201)
    await until(`${name} to apply`, async () => (await probe()).status !== 403)
  }

  async function auditLine(match: (event: any) => boolean): Promise<any> {
    const deadline = Date.now() + 5000
    for (;;) {
      const events = readFileSync(auditPath, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
      const found = events.find(match)
      if (found) return found
      if (Date.now() > deadline) assert.fail('no such audit line')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  before(async () => {
    const files = tempDir('orch-impersonation-')
    const tokens = join(files, 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n${BOB},bob,uid-bob\n`)
    auditPath = join(files, 'audit.log')
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens, '--audit-log-path', auditPath])
    const ca = {certPem: readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(server.dataDir, 'pki', 'ca.key'), 'utf8')}
    const pair = await createSignedCert({ca, commonName: 'system:node:node-a', organizations: ['system:nodes'], usages: ['client auth'], validitySeconds: 3600})
    nodeA = {cert: pair.certPem, key: pair.keyPem}
    for (const name of ['node-a', 'node-b']) {
      assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name}})).status, 201)
    }
  })
  after(async () => server.cleanup())

  it('the admin impersonating jane gets jane\'s rights: 403 where jane has none, as jane', async () => {
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/pods')).status, 200, 'the admin may list pods')
    const asJane = await send(server.url, 'GET', '/api/v1/namespaces/default/pods', {'Impersonate-User': 'jane'})
    assert.equal(asJane.status, 403, asJane.text)
    assert.equal(asJane.json.reason, 'Forbidden')
    assert.equal(asJane.json.message, 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"')
    // the SelfSubjectAccessReview is jane's too
    const review = {apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: {resourceAttributes: {verb: 'list', resource: 'pods', namespace: 'default'}}}
    const ssar = await send(server.url, 'POST', SSAR, {'Impersonate-User': 'jane'}, review)
    assert.equal(ssar.status, 201, ssar.text)
    assert.equal(ssar.json.status.allowed, false)
  })

  it('a SelfSubjectReview made as jane with groups names jane, the groups given and system:authenticated; uid and extra as given', async () => {
    const plain = await whoIs({'Impersonate-User': 'jane'})
    assert.equal(plain.status, 201, plain.text)
    assert.deepEqual(plain.json.status.userInfo, {username: 'jane', groups: ['system:authenticated']})
    const full = await whoIs({
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['devs', 'ops'],
      'Impersonate-Uid': 'uid-42',
      'Impersonate-Extra-Scopes': ['view', 'edit'],
      // a key that is no header token arrives %-escaped and is unescaped (lower-cased first)
      'Impersonate-Extra-Example.com%2FTeam': 'blue',
    })
    assert.equal(full.status, 201, full.text)
    assert.deepEqual(full.json.status.userInfo, {
      username: 'jane',
      uid: 'uid-42',
      groups: ['devs', 'ops', 'system:authenticated'],
      extra: {scopes: ['view', 'edit'], 'example.com/team': ['blue']},
    })
    // system:authenticated or system:unauthenticated among the groups: nothing is added (with the
    // latter the review is refused: system:basic-user is bound to system:authenticated only)
    assert.deepEqual((await whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': ['system:authenticated', 'devs']})).json.status.userInfo.groups, ['system:authenticated', 'devs'])
    const unauthenticated = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'system:unauthenticated']})
    assert.equal(unauthenticated.status, 403, unauthenticated.text)
    assert.match(unauthenticated.json.message, /User "jane" cannot create resource "selfsubjectreviews"/)
    // system:anonymous gets system:unauthenticated instead: /version is open to that group (public-info-viewer)
    // but a SelfSubjectReview is only for system:authenticated
    assert.equal((await send(server.url, 'GET', '/version', {'Impersonate-User': 'system:anonymous'})).status, 200)
    const anonymous = await whoIs({'Impersonate-User': 'system:anonymous'})
    assert.equal(anonymous.status, 403, anonymous.text)
    assert.match(anonymous.json.message, /User "system:anonymous" cannot create resource "selfsubjectreviews"/)
  })

  it('a user without the impersonate permission gets Kubernetes\' 403 naming the user, "impersonate" and the resource', async () => {
    const refused = await whoIs({'Impersonate-User': 'jane'}, {token: BOB})
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.json.kind, 'Status')
    assert.equal(refused.json.reason, 'Forbidden')
    assert.equal(refused.json.message, 'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope')
    assert.deepEqual(refused.json.details, {name: 'jane', kind: 'users'})
    const asAccount = await whoIs({'Impersonate-User': 'system:serviceaccount:team-a:builder'}, {token: BOB})
    assert.equal(asAccount.status, 403)
    assert.equal(asAccount.json.message, 'serviceaccounts "builder" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"')
  })

  it('a ClusterRole granting impersonate on users with resourceNames [jane] allows exactly jane; groups, uids and userextras are checked separately', async () => {
    await grantBob('impersonate-jane', [{apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane']}], () =>
      whoIs({'Impersonate-User': 'jane'}, {token: BOB}),
    )
    const asJane = await whoIs({'Impersonate-User': 'jane'}, {token: BOB})
    assert.equal(asJane.status, 201, asJane.text)
    assert.deepEqual(asJane.json.status.userInfo, {username: 'jane', groups: ['system:authenticated']})
    const asAlice = await whoIs({'Impersonate-User': 'alice'}, {token: BOB})
    assert.equal(asAlice.status, 403)
    assert.match(asAlice.json.message, /^users "alice" is forbidden: User "bob" cannot impersonate/)
    // the user alone is not the groups, the uid nor the extra
    const group = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': 'devs'}, {token: BOB})
    assert.equal(group.status, 403)
    assert.equal(group.json.message, 'groups "devs" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope')
    const uid = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Uid': 'uid-42'}, {token: BOB})
    assert.equal(uid.status, 403)
    assert.equal(uid.json.message, 'uids.authentication.orch.io "uid-42" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.orch.io" at the cluster scope')
    const extra = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': 'view'}, {token: BOB})
    assert.equal(extra.status, 403)
    assert.equal(extra.json.message, 'userextras.authentication.orch.io "view" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.orch.io" at the cluster scope')
    assert.deepEqual(extra.json.details, {name: 'view', group: 'authentication.orch.io', kind: 'userextras'})

    await grantBob('impersonate-the-rest', [
      {apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['devs']},
      {apiGroups: ['authentication.orch.io'], resources: ['uids'], verbs: ['impersonate']},
      {apiGroups: ['authentication.orch.io'], resources: ['userextras/scopes'], verbs: ['impersonate'], resourceNames: ['view']},
    ], () => whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': 'devs'}, {token: BOB}))
    const all = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': 'devs', 'Impersonate-Uid': 'uid-42', 'Impersonate-Extra-Scopes': 'view'}, {token: BOB})
    assert.equal(all.status, 201, all.text)
    assert.deepEqual(all.json.status.userInfo, {username: 'jane', uid: 'uid-42', groups: ['devs', 'system:authenticated'], extra: {scopes: ['view']}})
    // one value not granted refuses the whole request
    const oneMore = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'admins']}, {token: BOB})
    assert.equal(oneMore.status, 403)
    assert.match(oneMore.json.message, /^groups "admins" is forbidden/)
    const otherScope = await whoIs({'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': ['view', 'edit']}, {token: BOB})
    assert.equal(otherScope.status, 403)
    assert.match(otherScope.json.message, /^userextras.authentication.orch.io "edit" is forbidden/)
  })

  it('Impersonate-Group, -Uid or -Extra without Impersonate-User is a 400 Status in Kubernetes\' words (Kubernetes: a plain-text 500) and nothing is served', async () => {
    const groupOnly = await send(server.url, 'GET', '/api/v1/namespaces/default/pods', {'Impersonate-Group': 'devs'})
    assert.equal(groupOnly.status, 400, groupOnly.text)
    assert.equal(groupOnly.json.kind, 'Status')
    assert.equal(groupOnly.json.reason, 'BadRequest')
    assert.equal(groupOnly.json.message, 'requested [{Group  devs    }] without impersonating a user')
    const uidAndExtra = await send(server.url, 'GET', '/api/v1/namespaces', {'Impersonate-Uid': 'u1', 'Impersonate-Extra-Scopes': 'view'})
    assert.equal(uidAndExtra.status, 400)
    assert.equal(uidAndExtra.json.message, 'requested [{UserExtra  view  authentication.orch.io/v1  scopes} {UID  u1  authentication.orch.io/v1  }] without impersonating a user')
  })

  it('a service account is impersonated as serviceaccounts in its namespace and gets the service-account groups', async () => {
    const account = 'system:serviceaccount:team-a:builder'
    const asAdmin = await whoIs({'Impersonate-User': account})
    assert.equal(asAdmin.status, 201, asAdmin.text)
    assert.deepEqual(asAdmin.json.status.userInfo, {username: account, groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated']})
    // groups given replace the service-account groups
    assert.deepEqual((await whoIs({'Impersonate-User': account, 'Impersonate-Group': 'devs'})).json.status.userInfo.groups, ['devs', 'system:authenticated'])
    // a Role in team-a granting impersonate on serviceaccounts is enough (no users grant needed)
    assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team-a'}})).status, 201)
    const role = {apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {name: 'sa-impersonator'}, rules: [{apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate']}]}
    assert.equal((await call(server.url, 'POST', `${RBAC}/namespaces/team-a/roles`, role)).status, 201)
    const binding = {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'RoleBinding',
      metadata: {name: 'sa-impersonator'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'sa-impersonator'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    }
    assert.equal((await call(server.url, 'POST', `${RBAC}/namespaces/team-a/rolebindings`, binding)).status, 201)
    await until('the role binding', async () => (await whoIs({'Impersonate-User': account}, {token: JANE})).status === 201)
    const other = await whoIs({'Impersonate-User': 'system:serviceaccount:team-b:builder'}, {token: JANE})
    assert.equal(other.status, 403)
    assert.match(other.json.message, /cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-b"$/)
    // a name that is no valid service account name is a plain user
    const odd = await whoIs({'Impersonate-User': 'system:serviceaccount:Team_A:builder'})
    assert.deepEqual(odd.json.status.userInfo, {username: 'system:serviceaccount:Team_A:builder', groups: ['system:authenticated']})
  })

  it('the Node authorizer sees the impersonated node', async () => {
    const status = {status: {phase: 'Running'}}
    const asNodeA = {'Impersonate-User': 'system:node:node-a', 'Impersonate-Group': 'system:nodes', 'Content-Type': 'application/merge-patch+json'}
    assert.equal((await send(server.url, 'PATCH', '/api/v1/nodes/node-a/status', asNodeA, status)).status, 200)
    const other = await send(server.url, 'PATCH', '/api/v1/nodes/node-b/status', asNodeA, status)
    assert.equal(other.status, 403, other.text)
    assert.match(other.json.message, /node "node-a" is not allowed to modify node "node-b"/)
    // a node itself has no impersonate permission
    const byNode = await whoIs({'Impersonate-User': 'orch-admin', 'Impersonate-Group': 'system:masters'}, nodeA)
    assert.equal(byNode.status, 403)
    assert.match(byNode.json.message, /User "system:node:node-a" cannot impersonate resource "users"/)
  })

  it('the audit log names the real user as user and the impersonated one as impersonatedUser', async () => {
    const path = '/api/v1/namespaces/default/configmaps/audited'
    assert.equal((await send(server.url, 'GET', path, {'Impersonate-User': 'jane', 'Impersonate-Group': 'devs', 'Impersonate-Extra-Scopes': 'view'})).status, 403)
    const event = await auditLine((e) => e.requestURI === path)
    assert.equal(event.user.username, 'orch-admin')
    assert.deepEqual(event.user.groups, ['system:masters', 'system:authenticated'])
    assert.deepEqual(event.impersonatedUser, {username: 'jane', groups: ['devs', 'system:authenticated'], extra: {scopes: ['view']}})
    assert.deepEqual(Object.keys(event).slice(6, 9), ['verb', 'user', 'impersonatedUser'])
    assert.equal(event.annotations['authorization.orch.io/decision'], 'forbid')
    // a refused impersonation is recorded without impersonatedUser
    const refusedPath = '/api/v1/namespaces/default/configmaps/refused'
    await send(server.url, 'GET', refusedPath, {'Impersonate-User': 'alice'}, undefined, {token: BOB})
    const refused = await auditLine((e) => e.requestURI === refusedPath)
    assert.equal(refused.user.username, 'bob')
    assert.equal(refused.impersonatedUser, undefined)
    assert.equal(refused.responseStatus.code, 403)
  })

  it('orch --as, --as-group and --as-uid impersonate; --as-group without --as is refused by the CLI', async () => {
    const whoami = await runOrch(['auth', 'whoami', '--as', 'jane', '--as-group', 'devs', '--as-group', 'ops', '--as-uid', 'uid-7'], {env: server.cliEnv})
    assert.equal(whoami.code, 0, whoami.stderr)
    assert.equal(whoami.stdout, 'ATTRIBUTE   VALUE\nUsername    jane\nUID         uid-7\nGroups      [devs ops system:authenticated]\n')
    const pods = await runOrch(['get', 'pods', '--as', 'jane'], {env: server.cliEnv})
    assert.equal(pods.code, 1)
    assert.match(pods.stderr, /pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"/)
    const canI = await runOrch(['auth', 'can-i', 'list', 'pods', '--as', 'jane'], {env: server.cliEnv})
    assert.equal(canI.stdout, 'no\n')
    const groupOnly = await runOrch(['auth', 'whoami', '--as-group', 'devs'], {env: server.cliEnv})
    assert.equal(groupOnly.code, 1)
    assert.match(groupOnly.stderr, /without impersonating a user/)
    // a kubeconfig user's as / as-groups impersonate too; --as overrides as, and its groups stay
    const text = readFileSync(server.cliEnv.KUBECONFIG, 'utf8').replace(/(\n\s+user:\n)(\s+)/, (_m, head, indent) => `${head}${indent}as: jane\n${indent}as-groups: [devs]\n${indent}`)
    assert.match(text, /as: jane/)
    const impersonating = join(tempDir('orch-impersonating-'), 'config')
    writeFileSync(impersonating, text)
    const fromFile = await runOrch(['auth', 'whoami'], {env: {...server.cliEnv, KUBECONFIG: impersonating}})
    assert.equal(fromFile.code, 0, fromFile.stderr)
    assert.match(fromFile.stdout, /Username\s+jane\n(.*\n)?Groups\s+\[devs system:authenticated\]/)
    const overridden = await runOrch(['auth', 'whoami', '--as', 'joe'], {env: {...server.cliEnv, KUBECONFIG: impersonating}})
    assert.match(overridden.stdout, /Username\s+joe\n(.*\n)?Groups\s+\[devs system:authenticated\]/)
  })
})
