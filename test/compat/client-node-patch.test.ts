// The official JavaScript client, @kubernetes/client-node 1.x, patching through orch: strategic merge
// patches (a list without a merge key replaced whole, a list with one merged item by item) and server-side
// apply (PatchStrategy.ServerSideApply with fieldManager and force). Written to Kubernetes' behaviour: a
// failure here is a server deviation, not a test to loosen.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Node,
  type V1StatefulSet,
} from '@kubernetes/client-node'
import {startOrchServer, type OrchServer} from '../support/server.js'

const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)
const serverSideApply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply)

const statefulSet = (name: string, containers: {name: string; image: string}[]): V1StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {name},
  spec: {
    replicas: 1,
    serviceName: name,
    selector: {matchLabels: {app: name}},
    template: {metadata: {labels: {app: name}}, spec: {containers}},
  },
})

/** The promise's ApiException (it must reject with one). */
async function apiException(promise: Promise<unknown>): Promise<ApiException<any>> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof ApiException, `expected an ApiException, got ${String(error)}`)
    return error
  }
  assert.fail('expected the call to fail')
}

const managers = (object: {metadata?: {managedFields?: {manager?: string; operation?: string}[]}}) =>
  (object.metadata?.managedFields ?? []).map((m) => [m.manager, m.operation])

describe('@kubernetes/client-node 1.x patches against orch', () => {
  let server: OrchServer
  let core: CoreV1Api
  let apps: AppsV1Api
  const ns = 'client-node-patch'

  before(async () => {
    server = await startOrchServer(['--controllers='])
    const b64 = (pem: string) => Buffer.from(pem).toString('base64')
    const kc = new KubeConfig()
    kc.loadFromOptions({
      clusters: [{name: 'orch', server: server.url, caData: b64(server.ca), skipTLSVerify: false}],
      users: [{name: 'orch-test', certData: b64(server.cert), keyData: b64(server.key)}],
      contexts: [{name: 'orch', cluster: 'orch', user: 'orch-test'}],
      currentContext: 'orch',
    })
    core = kc.makeApiClient(CoreV1Api)
    apps = kc.makeApiClient(AppsV1Api)
    await core.createNamespace({body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}}})
  })
  after(async () => server.cleanup())

  describe('strategic merge patch (application/strategic-merge-patch+json)', () => {
    it("patchNode: a Node's spec.taints (no merge key) is replaced whole", async () => {
      const node: V1Node = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {name: 'smp-node'},
        spec: {
          taints: [
            {key: 'dedicated', value: 'db', effect: 'NoSchedule'},
            {key: 'spot', effect: 'PreferNoSchedule'},
          ],
        },
      }
      await core.createNode({body: node})
      const patched = await core.patchNode(
        {name: 'smp-node', body: {metadata: {labels: {zone: 'a'}}, spec: {taints: [{key: 'maintenance', effect: 'NoExecute'}]}}},
        strategicPatch,
      )
      assert.deepEqual(patched.spec?.taints?.map((t) => [t.key, t.value, t.effect]), [['maintenance', undefined, 'NoExecute']])
      assert.equal(patched.metadata?.labels?.zone, 'a')
      const read = await core.readNode({name: 'smp-node'})
      assert.deepEqual(read.spec?.taints?.map((t) => t.key), ['maintenance'])
    })

    it("patchNamespacedStatefulSet: the template's containers are merged by name", async () => {
      await apps.createNamespacedStatefulSet({
        namespace: ns,
        body: statefulSet('smp-sts', [
          {name: 'app', image: 'registry.example/app:1'},
          {name: 'sidecar', image: 'registry.example/side:1'},
        ]),
      })
      const patched = await apps.patchNamespacedStatefulSet(
        {
          name: 'smp-sts',
          namespace: ns,
          body: {spec: {template: {spec: {containers: [{name: 'sidecar', image: 'registry.example/side:2'}, {name: 'logger', image: 'registry.example/log:1'}]}}}},
        },
        strategicPatch,
      )
      const containers = patched.spec?.template.spec?.containers.map((c) => [c.name, c.image])
      assert.deepEqual(containers, [
        ['app', 'registry.example/app:1'],
        ['sidecar', 'registry.example/side:2'],
        ['logger', 'registry.example/log:1'],
      ])
      assert.equal(patched.metadata?.generation, 2)

      // $patch: delete removes one item by its merge key
      const removed = await apps.patchNamespacedStatefulSet(
        {name: 'smp-sts', namespace: ns, body: {spec: {template: {spec: {containers: [{name: 'logger', $patch: 'delete'}]}}}}},
        strategicPatch,
      )
      assert.deepEqual(removed.spec?.template.spec?.containers.map((c) => c.name), ['app', 'sidecar'])
    })
  })

  describe('server-side apply (PatchStrategy.ServerSideApply)', () => {
    const applied = (data: Record<string, string>): V1ConfigMap => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'ssa', namespace: ns}, data})

    it('creates the object, recording the fieldManager with operation Apply', async () => {
      const created = await core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({a: '1', b: '2'}), fieldManager: 'alice'}, serverSideApply)
      assert.equal(created.kind, 'ConfigMap')
      assert.deepEqual(created.data, {a: '1', b: '2'})
      assert.deepEqual(managers(created), [['alice', 'Apply']])
      assert.deepEqual(created.metadata?.managedFields?.[0].fieldsV1, {'f:data': {'f:a': {}, 'f:b': {}}})
    })

    it('without a fieldManager is a 422 Invalid', async () => {
      const error = await apiException(core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({a: '1'})}, serverSideApply))
      assert.equal(error.code, 422)
    })

    it('another manager setting an owned field differently is a 409 Conflict naming the field; force takes it over', async () => {
      const error = await apiException(core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({a: 'bob'}), fieldManager: 'bob'}, serverSideApply))
      assert.equal(error.code, 409)
      const status = typeof error.body === 'string' ? JSON.parse(error.body) : error.body
      assert.equal(status.reason, 'Conflict')
      assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "alice": .data.a')
      assert.deepEqual(status.details?.causes, [{reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a'}])
      assert.deepEqual((await core.readNamespacedConfigMap({name: 'ssa', namespace: ns})).data, {a: '1', b: '2'})

      const forced = await core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({a: 'bob'}), fieldManager: 'bob', force: true}, serverSideApply)
      assert.deepEqual(forced.data, {a: 'bob', b: '2'})
      const owned = Object.fromEntries((forced.metadata?.managedFields ?? []).map((m) => [m.manager, Object.keys((m.fieldsV1 as any)?.['f:data'] ?? {})]))
      assert.deepEqual(owned, {alice: ['f:b'], bob: ['f:a']})
    })

    it('the same value from another manager is no conflict: the field is shared', async () => {
      const shared = await core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({b: '2'}), fieldManager: 'carol'}, serverSideApply)
      assert.deepEqual(shared.data, {a: 'bob', b: '2'})
      assert.ok(managers(shared).some(([manager]) => manager === 'carol'))
    })

    it('a field the manager no longer applies is removed when no one else owns it', async () => {
      const result = await core.patchNamespacedConfigMap({name: 'ssa', namespace: ns, body: applied({}), fieldManager: 'bob'}, serverSideApply)
      assert.deepEqual(result.data, {b: '2'})
    })

    it('dryRun: All answers the applied object and stores nothing', async () => {
      const before = await core.readNamespacedConfigMap({name: 'ssa', namespace: ns})
      const dry = await core.patchNamespacedConfigMap(
        {name: 'ssa', namespace: ns, body: applied({b: '2', c: '3'}), fieldManager: 'carol', dryRun: 'All'},
        serverSideApply,
      )
      assert.deepEqual(dry.data, {b: '2', c: '3'})
      const after = await core.readNamespacedConfigMap({name: 'ssa', namespace: ns})
      assert.deepEqual(after.data, {b: '2'})
      assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion)
    })

    it('applies a StatefulSet through AppsV1Api, then a changed replica count from the same manager', async () => {
      const body = statefulSet('ssa-sts', [{name: 'app', image: 'registry.example/app:1'}])
      const created = await apps.patchNamespacedStatefulSet({name: 'ssa-sts', namespace: ns, body, fieldManager: 'deployer'}, serverSideApply)
      assert.equal(created.spec?.replicas, 1)
      assert.equal(created.spec?.podManagementPolicy, 'OrderedReady', 'defaulted as on create')
      const scaled = await apps.patchNamespacedStatefulSet(
        {name: 'ssa-sts', namespace: ns, body: {...body, spec: {...body.spec!, replicas: 3}}, fieldManager: 'deployer'},
        serverSideApply,
      )
      assert.equal(scaled.spec?.replicas, 3)
      assert.equal(scaled.metadata?.generation, 2)
      assert.deepEqual(managers(scaled), [['deployer', 'Apply']])
    })
  })
})
