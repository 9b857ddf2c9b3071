import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {AnyObject, UserInfo} from '../../src/api/types.js'
import {attributesFor, Authorizer, NodeAuthorizer, PodNodeGraph, staticSource, subjectAccessReview} from '../../src/apiserver/authz/index.js'
import {resolveRequestInfo} from '../../src/apiserver/requestinfo.js'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {WatchCache} from '../../src/storage/watch-cache.js'

const nodeA: UserInfo = {username: 'system:node:node-a', groups: ['system:nodes', 'system:authenticated']}

function pod(name: string, nodeName: string | undefined, spec: AnyObject = {}, annotations?: Record<string, string>): AnyObject {
  return {metadata: {namespace: 'ns', name, ...(annotations ? {annotations} : {})}, spec: {...(nodeName ? {nodeName} : {}), containers: [{name: 'c'}], ...spec}}
}

const usesEverything = pod('web', 'node-a', {
  containers: [{name: 'c', envFrom: [{configMapRef: {name: 'env-from'}}], env: [{name: 'X', valueFrom: {configMapKeyRef: {name: 'env-key', key: 'k'}}}]}],
  initContainers: [{name: 'i', envFrom: [{configMapRef: {name: 'init-env'}}]}],
  ephemeralContainers: [{name: 'e', env: [{name: 'Y', valueFrom: {configMapKeyRef: {name: 'debug-env', key: 'k'}}}]}],
  volumes: [
    {name: 'v', configMap: {name: 'volume'}},
    {name: 'p', projected: {sources: [{configMap: {name: 'projected'}}]}},
    {name: 'data', persistentVolumeClaim: {claimName: 'claim'}},
    {name: 'scratch', ephemeral: {volumeClaimTemplate: {spec: {}}}},
  ],
})
const otherNodes = pod('db', 'node-b', {volumes: [{name: 'v', configMap: {name: 'db-config'}}]})
const unbound = pod('pending', undefined, {volumes: [{name: 'v', configMap: {name: 'pending-config'}}]})
const mirror = pod('static-web-node-a', 'node-a', {volumes: [{name: 'v', configMap: {name: 'mirror-config'}}]}, {'orch.io/config.mirror': 'x'})

const graph = PodNodeGraph.of([usesEverything, otherNodes, unbound, mirror])
const node = new NodeAuthorizer(graph)

/** the Node authorizer's answer for an HTTP request of node-a, through the request info */
function request(method: string, target: string): {decision: string; reason: string} {
  const [path, search = ''] = target.split('?')
  return node.authorize(attributesFor(nodeA, resolveRequestInfo(method, path, new URLSearchParams(search))))
}
const allowed = {decision: 'allow', reason: ''}
const refused = (reason: string) => ({decision: 'no-opinion', reason})
const noRelationship = refused("no relationship found between node 'node-a' and this object")

describe('Node authorizer reads (AuthorizeNodeWithSelectors)', () => {
  it("configmaps: get only when a pod bound to the node references it, else `no relationship found between node 'node-a' and this object`", () => {
    for (const name of ['env-from', 'env-key', 'init-env', 'debug-env', 'volume', 'projected']) {
      assert.deepEqual(request('GET', `/api/v1/namespaces/ns/configmaps/${name}`), allowed, name)
    }
    for (const name of ['db-config', 'pending-config', 'mirror-config', 'unknown']) {
      assert.deepEqual(request('GET', `/api/v1/namespaces/ns/configmaps/${name}`), noRelationship, name)
    }
    assert.deepEqual(request('GET', '/api/v1/namespaces/other/configmaps/volume'), noRelationship, 'the pod namespace counts')
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dvolume&watch=true'), allowed, 'a watch by name')
  })

  it('configmaps: a list without a name is `No Object name found`; other verbs `can only read resources of this type`', () => {
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/configmaps'), refused('No Object name found'))
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/configmaps?watch=1'), refused('No Object name found'))
    assert.deepEqual(request('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dvolume'), refused('can only read namespaced object of this type'))
    assert.deepEqual(request('PUT', '/api/v1/namespaces/ns/configmaps/volume'), refused('can only read resources of this type'))
  })

  it('persistentvolumeclaims: get of claims its pods use (ephemeral volumes: <pod>-<volume>)', () => {
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/persistentvolumeclaims/claim'), allowed)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/persistentvolumeclaims/web-scratch'), allowed)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/persistentvolumeclaims/other'), noRelationship)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/persistentvolumeclaims'), refused('can only get individual resources of this type'))
    assert.deepEqual(request('PATCH', '/api/v1/namespaces/ns/persistentvolumeclaims/claim/status'), allowed)
  })

  it('pods: get of a pod bound to the node only', () => {
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods/web'), allowed)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods/static-web-node-a'), allowed, 'its mirror pod')
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods/db'), noRelationship)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods/pending'), noRelationship)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods/web/log'), refused(''))
  })

  it('pods: `can only list/watch pods with spec.nodeName field selector`', () => {
    assert.deepEqual(request('GET', '/api/v1/pods'), refused('can only list/watch pods with spec.nodeName field selector'))
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods?watch=true'), refused('can only list/watch pods with spec.nodeName field selector'))
    assert.deepEqual(request('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b'), refused('can only list/watch pods with spec.nodeName field selector'))
    assert.deepEqual(request('GET', '/api/v1/pods?fieldSelector=spec.nodeName!%3Dnode-a'), refused('can only list/watch pods with spec.nodeName field selector'))
    assert.deepEqual(request('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a'), allowed)
    assert.deepEqual(request('GET', '/api/v1/pods?watch=true&fieldSelector=status.phase%3DRunning,spec.nodeName%3D%3Dnode-a'), allowed)
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dweb'), allowed, 'a list by name of its pod')
    assert.deepEqual(request('GET', '/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Ddb'), noRelationship)
    assert.deepEqual(request('DELETE', '/api/v1/namespaces/ns/pods?fieldSelector=spec.nodeName%3Dnode-a'), refused(''), 'not deletecollection')
  })

  it("nodes: `node 'node-a' cannot read 'node-b', only its own Node object` and `cannot read all nodes`", () => {
    assert.deepEqual(request('GET', '/api/v1/nodes/node-a'), allowed)
    assert.deepEqual(request('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a'), allowed)
    assert.deepEqual(request('GET', '/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dnode-a'), allowed)
    assert.deepEqual(request('GET', '/api/v1/nodes/node-b'), refused("node 'node-a' cannot read 'node-b', only its own Node object"))
    assert.deepEqual(request('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnode-b'), refused("node 'node-a' cannot read 'node-b', only its own Node object"))
    assert.deepEqual(request('GET', '/api/v1/nodes'), refused("node 'node-a' cannot read all nodes, only its own Node object"))
    assert.deepEqual(request('GET', '/api/v1/nodes?watch=true'), refused("node 'node-a' cannot read all nodes, only its own Node object"))
    assert.deepEqual(request('GET', '/api/v1/nodes/node-a/status'), refused(''))
    assert.deepEqual(request('DELETE', '/api/v1/nodes/node-a'), refused(''))
  })

  it('still lets a node write its Node, its pods status, and read services', () => {
    assert.deepEqual(request('POST', '/api/v1/nodes'), allowed)
    assert.deepEqual(request('PATCH', '/api/v1/nodes/node-a/status'), allowed)
    assert.deepEqual(request('PATCH', '/api/v1/namespaces/ns/pods/web/status'), allowed)
    // another node's pod too: NodeRestriction's admitPodStatus refuses it, as Kubernetes splits it
    assert.deepEqual(request('PATCH', '/api/v1/namespaces/ns/pods/db/status'), allowed)
    assert.deepEqual(request('GET', '/api/v1/services'), allowed)
  })
})

describe('SubjectAccessReview field selectors reach the Node authorizer', () => {
  const chain = new Authorizer({source: staticSource([]), graph})
  const review = (fieldSelector?: AnyObject) =>
    subjectAccessReview(chain, {
      apiVersion: 'authorization.orch.io/v1',
      kind: 'SubjectAccessReview',
      spec: {user: 'system:node:node-a', groups: ['system:nodes'], resourceAttributes: {verb: 'list', resource: 'pods', ...(fieldSelector ? {fieldSelector} : {})}},
    }).status
  it('allows a list of pods with spec.nodeName=<node> given as rawSelector or an In requirement', () => {
    assert.equal(review({rawSelector: 'spec.nodeName=node-a'}).allowed, true)
    assert.equal(review({requirements: [{key: 'spec.nodeName', operator: 'In', values: ['node-a']}]}).allowed, true)
    assert.equal(review({requirements: [{key: 'spec.nodeName', operator: 'In', values: ['node-a', 'node-b']}]}).allowed, false, 'In supports one value only')
    assert.equal(review({requirements: [{key: 'spec.nodeName', operator: 'NotIn', values: ['node-b']}]}).allowed, false)
    assert.deepEqual(review(), {allowed: false, reason: 'can only list/watch pods with spec.nodeName field selector'})
  })
})

describe('request info: a metadata.name field selector names a list or watch, as Kubernetes does', () => {
  const info = (method: string, target: string) => {
    const [path, search = ''] = target.split('?')
    return resolveRequestInfo(method, path, new URLSearchParams(search)) as {name: string; verb: string; fieldSelector?: unknown}
  }
  it('copies metadata.name=<name> into the name of list and watch', () => {
    assert.deepEqual([info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc1').name, info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc1').verb], ['c1', 'list'])
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=metadata.name%3D%3Dc1').name, 'c1')
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name!%3Dc1').name, '')
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D..').name, '', 'not a valid path segment name')
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da%2Fb').name, '')
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=%3D%3D%3D').name, '', 'unparsable')
    assert.equal(info('DELETE', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc1').name, '', 'not for deletecollection')
    assert.equal(info('GET', '/api/v1/namespaces/ns/configmaps/c2?fieldSelector=metadata.name%3Dc1').name, 'c2')
  })
  it('hands the field selector of list, watch and deletecollection to authorizers', () => {
    assert.deepEqual(info('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn').fieldSelector, [{field: 'spec.nodeName', operator: '=', value: 'n'}])
    assert.deepEqual(info('DELETE', '/api/v1/namespaces/ns/pods?fieldSelector=spec.nodeName%3Dn').fieldSelector, [{field: 'spec.nodeName', operator: '=', value: 'n'}])
    assert.equal(info('GET', '/api/v1/namespaces/ns/pods/p?fieldSelector=spec.nodeName%3Dn').fieldSelector, undefined)
  })
})

describe('PodNodeGraph over the pods watch cache', () => {
  it('follows pods as they are bound, changed and deleted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-node-graph-'))
    const store = openSqliteStore({dataDir})
    const cache = new WatchCache<AnyObject>(store, '/registry/core/pods/', {decode: (kv) => JSON.parse(Buffer.from(kv.value).toString())})
    const put = async (object: AnyObject) => {
      const key = `/registry/core/pods/ns/${object.metadata!.name}`
      const value = Buffer.from(JSON.stringify(object))
      const existing = await store.get(key)
      return existing ? store.update(key, value, existing.modRevision) : store.create(key, value)
    }
    await put(pod('a', 'node-a', {volumes: [{name: 'v', configMap: {name: 'cm-1'}}]}))
    await cache.start()
    const live = PodNodeGraph.attach({cache})
    const settle = async () => {
      await cache.waitUntil(await store.currentRevision(), 2000)
    }
    assert.equal(live.podNode('ns', 'a'), 'node-a')
    assert.ok(live.hasPathFrom('node-a', 'configmaps', 'ns', 'cm-1'))
    await put(pod('b', 'node-a', {volumes: [{name: 'v', configMap: {name: 'cm-1'}}]}))
    // graph_populator's updatePod: with node and uid unchanged, a changed spec adds no edges
    await put(pod('a', 'node-a', {volumes: [{name: 'v', configMap: {name: 'cm-2'}}]}))
    await settle()
    assert.ok(live.hasPathFrom('node-a', 'configmaps', 'ns', 'cm-1'), 'still used by a and b')
    assert.ok(!live.hasPathFrom('node-a', 'configmaps', 'ns', 'cm-2'), 'an update with the same node and uid is not looked at again')
    // a pod deleted and created again under its name is a new uid: its references count
    await store.delete('/registry/core/pods/ns/a')
    await put({...pod('a', 'node-a', {volumes: [{name: 'v', configMap: {name: 'cm-2'}}]}), metadata: {name: 'a', namespace: 'ns', uid: 'uid-a-2'}})
    await settle()
    assert.ok(live.hasPathFrom('node-a', 'configmaps', 'ns', 'cm-2'))
    await store.delete('/registry/core/pods/ns/b')
    await settle()
    assert.ok(!live.hasPathFrom('node-a', 'configmaps', 'ns', 'cm-1'))
    assert.equal(live.podNode('ns', 'b'), undefined)
    cache.stop()
    await store.close()
    rmSync(dataDir, {recursive: true, force: true})
  })
})
