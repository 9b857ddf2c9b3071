// The Node authorizer's limits on reads, end to end (Kubernetes 1.32 with AuthorizeNodeWithSelectors):
// a node identity (token user system:node:node-a in group system:nodes) reads its own Node, the pods
// bound to it (by name, or listed and watched with spec.nodeName=node-a) and the configmaps those pods
// use; everything else is refused with Kubernetes' reasons. A metadata.name field selector names a
// list or watch, for the Node authorizer and for RBAC's resourceNames alike.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call, type Caller} from '../support/http.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const NODE_TOKEN = 'node-a-token-0123456789'
const JANE_TOKEN = 'jane-token-0123456789'
const nodeA: Caller = {token: NODE_TOKEN}
const jane: Caller = {token: JANE_TOKEN}
const cms = '/api/v1/namespaces/default/configmaps'
const pods = '/api/v1/namespaces/default/pods'
const forbidden = (what: string, verb: string, resource: string, scope: string, reason: string) =>
  `${what} is forbidden: User "system:node:node-a" cannot ${verb} resource "${resource}" in API group "" ${scope}: ${reason}`

function pod(name: string, nodeName: string, configMap: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name},
    spec: {
      nodeName,
      containers: [{name: 'c', image: 'busybox', envFrom: [{configMapRef: {name: `${configMap}-env`}}]}],
      volumes: [{name: 'config', configMap: {name: configMap}}],
    },
  }
}

describe('Node authorizer: what a node may read', () => {
  let server: OrchServer
  const get = (path: string, as: Caller = nodeA) => call(server.url, 'GET', path, undefined, {}, {as})

  before(async () => {
    const tokens = join(tempDir('orch-node-reads-'), 'tokens.csv')
    writeFileSync(tokens, `${NODE_TOKEN},system:node:node-a,uid-node-a,"system:nodes"\n${JANE_TOKEN},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
    for (const name of ['node-a', 'node-b']) {
      assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name}})).status, 201)
    }
    for (const name of ['web-config', 'web-config-env', 'db-config', 'db-config-env', 'c1', 'c2']) {
      assert.equal((await call(server.url, 'POST', cms, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})).status, 201)
    }
    assert.equal((await call(server.url, 'POST', pods, pod('web', 'node-a', 'web-config'))).status, 201)
    assert.equal((await call(server.url, 'POST', pods, pod('db', 'node-b', 'db-config'))).status, 201)
    // the authorizer follows the pods watch cache
    await until('web to be known as node-a\'s', async () => (await get(`${pods}/web`)).status === 200)
  })
  after(async () => server.cleanup())

  it("configmaps: get only when a pod bound to the node uses it; else `no relationship found between node 'node-a' and this object`", async () => {
    assert.equal((await get(`${cms}/web-config`)).status, 200, 'a configMap volume')
    assert.equal((await get(`${cms}/web-config-env`)).status, 200, 'envFrom')
    const other = await get(`${cms}/db-config`)
    assert.equal(other.status, 403)
    assert.equal(other.json.message, forbidden('configmaps "db-config"', 'get', 'configmaps', 'in the namespace "default"', "no relationship found between node 'node-a' and this object"))
    const list = await get(cms)
    assert.equal(list.status, 403)
    assert.equal(list.json.message, forbidden('configmaps', 'list', 'configmaps', 'in the namespace "default"', 'No Object name found'))
    assert.equal((await get('/api/v1/configmaps')).status, 403, 'all namespaces')
    assert.equal((await get(`${cms}?fieldSelector=metadata.name%3Dweb-config`)).status, 200, 'a list by name')
  })

  it('configmaps: a node gains a configmap with a pod that uses it and loses it with the pod', async () => {
    assert.equal((await call(server.url, 'POST', pods, pod('later', 'node-a', 'c1'))).status, 201)
    await until('c1 to be readable', async () => (await get(`${cms}/c1`)).status === 200)
    assert.equal((await call(server.url, 'DELETE', `${pods}/later?gracePeriodSeconds=0`)).status, 200)
    await until('c1 to be refused again', async () => (await get(`${cms}/c1`)).status === 403)
  })

  it('pods: get of a pod bound to the node only', async () => {
    assert.equal((await get(`${pods}/web`)).status, 200)
    const other = await get(`${pods}/db`)
    assert.equal(other.status, 403)
    assert.equal(other.json.message, forbidden('pods "db"', 'get', 'pods', 'in the namespace "default"', "no relationship found between node 'node-a' and this object"))
  })

  it('pods: `can only list/watch pods with spec.nodeName field selector`', async () => {
    const all = await get('/api/v1/pods')
    assert.equal(all.status, 403)
    assert.equal(all.json.message, forbidden('pods', 'list', 'pods', 'at the cluster scope', 'can only list/watch pods with spec.nodeName field selector'))
    const watch = await get('/api/v1/pods?watch=true')
    assert.equal(watch.status, 403)
    assert.equal(watch.json.message, forbidden('pods', 'watch', 'pods', 'at the cluster scope', 'can only list/watch pods with spec.nodeName field selector'))
    assert.equal((await get('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b')).status, 403)
    const own = await get('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a')
    assert.equal(own.status, 200, own.text)
    assert.deepEqual(own.json.items.map((p: {metadata: {name: string}}) => p.metadata.name), ['web'])
    assert.equal((await get('/api/v1/pods?watch=true&timeoutSeconds=1&fieldSelector=spec.nodeName%3Dnode-a')).status, 200)
  })

  it("nodes: `node 'node-a' cannot read 'node-b', only its own Node object` and `cannot read all nodes`", async () => {
    assert.equal((await get('/api/v1/nodes/node-a')).status, 200)
    const other = await get('/api/v1/nodes/node-b')
    assert.equal(other.status, 403)
    assert.equal(other.json.message, forbidden('nodes "node-b"', 'get', 'nodes', 'at the cluster scope', "node 'node-a' cannot read 'node-b', only its own Node object"))
    const all = await get('/api/v1/nodes')
    assert.equal(all.status, 403)
    assert.equal(all.json.message, forbidden('nodes', 'list', 'nodes', 'at the cluster scope', "node 'node-a' cannot read all nodes, only its own Node object"))
    const byName = await get('/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a')
    assert.equal(byName.status, 200, 'a metadata.name field selector names the request')
    assert.deepEqual(byName.json.items.map((n: {metadata: {name: string}}) => n.metadata.name), ['node-a'])
    assert.equal((await get('/api/v1/nodes?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnode-a')).status, 200)
  })

  it('what stays allowed: its Node status, its pods status, services', async () => {
    const status = await call(server.url, 'PATCH', '/api/v1/nodes/node-a/status', {status: {phase: 'Running'}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(status.status, 200, status.text)
    const podStatus = await call(server.url, 'PATCH', `${pods}/web/status`, {status: {phase: 'Running'}}, {'Content-Type': 'application/merge-patch+json'}, {as: nodeA})
    assert.equal(podStatus.status, 200, podStatus.text)
    assert.equal((await get('/api/v1/services')).status, 200)
  })

  it('RBAC resourceNames: a list or watch with fieldSelector metadata.name=<name> is a request for that name', async () => {
    const rbac = '/apis/rbac.orch.io/v1/namespaces/default'
    assert.equal((await call(server.url, 'POST', `${rbac}/roles`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {name: 'c1-reader'},
      rules: [{apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'], resourceNames: ['c1']}],
    })).status, 201)
    assert.equal((await call(server.url, 'POST', `${rbac}/rolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'jane-c1'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'c1-reader'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    })).status, 201)
    await until('the binding to apply', async () => (await get(`${cms}/c1`, jane)).status === 200)
    const listed = await get(`${cms}?fieldSelector=metadata.name%3Dc1`, jane)
    assert.equal(listed.status, 200, listed.text)
    assert.deepEqual(listed.json.items.map((c: {metadata: {name: string}}) => c.metadata.name), ['c1'])
    assert.equal((await get(`${cms}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dc1`, jane)).status, 200)
    const otherName = await get(`${cms}?fieldSelector=metadata.name%3Dc2`, jane)
    assert.equal(otherName.status, 403)
    assert.match(otherName.json.message, /^configmaps "c2" is forbidden: User "jane" cannot list resource "configmaps"/)
    assert.equal((await get(cms, jane)).status, 403, 'a list of all is not a list of c1')
  })
})
