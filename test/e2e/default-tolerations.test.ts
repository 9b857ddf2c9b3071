// What a Pod is given on its way in: DefaultTolerationSeconds (the node's not-ready and unreachable
// NoExecute taints tolerated for 300 s), and status IPs reconciled as Kubernetes' v1 conversion does.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const pods = '/api/v1/namespaces/default/pods'
const pod = (name: string, tolerations?: unknown[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name},
  spec: {containers: [{name: 'c', image: 'busybox'}], ...(tolerations ? {tolerations} : {})},
})

describe('Pod admission and conversion: DefaultTolerationSeconds, status IPs', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('"a pod without a toleration of node.orch.io/not-ready and node.orch.io/unreachable (NoExecute) gets one for each, tolerationSeconds 300"', async () => {
    const created = await api('POST', pods, pod('plain', [{key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule'}]))
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.spec.tolerations, [
      {key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule'},
      {key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300},
      {key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300},
    ])
  })

  it('a toleration that already covers the taint (same key or any key, NoExecute or any effect) keeps the pod as it is', async () => {
    const everything = await api('POST', pods, pod('tolerates-all', [{operator: 'Exists'}]))
    assert.deepEqual(everything.json.spec.tolerations, [{operator: 'Exists'}])
    const own = [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5}]
    const custom = await api('POST', pods, pod('own-seconds', own))
    assert.deepEqual(custom.json.spec.tolerations, [...own, {key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300}])
    // a NoSchedule toleration of the taint does not cover its NoExecute effect
    const noSchedule = await api('POST', pods, pod('no-schedule', [{key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoSchedule'}]))
    assert.equal(noSchedule.json.spec.tolerations.length, 3)
  })

  it('"podIP alone gives podIPs; podIP wins when the two differ; podIP is podIPs[0]\'s" (v1 conversion), hostIP and hostIPs alike', async () => {
    assert.equal((await api('POST', pods, pod('ips'))).status, 201)
    const merge = {'Content-Type': 'application/merge-patch+json'}
    const single = await api('PATCH', `${pods}/ips/status`, {status: {podIP: '10.1.2.3', hostIP: '192.168.1.5'}}, merge)
    assert.equal(single.status, 200, single.text)
    assert.deepEqual([single.json.status.podIPs, single.json.status.hostIPs], [[{ip: '10.1.2.3'}], [{ip: '192.168.1.5'}]])
    const conflicting = await api('PATCH', `${pods}/ips/status`, {status: {podIP: '10.1.2.4', podIPs: [{ip: '10.9.9.9'}]}}, merge)
    assert.deepEqual([conflicting.json.status.podIP, conflicting.json.status.podIPs], ['10.1.2.4', [{ip: '10.1.2.4'}]])
    const plural = await api('PATCH', `${pods}/ips/status`, {status: {podIP: null, podIPs: [{ip: '10.7.7.7'}, {ip: 'fd00::7'}]}}, merge)
    assert.deepEqual([plural.json.status.podIP, plural.json.status.podIPs], ['10.7.7.7', [{ip: '10.7.7.7'}, {ip: 'fd00::7'}]])
  })
})
