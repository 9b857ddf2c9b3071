// Unit tests of the scheduler's scores, placement, cache and scheduling queue.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {SchedulerCache} from '../../src/controllers/scheduler/cache.js'
import {podInfoOf} from '../../src/controllers/scheduler/info.js'
import {numFeasibleNodesToFind, Placer} from '../../src/controllers/scheduler/placement.js'
import {SchedulingQueue} from '../../src/controllers/scheduler/queue.js'
import {leastAllocatedScore, selectHost, spreadScores} from '../../src/controllers/scheduler/scores.js'

let uid = 0
function pod(requests: Record<string, string> = {}, meta: AnyObject = {}, spec: AnyObject = {}): AnyObject {
  uid++
  return {
    metadata: {name: `p${uid}`, namespace: 'ns', uid: `uid-${uid}`, ...meta},
    spec: {containers: [{name: 'c', image: 'i', resources: {requests}}], ...spec},
  }
}

function node(name: string, allocatable: AnyObject = {cpu: '4', memory: '8Gi', pods: '110'}): AnyObject {
  return {metadata: {name, labels: {}}, spec: {}, status: {allocatable, conditions: [{type: 'Ready', status: 'True'}]}}
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

describe('scheduler: scores', () => {
  it('NodeResourcesLeastAllocated: the free share of cpu and memory after the pod, averaged (0..100)', () => {
    const cache = new SchedulerCache()
    cache.setNode(node('n', {cpu: '4', memory: '8Gi', pods: '110'}))
    cache.addPod(podInfoOf(pod({cpu: '1', memory: '2Gi'})), 'n')
    const n = cache.node('n')!
    // cpu (4000 - 2000) * 100 / 4000 = 50; memory (8Gi - 3Gi) / 8Gi = 62 -> 56
    assert.equal(leastAllocatedScore(podInfoOf(pod({cpu: '1', memory: '1Gi'})), n), 56)
    assert.equal(leastAllocatedScore(podInfoOf(pod({cpu: '5'})), n), 36, 'a resource over capacity scores 0')
    const bare = new SchedulerCache()
    bare.setNode(node('b', {pods: '10'}))
    assert.equal(leastAllocatedScore(podInfoOf(pod()), bare.node('b')!), 0)
  })

  it('SelectorSpread: nodes with fewer pods of the same controller (else the same labels) score higher: (most - count) * 100 / most', () => {
    const cache = new SchedulerCache()
    for (const name of ['a', 'b', 'c']) cache.setNode(node(name))
    const owner = {apiVersion: 'apps/v1', kind: 'StatefulSet', name: 's', uid: 'set-1', controller: true}
    const member = () => pod({}, {ownerReferences: [owner], labels: {i: String(uid)}})
    cache.addPod(podInfoOf(member()), 'a')
    cache.addPod(podInfoOf(member()), 'a')
    cache.addPod(podInfoOf(member()), 'b')
    cache.addPod(podInfoOf(pod({}, {labels: {app: 'x'}})), 'c')
    const nodes = ['a', 'b', 'c'].map((n) => cache.node(n)!)
    assert.deepEqual(spreadScores(podInfoOf(member()), nodes), [0, 50, 100])
    assert.deepEqual(spreadScores(podInfoOf(pod({}, {labels: {app: 'x'}})), nodes), [100, 100, 0])
    assert.deepEqual(spreadScores(podInfoOf(pod({}, {labels: {app: 'x'}, namespace: 'other'})), nodes), [100, 100, 100], 'other namespaces do not count')
    assert.deepEqual(spreadScores(podInfoOf(pod()), nodes), [0, 0, 0], 'a pod without labels or owner is not spread')
  })

  it('selectHost: the best total wins; ties are broken at random, each tied node equally likely', () => {
    assert.equal(selectHost([10, 30, 20]), 1)
    assert.equal(selectHost([30, 10, 30, 30], () => 0.99), 0)
    assert.equal(selectHost([30, 10, 30, 30], () => 0), 3)
    const picks = [0, 0, 0]
    for (let i = 0; i < 3000; i++) picks[selectHost([5, 5, 5])]!++
    for (const count of picks) assert.ok(count > 850 && count < 1150, `picked ${picks.join('/')}`)
  })
})

describe('scheduler: placement', () => {
  it('numFeasibleNodesToFind: every node up to 100; else 50% less 1% per 125 nodes, at least 5% and 100 nodes', () => {
    assert.equal(numFeasibleNodesToFind(50), 50)
    assert.equal(numFeasibleNodesToFind(150), 100)
    assert.equal(numFeasibleNodesToFind(1000), 420)
    assert.equal(numFeasibleNodesToFind(5000), 500)
    assert.equal(numFeasibleNodesToFind(100_000), 5000)
    assert.equal(numFeasibleNodesToFind(1000, 10), 100)
  })

  it('a large cluster is searched from where the last pod stopped, so every node gets its turn', () => {
    const cache = new SchedulerCache()
    for (let i = 0; i < 1000; i++) cache.setNode(node(`n${String(i).padStart(4, '0')}`))
    const placer = new Placer(cache, {random: () => 0.5})
    const placed = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const result = placer.place(podInfoOf(pod()))
      assert.ok('node' in result)
      placed.add(result.node)
    }
    // each pod saw 420 nodes, all equal; the windows [0,420), [420,840), [840,1260) ... differ
    assert.equal(placed.size, 5)
  })

  it('no node at all: "no nodes available to schedule pods"; none fits: the reasons over all nodes and each filter named', () => {
    const cache = new SchedulerCache()
    assert.deepEqual(new Placer(cache).place(podInfoOf(pod())), {message: 'no nodes available to schedule pods', byFilter: new Map()})
    cache.setNode(node('small', {cpu: '1', memory: '1Gi', pods: '10'}))
    cache.setNode({...node('cordoned'), spec: {unschedulable: true}})
    const result = new Placer(cache).place(podInfoOf(pod({cpu: '2'})))
    assert.ok('message' in result)
    assert.equal(result.message, '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.')
    assert.deepEqual([...result.byFilter].sort(), [['NodeResourcesFit', 1], ['NodeUnschedulable', 1]])
  })
})

describe('scheduler: cache', () => {
  it('assumed pods count at once; forget undoes it; the informer confirms or moves them', () => {
    const cache = new SchedulerCache()
    cache.setNode(node('a'))
    cache.setNode(node('b'))
    const info = podInfoOf(pod({cpu: '1'}, {labels: {app: 'x'}}, {containers: [{name: 'c', image: 'i', resources: {requests: {cpu: '1'}}, ports: [{containerPort: 80, hostPort: 80}]}]}))
    cache.assume(info, 'a')
    assert.equal(cache.node('a')!.requested.milliCPU, 1000)
    assert.equal(cache.node('a')!.usedPorts.length, 1)
    assert.equal(cache.node('a')!.spreadCounts.get(info.spreadKey!), 1)
    cache.forget(info.key)
    assert.equal(cache.node('a')!.requested.milliCPU, 0)
    assert.equal(cache.node('a')!.usedPorts.length, 0)
    assert.equal(cache.node('a')!.spreadCounts.size, 0)
    cache.assume(info, 'a')
    cache.addPod(info, 'b')
    assert.equal(cache.node('a')!.pods.size, 0)
    assert.equal(cache.node('b')!.requested.milliCPU, 1000)
    cache.forget(info.key)
    assert.equal(cache.node('b')!.pods.size, 1, 'a confirmed pod is not forgotten')
  })

  it('a node that goes keeps its pods until they go; a scheduling-relevant change of a node is reported, a heartbeat is not', () => {
    const cache = new SchedulerCache()
    const a = node('a')
    assert.equal(cache.setNode(a), true)
    const info = podInfoOf(pod({cpu: '1'}))
    cache.addPod(info, 'a')
    assert.equal(cache.setNode({...a, status: {...a.status, conditions: [{type: 'Ready', status: 'True', lastHeartbeatTime: 'later'}]}}), false)
    assert.equal(cache.setNode({...a, metadata: {name: 'a', labels: {disk: 'ssd'}}}), true)
    cache.removeNode('a')
    assert.deepEqual(cache.nodes(), [])
    cache.setNode(a)
    assert.equal(cache.node('a')!.requested.milliCPU, 1000, 'the pods were kept')
    cache.removePod(info.key)
    assert.equal(cache.node('a')!.requested.milliCPU, 0)
  })
})

describe('scheduler: queue', () => {
  const info = (priority = 0, meta: AnyObject = {}) => podInfoOf(pod({}, meta, {priority}))

  it('back-off: 1 s, doubling per failed attempt, at most 10 s (podInitialBackoff, podMaxBackoff)', () => {
    const queue = new SchedulingQueue()
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => queue.backoffDuration(n)), [1000, 2000, 4000, 8000, 10_000, 10_000])
  })

  it('higher spec.priority first, then in arrival order', async () => {
    const queue = new SchedulingQueue()
    const [low, high, low2] = [info(0), info(10), info(0)]
    for (const p of [low, high, low2]) queue.upsert(p)
    const order = [(await queue.pop())!.info.key, (await queue.pop())!.info.key, (await queue.pop())!.info.key]
    assert.deepEqual(order, [high.key, low.key, low2.key])
  })

  it('an unschedulable pod waits for a change in the cluster, not in a loop; then after its back-off', async () => {
    let now = 0
    const queue = new SchedulingQueue({initialBackoffMs: 40, now: () => now})
    const p = info()
    queue.upsert(p)
    await queue.pop()
    queue.unschedulable(p.key)
    const again = queue.pop()
    assert.equal(await within(again, 100), 'timeout', 'nothing changed: not tried again')
    assert.equal(queue.counts().unschedulable, 1)
    queue.moveAllToActiveOrBackoff()
    assert.equal(queue.counts().backoff, 1, 'the back-off is not over yet')
    const next = await within(again, 2000)
    assert.notEqual(next, 'timeout')
    assert.equal((next as {attempts: number}).attempts, 1)
    queue.unschedulable(p.key)
    now += 5000
    queue.moveAllToActiveOrBackoff()
    assert.equal(queue.counts().active, 1, 'the back-off (80 ms) is over: straight to active')
    queue.close()
  })

  it('a parked pod is tried again when its spec or labels change, not for a status change; after 5 minutes anyway', async () => {
    let now = 0
    const queue = new SchedulingQueue({now: () => now})
    const p = info(0, {labels: {a: '1'}})
    queue.upsert(p)
    await queue.pop()
    queue.unschedulable(p.key)
    queue.upsert({...p, pod: {...p.pod, status: {conditions: [{type: 'PodScheduled', status: 'False'}]}}})
    assert.equal(queue.counts().unschedulable, 1)
    now += 2000
    queue.upsert(podInfoOf({...p.pod, metadata: {...p.pod.metadata, labels: {a: '2'}}}))
    assert.equal(queue.counts().active, 1)
    await queue.pop()
    queue.unschedulable(p.key)
    now += 5 * 60_000
    queue.flushLeftover()
    assert.equal(queue.counts().unschedulable, 1, 'not yet 5 minutes')
    now += 1
    queue.flushLeftover()
    assert.equal(queue.counts().active, 1)
    queue.close()
  })

  it('a failed binding goes to backoff at once; a deleted pod leaves the queue; close wakes a waiting pop', async () => {
    const queue = new SchedulingQueue({initialBackoffMs: 20})
    const p = info()
    queue.upsert(p)
    await queue.pop()
    queue.backoff(p.key)
    assert.equal(queue.counts().backoff, 1)
    assert.notEqual(await within(queue.pop(), 2000), 'timeout')
    queue.remove(p.key)
    assert.equal(queue.has(p.key), false)
    const waiting = queue.pop()
    queue.close()
    assert.equal(await waiting, undefined)
  })
})
