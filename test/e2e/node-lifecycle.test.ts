// The node lifecycle controller, run with a short grace period flag instead of waiting 50 s.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {formatMicroTime} from '../../src/machinery/managed-fields.js'
import {call, openWatch, waitForCollection, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')

describe('node lifecycle controller', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--node-monitor-grace-period', '1s'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  /** Creates the node and reports its status (again on a conflict: the controller's NoSchedule pass
   *  may have taken off the not-ready taint TaintNodesByCondition gave the new node). */
  async function createNode(name: string, ready: 'True' | 'False'): Promise<any> {
    assert.equal((await api('POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name}})).status, 201)
    const conditions = [
      {type: 'Ready', status: ready, reason: ready === 'True' ? 'AgentReady' : 'AgentNotReady', message: '', lastHeartbeatTime: now(), lastTransitionTime: now()},
      {type: 'MemoryPressure', status: 'False', reason: 'AgentHasSufficientMemory', message: '', lastHeartbeatTime: now(), lastTransitionTime: now()},
    ]
    for (;;) {
      const current = (await api('GET', `/api/v1/nodes/${name}`)).json
      const result = await api('PUT', `/api/v1/nodes/${name}/status`, {...current, status: {conditions}})
      if (result.status === 409) continue
      assert.equal(result.status, 200, result.text)
      return result.json
    }
  }

  /** Reads the node, changes it and writes it back (to /status when asked), again on a conflict with the controller. */
  async function changeNode(name: string, change: (node: any) => any, subresource = ''): Promise<void> {
    for (;;) {
      const node = (await api('GET', `/api/v1/nodes/${name}`)).json
      const result = await api('PUT', `/api/v1/nodes/${name}${subresource}`, change(node))
      if (result.status === 409) continue
      assert.equal(result.status, 200, result.text)
      return
    }
  }

  /** Waits (by watching) until the node satisfies the predicate. */
  async function waitForNode(name: string, predicate: (node: any) => boolean): Promise<any> {
    const current = (await api('GET', `/api/v1/nodes/${name}`)).json
    if (predicate(current)) return current
    const stream = await openWatch(server.url, `/api/v1/nodes?watch=1&resourceVersion=${current.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let n = 1; ; n++) {
        const events = await stream.waitFor(n)
        const node = events[n - 1].object
        if (predicate(node)) return node
      }
    } finally {
      stream.close()
    }
  }

  /** Evicted: deleted, or (bound to a node, so deleted gracefully) marked with a deletionTimestamp. */
  async function waitForPodEvicted(namespace: string, name: string): Promise<void> {
    const list = (await api('GET', `/api/v1/namespaces/${namespace}/pods`)).json
    const current = list.items.find((p: any) => p.metadata.name === name)
    if (!current || current.metadata.deletionTimestamp) return
    const stream = await openWatch(server.url, `/api/v1/namespaces/${namespace}/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let n = 1; ; n++) {
        const events = await stream.waitFor(n)
        if (events[n - 1].type === 'DELETED' || events[n - 1].object.metadata.deletionTimestamp) return
      }
    } finally {
      stream.close()
    }
  }

  const taintKeys = (node: any) => (node.spec?.taints ?? []).map((t: any) => `${t.key}:${t.effect}`)
  const readyOf = (node: any) => node.status.conditions.find((c: any) => c.type === 'Ready')

  it('no Lease renewal or status heartbeat for the grace period: Ready becomes Unknown (pressure conditions too) and node.orch.io/unreachable:NoExecute is added', async () => {
    await createNode('silent', 'True')
    const node = await waitForNode('silent', (n) => taintKeys(n).includes('node.orch.io/unreachable:NoExecute'))
    assert.equal(readyOf(node).status, 'Unknown')
    assert.equal(readyOf(node).reason, 'NodeStatusUnknown')
    assert.equal(node.status.conditions.find((c: any) => c.type === 'MemoryPressure').status, 'Unknown')
  })

  it('conditions the agent never posted are added as Unknown (NodeStatusNeverUpdated) with the node\'s creationTimestamp as lastHeartbeatTime', async () => {
    // createNode posts Ready and MemoryPressure only
    const created = await createNode('half-reported', 'True')
    const node = await waitForNode('half-reported', (n) => readyOf(n).status === 'Unknown')
    for (const type of ['DiskPressure', 'PIDPressure']) {
      const condition = node.status.conditions.find((c: any) => c.type === type)
      assert.equal(condition.status, 'Unknown', type)
      assert.equal(condition.reason, 'NodeStatusNeverUpdated', type)
      assert.equal(condition.lastHeartbeatTime, created.metadata.creationTimestamp, type)
      assert.ok(condition.lastTransitionTime, type)
    }
  })

  /** What an agent does while it lives: renews its node's Lease, here every 100 ms, until stopped. */
  async function keepRenewingLease(name: string): Promise<() => Promise<void>> {
    const path = `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases`
    const created = await api('POST', path, {
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: {name, namespace: 'orch-node-lease'},
      spec: {holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date())},
    })
    assert.equal(created.status, 201, created.text)
    let stopped = false
    const renewing = (async () => {
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        const renewed = await api('PATCH', `${path}/${name}`, {spec: {renewTime: formatMicroTime(new Date())}}, {'Content-Type': 'application/merge-patch+json'})
        assert.equal(renewed.status, 200, renewed.text)
      }
    })()
    return async () => {
      stopped = true
      await renewing
    }
  }

  it('healthy again removes the taints', async () => {
    // the agent is back: it renews its Lease again, as well as reporting Ready. Without the renewals the
    // node turns Unknown (and is tainted again) a grace period (1 s) after the report, and a look at it
    // later than that would then wait forever for the healthy state it had skipped past.
    const stopRenewing = await keepRenewingLease('silent')
    try {
      await changeNode(
        'silent',
        (node) => {
          const conditions = node.status.conditions.map((c: any) => (c.type === 'Ready' ? {...c, status: 'True', reason: 'AgentReady', lastHeartbeatTime: now(), lastTransitionTime: now()} : c))
          return {...node, status: {...node.status, conditions}}
        },
        '/status',
      )
      const healed = await waitForNode('silent', (n) => {
        assert.notEqual(readyOf(n).status, 'Unknown', 'a node that reported Ready and whose Lease is renewed must not turn Unknown again')
        return readyOf(n).status === 'True' && taintKeys(n).length === 0
      })
      assert.deepEqual(taintKeys(healed), [])
    } finally {
      await stopRenewing()
    }
  })

  it('"taint node.orch.io/not-ready added once False persists longer than the grace period": Ready False past the grace period adds not-ready:NoExecute (the agent still renews its Lease, so the node is not unreachable)', async () => {
    const stopRenewing = await keepRenewingLease('sick')
    try {
      const reported = await createNode('sick', 'False')
      const node = await waitForNode('sick', (n) => {
        assert.notEqual(readyOf(n).status, 'Unknown', 'a node whose Lease is renewed must not turn Unknown')
        return taintKeys(n).includes('node.orch.io/not-ready:NoExecute')
      })
      // (its NoSchedule namesake came at once, with no grace period)
      const taint = node.spec.taints.find((t: any) => t.key === 'node.orch.io/not-ready' && t.effect === 'NoExecute')
      assert.ok(taint.timeAdded)
      // not before False has lasted the grace period (1 s here; the spec's rule — Kubernetes 1.32 taints at once)
      assert.ok(Date.parse(taint.timeAdded) >= Date.parse(readyOf(reported).lastTransitionTime) + 1000, `${taint.timeAdded} vs ${readyOf(reported).lastTransitionTime}`)
    } finally {
      await stopRenewing()
    }
  })

  it('pods on a NoExecute-tainted node without a matching toleration are evicted; tolerationSeconds delays it; a toleration without seconds keeps the pod', async () => {
    await createNode('doomed-node', 'True')
    const pod = (name: string, tolerations?: any[]) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name},
      spec: {nodeName: 'doomed-node', containers: [{name: 'c', image: 'busybox'}], ...(tolerations ? {tolerations} : {})},
    })
    for (const p of [
      // a toleration of the key with another value keeps DefaultTolerationSeconds from adding its 300 s
      // toleration (it looks at key and effect only) and tolerates nothing: the node's taint has no value
      pod('untolerated', [{key: 'node.orch.io/unreachable', operator: 'Equal', value: 'no-such-value', effect: 'NoExecute'}]),
      pod('tolerates-briefly', [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1}]),
      pod('tolerates-forever', [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute'}]),
    ]) {
      const r = await api('POST', '/api/v1/namespaces/default/pods', p)
      assert.equal(r.status, 201, r.text)
    }
    await waitForNode('doomed-node', (n) => taintKeys(n).includes('node.orch.io/unreachable:NoExecute'))
    await waitForPodEvicted('default', 'untolerated')
    await waitForPodEvicted('default', 'tolerates-briefly')
    const kept = await api('GET', '/api/v1/namespaces/default/pods/tolerates-forever')
    assert.equal(kept.status, 200)
    assert.equal(kept.json.metadata.deletionTimestamp, undefined)
  })

  const noScheduleKeys = (node: any) => (node.spec?.taints ?? []).filter((t: any) => t.effect === 'NoSchedule').map((t: any) => t.key)
  const condition = (type: string, status: string) => ({type, status, reason: `Agent${type}${status}`, message: '', lastHeartbeatTime: now(), lastTransitionTime: now()})

  it('"node.orch.io/unschedulable:NoSchedule is on a node exactly while spec.unschedulable is true"', async () => {
    const stopRenewing = await keepRenewingLease('cordoned')
    try {
      await createNode('cordoned', 'True')
      // a taint of the same key that spec.unschedulable does not call for is the controller's to remove
      await changeNode('cordoned', (node) => ({...node, spec: {...node.spec, taints: [{key: 'example.com/own', effect: 'NoSchedule'}, {key: 'node.orch.io/unschedulable', effect: 'NoSchedule'}]}}))
      await waitForNode('cordoned', (n) => noScheduleKeys(n).join() === 'example.com/own')
      await changeNode('cordoned', (node) => ({...node, spec: {...node.spec, unschedulable: true}}))
      const cordoned = await waitForNode('cordoned', (n) => noScheduleKeys(n).includes('node.orch.io/unschedulable'))
      assert.deepEqual(noScheduleKeys(cordoned), ['example.com/own', 'node.orch.io/unschedulable'])
      // the controller's taints carry the time it added them, as Kubernetes' SwapNodeControllerTaint writes them
      assert.ok(Date.parse(cordoned.spec.taints[1].timeAdded), JSON.stringify(cordoned.spec.taints))
      await changeNode('cordoned', (node) => ({...node, spec: {...node.spec, unschedulable: false}}))
      const uncordoned = await waitForNode('cordoned', (n) => !noScheduleKeys(n).includes('node.orch.io/unschedulable'))
      assert.deepEqual(uncordoned.spec.taints, [{key: 'example.com/own', effect: 'NoSchedule'}])
    } finally {
      await stopRenewing()
    }
  })

  it('"NoSchedule taints follow the node conditions: Ready False not-ready, MemoryPressure/DiskPressure/PIDPressure True memory-/disk-/pid-pressure, NetworkUnavailable True network-unavailable" — added together in one update, stale ones removed, others kept', async () => {
    const stopRenewing = await keepRenewingLease('pressed')
    try {
      assert.equal((await api('POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'pressed'}, spec: {taints: [{key: 'example.com/own', effect: 'NoSchedule'}]}})).status, 201)
      const types = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable']
      await changeNode('pressed', (node) => ({...node, status: {conditions: types.map((t) => condition(t, t === 'Ready' ? 'False' : 'True'))}}), '/status')
      // the first version of the node with all of them (TaintNodesByCondition's not-ready may come first,
      // and stay where it is): one update, in the order of the conditions
      const tainted = await waitForNode('pressed', (n) => noScheduleKeys(n).length > 2)
      assert.deepEqual(noScheduleKeys(tainted), [
        'example.com/own',
        'node.orch.io/not-ready',
        'node.orch.io/memory-pressure',
        'node.orch.io/disk-pressure',
        'node.orch.io/pid-pressure',
        'node.orch.io/network-unavailable',
      ])
      await changeNode(
        'pressed',
        (node) => ({...node, status: {...node.status, conditions: types.map((t) => condition(t, t === 'Ready' || t === 'DiskPressure' ? 'True' : 'False'))}}),
        '/status',
      )
      const relieved = await waitForNode('pressed', (n) => noScheduleKeys(n).length === 2)
      assert.deepEqual(noScheduleKeys(relieved), ['example.com/own', 'node.orch.io/disk-pressure'])
      // the DiskPressure taint stayed as it was (same timeAdded)
      const disk = (n: any) => n.spec.taints.find((t: any) => t.key === 'node.orch.io/disk-pressure' && t.effect === 'NoSchedule')
      assert.deepEqual(disk(relieved), disk(tainted))
    } finally {
      await stopRenewing()
    }
  })

  it('"an unreachable node (Ready Unknown) gets node.orch.io/unreachable:NoSchedule as well as :NoExecute"', async () => {
    await createNode('lost', 'True')
    const node = await waitForNode('lost', (n) => ['node.orch.io/unreachable:NoSchedule', 'node.orch.io/unreachable:NoExecute'].every((k) => taintKeys(n).includes(k)))
    assert.equal(readyOf(node).status, 'Unknown')
    for (const taint of node.spec.taints) assert.ok(Date.parse(taint.timeAdded), JSON.stringify(taint))
  })

  /** Waits (list, then watch) until the pod satisfies the predicate. */
  const waitForPod = (name: string, predicate: (pod: any) => boolean, what: string): Promise<any> =>
    waitForCollection(server.url, `/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3D${name}`, (items) => items.find((p) => predicate(p)), what)
  const podCondition = (pod: any, type: string) => pod.status?.conditions?.find((c: any) => c.type === type)

  /** A pod on the node (or, without one, for no scheduler) that stays (tolerates unreachable), reported Running and Ready. */
  async function readyPod(name: string, nodeName?: string): Promise<any> {
    const spec = {
      ...(nodeName ? {nodeName} : {schedulerName: 'nobody'}),
      containers: [{name: 'c', image: 'busybox'}],
      tolerations: [{key: 'node.orch.io/unreachable', operator: 'Exists'}, {key: 'node.orch.io/not-ready', operator: 'Exists'}],
    }
    const created = await api('POST', '/api/v1/namespaces/default/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec})
    assert.equal(created.status, 201, created.text)
    const earlier = '2020-01-01T00:00:00Z'
    const conditions = [
      {type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: earlier},
      {type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: earlier},
      {type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: earlier},
      {type: 'Ready', status: 'True', reason: 'AgentSaysSo', message: 'all good', lastProbeTime: null, lastTransitionTime: earlier},
    ]
    const running = await api('PUT', `/api/v1/namespaces/default/pods/${name}/status`, {...created.json, status: {phase: 'Running', conditions}})
    assert.equal(running.status, 200, running.text)
    return running.json
  }

  it('"when the controller turns a node\'s Ready from True to Unknown, its pods\' Ready condition becomes False" (pods/status; only Ready, reason and message kept; a Warning NodeNotReady event)', async () => {
    const stopRenewing = await keepRenewingLease('fading')
    let before: any
    try {
      await createNode('fading', 'True')
      before = await readyPod('on-fading', 'fading')
    } finally {
      // the agent goes away: a grace period (1 s) later the node turns Unknown
      await stopRenewing()
    }
    const pod = await waitForPod('on-fading', (p) => podCondition(p, 'Ready')?.status === 'False', 'on-fading not ready')
    const ready = podCondition(pod, 'Ready')
    assert.equal(ready.reason, 'AgentSaysSo')
    assert.equal(ready.message, 'all good')
    assert.ok(Date.parse(ready.lastTransitionTime) > Date.parse('2020-01-01T00:00:00Z'), ready.lastTransitionTime)
    assert.deepEqual(
      pod.status.conditions.filter((c: any) => c.type !== 'Ready'),
      before.status.conditions.filter((c: any) => c.type !== 'Ready'),
    )
    assert.equal(pod.status.phase, 'Running')
    assert.equal(readyOf((await api('GET', '/api/v1/nodes/fading')).json).status, 'Unknown')
    const event = await waitForCollection(
      server.url,
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Don-fading',
      (items) => items.find((e) => e.reason === 'NodeNotReady'),
      'NodeNotReady event',
    )
    assert.deepEqual([event.type, event.message, event.source.component, event.involvedObject.kind], ['Warning', 'Node is not ready', 'node-controller', 'Pod'])
  })

  it('"a pod bound to a node whose Ready is not True gets Ready=False"', async () => {
    await waitForNode('fading', (n) => readyOf(n).status === 'Unknown')
    await readyPod('late')
    const bound = await api('POST', '/api/v1/namespaces/default/pods/late/binding', {apiVersion: 'v1', kind: 'Binding', metadata: {name: 'late'}, target: {kind: 'Node', name: 'fading'}})
    assert.equal(bound.status, 201, bound.text)
    const pod = await waitForPod('late', (p) => podCondition(p, 'Ready')?.status === 'False', 'late not ready')
    assert.equal(podCondition(pod, 'ContainersReady').status, 'True')
  })

  it('unschedulable nodes show SchedulingDisabled in the Table STATUS column', async () => {
    await changeNode('silent', (node) => ({...node, spec: {...node.spec, unschedulable: true}}))
    const table = (await api('GET', '/api/v1/nodes/silent', undefined, {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'})).json
    const status = table.rows[0].cells[table.columnDefinitions.findIndex((c: any) => c.name === 'Status')]
    assert.match(status, /SchedulingDisabled$/)
  })
})
