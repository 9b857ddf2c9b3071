// The node lifecycle controller for a node that never reports, and the NoExecute taint each Ready
// status calls for. The monitor grace period is long (60 s) so that no node here turns Unknown for
// going silent; the startup grace period is short (1 s).
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, waitForCollection, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
const taintKeys = (node: any) => (node.spec?.taints ?? []).map((t: any) => `${t.key}:${t.effect}`).sort()
const conditionOf = (node: any, type: string) => (node.status?.conditions ?? []).find((c: any) => c.type === type)

describe('node lifecycle controller: startup grace period, NoExecute taints by Ready status', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--node-monitor-grace-period', '60s', '--node-startup-grace-period', '1s'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  /** Lists and watches the node until the predicate holds (fails after 15 s, well before the 60 s grace period). */
  const waitForNode = (name: string, predicate: (node: any) => boolean, what: string): Promise<any> =>
    waitForCollection(server.url, `/api/v1/nodes?fieldSelector=metadata.name%3D${name}`, (items) => items.find(predicate), what, 15_000)

  /** Posts the node's Ready condition (reading it again on a conflict with the controller). */
  async function postReady(name: string, status: string, since = now()): Promise<void> {
    for (;;) {
      const node = (await api('GET', `/api/v1/nodes/${name}`)).json
      const conditions = [{type: 'Ready', status, reason: `Agent${status}`, message: '', lastHeartbeatTime: now(), lastTransitionTime: since}]
      const result = await api('PUT', `/api/v1/nodes/${name}/status`, {...node, status: {conditions}})
      if (result.status === 409) continue
      assert.equal(result.status, 200, result.text)
      return
    }
  }

  it('"a node whose Ready condition was never posted gets Ready, MemoryPressure, DiskPressure and PIDPressure Unknown (NodeStatusNeverUpdated, Agent never posted node status.) after the node startup grace period, lastHeartbeatTime its creation time", then the unreachable NoSchedule and NoExecute taints', async () => {
    const created = await api('POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'newborn'}})
    assert.equal(created.status, 201, created.text)
    const creation = created.json.metadata.creationTimestamp
    const node = await waitForNode(
      'newborn',
      (n) => taintKeys(n).join() === 'node.orch.io/unreachable:NoExecute,node.orch.io/unreachable:NoSchedule',
      'newborn tainted unreachable (and no longer not-ready)',
    )
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      const condition = conditionOf(node, type)
      assert.ok(condition, type)
      assert.deepEqual(
        [condition.status, condition.reason, condition.message, condition.lastHeartbeatTime],
        ['Unknown', 'NodeStatusNeverUpdated', 'Agent never posted node status.', creation],
        type,
      )
      // not before the startup grace period (1 s) had passed since the node was created
      assert.ok(Date.parse(condition.lastTransitionTime) >= Date.parse(creation) + 1000, `${type}: ${condition.lastTransitionTime} vs ${creation}`)
    }
    // NetworkUnavailable is not the node controller's to change
    assert.equal(conditionOf(node, 'NetworkUnavailable'), undefined)
    for (const taint of node.spec.taints) assert.ok(Date.parse(taint.timeAdded), JSON.stringify(taint))
  })

  it('"Ready=False that has lasted the grace period gets the not-ready:NoExecute taint (unreachable:NoExecute removed); Ready=Unknown unreachable:NoExecute (not-ready:NoExecute removed); Ready=True neither"', async () => {
    const created = await api('POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'flapping'}})
    assert.equal(created.status, 201, created.text)
    await postReady('flapping', 'Unknown')
    await waitForNode('flapping', (n) => taintKeys(n).join() === 'node.orch.io/unreachable:NoExecute,node.orch.io/unreachable:NoSchedule', 'flapping unreachable')
    // False since before the (60 s) grace period: "once False persists longer than the grace period"
    await postReady('flapping', 'False', new Date(Date.now() - 120_000).toISOString().replace(/\.\d{3}Z$/, 'Z'))
    const notReady = await waitForNode(
      'flapping',
      (n) => taintKeys(n).join() === 'node.orch.io/not-ready:NoExecute,node.orch.io/not-ready:NoSchedule',
      'flapping not-ready (NoExecute and NoSchedule), unreachable gone',
    )
    assert.equal(conditionOf(notReady, 'Ready').status, 'False')
    await postReady('flapping', 'Unknown')
    await waitForNode('flapping', (n) => taintKeys(n).join() === 'node.orch.io/unreachable:NoExecute,node.orch.io/unreachable:NoSchedule', 'flapping unreachable again, not-ready gone')
    await postReady('flapping', 'True')
    const healthy = await waitForNode('flapping', (n) => taintKeys(n).length === 0, 'flapping without taints')
    assert.equal(conditionOf(healthy, 'Ready').status, 'True')
  })
})
