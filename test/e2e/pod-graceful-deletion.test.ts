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
})
