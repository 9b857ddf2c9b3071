// Deleting a namespace removes what is in it: the namespace controller empties it, honouring the
// objects' finalizers, reports progress in conditions, then finalizes the namespace.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('namespace lifecycle', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  async function waitForNamespaceGone(name: string): Promise<void> {
    const rv = (await api('GET', '/api/v1/namespaces')).json.metadata.resourceVersion
    if ((await api('GET', `/api/v1/namespaces/${name}`)).status === 404) return
    const stream = await openWatch(server.url, `/api/v1/namespaces?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let seen = 1; ; seen++) {
        const events = await stream.waitFor(seen)
        if (events[events.length - 1].type === 'DELETED') return
      }
    } finally {
      stream.close()
    }
  }

  it('a new namespace is Active and carries the orch finalizer in spec.finalizers', async () => {
    const created = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'fresh'}})
    assert.equal(created.status, 201)
    assert.equal(created.json.status.phase, 'Active')
    assert.deepEqual(created.json.spec.finalizers, ['orch'])
  })

  it('a new namespace is Active whatever status it is sent with, and the orch finalizer is added to the ones it names (namespaceStrategy.PrepareForCreate)', async () => {
    const created = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {name: 'sent-status'},
      spec: {finalizers: ['example.com/keep']},
      status: {phase: ''},
    })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.status, {phase: 'Active'})
    assert.deepEqual(created.json.spec.finalizers, ['example.com/keep', 'orch'])
    const terminating = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'sent-terminating'}, status: {phase: 'Terminating'}})
    assert.equal(terminating.json.status.phase, 'Active')
  })

  it('every namespace, the ones of the first start too, carries the label orch.io/metadata.name=<name>, set again on every update (SetDefaults_Namespace)', async () => {
    for (const name of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) {
      const ns = (await api('GET', `/api/v1/namespaces/${name}`)).json
      assert.equal(ns.metadata.labels?.['orch.io/metadata.name'], name, name)
    }
    const created = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'named', labels: {'orch.io/metadata.name': 'other'}}})
    assert.deepEqual(created.json.metadata.labels, {'orch.io/metadata.name': 'named'})
    const patched = await api('PATCH', '/api/v1/namespaces/named', [{op: 'remove', path: '/metadata/labels'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.json.metadata.labels, {'orch.io/metadata.name': 'named'})
    const selected = (await api('GET', '/api/v1/namespaces?labelSelector=orch.io%2Fmetadata.name%3Dnamed')).json
    assert.deepEqual(selected.items.map((n: any) => n.metadata.name), ['named'])
  })

  it('a plain update (PUT or PATCH of the namespace) keeps spec.finalizers, which only /finalize changes; so deleting the namespace still removes its content (namespaceStrategy.PrepareForUpdate)', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'kept'}})
    for (const name of ['a', 'b']) {
      assert.equal((await api('POST', '/api/v1/namespaces/kept/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})).status, 201)
    }
    const ns = (await api('GET', '/api/v1/namespaces/kept')).json
    const put = await api('PUT', '/api/v1/namespaces/kept', {...ns, spec: {finalizers: []}})
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.json.spec.finalizers, ['orch'])
    const patched = await api('PATCH', '/api/v1/namespaces/kept', {spec: {finalizers: null}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.json.spec.finalizers, ['orch'])
    await api('DELETE', '/api/v1/namespaces/kept')
    await waitForNamespaceGone('kept')
    assert.deepEqual((await api('GET', '/api/v1/namespaces/kept/configmaps')).json.items, [], 'the namespace controller emptied it before it went')
  })

  it('deleting a namespace removes what is in it, then the namespace itself', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'doomed'}})
    for (const name of ['a', 'b', 'c']) {
      const r = await api('POST', '/api/v1/namespaces/doomed/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})
      assert.equal(r.status, 201)
    }
    const deleted = await api('DELETE', '/api/v1/namespaces/doomed')
    assert.equal(deleted.status, 200, deleted.text)
    assert.equal(deleted.json.kind, 'Namespace')
    assert.equal(deleted.json.status.phase, 'Terminating')
    const terminating = (await api('GET', '/api/v1/namespaces/doomed')).json
    if (terminating.kind === 'Namespace') {
      assert.equal(terminating.status.phase, 'Terminating')
      assert.ok(terminating.metadata.deletionTimestamp)
    }
    await waitForNamespaceGone('doomed')
    assert.equal((await api('GET', '/api/v1/namespaces/doomed/configmaps')).json.items.length, 0)
  })

  it('"this namespace may not be deleted": default, orch-system and orch-public (Kubernetes\' immortal namespaces) are 403 Forbidden to delete, dry run too, and stay', async () => {
    for (const name of ['default', 'orch-system', 'orch-public']) {
      for (const query of ['', '?dryRun=All']) {
        const refused = await api('DELETE', `/api/v1/namespaces/${name}${query}`)
        assert.equal(refused.status, 403, refused.text)
        assert.equal(refused.json.reason, 'Forbidden')
        assert.equal(refused.json.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`)
      }
      const live = (await api('GET', `/api/v1/namespaces/${name}`)).json
      assert.equal(live.status.phase, 'Active')
      assert.equal(live.metadata.deletionTimestamp, undefined)
    }
    // only deleting is refused: they are labelled, patched and applied like any namespace
    const labelled = await api('PATCH', '/api/v1/namespaces/default', {metadata: {labels: {team: 'core'}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(labelled.status, 200, labelled.text)
    const applied = await api('PATCH', '/api/v1/namespaces/orch-system?fieldManager=ops', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'orch-system', annotations: {owner: 'ops'}}}, {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(applied.status, 200, applied.text)
    // orch-node-lease is not one of them, as kube-node-lease is not
    assert.equal((await api('DELETE', '/api/v1/namespaces/orch-node-lease?dryRun=All')).status, 200)
  })

  it('creating in a Terminating namespace is 403 Forbidden naming the object, with a NamespaceTerminating cause at metadata.namespace (NamespaceLifecycle)', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'held'}})
    await api('POST', '/api/v1/namespaces/held/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pin', finalizers: ['example.com/pin']}})
    await api('DELETE', '/api/v1/namespaces/held')
    const refused = await api('POST', '/api/v1/namespaces/held/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'late'}})
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.json.reason, 'Forbidden')
    assert.equal(refused.json.message, 'configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated')
    assert.deepEqual(refused.json.details, {
      name: 'late',
      kind: 'configmaps',
      causes: [{reason: 'NamespaceTerminating', message: 'namespace held is being terminated', field: 'metadata.namespace'}],
    })
  })

  it('objects with finalizers hold the namespace; conditions say what remains; removing the finalizer lets it go', async () => {
    // "held" from the previous test: its configmap has a finalizer
    let ns: any
    for (;;) {
      ns = (await api('GET', '/api/v1/namespaces/held')).json
      const remaining = ns.status?.conditions?.find((c: any) => c.type === 'NamespaceFinalizersRemaining')
      if (remaining?.status === 'True') break
      const rv = ns.metadata.resourceVersion
      const stream = await openWatch(server.url, `/api/v1/namespaces?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dheld`)
      await stream.waitFor(1)
      stream.close()
    }
    const byType = Object.fromEntries(ns.status.conditions.map((c: any) => [c.type, c]))
    assert.equal(byType.NamespaceContentRemaining.status, 'True')
    assert.equal(byType.NamespaceContentRemaining.reason, 'SomeResourcesRemain')
    assert.match(byType.NamespaceFinalizersRemaining.message, /example.com\/pin in 1 resource instances/)
    assert.equal(byType.NamespaceDeletionContentFailure.status, 'False')
    const pin = (await api('GET', '/api/v1/namespaces/held/configmaps/pin')).json
    assert.ok(pin.metadata.deletionTimestamp)
    await api('PUT', '/api/v1/namespaces/held/configmaps/pin', {...pin, metadata: {...pin.metadata, finalizers: []}})
    await waitForNamespaceGone('held')
  })

  it('--controllers= (empty) runs no controller: a deleted namespace stays Terminating', async () => {
    const bare = await startOrchServer(['--controllers='])
    try {
      await call(bare.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'stays'}})
      await call(bare.url, 'DELETE', '/api/v1/namespaces/stays')
      const ns = (await call(bare.url, 'GET', '/api/v1/namespaces/stays')).json
      assert.equal(ns.status.phase, 'Terminating')
      assert.doesNotMatch(bare.logs(), /controllers started/)
    } finally {
      await bare.cleanup()
    }
  })
})
