// The official JavaScript client, @kubernetes/client-node 1.x, against a real orch server: typed CRUD
// for namespaces, configmaps, nodes and statefulsets, errors as ApiException, the informer and Watch.
// Written to Kubernetes' behaviour: a failure here is a server deviation, not a test to loosen.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Node,
  type V1StatefulSet,
} from '@kubernetes/client-node'
import {call} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'

/** How to reach the server: its URL, the CA (base64 PEM) and a client certificate and key or a token. */
interface ClusterAccess {
  server: string
  caData?: string
  certData?: string
  keyData?: string
  token?: string
}

/** A kubeconfig built in code: one cluster, one user, one context. */
function kubeConfigFor(access: ClusterAccess): KubeConfig {
  const kc = new KubeConfig()
  // the https:// server is verified against caData
  kc.loadFromOptions({
    clusters: [{name: 'orch', server: access.server, caData: access.caData, skipTLSVerify: false}],
    users: [{name: 'orch-test', certData: access.certData, keyData: access.keyData, token: access.token}],
    contexts: [{name: 'orch', cluster: 'orch', user: 'orch-test'}],
    currentContext: 'orch',
  })
  return kc
}

// client-node 1.x sends application/json-patch+json for every patch unless told otherwise
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)

/** Asserts the promise rejects with an ApiException carrying this code and a Status of this reason. */
async function rejectsWith(promise: Promise<unknown>, code: number, reason: string): Promise<any> {
  let caught: unknown
  try {
    await promise
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof ApiException, `expected an ApiException ${code}, got ${String(caught)}`)
  assert.equal(caught.code, code, String(caught.body))
  const status = typeof caught.body === 'string' ? JSON.parse(caught.body) : caught.body
  assert.equal(status.kind, 'Status')
  assert.equal(status.apiVersion, 'v1')
  assert.equal(status.status, 'Failure')
  assert.equal(status.code, code)
  assert.equal(status.reason, reason)
  return status
}

/** Events as they arrive; `until` resolves with the first one, already seen or still to come, that matches. */
class EventLog<T> {
  readonly seen: T[] = []
  private waiters: {match: (event: T) => boolean; resolve: (event: T) => void; reject: (error: unknown) => void}[] = []
  private failure: unknown
  private failed = false

  push(event: T): void {
    this.seen.push(event)
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.match(event)) return true
      waiter.resolve(event)
      return false
    })
  }

  fail(error: unknown): void {
    if (this.failed) return
    this.failed = true
    this.failure = error
    for (const waiter of this.waiters) waiter.reject(error)
    this.waiters = []
  }

  until(match: (event: T) => boolean): Promise<T> {
    const found = this.seen.find(match)
    if (found !== undefined) return Promise.resolve(found)
    if (this.failed) return Promise.reject(this.failure)
    return new Promise((resolve, reject) => this.waiters.push({match, resolve, reject}))
  }
}

const configMap = (name: string, data: Record<string, string>, labels?: Record<string, string>): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {name, labels},
  data,
})

const statefulSet = (name: string, replicas: number): V1StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {name, labels: {app: name}},
  spec: {
    replicas,
    serviceName: name,
    selector: {matchLabels: {app: name}},
    template: {
      metadata: {labels: {app: name}},
      spec: {containers: [{name: 'main', image: 'registry.example/app:1'}]},
    },
  },
})

const names = (items: readonly KubernetesObject[]) => items.map((item) => item.metadata?.name)

describe('@kubernetes/client-node 1.x against orch', () => {
  let server: OrchServer
  let kc: KubeConfig
  let core: CoreV1Api
  let apps: AppsV1Api
  const ns = 'client-node'

  before(async () => {
    // the namespace controller only (deleteNamespace needs it): the StatefulSet controller writes the
    // status of every StatefulSet created here a few tens of milliseconds later (replicas, revisions),
    // which changes its resourceVersion and status.replicas under the tests that read them back
    server = await startOrchServer(['--controllers=namespace'])
    const b64 = (pem: string) => Buffer.from(pem).toString('base64')
    kc = kubeConfigFor({server: server.url, caData: b64(server.ca), certData: b64(server.cert), keyData: b64(server.key)})
    core = kc.makeApiClient(CoreV1Api)
    apps = kc.makeApiClient(AppsV1Api)
    await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}}})
  })
  after(async () => server.cleanup())

  /** Resolves once a client-node Watch on `path` (from the list's resourceVersion) reports `name` DELETED, or it is already gone. */
  async function awaitDeleted(listPath: string, name: string, exists: () => Promise<unknown>): Promise<void> {
    const rv = (await call(server.url, 'GET', listPath)).json.metadata.resourceVersion
    try {
      await exists()
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return
      throw error
    }
    const events = new EventLog<{type: string; object: any}>()
    let stopping = false
    const controller = await new Watch(kc).watch(
      listPath,
      {resourceVersion: rv, fieldSelector: `metadata.name=${name}`},
      (type, object) => events.push({type, object}),
      (error) => {
        if (!stopping) events.fail(error ?? new Error('watch ended before DELETED'))
      },
    )
    try {
      await events.until((e) => e.type === 'DELETED')
    } finally {
      stopping = true
      controller.abort()
    }
  }

  it('loads the admin.kubeconfig the server wrote, unchanged, and is cluster-admin with it', async () => {
    const fromFile = new KubeConfig()
    fromFile.loadFromFile(server.kubeconfig)
    const list = await fromFile.makeApiClient(CoreV1Api).listNamespace()
    assert.ok(list.items.some((n) => n.metadata?.name === 'default'))
    const who = await call(server.url, 'POST', '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: {resourceAttributes: {verb: '*', group: '*', resource: '*'}},
    })
    assert.equal(who.json.status.allowed, true)
  })

  describe('namespaces (CoreV1Api)', () => {
    it('createNamespace answers the stored Namespace: uid, resourceVersion, creationTimestamp, phase Active', async () => {
      const created = await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-create', labels: {a: '1'}}}})
      assert.equal(created.kind, 'Namespace')
      assert.equal(created.apiVersion, 'v1')
      assert.equal(created.metadata?.name, 'cn-create')
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/)
      assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(created.metadata?.creationTimestamp instanceof Date)
      assert.deepEqual(created.metadata?.labels, {a: '1', 'orch.io/metadata.name': 'cn-create'}, 'SetDefaults_Namespace adds the name label')
      assert.equal(created.status?.phase, 'Active')
    })

    it('createNamespace accepts a body without apiVersion/kind (Kubernetes defaults them from the URL)', async () => {
      // client-node users commonly send only {metadata}; kube-apiserver decodes with the endpoint's kind as default
      const created = await core.createNamespace({body: {metadata: {name: 'cn-bare'}}})
      assert.equal(created.kind, 'Namespace')
      assert.equal(created.metadata?.name, 'cn-bare')
    })

    it('readNamespace returns what create stored', async () => {
      const created = await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-read'}}})
      const read = await core.readNamespace({name: 'cn-read'})
      assert.equal(read.metadata?.uid, created.metadata?.uid)
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion)
      assert.equal(read.status?.phase, 'Active')
    })

    it('listNamespace returns a NamespaceList with a resourceVersion, including default and new namespaces', async () => {
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-list', labels: {pick: 'me'}}}})
      const list = await core.listNamespace()
      assert.equal(list.kind, 'NamespaceList')
      assert.equal(list.apiVersion, 'v1')
      assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(names(list.items).includes('default'))
      assert.ok(names(list.items).includes('cn-list'))
      const selected = await core.listNamespace({labelSelector: 'pick=me'})
      assert.deepEqual(names(selected.items), ['cn-list'])
    })

    it('replaceNamespace with the current resourceVersion succeeds; with a stale one is a 409 Conflict', async () => {
      const created = await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-replace'}}})
      const replaced = await core.replaceNamespace({
        name: 'cn-replace',
        body: {...created, metadata: {...created.metadata, labels: {replaced: 'yes'}}},
      })
      assert.deepEqual(replaced.metadata?.labels, {replaced: 'yes', 'orch.io/metadata.name': 'cn-replace'})
      assert.equal(replaced.metadata?.uid, created.metadata?.uid)
      assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion)
      const stale = core.replaceNamespace({name: 'cn-replace', body: {...created, metadata: {...created.metadata, labels: {stale: 'yes'}}}})
      const status = await rejectsWith(stale, 409, 'Conflict')
      assert.match(status.message, /the object has been modified; please apply your changes to the latest version and try again/)
    })

    it('patchNamespace with a JSON patch (application/json-patch+json)', async () => {
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-jsonpatch'}}})
      const patched = await core.patchNamespace(
        {name: 'cn-jsonpatch', body: [{op: 'add', path: '/metadata/labels', value: {team: 'blue'}}]},
        jsonPatch,
      )
      assert.deepEqual(patched.metadata?.labels, {team: 'blue', 'orch.io/metadata.name': 'cn-jsonpatch'})
      const tested = core.patchNamespace({name: 'cn-jsonpatch', body: [{op: 'test', path: '/metadata/labels/team', value: 'red'}]}, jsonPatch)
      await rejectsWith(tested, 422, 'Invalid')
    })

    it('patchNamespace with a merge patch (application/merge-patch+json): null removes a key', async () => {
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-mergepatch', labels: {a: '1', b: '2'}}}})
      const patched = await core.patchNamespace({name: 'cn-mergepatch', body: {metadata: {labels: {a: null, c: '3'}}}}, mergePatch)
      assert.deepEqual(patched.metadata?.labels, {b: '2', 'orch.io/metadata.name': 'cn-mergepatch', c: '3'})
    })

    it('deleteNamespace answers 200 with the Namespace, now Terminating; the namespace then goes away', async () => {
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'cn-delete'}}})
      await core.createNamespacedConfigMap({namespace: 'cn-delete', body: configMap('inside', {k: 'v'})})
      // Kubernetes: DELETE of a namespace answers 200 and the updated Namespace (deletionTimestamp, phase Terminating);
      // 202 only when the request sets orphanDependents=false.
      const deleted = await core.deleteNamespaceWithHttpInfo({name: 'cn-delete'})
      assert.equal(deleted.httpStatusCode, 200)
      assert.equal(deleted.data.kind, 'Namespace')
      await awaitDeleted('/api/v1/namespaces', 'cn-delete', () => core.readNamespace({name: 'cn-delete'}))
      await rejectsWith(core.readNamespace({name: 'cn-delete'}), 404, 'NotFound')
    })
  })

  describe('configmaps (CoreV1Api)', () => {
    it('createNamespacedConfigMap answers the stored ConfigMap in its namespace', async () => {
      const created = await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-create', {k: 'v'})})
      assert.equal(created.kind, 'ConfigMap')
      assert.equal(created.apiVersion, 'v1')
      assert.equal(created.metadata?.namespace, ns)
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/)
      assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(created.metadata?.creationTimestamp instanceof Date)
      assert.deepEqual(created.data, {k: 'v'})
    })

    it('createNamespacedConfigMap accepts a body without apiVersion/kind (Kubernetes defaults them from the URL)', async () => {
      const created = await core.createNamespacedConfigMap({namespace: ns, body: {metadata: {name: 'cm-bare'}, data: {k: 'v'}}})
      assert.equal(created.kind, 'ConfigMap')
      assert.deepEqual(created.data, {k: 'v'})
    })

    it('readNamespacedConfigMap returns what create stored', async () => {
      const created = await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-read', {k: 'v'})})
      const read = await core.readNamespacedConfigMap({name: 'cm-read', namespace: ns})
      assert.equal(read.metadata?.uid, created.metadata?.uid)
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion)
      assert.deepEqual(read.data, {k: 'v'})
    })

    it('listNamespacedConfigMap and listConfigMapForAllNamespaces return ConfigMapLists with a resourceVersion', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-list', {k: 'v'})})
      const list = await core.listNamespacedConfigMap({namespace: ns})
      assert.equal(list.kind, 'ConfigMapList')
      assert.equal(list.apiVersion, 'v1')
      assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(names(list.items).includes('cm-list'))
      assert.ok(list.items.every((item) => item.metadata?.namespace === ns))
      const all = await core.listConfigMapForAllNamespaces()
      assert.equal(all.kind, 'ConfigMapList')
      assert.ok(all.items.some((item) => item.metadata?.name === 'cm-list' && item.metadata?.namespace === ns))
    })

    it('listNamespacedConfigMap with a labelSelector returns only the matching ConfigMaps', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-sel-a', {}, {tier: 'front', sel: 'yes'})})
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-sel-b', {}, {tier: 'back', sel: 'yes'})})
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-sel-c', {}, {tier: 'front'})})
      assert.deepEqual(names((await core.listNamespacedConfigMap({namespace: ns, labelSelector: 'sel=yes,tier=front'})).items), ['cm-sel-a'])
      assert.deepEqual(names((await core.listNamespacedConfigMap({namespace: ns, labelSelector: 'sel in (yes),tier!=front'})).items), ['cm-sel-b'])
      assert.deepEqual(names((await core.listNamespacedConfigMap({namespace: ns, labelSelector: 'tier=front,!sel'})).items), ['cm-sel-c'])
    })

    it('replaceNamespacedConfigMap with the current resourceVersion succeeds; with a stale one is a 409 Conflict', async () => {
      const created = await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-replace', {k: 'v1'})})
      const replaced = await core.replaceNamespacedConfigMap({name: 'cm-replace', namespace: ns, body: {...created, data: {k: 'v2'}}})
      assert.deepEqual(replaced.data, {k: 'v2'})
      assert.equal(replaced.metadata?.uid, created.metadata?.uid)
      assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion)
      const stale = core.replaceNamespacedConfigMap({name: 'cm-replace', namespace: ns, body: {...created, data: {k: 'v3'}}})
      await rejectsWith(stale, 409, 'Conflict')
      assert.deepEqual((await core.readNamespacedConfigMap({name: 'cm-replace', namespace: ns})).data, {k: 'v2'})
    })

    it('patchNamespacedConfigMap with a JSON patch (application/json-patch+json)', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-jsonpatch', {a: '1'})})
      const patched = await core.patchNamespacedConfigMap(
        {
          name: 'cm-jsonpatch',
          namespace: ns,
          body: [
            {op: 'replace', path: '/data/a', value: 'one'},
            {op: 'add', path: '/data/b', value: '2'},
          ],
        },
        jsonPatch,
      )
      assert.deepEqual(patched.data, {a: 'one', b: '2'})
    })

    it('patchNamespacedConfigMap with a merge patch (application/merge-patch+json): null removes a key', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-mergepatch', {a: '1', b: '2'})})
      const patched = await core.patchNamespacedConfigMap({name: 'cm-mergepatch', namespace: ns, body: {data: {a: null, c: '3'}}}, mergePatch)
      assert.deepEqual(patched.data, {b: '2', c: '3'})
    })

    it('deleteNamespacedConfigMap answers 200 with a Success Status; a read afterwards is 404', async () => {
      const created = await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-delete', {k: 'v'})})
      const deleted = await core.deleteNamespacedConfigMapWithHttpInfo({name: 'cm-delete', namespace: ns})
      assert.equal(deleted.httpStatusCode, 200)
      assert.equal(deleted.data.kind, 'Status')
      assert.equal(deleted.data.status, 'Success')
      assert.equal(deleted.data.details?.name, 'cm-delete')
      assert.equal(deleted.data.details?.kind, 'configmaps')
      assert.equal(deleted.data.details?.uid, created.metadata?.uid)
      await rejectsWith(core.readNamespacedConfigMap({name: 'cm-delete', namespace: ns}), 404, 'NotFound')
    })

    it('deleting a ConfigMap held by a finalizer answers 200 with the object, marked with a deletionTimestamp', async () => {
      const body = configMap('cm-held', {k: 'v'})
      body.metadata!.finalizers = ['example.com/hold']
      await core.createNamespacedConfigMap({namespace: ns, body})
      // Kubernetes: not deleted immediately -> 200 and the updated object (202 only with orphanDependents=false)
      const deleted = await core.deleteNamespacedConfigMapWithHttpInfo({name: 'cm-held', namespace: ns})
      assert.equal(deleted.httpStatusCode, 200)
      assert.equal(deleted.data.kind, 'ConfigMap')
      const marked = await core.readNamespacedConfigMap({name: 'cm-held', namespace: ns})
      assert.ok(marked.metadata?.deletionTimestamp instanceof Date)
      await core.patchNamespacedConfigMap({name: 'cm-held', namespace: ns, body: {metadata: {finalizers: null}}}, mergePatch)
      await rejectsWith(core.readNamespacedConfigMap({name: 'cm-held', namespace: ns}), 404, 'NotFound')
    })

    it('deleteNamespacedConfigMap with dryRun: All, as a query parameter or in the DeleteOptions body, deletes nothing', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-dryrun', {k: 'v'})})
      const byQuery = await core.deleteNamespacedConfigMapWithHttpInfo({name: 'cm-dryrun', namespace: ns, dryRun: 'All'})
      assert.equal(byQuery.httpStatusCode, 200)
      assert.deepEqual((await core.readNamespacedConfigMap({name: 'cm-dryrun', namespace: ns})).data, {k: 'v'})
      // kubectl delete --dry-run=server sends {"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]} as the body
      const byBody = await core.deleteNamespacedConfigMapWithHttpInfo({name: 'cm-dryrun', namespace: ns, body: {dryRun: ['All']}})
      assert.equal(byBody.httpStatusCode, 200)
      assert.deepEqual((await core.readNamespacedConfigMap({name: 'cm-dryrun', namespace: ns})).data, {k: 'v'})
    })

    it('a missing ConfigMap surfaces as an ApiException with code 404 and a NotFound Status', async () => {
      const status = await rejectsWith(core.readNamespacedConfigMap({name: 'cm-missing', namespace: ns}), 404, 'NotFound')
      assert.equal(status.message, 'configmaps "cm-missing" not found')
      assert.deepEqual(status.details, {name: 'cm-missing', kind: 'configmaps'})
      await rejectsWith(core.deleteNamespacedConfigMap({name: 'cm-missing', namespace: ns}), 404, 'NotFound')
      await rejectsWith(core.replaceNamespacedConfigMap({name: 'cm-missing', namespace: ns, body: configMap('cm-missing', {})}), 404, 'NotFound')
      await rejectsWith(core.patchNamespacedConfigMap({name: 'cm-missing', namespace: ns, body: {data: {a: 'b'}}}, mergePatch), 404, 'NotFound')
    })

    it('creating a ConfigMap that exists surfaces as an ApiException with code 409 and an AlreadyExists Status', async () => {
      await core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-dup', {k: 'v'})})
      const status = await rejectsWith(core.createNamespacedConfigMap({namespace: ns, body: configMap('cm-dup', {k: 'v'})}), 409, 'AlreadyExists')
      assert.equal(status.message, 'configmaps "cm-dup" already exists')
      assert.deepEqual(status.details, {name: 'cm-dup', kind: 'configmaps'})
    })
  })

  describe('nodes (CoreV1Api)', () => {
    const node = (name: string, labels?: Record<string, string>): V1Node => ({apiVersion: 'v1', kind: 'Node', metadata: {name, labels}})

    it('createNode answers the stored, cluster-scoped Node', async () => {
      const created = await core.createNode({body: node('node-create', {zone: 'a'})})
      assert.equal(created.kind, 'Node')
      assert.equal(created.apiVersion, 'v1')
      assert.equal(created.metadata?.name, 'node-create')
      assert.equal(created.metadata?.namespace, undefined)
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/)
      assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.deepEqual(created.metadata?.labels, {zone: 'a'})
    })

    it('a Node created without spec reads back with a spec (as kube-apiserver serializes NodeSpec; here holding only TaintNodesByCondition\'s taint, no node lifecycle controller runs), so a JSON patch can add to /spec', async () => {
      await core.createNode({body: node('node-emptyspec')})
      const read = await core.readNode({name: 'node-emptyspec'})
      assert.deepEqual(JSON.parse(JSON.stringify(read.spec)), {taints: [{key: 'node.orch.io/not-ready', effect: 'NoSchedule'}]})
      const patched = await core.patchNode({name: 'node-emptyspec', body: [{op: 'add', path: '/spec/unschedulable', value: true}]}, jsonPatch)
      assert.equal(patched.spec?.unschedulable, true)
    })

    it('readNode returns what create stored', async () => {
      const created = await core.createNode({body: node('node-read')})
      const read = await core.readNode({name: 'node-read'})
      assert.equal(read.metadata?.uid, created.metadata?.uid)
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion)
    })

    it('listNode returns a NodeList with a resourceVersion; a labelSelector filters it', async () => {
      await core.createNode({body: node('node-list-a', {pool: 'gpu'})})
      await core.createNode({body: node('node-list-b', {pool: 'cpu'})})
      const list = await core.listNode()
      assert.equal(list.kind, 'NodeList')
      assert.equal(list.apiVersion, 'v1')
      assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(names(list.items).includes('node-list-a'))
      assert.ok(names(list.items).includes('node-list-b'))
      assert.deepEqual(names((await core.listNode({labelSelector: 'pool=gpu'})).items), ['node-list-a'])
    })

    it('replaceNode with the current resourceVersion succeeds; with a stale one is a 409 Conflict', async () => {
      const created = await core.createNode({body: node('node-replace')})
      const replaced = await core.replaceNode({name: 'node-replace', body: {...created, spec: {unschedulable: true, podCIDR: '10.244.1.0/24'}}})
      assert.equal(replaced.spec?.unschedulable, true)
      assert.equal(replaced.spec?.podCIDR, '10.244.1.0/24')
      assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion)
      await rejectsWith(core.replaceNode({name: 'node-replace', body: {...created, spec: {unschedulable: false}}}), 409, 'Conflict')
    })

    it('patchNode with a JSON patch (application/json-patch+json)', async () => {
      await core.createNode({body: node('node-jsonpatch', {a: '1'})})
      const patched = await core.patchNode(
        {
          name: 'node-jsonpatch',
          body: [
            {op: 'add', path: '/metadata/labels/b', value: '2'},
            {op: 'remove', path: '/metadata/labels/a'},
          ],
        },
        jsonPatch,
      )
      assert.deepEqual(patched.metadata?.labels, {b: '2'})
    })

    it('patchNode with a merge patch (application/merge-patch+json)', async () => {
      await core.createNode({body: node('node-mergepatch', {a: '1'})})
      const patched = await core.patchNode(
        {name: 'node-mergepatch', body: {metadata: {labels: {a: null, b: '2'}}, spec: {taints: [{key: 'dedicated', value: 'x', effect: 'NoSchedule'}]}}},
        mergePatch,
      )
      assert.deepEqual(patched.metadata?.labels, {b: '2'})
      assert.deepEqual(patched.spec?.taints?.map((t) => [t.key, t.value, t.effect]), [['dedicated', 'x', 'NoSchedule']])
    })

    it('deleteNode answers 200 with a Success Status; a read afterwards is 404', async () => {
      const created = await core.createNode({body: node('node-delete')})
      const deleted = await core.deleteNodeWithHttpInfo({name: 'node-delete'})
      assert.equal(deleted.httpStatusCode, 200)
      assert.equal(deleted.data.kind, 'Status')
      assert.equal(deleted.data.status, 'Success')
      assert.equal(deleted.data.details?.name, 'node-delete')
      assert.equal(deleted.data.details?.kind, 'nodes')
      assert.equal(deleted.data.details?.uid, created.metadata?.uid)
      await rejectsWith(core.readNode({name: 'node-delete'}), 404, 'NotFound')
    })
  })

  describe('statefulsets (AppsV1Api)', () => {
    it('createNamespacedStatefulSet answers the stored, defaulted StatefulSet with generation 1', async () => {
      const created = await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-create', 2)})
      assert.equal(created.kind, 'StatefulSet')
      assert.equal(created.apiVersion, 'apps/v1')
      assert.equal(created.metadata?.namespace, ns)
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/)
      assert.equal(created.metadata?.generation, 1)
      assert.equal(created.spec?.replicas, 2)
      // SetDefaults_StatefulSet
      assert.equal(created.spec?.podManagementPolicy, 'OrderedReady')
      assert.equal(created.spec?.updateStrategy?.type, 'RollingUpdate')
      assert.equal(created.spec?.revisionHistoryLimit, 10)
      assert.equal(created.spec?.template.spec?.containers[0].image, 'registry.example/app:1')
    })

    it('readNamespacedStatefulSet returns what create stored', async () => {
      const created = await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-read', 1)})
      const read = await apps.readNamespacedStatefulSet({name: 'sts-read', namespace: ns})
      assert.equal(read.metadata?.uid, created.metadata?.uid)
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion)
      assert.deepEqual(read.spec?.selector?.matchLabels, {app: 'sts-read'})
    })

    it('listNamespacedStatefulSet and listStatefulSetForAllNamespaces return StatefulSetLists; a labelSelector filters', async () => {
      await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-list', 1)})
      const list = await apps.listNamespacedStatefulSet({namespace: ns})
      assert.equal(list.kind, 'StatefulSetList')
      assert.equal(list.apiVersion, 'apps/v1')
      assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/)
      assert.ok(names(list.items).includes('sts-list'))
      const all = await apps.listStatefulSetForAllNamespaces()
      assert.ok(all.items.some((item) => item.metadata?.name === 'sts-list' && item.metadata?.namespace === ns))
      assert.deepEqual(names((await apps.listNamespacedStatefulSet({namespace: ns, labelSelector: 'app=sts-list'})).items), ['sts-list'])
    })

    it('replaceNamespacedStatefulSet with the current resourceVersion bumps generation; with a stale one is a 409 Conflict', async () => {
      const created = await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-replace', 1)})
      const replaced = await apps.replaceNamespacedStatefulSet({
        name: 'sts-replace',
        namespace: ns,
        body: {...created, spec: {...created.spec!, replicas: 3}},
      })
      assert.equal(replaced.spec?.replicas, 3)
      assert.equal(replaced.metadata?.generation, 2)
      assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion)
      const stale = apps.replaceNamespacedStatefulSet({name: 'sts-replace', namespace: ns, body: {...created, spec: {...created.spec!, replicas: 4}}})
      await rejectsWith(stale, 409, 'Conflict')
    })

    it('patchNamespacedStatefulSet with a JSON patch (application/json-patch+json)', async () => {
      await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-jsonpatch', 1)})
      const patched = await apps.patchNamespacedStatefulSet(
        {
          name: 'sts-jsonpatch',
          namespace: ns,
          body: [
            {op: 'replace', path: '/spec/replicas', value: 5},
            {op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.example/app:2'},
          ],
        },
        jsonPatch,
      )
      assert.equal(patched.spec?.replicas, 5)
      assert.equal(patched.spec?.template.spec?.containers[0].image, 'registry.example/app:2')
      assert.equal(patched.metadata?.generation, 2)
    })

    it('patchNamespacedStatefulSet with a merge patch (application/merge-patch+json)', async () => {
      await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-mergepatch', 1)})
      const patched = await apps.patchNamespacedStatefulSet(
        {name: 'sts-mergepatch', namespace: ns, body: {metadata: {labels: {extra: 'yes'}}, spec: {replicas: 0}}},
        mergePatch,
      )
      assert.equal(patched.spec?.replicas, 0)
      assert.deepEqual(patched.metadata?.labels, {app: 'sts-mergepatch', extra: 'yes'})
    })

    it('the scale subresource reads and writes an autoscaling/v1 Scale (read, replace, merge patch)', async () => {
      const created = await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-scale', 1)})
      const scale = await apps.readNamespacedStatefulSetScale({name: 'sts-scale', namespace: ns})
      assert.equal(scale.kind, 'Scale')
      assert.equal(scale.apiVersion, 'autoscaling/v1')
      assert.equal(scale.metadata?.name, 'sts-scale')
      assert.equal(scale.metadata?.namespace, ns)
      assert.equal(scale.metadata?.uid, created.metadata?.uid)
      assert.equal(scale.spec?.replicas, 1)
      assert.equal(scale.status?.replicas, 0)
      assert.equal(scale.status?.selector, 'app=sts-scale')
      const replaced = await apps.replaceNamespacedStatefulSetScale({name: 'sts-scale', namespace: ns, body: {...scale, spec: {replicas: 3}}})
      assert.equal(replaced.kind, 'Scale')
      assert.equal(replaced.spec?.replicas, 3)
      // kubectl scale sends exactly this: a merge patch to .../statefulsets/<name>/scale
      const patched = await apps.patchNamespacedStatefulSetScale({name: 'sts-scale', namespace: ns, body: {spec: {replicas: 4}}}, mergePatch)
      assert.equal(patched.kind, 'Scale')
      assert.equal(patched.spec?.replicas, 4)
      assert.equal((await apps.readNamespacedStatefulSet({name: 'sts-scale', namespace: ns})).spec?.replicas, 4)
    })

    it('deleteNamespacedStatefulSet answers 200 with a Success Status; a read afterwards is 404', async () => {
      const created = await apps.createNamespacedStatefulSet({namespace: ns, body: statefulSet('sts-delete', 1)})
      const deleted = await apps.deleteNamespacedStatefulSetWithHttpInfo({name: 'sts-delete', namespace: ns})
      assert.equal(deleted.httpStatusCode, 200)
      assert.equal(deleted.data.kind, 'Status')
      assert.equal(deleted.data.status, 'Success')
      assert.equal(deleted.data.details?.name, 'sts-delete')
      assert.equal(deleted.data.details?.group, 'apps')
      assert.equal(deleted.data.details?.kind, 'statefulsets')
      assert.equal(deleted.data.details?.uid, created.metadata?.uid)
      await rejectsWith(apps.readNamespacedStatefulSet({name: 'sts-delete', namespace: ns}), 404, 'NotFound')
    })
  })

  describe('informer and Watch', () => {
    it('makeInformer lists pre-existing ConfigMaps as ADD, then sees add, update and delete made over HTTP', {timeout: 20_000}, async () => {
      const namespace = 'informed'
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: namespace}}})
      const base = `/api/v1/namespaces/${namespace}/configmaps`
      assert.equal((await call(server.url, 'POST', base, configMap('before', {k: 'v'}))).status, 201)

      const events = new EventLog<{verb: string; object: V1ConfigMap}>()
      const informer = makeInformer<V1ConfigMap>(kc, base, () => core.listNamespacedConfigMap({namespace}))
      informer.on('add', (object) => events.push({verb: 'add', object}))
      informer.on('update', (object) => events.push({verb: 'update', object}))
      informer.on('delete', (object) => events.push({verb: 'delete', object}))
      informer.on('error', (error) => events.fail(error))
      const is = (verb: string, name: string) => (e: {verb: string; object: V1ConfigMap}) => e.verb === verb && e.object.metadata?.name === name
      try {
        await informer.start()
        await events.until(is('add', 'before'))
        assert.deepEqual(informer.get('before', namespace)?.data, {k: 'v'})

        const created = await call(server.url, 'POST', base, configMap('after', {k: 'v1'}))
        assert.equal(created.status, 201, created.text)
        await events.until(is('add', 'after'))

        const updated = await call(server.url, 'PUT', `${base}/after`, {...created.json, data: {k: 'v2'}})
        assert.equal(updated.status, 200, updated.text)
        const update = await events.until(is('update', 'after'))
        assert.deepEqual(update.object.data, {k: 'v2'})
        assert.equal(update.object.metadata?.resourceVersion, updated.json.metadata.resourceVersion)

        assert.equal((await call(server.url, 'DELETE', `${base}/after`)).status, 200)
        await events.until(is('delete', 'after'))

        assert.deepEqual(names(informer.list(namespace)), ['before'])
        assert.deepEqual(
          events.seen.map((e) => [e.verb, e.object.metadata?.name]),
          [
            ['add', 'before'],
            ['add', 'after'],
            ['update', 'after'],
            ['delete', 'after'],
          ],
        )
      } finally {
        await informer.stop()
      }
    })

    it('Watch on a namespace\'s configmaps from a list resourceVersion receives ADDED, MODIFIED, DELETED', {timeout: 20_000}, async () => {
      const namespace = 'watched'
      await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: namespace}}})
      const path = `/api/v1/namespaces/${namespace}/configmaps`
      const list = await core.listNamespacedConfigMap({namespace})
      const events = new EventLog<{type: string; object: any}>()
      let stopping = false
      const controller = await new Watch(kc).watch(
        path,
        {resourceVersion: list.metadata?.resourceVersion},
        (type, object) => events.push({type, object}),
        (error) => {
          if (!stopping) events.fail(error ?? new Error('watch ended'))
        },
      )
      try {
        const created = await call(server.url, 'POST', path, configMap('w', {k: 'v1'}))
        assert.equal(created.status, 201, created.text)
        assert.equal((await call(server.url, 'PUT', `${path}/w`, {...created.json, data: {k: 'v2'}})).status, 200)
        assert.equal((await call(server.url, 'DELETE', `${path}/w`)).status, 200)
        await events.until((e) => e.type === 'DELETED')
        assert.deepEqual(
          events.seen.map((e) => e.type),
          ['ADDED', 'MODIFIED', 'DELETED'],
        )
        assert.equal(events.seen[0].object.kind, 'ConfigMap')
        assert.equal(events.seen[0].object.apiVersion, 'v1')
        assert.deepEqual(events.seen[0].object.data, {k: 'v1'})
        assert.deepEqual(events.seen[1].object.data, {k: 'v2'})
        assert.equal(events.seen[2].object.metadata.name, 'w')
        assert.equal(events.seen[2].object.metadata.uid, created.json.metadata.uid)
      } finally {
        stopping = true
        controller.abort()
      }
    })
  })
})
