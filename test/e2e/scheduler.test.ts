// The scheduler end to end (scores, StatefulSet spreading, pending pods and their reasons, events)
// and the pods/binding subresource: a real `orch server --controllers=scheduler,statefulset`. Each
// test removes its nodes and pods, so the next one starts from an empty cluster.
import assert from 'node:assert/strict'
import {after, afterEach, before, describe, it} from 'node:test'
import {startOrchServer, type RunningOrch} from '../support/server.js'
import {Cluster, pod} from './scheduler-support.js'

const TIMEOUT = {timeout: 60_000}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const v of values) out[v] = (out[v] ?? 0) + 1
  return out
}

describe('scheduler', () => {
  let server: RunningOrch
  let cluster: Cluster
  let nodes: string[] = []
  const namespaces: string[] = []

  before(async () => {
    server = await startOrchServer(['--controllers=scheduler,statefulset'])
    cluster = new Cluster(server.url)
  })
  after(async () => server.cleanup())
  afterEach(async () => {
    await cluster.clean(nodes, namespaces)
    nodes = []
  })

  async function setup(ns: string, ...names: string[]): Promise<string> {
    namespaces.push(await cluster.namespace(ns))
    nodes.push(...names)
    return ns
  }

  it('pod defaulting sets spec.schedulerName to orch-scheduler; pods of another scheduler are left alone', TIMEOUT, async () => {
    const ns = await setup('names', 'names-node')
    await cluster.createNode('names-node')
    const created = await cluster.createPod(ns, pod('ours'))
    assert.equal(created.spec.schedulerName, 'orch-scheduler')
    await cluster.createPod(ns, pod('theirs', {spec: {schedulerName: 'other-scheduler'}}))
    await cluster.waitForBound(ns, ['ours'])
    const theirs = await cluster.pod(ns, 'theirs')
    assert.equal(theirs.spec.nodeName, undefined)
    assert.equal(theirs.status.conditions, undefined, 'no scheduler wrote a condition')
  })

  it('NodeResourcesLeastAllocated: a pod goes to the node with the most cpu and memory left free after it', TIMEOUT, async () => {
    const ns = await setup('least', 'least-small', 'least-big', 'least-busy')
    await cluster.createNode('least-small', {allocatable: {cpu: '2', memory: '4Gi', pods: '110'}})
    await cluster.createNode('least-big', {allocatable: {cpu: '16', memory: '32Gi', pods: '110'}})
    await cluster.createNode('least-busy', {allocatable: {cpu: '16', memory: '32Gi', pods: '110'}})
    await cluster.createPod(ns, pod('filler', {requests: {cpu: '12', memory: '24Gi'}, spec: {nodeName: 'least-busy'}}))
    // no labels and no owner: nothing to spread, only the free share counts
    for (const name of ['one', 'two', 'three']) {
      await cluster.createPod(ns, pod(name, {requests: {cpu: '500m', memory: '512Mi'}}))
      assert.equal((await cluster.waitForBound(ns, [name]))[name], 'least-big', name)
    }
  })

  it('SelectorSpread: pods of the same controller, or with the same labels, are spread over the nodes; unrelated pods are not', TIMEOUT, async () => {
    const ns = await setup('spread', 'spread-large', 'spread-b', 'spread-c')
    // least-allocated alone prefers the large node for every pod
    await cluster.createNode('spread-large', {allocatable: {cpu: '64', memory: '128Gi', pods: '110'}})
    await cluster.createNode('spread-b', {allocatable: {cpu: '2', memory: '4Gi', pods: '110'}})
    await cluster.createNode('spread-c', {allocatable: {cpu: '2', memory: '4Gi', pods: '110'}})
    // a kind no controller here manages (the StatefulSet controller would delete pods of a set that does not exist)
    const owner = {apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db', uid: '5c3c5f9c-0000-4000-8000-000000000001', controller: true}
    for (const i of [0, 1, 2]) {
      await cluster.createPod(ns, {...pod(`owned-${i}`, {labels: {app: 'db', index: String(i)}}), metadata: {name: `owned-${i}`, labels: {app: 'db', index: String(i)}, ownerReferences: [owner]}})
      await cluster.waitForBound(ns, [`owned-${i}`])
    }
    for (const i of [0, 1, 2]) {
      await cluster.createPod(ns, pod(`labelled-${i}`, {labels: {app: 'web'}}))
      await cluster.waitForBound(ns, [`labelled-${i}`])
    }
    for (const i of [0, 1, 2]) {
      await cluster.createPod(ns, pod(`unrelated-${i}`))
      await cluster.waitForBound(ns, [`unrelated-${i}`])
    }
    const placed = await cluster.waitForBound(ns, [0, 1, 2].flatMap((i) => [`owned-${i}`, `labelled-${i}`, `unrelated-${i}`]))
    const nodesOf = (prefix: string) => Object.entries(placed).filter(([name]) => name.startsWith(prefix)).map(([, node]) => node).sort()
    assert.deepEqual(nodesOf('owned-'), ['spread-b', 'spread-c', 'spread-large'])
    assert.deepEqual(nodesOf('labelled-'), ['spread-b', 'spread-c', 'spread-large'])
    assert.deepEqual(nodesOf('unrelated-'), ['spread-large', 'spread-large', 'spread-large'])
  })

  it('a StatefulSet of 5 replicas over 3 nodes spreads 2/2/1', TIMEOUT, async () => {
    const ns = await setup('sts', 'sts-a', 'sts-b', 'sts-c')
    for (const name of ['sts-a', 'sts-b', 'sts-c']) await cluster.createNode(name)
    await cluster.ok('POST', `/apis/apps/v1/namespaces/${ns}/statefulsets`, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'web'},
      spec: {
        replicas: 5,
        serviceName: 'web',
        podManagementPolicy: 'Parallel',
        selector: {matchLabels: {app: 'web'}},
        template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx', resources: {requests: {cpu: '100m'}}}]}},
      },
    })
    const placed = await cluster.waitForBound(ns, ['web-0', 'web-1', 'web-2', 'web-3', 'web-4'])
    assert.deepEqual(Object.values(countBy(Object.values(placed))).sort(), [1, 2, 2])
    await cluster.ok('DELETE', `/apis/apps/v1/namespaces/${ns}/statefulsets/web`)
  })

  it('a pod that fits nowhere stays Pending with the reasons summed over the nodes (FailedScheduling, PodScheduled=False/Unschedulable) and is placed once a node frees up, without a retry loop', TIMEOUT, async () => {
    const ns = await setup('pending', 'pending-tainted', 'pending-a', 'pending-b')
    await cluster.createNode('pending-tainted', {taints: [{key: 'dedicated', value: 'infra', effect: 'NoSchedule'}]})
    await cluster.createNode('pending-a', {allocatable: {cpu: '1', memory: '4Gi', pods: '110'}})
    await cluster.createNode('pending-b', {allocatable: {cpu: '1', memory: '4Gi', pods: '110'}})
    await cluster.createPod(ns, pod('filler-a', {requests: {cpu: '800m'}, spec: {nodeName: 'pending-a'}}))
    await cluster.createPod(ns, pod('filler-b', {requests: {cpu: '800m'}, spec: {nodeName: 'pending-b'}}))
    await cluster.createPod(ns, pod('big', {requests: {cpu: '500m'}}))
    const message = '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 2 Insufficient cpu.'
    await cluster.waitForUnschedulable(ns, 'big', message)
    const failed = await cluster.waitForEvent(ns, 'big', 'FailedScheduling')
    assert.equal(failed.type, 'Warning')
    assert.equal(failed.message, message)
    assert.equal(failed.source.component, 'orch-scheduler')
    assert.equal(failed.reportingComponent, 'orch-scheduler')
    assert.equal(failed.involvedObject.kind, 'Pod')
    assert.equal((await cluster.pod(ns, 'big')).status.phase, 'Pending')

    await cluster.ok('DELETE', `/api/v1/namespaces/${ns}/pods/filler-b?gracePeriodSeconds=0`)
    assert.deepEqual(await cluster.waitForBound(ns, ['big']), {big: 'pending-b'})
    const scheduled = await cluster.waitForEvent(ns, 'big', 'Scheduled')
    assert.equal(scheduled.type, 'Normal')
    assert.equal(scheduled.message, `Successfully assigned ${ns}/big to pending-b`)
    assert.equal(scheduled.source.component, 'orch-scheduler')
    const condition = (await cluster.pod(ns, 'big')).status.conditions.find((c: any) => c.type === 'PodScheduled')
    assert.equal(condition.status, 'True')
    assert.equal(condition.message, undefined)
    // it was tried when it was created and when filler-b went, not in a loop while it waited
    const events = (await cluster.ok('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name%3Dbig,reason%3DFailedScheduling`)).items
    assert.equal(events.length, 1)
    assert.ok(events[0].count <= 2, `FailedScheduling counted ${events[0].count} times`)
  })

  it('a cluster without nodes: "no nodes available to schedule pods"; a node added later takes the pod', TIMEOUT, async () => {
    const ns = await setup('empty', 'late-node')
    await cluster.createPod(ns, pod('early'))
    await cluster.waitForUnschedulable(ns, 'early', 'no nodes available to schedule pods')
    await cluster.createNode('late-node')
    assert.deepEqual(await cluster.waitForBound(ns, ['early']), {early: 'late-node'})
  })

  it('pods with scheduling gates wait until the gates are removed', TIMEOUT, async () => {
    const ns = await setup('gated', 'gated-node')
    await cluster.createNode('gated-node')
    const created = await cluster.createPod(ns, pod('gated', {spec: {schedulingGates: [{name: 'example.com/wait'}]}}))
    assert.equal(created.status.conditions[0].reason, 'SchedulingGated')
    await cluster.createPod(ns, pod('marker'))
    await cluster.waitForBound(ns, ['marker'])
    assert.equal((await cluster.pod(ns, 'gated')).spec.nodeName, undefined)
    const current = await cluster.pod(ns, 'gated')
    await cluster.ok('PUT', `/api/v1/namespaces/${ns}/pods/gated`, {...current, spec: {...current.spec, schedulingGates: []}})
    assert.deepEqual(await cluster.waitForBound(ns, ['gated']), {gated: 'gated-node'})
  })

  describe('pods/binding', () => {
    const ns = 'binding'
    const binding = (name: string, target: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: {name, ...metadata},
      target,
    })
    // another scheduler's pods: the test binds them itself
    const manual = (name: string) => pod(name, {spec: {schedulerName: 'manual'}})

    // not cleaned after each test: the tests here build on each other
    before(async () => {
      await cluster.namespace(ns)
    })

    it('POST pods/{name}/binding binds the pod (201, a Success Status): nodeName, PodScheduled=True, the binding annotations', TIMEOUT, async () => {
      await cluster.createPod(ns, manual('bind-me'))
      const r = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/bind-me/binding`, binding('bind-me', {kind: 'Node', name: 'node-x'}, {annotations: {note: 'hi'}}))
      assert.equal(r.status, 201, r.text)
      assert.deepEqual(r.json, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201})
      const bound = await cluster.pod(ns, 'bind-me')
      assert.equal(bound.spec.nodeName, 'node-x')
      assert.equal(bound.metadata.annotations.note, 'hi')
      assert.equal(bound.status.conditions.find((c: any) => c.type === 'PodScheduled').status, 'True')
    })

    it('a second binding of a bound pod is 409 Conflict', TIMEOUT, async () => {
      const r = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/bind-me/binding`, binding('bind-me', {kind: 'Node', name: 'node-y'}))
      assert.equal(r.status, 409, r.text)
      assert.equal(r.json.reason, 'Conflict')
      assert.equal(r.json.message, 'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "node-x"')
      assert.equal((await cluster.pod(ns, 'bind-me')).spec.nodeName, 'node-x')
    })

    it('a binding without a target name is 422 (target.name: Required value); another kind than Node, a name that is not the URL\'s, or a stale uid are refused', TIMEOUT, async () => {
      await cluster.createPod(ns, manual('unbound'))
      const empty = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/unbound/binding`, binding('unbound', {}))
      assert.equal(empty.status, 422, empty.text)
      assert.equal(empty.json.reason, 'Invalid')
      assert.deepEqual(empty.json.details.causes, [{reason: 'FieldValueRequired', message: 'Required value', field: 'target.name'}])
      const kind = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/unbound/binding`, binding('unbound', {kind: 'Pod', name: 'x'}))
      assert.equal(kind.status, 422, kind.text)
      const name = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/unbound/binding`, binding('other', {kind: 'Node', name: 'n'}))
      assert.equal(name.status, 400, name.text)
      const uid = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/unbound/binding`, binding('unbound', {kind: 'Node', name: 'n'}, {uid: 'not-its-uid'}))
      assert.equal(uid.status, 409, uid.text)
      const missing = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/nobody/binding`, binding('nobody', {kind: 'Node', name: 'n'}))
      assert.equal(missing.status, 404, missing.text)
      assert.equal((await cluster.pod(ns, 'unbound')).spec.nodeName, undefined)
    })

    it('dryRun binds nothing; discovery lists pods/binding with verb create', TIMEOUT, async () => {
      const r = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods/unbound/binding?dryRun=All`, binding('unbound', {kind: 'Node', name: 'n'}))
      assert.equal(r.status, 201, r.text)
      assert.equal((await cluster.pod(ns, 'unbound')).spec.nodeName, undefined)
      const discovery = await cluster.ok('GET', '/api/v1')
      const entry = discovery.resources.find((res: any) => res.name === 'pods/binding')
      assert.deepEqual(entry, {name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create']})
    })
  })
})
