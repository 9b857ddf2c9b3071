// Authorization end to end: RBAC and the Node authorizer on every request, SubjectAccessReview,
// SelfSubjectAccessReview, TokenReview, SelfSubjectReview, `orch auth can-i` and `orch auth whoami`.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createSignedCert} from '../../src/machinery/pki.js'
import {call, type Caller} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const JANE = 'jane-token-0123456789'
const SAR = '/apis/authorization.orch.io/v1/subjectaccessreviews'
const SSAR = '/apis/authorization.orch.io/v1/selfsubjectaccessreviews'

const NODE_C = 'node-c-token-0123456789'

function sar(spec: Record<string, unknown>): Record<string, unknown> {
  return {apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec}
}

describe('authorization', () => {
  let server: OrchServer
  let nodeA: Caller
  const cliEnv = (token: string) => {
    const dir = tempDir('orch-jane-')
    const kubeconfig = join(dir, 'config')
    const doc = readFileSync(server.kubeconfig, 'utf8').replace(/client-certificate-data: .*\n/, '').replace(/client-key-data: .*\n/, `token: ${token}\n`)
    writeFileSync(kubeconfig, doc)
    return {KUBECONFIG: kubeconfig, HOME: dir}
  }

  before(async () => {
    const files = tempDir('orch-authz-')
    const tokens = join(files, 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n${NODE_C},system:node:node-c,uid-node-c,"system:nodes"\n`)
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
    const ca = {certPem: readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(server.dataDir, 'pki', 'ca.key'), 'utf8')}
    const pair = await createSignedCert({ca, commonName: 'system:node:node-a', organizations: ['system:nodes'], usages: ['client auth'], validitySeconds: 3600})
    nodeA = {cert: pair.certPem, key: pair.keyPem}
    for (const name of ['node-a', 'node-b']) {
      assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name}})).status, 201)
    }
  })
  after(async () => server.cleanup())

  it('the default roles and bindings exist from the first start: cluster-admin bound to system:masters', async () => {
    const binding = await call(server.url, 'GET', '/apis/rbac.orch.io/v1/clusterrolebindings/cluster-admin')
    assert.equal(binding.status, 200, binding.text)
    assert.deepEqual(binding.json.subjects, [{kind: 'Group', apiGroup: 'rbac.orch.io', name: 'system:masters'}])
    const names = (await call(server.url, 'GET', '/apis/rbac.orch.io/v1/clusterroles')).json.items.map((r: {metadata: {name: string}}) => r.metadata.name)
    for (const name of ['cluster-admin', 'system:node', 'system:node-bootstrapper', 'system:basic-user', 'system:discovery']) assert.ok(names.includes(name), name)
  })

  it('SubjectAccessReview answers allowed, denied and reason for a given user, groups, verb, resource, namespace, name and subresource', async () => {
    const allowed = await call(server.url, 'POST', SAR, sar({user: 'root', groups: ['system:masters'], resourceAttributes: {verb: 'delete', resource: 'nodes', name: 'node-a'}}))
    assert.equal(allowed.status, 201, allowed.text)
    assert.equal(allowed.json.kind, 'SubjectAccessReview')
    assert.equal(allowed.json.status.allowed, true)
    // system:masters is allowed by the privileged-group authorizer ahead of RBAC, which gives no reason (as Kubernetes)
    assert.equal(allowed.json.status.reason, undefined)
    const byRBAC = await call(server.url, 'POST', SAR, sar({user: 'system:bootstrap:abc', groups: ['system:bootstrappers'], resourceAttributes: {verb: 'create', group: 'certificates.orch.io', resource: 'certificatesigningrequests'}}))
    assert.equal(byRBAC.json.status.allowed, true)
    assert.match(byRBAC.json.status.reason, /RBAC: allowed by ClusterRoleBinding ".*" of ClusterRole "system:node-bootstrapper"/)
    const notAllowed = await call(server.url, 'POST', SAR, sar({user: 'jane', groups: ['devs'], resourceAttributes: {verb: 'get', resource: 'configmaps', namespace: 'default', name: 'x'}}))
    assert.equal(notAllowed.json.status.allowed, false)
    assert.equal(notAllowed.json.status.denied, undefined, 'no opinion is not an explicit denial')
    const csrStatus = sar({user: 'system:bootstrap:abc', groups: ['system:bootstrappers'], resourceAttributes: {verb: 'update', group: 'certificates.orch.io', resource: 'certificatesigningrequests', subresource: 'approval', name: 'c'}})
    assert.equal((await call(server.url, 'POST', SAR, csrStatus)).json.status.allowed, false, 'bootstrappers may not approve')
    const nonResource = await call(server.url, 'POST', SAR, sar({user: 'anyone', groups: ['system:authenticated'], nonResourceAttributes: {verb: 'get', path: '/healthz'}}))
    assert.equal(nonResource.json.status.allowed, true)
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200, 'nothing was stored or broken')
  })

  it('a SubjectAccessReview without user or groups, or with both attribute kinds, is 422; only POST is served', async () => {
    const empty = await call(server.url, 'POST', SAR, sar({resourceAttributes: {verb: 'get', resource: 'pods'}}))
    assert.equal(empty.status, 422, empty.text)
    assert.match(empty.json.message, /at least one of user or group must be specified/)
    const both = await call(server.url, 'POST', SAR, sar({user: 'x', resourceAttributes: {verb: 'get'}, nonResourceAttributes: {verb: 'get', path: '/'}}))
    assert.equal(both.status, 422)
    assert.equal((await call(server.url, 'GET', SAR)).status, 405)
    assert.equal((await call(server.url, 'GET', `${SAR}/x`)).status, 405)
  })

  it('creating a SubjectAccessReview needs permission; a SelfSubjectAccessReview every authenticated user may create', async () => {
    const as: Caller = {token: JANE}
    const forbidden = await call(server.url, 'POST', SAR, sar({user: 'root', groups: ['system:masters'], resourceAttributes: {verb: 'get', resource: 'pods'}}), {}, {as})
    assert.equal(forbidden.status, 403, forbidden.text)
    const self = await call(server.url, 'POST', SSAR, {apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: {resourceAttributes: {verb: 'list', resource: 'pods', namespace: 'default'}}}, {}, {as})
    assert.equal(self.status, 201, self.text)
    assert.equal(self.json.status.allowed, false)
  })

  it('TokenReview authenticates a bearer token for a caller allowed to ask; SelfSubjectReview tells who the caller is', async () => {
    const tokenReviews = '/apis/authentication.orch.io/v1/tokenreviews'
    const good = await call(server.url, 'POST', tokenReviews, {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token: JANE}})
    assert.equal(good.status, 201, good.text)
    assert.deepEqual(good.json.status, {authenticated: true, user: {username: 'jane', uid: 'uid-jane', groups: ['devs', 'system:authenticated']}})
    const bad = await call(server.url, 'POST', tokenReviews, {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token: 'forged'}})
    assert.equal(bad.json.status.authenticated, undefined)
    assert.equal(bad.json.status.error, 'invalid bearer token')
    assert.equal((await call(server.url, 'POST', tokenReviews, {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token: JANE}}, {}, {as: {token: JANE}})).status, 403)
  })

  it('"A PUT is classified internally as create or update according to whether the object exists": a PUT or an apply that creates needs create permission too', async () => {
    const as: Caller = {token: JANE}
    const rbac = '/apis/rbac.orch.io/v1/namespaces/default'
    const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases'
    const role = (verbs: string[]) => ({
      apiVersion: 'rbac.orch.io/v1',
      kind: 'Role',
      metadata: {name: 'lease-writer'},
      rules: [{apiGroups: ['coordination.orch.io'], resources: ['leases'], verbs}],
    })
    assert.equal((await call(server.url, 'POST', `${rbac}/roles`, role(['get', 'update', 'patch']))).status, 201)
    const binding = {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'RoleBinding',
      metadata: {name: 'lease-writer'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'lease-writer'},
      subjects: [{apiGroup: 'rbac.orch.io', kind: 'User', name: 'jane'}],
    }
    assert.equal((await call(server.url, 'POST', `${rbac}/rolebindings`, binding)).status, 201)
    const lease = (name: string) => ({apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name}, spec: {holderIdentity: 'jane'}})
    const put = () => call(server.url, 'PUT', `${leases}/jane-put`, lease('jane-put'), {}, {as})
    const applied = () => call(server.url, 'PATCH', `${leases}/jane-apply?fieldManager=jane`, lease('jane-apply'), {'Content-Type': 'application/apply-patch+yaml'}, {as})
    // the role reaches the authorizer through its watch: wait until jane may get
    await until('the role to apply', async () => (await call(server.url, 'GET', `${leases}/none`, undefined, {}, {as})).status === 404)
    const refusedPut = await put()
    assert.equal(refusedPut.status, 403, refusedPut.text)
    assert.equal(refusedPut.json.message, 'leases.coordination.orch.io "jane-put" is forbidden: User "jane" cannot create resource "leases" in API group "coordination.orch.io" in the namespace "default"')
    const refusedApply = await applied()
    assert.equal(refusedApply.status, 403, refusedApply.text)
    assert.match(refusedApply.json.message, /User "jane" cannot create resource "leases"/)
    for (const name of ['jane-put', 'jane-apply']) assert.equal((await call(server.url, 'GET', `${leases}/${name}`)).status, 404)
    // as in Kubernetes, the object is validated before create is asked: an invalid one is 422, not 403
    const invalid = await call(server.url, 'PUT', `${leases}/jane-invalid`, {...lease('jane-invalid'), spec: {leaseDurationSeconds: -1}}, {}, {as})
    assert.equal(invalid.status, 422, invalid.text)
    // with create granted both create; an update of an existing object still needs update alone
    const setVerbs = async (verbs: string[]) =>
      assert.equal((await call(server.url, 'PATCH', `${rbac}/roles/lease-writer`, {rules: role(verbs).rules}, {'Content-Type': 'application/merge-patch+json'})).status, 200)
    await setVerbs(['get', 'update', 'patch', 'create'])
    await until('create to be granted', async () => (await put()).status === 201)
    assert.equal((await applied()).status, 201)
    await setVerbs(['get', 'update', 'patch'])
    await until('create to be withdrawn', async () => (await call(server.url, 'PUT', `${leases}/jane-other`, lease('jane-other'), {}, {as})).status === 403)
    const live = (await call(server.url, 'GET', `${leases}/jane-put`, undefined, {}, {as})).json
    assert.equal((await call(server.url, 'PUT', `${leases}/jane-put`, {...live, spec: {holderIdentity: 'jane-2'}}, {}, {as})).status, 200)
  })

  it('the Node authorizer: an agent writes its own Node status and Lease, not another node\'s', async () => {
    const own = await call(server.url, 'PATCH', '/api/v1/nodes/node-a/status', {status: {phase: 'Running'}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(own.status, 200, own.text)
    const other = await call(server.url, 'PATCH', '/api/v1/nodes/node-b/status', {status: {phase: 'Running'}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(other.status, 403)
    // Kubernetes' split: the Node authorizer allows node writes, NodeRestriction refuses another node's
    assert.equal(other.json.message, 'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"')
    const lease = {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'node-a', namespace: 'orch-node-lease'}, spec: {holderIdentity: 'node-a'}}
    assert.equal((await call(server.url, 'POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', lease, {}, {as: nodeA})).status, 201)
    const otherLease = {...lease, metadata: {name: 'node-b', namespace: 'orch-node-lease'}}
    assert.equal((await call(server.url, 'PUT', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/node-b', otherLease, {}, {as: nodeA})).status, 403)
    const createdOther = await call(server.url, 'POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', otherLease, {}, {as: nodeA})
    assert.equal(createdOther.status, 403, 'NodeRestriction reads the name from the body')
    assert.equal(createdOther.json.message, 'leases.coordination.orch.io "node-b" is forbidden: can only access node lease with the same name as the requesting node')
    assert.equal((await call(server.url, 'DELETE', '/api/v1/namespaces/default/configmaps/x', undefined, {}, {as: nodeA})).status, 403)
    assert.equal((await call(server.url, 'GET', '/api/v1/nodes/node-a', undefined, {}, {as: nodeA})).status, 200, 'reads its own Node')
  })

  it('NodeRestriction: an agent creates only mirror pods bound to itself and cannot change its own taints', async () => {
    const pod = (annotations: Record<string, string>, nodeName: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: {name: `p-${nodeName}-${Object.keys(annotations).length}`, annotations},
      spec: {nodeName, containers: [{name: 'c', image: 'busybox'}]},
    })
    const plain = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod({}, 'node-a'), {}, {as: nodeA})
    assert.equal(plain.status, 403, plain.text)
    assert.match(plain.json.message, /pod does not have "orch.io\/config.mirror" annotation, node "node-a" can only create mirror pods/)
    const elsewhere = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod({'orch.io/config.mirror': 'x'}, 'node-b'), {}, {as: nodeA})
    assert.equal(elsewhere.status, 403)
    assert.match(elsewhere.json.message, /can only create pods with spec.nodeName set to itself/)
    const mirror = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod({'orch.io/config.mirror': 'x'}, 'node-a'), {}, {as: nodeA})
    assert.equal(mirror.status, 201, mirror.text)
    const taint = await call(server.url, 'PATCH', '/api/v1/nodes/node-a', {spec: {taints: [{key: 'k', effect: 'NoSchedule'}]}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(taint.status, 403, taint.text)
    assert.match(taint.json.message, /node "node-a" is not allowed to modify taints/)
    const labels = await call(server.url, 'PATCH', '/api/v1/nodes/node-a', {metadata: {labels: {zone: 'a'}}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(labels.status, 200, labels.text)
  })

  it('NodeRestriction admitPodCreate: "node %q can not create pods that reference configmaps" (and persistentvolumeclaims, a service account): a mirror pod references no other object', async () => {
    const mirror = (name: string, spec: Record<string, unknown>) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: {name, annotations: {'orch.io/config.mirror': 'x'}},
      spec: {nodeName: 'node-a', containers: [{name: 'c', image: 'busybox'}], ...spec},
    })
    const cases: [string, Record<string, unknown>, string][] = [
      ['m-env', {containers: [{name: 'c', image: 'busybox', envFrom: [{configMapRef: {name: 'cfg'}}]}]}, 'reference configmaps'],
      ['m-key', {containers: [{name: 'c', image: 'busybox', env: [{name: 'A', valueFrom: {configMapKeyRef: {name: 'cfg', key: 'a'}}}]}]}, 'reference configmaps'],
      ['m-vol', {volumes: [{name: 'v', configMap: {name: 'cfg'}}]}, 'reference configmaps'],
      ['m-projected', {volumes: [{name: 'v', projected: {sources: [{configMap: {name: 'cfg'}}]}}]}, 'reference configmaps'],
      ['m-claim', {volumes: [{name: 'v', persistentVolumeClaim: {claimName: 'data'}}]}, 'reference persistentvolumeclaims'],
      ['m-sa', {serviceAccountName: 'default'}, 'reference a service account'],
    ]
    for (const [name, spec, what] of cases) {
      const result = await call(server.url, 'POST', '/api/v1/namespaces/default/pods', mirror(name, spec), {}, {as: nodeA})
      assert.equal(result.status, 403, `${name}: ${result.text}`)
      assert.equal(result.json.message, `pods "${name}" is forbidden: node "node-a" can not create pods that ${what}`)
    }
  })

  it('NodeRestriction admitNode: "node %q is not allowed to set the following labels" on create and "is not allowed to modify labels" on update (node-restriction.orch.io, orch.io labels that are not the agent\'s own)', async () => {
    const nodeC = {token: NODE_C}
    const created = await call(server.url, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node', metadata: {name: 'node-c', labels: {'node-restriction.orch.io/tier': 'secure', 'node-role.orch.io/control-plane': '', 'orch.io/hostname': 'node-c', 'example.com/team': 'a'}},
    }, {}, {as: nodeC})
    assert.equal(created.status, 403, created.text)
    assert.equal(created.json.message, 'nodes "node-c" is forbidden: node "node-c" is not allowed to set the following labels: node-restriction.orch.io/tier, node-role.orch.io/control-plane')
    const allowed = {'orch.io/hostname': 'node-c', 'node.orch.io/instance-type': 'small', 'sub.kubelet.orch.io/x': 'y', 'example.com/team': 'a'}
    const ok = await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'node-c', labels: allowed}}, {}, {as: nodeC})
    assert.equal(ok.status, 201, ok.text)
    const patch = (labels: Record<string, string | null>) =>
      call(server.url, 'PATCH', '/api/v1/nodes/node-c', {metadata: {labels}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeC})
    const role = await patch({'node-role.orch.io/master': 'x', 'sub.node-restriction.orch.io/a': 'b'})
    assert.equal(role.status, 403, role.text)
    assert.equal(role.json.message, 'nodes "node-c" is forbidden: is not allowed to modify labels: node-role.orch.io/master, sub.node-restriction.orch.io/a')
    assert.equal((await patch({'example.com/team': 'b', 'node.orch.io/pool': 'p'})).status, 200)
  })

  it('NodeRestriction admitPodStatus: "node %q can only update pod status for pods with spec.nodeName set to itself", "cannot update labels through pod status"', async () => {
    const pod = (name: string, nodeName: string) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name, labels: {app: 'x'}}, spec: {nodeName, containers: [{name: 'c', image: 'busybox'}]}})
    for (const [name, node] of [['status-a', 'node-a'], ['status-b', 'node-b']]) {
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod(name, node))).status, 201)
    }
    const patch = (name: string, body: unknown) =>
      call(server.url, 'PATCH', `/api/v1/namespaces/default/pods/${name}/status`, body, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal((await patch('status-a', {status: {phase: 'Running'}})).status, 200)
    const other = await patch('status-b', {status: {phase: 'Running'}})
    assert.equal(other.status, 403, other.text)
    assert.equal(other.json.message, 'pods "status-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself')
    const missing = await patch('no-such-pod', {status: {phase: 'Running'}})
    assert.equal(missing.status, 404, 'the Node authorizer allows status writes; a pod that is not there is not found')
  })

  it('NodeRestriction admitPodEviction: a node evicts pods bound to itself ("node %s can only evict pods with spec.nodeName set to itself"); a missing pod is 404', async () => {
    const pod = (name: string, nodeName: string) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {nodeName, containers: [{name: 'c', image: 'busybox'}]}})
    for (const [name, node] of [['evict-a', 'node-a'], ['evict-b', 'node-b']]) {
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod(name, node))).status, 201)
    }
    const evict = (name: string) =>
      call(server.url, 'POST', `/api/v1/namespaces/default/pods/${name}/eviction`, {apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name}}, {}, {as: nodeA})
    const own = await evict('evict-a')
    assert.equal(own.status, 201, own.text)
    const other = await evict('evict-b')
    assert.equal(other.status, 403, other.text)
    assert.equal(other.json.message, 'pods "evict-b" is forbidden: node node-a can only evict pods with spec.nodeName set to itself')
    assert.equal((await evict('no-such-pod')).status, 404)
  })

  it('orch auth can-i prints yes or no (exit 0 or 1); orch auth whoami prints the user the server sees', async () => {
    const admin = await runOrch(['auth', 'can-i', 'delete', 'nodes'], {env: server.cliEnv})
    assert.equal(admin.code, 0, admin.stderr)
    assert.equal(admin.stdout, 'yes\n')
    const env = cliEnv(JANE)
    const jane = await runOrch(['auth', 'can-i', 'create', 'configmaps'], {env})
    assert.equal(jane.code, 1, jane.stderr)
    assert.equal(jane.stdout, 'no\n')
    assert.equal((await runOrch(['auth', 'can-i', 'get', '/healthz'], {env})).stdout, 'yes\n')
    const whoami = await runOrch(['auth', 'whoami'], {env})
    assert.equal(whoami.code, 0, whoami.stderr)
    assert.equal(whoami.stdout, 'ATTRIBUTE   VALUE\nUsername    jane\nUID         uid-jane\nGroups      [devs system:authenticated]\n')
    // a RoleBinding changes the answer
    await call(server.url, 'POST', '/apis/rbac.orch.io/v1/namespaces/default/rolebindings', {
      apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'jane-admin'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'cluster-admin'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    })
    await until('the binding', async () => (await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {}, {as: {token: JANE}})).status === 200)
    const now = await runOrch(['auth', 'can-i', 'create', 'cm', '-n', 'default'], {env})
    assert.equal(now.stdout, 'yes\n')
    assert.equal((await runOrch(['auth', 'can-i', 'create', 'cm', '-n', 'kube-other'], {env})).stdout, 'no\n')
  })
})
