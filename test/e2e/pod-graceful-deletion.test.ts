// Graceful pod deletion, as Kubernetes does it: a pod bound to a node stays, marked with
// deletionTimestamp and deletionGracePeriodSeconds, until its node's agent deletes it with grace 0.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('graceful pod deletion', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body) => call(server.url, method, path, body)
  })
  after(async () => server.cleanup())

  const pod = (name: string, nodeName?: string, grace?: number): unknown => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name},
    spec: {nodeName, terminationGracePeriodSeconds: grace, containers: [{name: 'app', image: 'busybox'}]},
  })

  it('a pod bound to a node is marked with its terminationGracePeriodSeconds and stays until deleted with grace 0', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', pod('bound', 'node-x', 45))).status, 201)
    const marked = await api('DELETE', '/api/v1/namespaces/default/pods/bound')
    assert.equal(marked.status, 200, marked.text)
    assert.equal(marked.json.kind, 'Pod')
    assert.equal(marked.json.metadata.deletionGracePeriodSeconds, 45)
    const due = Date.parse(marked.json.metadata.deletionTimestamp) - Date.now()
    assert.ok(due > 30_000 && due <= 46_000, `deletionTimestamp is now + grace (${due} ms)`)
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/bound')).status, 200)
    // a shorter grace period shortens it; a longer one does not lengthen it
    const shorter = await api('DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=10')
    assert.equal(shorter.json.metadata.deletionGracePeriodSeconds, 10)
    const longer = await api('DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=100')
    assert.equal(longer.json.metadata.deletionGracePeriodSeconds, 10)
    // a pod deleted at once answers the deleted Pod, not a Status (Kubernetes' pod store sets ReturnDeletedObject)
    const gone = await api('DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0')
    assert.equal(gone.status, 200)
    assert.equal(gone.json.kind, 'Pod')
    assert.equal(gone.json.metadata.name, 'bound')
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/bound')).status, 404)
  })

  it('"ShouldDeleteDuringUpdate": a write to a pod in graceful termination (a label, a status update, its last finalizer removed) keeps it until its agent deletes it with grace 0', async () => {
    const base = '/api/v1/namespaces/default/pods/terminating'
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', {...(pod('terminating', 'node-x', 30) as object), metadata: {name: 'terminating', finalizers: ['example.com/hold']}})).status, 201)
    assert.equal((await api('DELETE', base)).json.metadata.deletionGracePeriodSeconds, 30)
    const labelled = await call(server.url, 'PATCH', base, {metadata: {labels: {x: 'y'}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(labelled.status, 200, labelled.text)
    const status = await call(server.url, 'PATCH', `${base}/status`, {status: {conditions: [{type: 'Ready', status: 'False'}]}}, {'Content-Type': 'application/strategic-merge-patch+json'})
    assert.equal(status.status, 200, status.text)
    const released = await call(server.url, 'PATCH', base, {metadata: {finalizers: null}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(released.status, 200, released.text)
    const still = await api('GET', base)
    assert.equal(still.status, 200, 'still there after every write')
    assert.equal(still.json.metadata.labels.x, 'y')
    assert.equal((await api('DELETE', `${base}?gracePeriodSeconds=0`)).status, 200)
    assert.equal((await api('GET', base)).status, 404)
  })

  it('a pod not bound to a node, or finished, is deleted at once, and the delete answers the deleted Pod (Kubernetes\' pod store: ReturnDeletedObject)', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', pod('unbound'))).status, 201)
    assert.equal((await api('DELETE', '/api/v1/namespaces/default/pods/unbound')).json.kind, 'Pod')
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/unbound')).status, 404)
    const created = (await api('POST', '/api/v1/namespaces/default/pods', pod('done', 'node-x'))).json
    const finished = await api('PUT', '/api/v1/namespaces/default/pods/done/status', {...created, status: {phase: 'Succeeded'}})
    assert.equal(finished.status, 200, finished.text)
    assert.equal((await api('DELETE', '/api/v1/namespaces/default/pods/done')).json.kind, 'Pod')
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/done')).status, 404)
  })

  const eviction = (name: string, deleteOptions?: unknown): unknown => ({apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name}, deleteOptions})

  it('"the eviction subresource of a Pod" (a virtual type): POST pods/{name}/eviction deletes the pod gracefully and answers 201 Success', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', pod('evicted', 'node-x', 30))).status, 201)
    const result = await api('POST', '/api/v1/namespaces/default/pods/evicted/eviction', eviction('evicted'))
    assert.equal(result.status, 201, result.text)
    assert.equal(result.json.kind, 'Status')
    assert.equal(result.json.status, 'Success')
    // a pod on a node goes through graceful deletion, as a DELETE would send it
    const marked = (await api('GET', '/api/v1/namespaces/default/pods/evicted')).json
    assert.ok(marked.metadata.deletionTimestamp)
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 30)
    // the eviction's deleteOptions are used: grace 0 removes it
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods/evicted/eviction', eviction('evicted', {gracePeriodSeconds: 0}))).status, 201)
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/evicted')).status, 404)
  })

  it('an eviction with dryRun, a stale precondition, another name, a bad policy or for a missing pod changes nothing', async () => {
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', pod('kept'))).status, 201)
    const dry = await api('POST', '/api/v1/namespaces/default/pods/kept/eviction?dryRun=All', eviction('kept'))
    assert.equal(dry.status, 201, dry.text)
    const stale = await api('POST', '/api/v1/namespaces/default/pods/kept/eviction', eviction('kept', {preconditions: {uid: 'not-the-uid'}}))
    assert.equal(stale.status, 409, stale.text)
    assert.match(stale.json.message, /^Operation cannot be fulfilled on Pod "kept": the UID in the precondition \(not-the-uid\) does not match the UID in record \(.+\)\. The object might have been deleted and then recreated$/)
    const otherName = await api('POST', '/api/v1/namespaces/default/pods/kept/eviction', eviction('other'))
    assert.equal(otherName.status, 400)
    assert.equal(otherName.json.message, 'name in URL does not match name in Eviction object')
    // the delete options are checked as store.Delete checks them: 422 on DeleteOptions, no name
    const badPolicy = await api('POST', '/api/v1/namespaces/default/pods/kept/eviction', eviction('kept', {propagationPolicy: 'Sometimes', dryRun: ['Some']}))
    assert.equal(badPolicy.status, 422)
    assert.equal(
      badPolicy.json.message,
      'DeleteOptions.meta.orch.io "" is invalid: [propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil", dryRun: Unsupported value: ["Some"]: supported values: "All"]',
    )
    const wrongType = await api('POST', '/api/v1/namespaces/default/pods/kept/eviction', eviction('kept', {gracePeriodSeconds: 'soon'}))
    assert.equal(wrongType.status, 400)
    assert.match(wrongType.json.message, /cannot unmarshal string into Go struct field DeleteOptions\.deleteOptions\.gracePeriodSeconds of type int64/)
    // (the scheduler may have written the pod's status meanwhile; nothing deleted or marked it)
    const live = await api('GET', '/api/v1/namespaces/default/pods/kept')
    assert.equal(live.status, 200)
    assert.equal(live.json.metadata.deletionTimestamp, undefined)
    // the pod is looked up before its delete options are checked
    const missing = await api('POST', '/api/v1/namespaces/default/pods/nothing/eviction', eviction('nothing', {propagationPolicy: 'Sometimes'}))
    assert.equal(missing.status, 404)
    assert.equal(missing.json.message, 'pods "nothing" not found')
  })

  it("an eviction's own dryRun, type, namespace and preconditions are read as EvictionREST reads them", async () => {
    assert.equal((await api('POST', '/api/v1/namespaces/default/pods', pod('guarded', 'node-x', 30))).status, 201)
    const path = '/api/v1/namespaces/default/pods/guarded/eviction'
    // dryRun in the Eviction's deleteOptions: nothing marked
    const dry = await api('POST', path, eviction('guarded', {dryRun: ['All']}))
    assert.equal(dry.status, 201, dry.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/guarded')).json.metadata.deletionTimestamp, undefined)
    // the request's dryRun and the body's must agree
    const mismatch = await api('POST', `${path}?dryRun=All`, eviction('guarded', {dryRun: ['All', 'All']}))
    assert.equal(mismatch.status, 400)
    assert.equal(mismatch.json.message, 'Non-matching dry-run options in request and content: [All] and [All All]')
    // not an Eviction, or one from another namespace: 400
    const notEviction = await api('POST', path, {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'guarded'}})
    assert.equal(notEviction.status, 400)
    assert.match(notEviction.json.message, /^Pod in version "v1" cannot be handled as a Eviction/)
    const otherNamespace = await api('POST', path, {apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: 'guarded', namespace: 'kube-system'}})
    assert.equal(otherNamespace.status, 400)
    assert.equal(otherNamespace.json.message, 'the namespace of the provided object does not match the namespace sent on the request')
    // policy/v1beta1 is accepted too; preconditions are BeforeDelete's
    const live = (await api('GET', '/api/v1/namespaces/default/pods/guarded')).json
    const staleRv = await api('POST', path, {apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: {name: 'guarded'}, deleteOptions: {preconditions: {resourceVersion: '1'}}})
    assert.equal(staleRv.status, 409)
    assert.equal(
      staleRv.json.message,
      `Operation cannot be fulfilled on Pod "guarded": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${live.metadata.resourceVersion}). The object might have been modified`,
    )
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/guarded')).json.metadata.deletionTimestamp, undefined)
    const evicted = await api('POST', path, {metadata: {name: 'guarded'}, deleteOptions: {preconditions: {uid: live.metadata.uid}}})
    assert.equal(evicted.status, 201, evicted.text)
    assert.deepEqual({kind: evicted.json.kind, status: evicted.json.status, code: evicted.json.code}, {kind: 'Status', status: 'Success', code: 201})
    assert.ok((await api('GET', '/api/v1/namespaces/default/pods/guarded')).json.metadata.deletionTimestamp)
  })
})
