// TaintNodesByCondition: what a Node is given on its way in. The server runs no controllers, so the
// node lifecycle controller's NoSchedule pass does not take the taint off again.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const nodes = '/api/v1/nodes'
const node = (name: string, taints?: unknown[]) => ({apiVersion: 'v1', kind: 'Node', metadata: {name}, ...(taints ? {spec: {taints}} : {})})
const NOT_READY = {key: 'node.orch.io/not-ready', effect: 'NoSchedule'}

describe('Node admission: TaintNodesByCondition', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('"every Node created gets the node.orch.io/not-ready:NoSchedule taint" (after its own taints, without timeAdded; stored, and on a dry run too)', async () => {
    const plain = await api('POST', nodes, node('plain'))
    assert.equal(plain.status, 201, plain.text)
    assert.deepEqual(plain.json.spec.taints, [NOT_READY])
    assert.deepEqual((await api('GET', `${nodes}/plain`)).json.spec.taints, [NOT_READY])
    const own = {key: 'example.com/own', value: 'x', effect: 'NoExecute'}
    const tainted = await api('POST', nodes, node('tainted', [own]))
    assert.deepEqual(tainted.json.spec.taints, [own, NOT_READY])
    const dry = await api('POST', `${nodes}?dryRun=All`, node('dry'))
    assert.equal(dry.status, 201, dry.text)
    assert.deepEqual(dry.json.spec.taints, [NOT_READY])
  })

  it('"the taint is added only if not already present" (same key and effect, whatever its value; another effect does not count)', async () => {
    const present = {key: 'node.orch.io/not-ready', value: 'mine', effect: 'NoSchedule'}
    const kept = await api('POST', nodes, node('present', [present]))
    assert.equal(kept.status, 201, kept.text)
    assert.deepEqual(kept.json.spec.taints, [present])
    const noExecute = {key: 'node.orch.io/not-ready', effect: 'NoExecute'}
    const other = await api('POST', nodes, node('other-effect', [noExecute]))
    assert.deepEqual(other.json.spec.taints, [noExecute, NOT_READY])
  })

  it('"only on create, for the nodes resource, not subresources": an update or a status update does not add it back', async () => {
    const created = (await api('POST', nodes, node('updated'))).json
    assert.deepEqual(created.spec.taints, [NOT_READY])
    const cleared = await api('PUT', `${nodes}/updated`, {...created, spec: {}})
    assert.equal(cleared.status, 200, cleared.text)
    assert.equal(cleared.json.spec.taints, undefined)
    const status = await api('PUT', `${nodes}/updated/status`, {...cleared.json, status: {conditions: [{type: 'Ready', status: 'False'}]}})
    assert.equal(status.status, 200, status.text)
    assert.equal(status.json.spec.taints, undefined)
    const patched = await api('PATCH', `${nodes}/updated`, {metadata: {labels: {a: 'b'}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.json.spec.taints, undefined)
  })
})
