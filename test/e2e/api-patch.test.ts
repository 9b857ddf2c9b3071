// Strategic merge patch and server-side apply over HTTP, driven by the declarations.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const SMP = {'Content-Type': 'application/strategic-merge-patch+json'}
const APPLY = {'Content-Type': 'application/apply-patch+yaml'}

const sts = (name: string, replicas: number, image = 'nginx:1') => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {name},
  spec: {
    replicas,
    serviceName: name,
    selector: {matchLabels: {app: name}},
    template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'web', image}, {name: 'sidecar', image: 'busybox'}]}},
  },
})

describe('patches and server-side apply', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const STS = '/apis/apps/v1/namespaces/default/statefulsets'
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('strategic merge patch merges containers by name in a StatefulSet template', async () => {
    assert.equal((await api('POST', STS, sts('smp', 1))).status, 201)
    const patched = await api('PATCH', `${STS}/smp`, {spec: {template: {spec: {containers: [{name: 'web', image: 'nginx:2'}]}}}}, SMP)
    assert.equal(patched.status, 200, patched.text)
    const containers = patched.json.spec.template.spec.containers
    assert.deepEqual(containers.map((c: any) => [c.name, c.image]), [['web', 'nginx:2'], ['sidecar', 'busybox']])
  })

  it('strategic merge patch replaces a Node\'s taints whole (replaced whole on merge)', async () => {
    await api('POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}, spec: {taints: [{key: 'a', effect: 'NoSchedule'}, {key: 'b', effect: 'NoSchedule'}]}})
    const patched = await api('PATCH', '/api/v1/nodes/n1', {spec: {taints: [{key: 'c', effect: 'NoExecute'}]}}, SMP)
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.json.spec.taints.map((t: any) => t.key), ['c'])
  })

  it('strategic merge patch $patch: delete removes a list item by its merge key', async () => {
    const patched = await api('PATCH', `${STS}/smp`, {spec: {template: {spec: {containers: [{name: 'sidecar', $patch: 'delete'}]}}}}, SMP)
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.json.spec.template.spec.containers.map((c: any) => c.name), ['web'])
  })

  it('a PATCH whose result violates validation is 422; a patch on a missing object is 404', async () => {
    const invalid = await api('PATCH', `${STS}/smp`, {spec: {replicas: -1}}, SMP)
    assert.equal(invalid.status, 422, invalid.text)
    assert.equal((await api('PATCH', `${STS}/none`, {spec: {replicas: 1}}, SMP)).status, 404)
  })

  it('apply creates when absent (201), records managedFields per manager, and is idempotent', async () => {
    const yaml = 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: applied\nspec:\n  replicas: 2\n  serviceName: applied\n  selector:\n    matchLabels: {app: applied}\n  template:\n    metadata:\n      labels: {app: applied}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1\n'
    const created = await api('PATCH', `${STS}/applied?fieldManager=alice`, yaml, APPLY)
    assert.equal(created.status, 201, created.text)
    const entry = created.json.metadata.managedFields.find((m: any) => m.manager === 'alice')
    assert.equal(entry.operation, 'Apply')
    assert.equal(entry.fieldsType, 'FieldsV1')
    assert.ok(entry.fieldsV1['f:spec']['f:replicas'])
    const again = await api('PATCH', `${STS}/applied?fieldManager=alice`, yaml, APPLY)
    assert.equal(again.status, 200)
    assert.equal(again.json.metadata.resourceVersion, created.json.metadata.resourceVersion)
  })

  it('"lastAppliedUpdater": an apply by the manager kubectl rewrites the client-side apply annotation to the configuration it applied (keys sorted, < escaped, newline-terminated); other managers, and objects without the annotation, are left alone', async () => {
    const CMS = '/api/v1/namespaces/default/configmaps'
    const LAST = 'kubectl.kubernetes.io/last-applied-configuration'
    const first = '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"csa","namespace":"default"}}\n'
    const created = await api('POST', `${CMS}?fieldManager=kubectl-client-side-apply`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'csa', annotations: {[LAST]: first}}, data: {a: '1'}})
    assert.equal(created.status, 201, created.text)
    const other = await api('PATCH', `${CMS}/csa?fieldManager=someone`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'csa'}, data: {b: '2'}}, APPLY)
    assert.equal(other.status, 200, other.text)
    assert.equal(other.json.metadata.annotations[LAST], first, 'another manager leaves it')
    const config = {kind: 'ConfigMap', apiVersion: 'v1', metadata: {name: 'csa', labels: {z: 'y'}}, data: {c: '<3>', a: '1'}}
    const applied = await api('PATCH', `${CMS}/csa?fieldManager=kubectl`, config, APPLY)
    assert.equal(applied.status, 200, applied.text)
    assert.equal(applied.json.metadata.annotations[LAST], '{"apiVersion":"v1","data":{"a":"1","c":"\\u003c3\\u003e"},"kind":"ConfigMap","metadata":{"labels":{"z":"y"},"name":"csa"}}\n')
    assert.equal(applied.json.data.c, '<3>')
    const plain = await api('PATCH', `${CMS}/plain?fieldManager=kubectl`, {...config, metadata: {name: 'plain'}}, APPLY)
    assert.equal(plain.status, 201, plain.text)
    assert.equal(plain.json.metadata.annotations?.[LAST], undefined, 'not added where there was none')
  })

  it('apply requires fieldManager', async () => {
    const result = await api('PATCH', `${STS}/applied`, 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: applied\n', APPLY)
    assert.equal(result.status, 422, result.text)
  })

  it('a second manager changing a field it does not own conflicts: 409 with one cause per field and manager; force takes ownership', async () => {
    const yaml = 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: applied\nspec:\n  replicas: 5\n'
    const conflict = await api('PATCH', `${STS}/applied?fieldManager=bob`, yaml, APPLY)
    assert.equal(conflict.status, 409, conflict.text)
    assert.equal(conflict.json.reason, 'Conflict')
    assert.equal(conflict.json.details.causes.length, 1)
    assert.equal(conflict.json.details.causes[0].reason, 'FieldManagerConflict')
    assert.equal(conflict.json.details.causes[0].field, '.spec.replicas')
    assert.match(conflict.json.details.causes[0].message, /conflict with "alice"/)
    const forced = await api('PATCH', `${STS}/applied?fieldManager=bob&force=true`, yaml, APPLY)
    assert.equal(forced.status, 200, forced.text)
    assert.equal(forced.json.spec.replicas, 5)
    const alice = forced.json.metadata.managedFields.find((m: any) => m.manager === 'alice')
    assert.equal(alice.fieldsV1['f:spec']['f:replicas'], undefined)
  })

  it('fields removed from an applier\'s config are removed when it alone owned them', async () => {
    const withLabel = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  labels:\n    keep: "1"\n    drop: "1"\ndata:\n  a: "1"\n'
    await api('PATCH', '/api/v1/namespaces/default/configmaps/owned?fieldManager=carol', withLabel, APPLY)
    const without = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  labels:\n    keep: "1"\ndata:\n  a: "1"\n'
    const result = await api('PATCH', '/api/v1/namespaces/default/configmaps/owned?fieldManager=carol', without, APPLY)
    assert.deepEqual(result.json.metadata.labels, {keep: '1'})
  })

  it('an apply body for a different name or kind is 400 ("invalid object type" for the kind), nothing stored', async () => {
    const wrongName = await api('PATCH', '/api/v1/namespaces/default/configmaps/owned?fieldManager=carol', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n', APPLY)
    assert.equal(wrongName.status, 400)
    const wrongKind = await api('PATCH', '/api/v1/namespaces/default/configmaps/owned?fieldManager=carol', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: owned\n', APPLY)
    assert.equal(wrongKind.status, 400)
    // FieldManager.Apply's versionCheck words
    assert.equal(wrongKind.json.message, 'invalid object type: /v1, Kind=Secret')
    const noKind = await api('PATCH', '/api/v1/namespaces/default/configmaps/owned?fieldManager=carol', 'metadata:\n  name: owned\n', APPLY)
    assert.equal(noKind.status, 400)
    assert.equal(noKind.json.message, 'invalid object type: /, Kind=')
  })

  it('ordinary writes record an Update entry for their field manager', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/configmaps?fieldManager=dave', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'updated'}, data: {a: '1'}})
    const entry = created.json.metadata.managedFields.find((m: any) => m.manager === 'dave')
    assert.equal(entry.operation, 'Update')
    assert.ok(entry.fieldsV1['f:data']['f:a'])
  })

  it('fields the schema does not know are dropped from what a merge or strategic merge patch stores, with a warning', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pruned'}, data: {a: '1'}})
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      const patched = await api('PATCH', '/api/v1/namespaces/default/configmaps/pruned', {data: {b: '2'}, bogus: {x: 1}}, {'Content-Type': type})
      assert.equal(patched.status, 200, patched.text)
      assert.match(String(patched.headers.warning), /unknown field \\"bogus\\"/)
      assert.equal(patched.json.bogus, undefined, type)
      const stored = await api('GET', '/api/v1/namespaces/default/configmaps/pruned')
      assert.equal(stored.json.bogus, undefined, `${type}: nothing unknown stored`)
    }
    // Strict: the patcher's 422 on field patch (see field-validation.test.ts)
    const strict = await api('PATCH', '/api/v1/namespaces/default/configmaps/pruned?fieldValidation=Strict', {bogus: 1}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(strict.status, 422, strict.text)
  })

  it('a write through /scale records a managedFields entry of its manager with subresource scale', async () => {
    const sts = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'scaled'},
      spec: {serviceName: 's', replicas: 1, selector: {matchLabels: {app: 's'}}, template: {metadata: {labels: {app: 's'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    }
    assert.equal((await api('POST', '/apis/apps/v1/namespaces/default/statefulsets', sts)).status, 201)
    const scaled = await api('PATCH', '/apis/apps/v1/namespaces/default/statefulsets/scaled/scale?fieldManager=autoscaler', {spec: {replicas: 3}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(scaled.status, 200, scaled.text)
    const stored = (await api('GET', '/apis/apps/v1/namespaces/default/statefulsets/scaled')).json
    const entry = stored.metadata.managedFields.find((m: any) => m.manager === 'autoscaler')
    assert.ok(entry, JSON.stringify(stored.metadata.managedFields))
    assert.equal(entry.subresource, 'scale')
    assert.equal(entry.operation, 'Update')
    assert.ok(entry.fieldsV1['f:spec']['f:replicas'])
  })

  it('"server-side apply to /status records its manager": an Apply entry with subresource status, taking the fields over with force', async () => {
    assert.equal((await api('POST', STS, sts('status-applied', 1))).status, 201)
    const status = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'status-applied'}, status: {replicas: 5, availableReplicas: 0}}
    const first = await api('PATCH', `${STS}/status-applied/status?fieldManager=writer-a`, status, APPLY)
    assert.equal(first.status, 200, first.text)
    const applied = await api('PATCH', `${STS}/status-applied/status?fieldManager=writer-b&force=true`, {...status, status: {replicas: 6, availableReplicas: 0}}, APPLY)
    assert.equal(applied.status, 200, applied.text)
    assert.equal(applied.json.status.replicas, 6)
    const entries = applied.json.metadata.managedFields.filter((m: any) => m.subresource === 'status')
    const byB = entries.find((m: any) => m.manager === 'writer-b')
    assert.ok(byB, JSON.stringify(applied.json.metadata.managedFields))
    assert.equal(byB.operation, 'Apply')
    assert.ok(byB.fieldsV1['f:status']['f:replicas'])
    const byA = entries.find((m: any) => m.manager === 'writer-a')
    assert.ok(!byA?.fieldsV1?.['f:status']?.['f:replicas'], 'writer-a lost status.replicas to the forced apply')
    const stored = (await api('GET', `${STS}/status-applied`)).json
    assert.deepEqual(stored.metadata.managedFields, applied.json.metadata.managedFields, 'stored as answered')
  })
})
