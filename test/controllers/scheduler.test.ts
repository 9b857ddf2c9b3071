// Unit tests of the scheduler's pure parts: what pods request, the filters and the summary message.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {SchedulerCache} from '../../src/controllers/scheduler/cache.js'
import {runFilters} from '../../src/controllers/scheduler/filters.js'
import {podInfoOf, type NodeInfo} from '../../src/controllers/scheduler/info.js'
import {fitErrorMessage} from '../../src/controllers/scheduler/messages.js'
import {podRequests} from '../../src/controllers/scheduler/resources.js'

let uid = 0
function pod(spec: AnyObject = {}, meta: AnyObject = {}): AnyObject {
  uid++
  return {metadata: {name: `p${uid}`, namespace: 'ns', uid: `uid-${uid}`, ...meta}, spec: {containers: [{name: 'c', image: 'i'}], ...spec}}
}

const container = (requests: Record<string, string>, extra: AnyObject = {}) => ({name: 'c', image: 'i', resources: {requests}, ...extra})

function node(name: string, options: {labels?: Record<string, string>; taints?: AnyObject[]; unschedulable?: boolean; ready?: string | null; allocatable?: AnyObject} = {}): AnyObject {
  const ready = options.ready === undefined ? 'True' : options.ready
  return {
    metadata: {name, labels: options.labels ?? {}},
    spec: {taints: options.taints, unschedulable: options.unschedulable},
    status:
      ready === null
        ? undefined
        : {allocatable: options.allocatable ?? {cpu: '4', memory: '8Gi', pods: '110'}, conditions: [{type: 'Ready', status: ready}]},
  }
}

/** A cache holding one node (and pods bound to it); returns the node's info. */
function nodeInfo(n: AnyObject, bound: AnyObject[] = []): NodeInfo {
  const cache = new SchedulerCache()
  cache.setNode(n)
  const name: string = n.metadata!.name
  for (const p of bound) cache.addPod(podInfoOf(p), name)
  return cache.node(name)!
}

const verdict = (p: AnyObject, n: NodeInfo) => {
  const rejection = runFilters(podInfoOf(p), n)
  return rejection ? `${rejection.filter}: ${rejection.reasons.join('; ')}` : 'fits'
}

describe('scheduler: pod requests', () => {
  it('the sum of the containers, or the largest init container when that is more (Kubernetes PodRequests)', () => {
    const r = podRequests({
      initContainers: [container({cpu: '1', memory: '100Mi'}), container({cpu: '200m', memory: '1Gi'})],
      containers: [container({cpu: '300m', memory: '200Mi'}), container({cpu: '300m', memory: '200Mi'})],
    })
    assert.equal(r.milliCPU, 1000)
    assert.equal(r.memory, 1024 ** 3)
  })

  it('sidecars (init containers with restartPolicy Always) run beside the containers and every later init container', () => {
    const r = podRequests({
      initContainers: [container({cpu: '100m'}, {restartPolicy: 'Always'}), container({cpu: '950m'})],
      containers: [container({cpu: '500m'})],
    })
    // containers + sidecar = 600m; the second init container runs with the sidecar: 1050m
    assert.equal(r.milliCPU, 1050)
  })

  it('the pod overhead is added; extended resources and ephemeral storage are counted by value', () => {
    const r = podRequests({containers: [container({cpu: '250m', 'example.com/gpu': '2', 'ephemeral-storage': '1Gi'})], overhead: {cpu: '50m', memory: '10Mi'}})
    assert.equal(r.milliCPU, 300)
    assert.equal(r.memory, 10 * 1024 ** 2)
    assert.equal(r.ephemeralStorage, 1024 ** 3)
    assert.equal(r.scalar.get('example.com/gpu'), 2)
  })

  it('for scoring, a container without a cpu or memory request counts 100m and 200Mi; an explicit 0 stays 0', () => {
    const r = podRequests({containers: [container({}), container({cpu: '0'})]}, true)
    assert.equal(r.milliCPU, 100)
    assert.equal(r.memory, 2 * 200 * 1024 ** 2)
  })
})

describe('scheduler: filters', () => {
  it('NodeReady: Ready must be True; a node without status is not a candidate; tolerating the not-ready taint lets a pod through', () => {
    assert.equal(verdict(pod(), nodeInfo(node('n', {ready: 'False'}))), 'NodeReady: node(s) were not ready')
    assert.equal(verdict(pod(), nodeInfo(node('n', {ready: null}))), 'NodeReady: node(s) were not ready')
    assert.equal(verdict(pod(), nodeInfo(node('n', {ready: 'Unknown'}))), 'NodeReady: node(s) were not ready')
    assert.equal(verdict(pod({tolerations: [{key: 'node.orch.io/not-ready', operator: 'Exists'}]}), nodeInfo(node('n', {ready: 'False'}))), 'fits')
    assert.equal(verdict(pod({tolerations: [{key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoSchedule'}]}), nodeInfo(node('n', {ready: 'Unknown'}))), 'fits')
  })

  it('NodeUnschedulable: spec.unschedulable refuses pods that do not tolerate node.orch.io/unschedulable:NoSchedule', () => {
    const cordoned = nodeInfo(node('n', {unschedulable: true}))
    assert.equal(verdict(pod(), cordoned), 'NodeUnschedulable: node(s) were unschedulable')
    assert.equal(verdict(pod({tolerations: [{key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule'}]}), cordoned), 'fits')
    assert.equal(verdict(pod({tolerations: [{key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoExecute'}]}), cordoned), 'NodeUnschedulable: node(s) were unschedulable')
  })

  it('TaintToleration: operators Equal and Exists, an empty key with Exists, a matching or empty effect; tolerationSeconds ignored; PreferNoSchedule not a filter', () => {
    const n = nodeInfo(node('n', {taints: [{key: 'k', value: 'v', effect: 'NoSchedule'}, {key: 'soft', effect: 'PreferNoSchedule'}]}))
    const cases: [AnyObject[] | undefined, string][] = [
      [undefined, 'TaintToleration: node(s) had untolerated taint {k: v}'],
      [[{key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule'}], 'fits'],
      [[{key: 'k', value: 'v'}], 'fits'],
      [[{key: 'k', operator: 'Equal', value: 'w'}], 'TaintToleration: node(s) had untolerated taint {k: v}'],
      [[{key: 'k', operator: 'Exists'}], 'fits'],
      [[{operator: 'Exists'}], 'fits'],
      [[{operator: 'Exists', effect: 'NoExecute'}], 'TaintToleration: node(s) had untolerated taint {k: v}'],
      [[{key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0}], 'TaintToleration: node(s) had untolerated taint {k: v}'],
    ]
    for (const [tolerations, expected] of cases) assert.equal(verdict(pod(tolerations ? {tolerations} : {}), n), expected, JSON.stringify(tolerations))
    const noExecute = nodeInfo(node('n', {taints: [{key: 'gone', effect: 'NoExecute'}]}))
    assert.equal(verdict(pod(), noExecute), 'TaintToleration: node(s) had untolerated taint {gone: }')
    assert.equal(verdict(pod({tolerations: [{key: 'gone', operator: 'Exists', tolerationSeconds: 30, effect: 'NoExecute'}]}), noExecute), 'fits')
  })

  it('NodeAffinity: nodeSelector labels must all match', () => {
    const n = nodeInfo(node('n', {labels: {disk: 'ssd', zone: 'a'}}))
    assert.equal(verdict(pod({nodeSelector: {disk: 'ssd', zone: 'a'}}), n), 'fits')
    assert.equal(verdict(pod({nodeSelector: {disk: 'ssd', zone: 'b'}}), n), "NodeAffinity: node(s) didn't match Pod's node affinity/selector")
    assert.equal(verdict(pod({nodeSelector: {constructor: ''}}), n), "NodeAffinity: node(s) didn't match Pod's node affinity/selector")
  })

  it('NodeAffinity: required terms with In, NotIn, Exists, DoesNotExist, Gt, Lt and matchFields metadata.name; an empty term matches nothing', () => {
    const n = nodeInfo(node('worker-1', {labels: {zone: 'a', cores: '16', name: 'x'}}))
    const affinity = (...terms: AnyObject[]) => ({affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: terms}}}})
    const expr = (key: string, operator: string, values?: string[]) => ({matchExpressions: [{key, operator, ...(values ? {values} : {})}]})
    const fits: [AnyObject, boolean][] = [
      [expr('zone', 'In', ['a', 'b']), true],
      [expr('zone', 'In', ['b']), false],
      [expr('zone', 'NotIn', ['b']), true],
      [expr('missing', 'NotIn', ['b']), true],
      [expr('zone', 'Exists'), true],
      [expr('missing', 'Exists'), false],
      [expr('missing', 'DoesNotExist'), true],
      [expr('zone', 'DoesNotExist'), false],
      [expr('cores', 'Gt', ['8']), true],
      [expr('cores', 'Gt', ['16']), false],
      [expr('cores', 'Lt', ['32']), true],
      [expr('zone', 'Gt', ['1']), false],
      [expr('missing', 'Lt', ['1']), false],
      [{matchFields: [{key: 'metadata.name', operator: 'In', values: ['worker-1']}]}, true],
      [{matchFields: [{key: 'metadata.name', operator: 'NotIn', values: ['worker-1']}]}, false],
      [{matchExpressions: [{key: 'zone', operator: 'In', values: ['a']}], matchFields: [{key: 'metadata.name', operator: 'In', values: ['other']}]}, false],
      [{}, false],
    ]
    for (const [term, expected] of fits) assert.equal(verdict(pod(affinity(term)), n) === 'fits', expected, JSON.stringify(term))
    assert.equal(verdict(pod(affinity(expr('zone', 'In', ['b']), expr('cores', 'Exists'))), n), 'fits', 'terms are ORed')
  })

  it('NodeResourcesFit: pods, cpu, memory, ephemeral storage and extended resources fit allocatable minus what bound pods request', () => {
    const n = node('n', {allocatable: {cpu: '2', memory: '4Gi', pods: '2', 'ephemeral-storage': '10Gi', 'example.com/gpu': '1'}})
    const bound = [pod({containers: [container({cpu: '1500m', memory: '1Gi'})]})]
    const info = nodeInfo(n, bound)
    assert.equal(verdict(pod({containers: [container({cpu: '500m', memory: '3Gi'})]}), info), 'fits')
    assert.equal(verdict(pod({containers: [container({cpu: '501m', memory: '3073Mi', 'ephemeral-storage': '11Gi', 'example.com/gpu': '2'})]}), info), 'NodeResourcesFit: Insufficient cpu; Insufficient memory; Insufficient ephemeral-storage; Insufficient example.com/gpu')
    const full = nodeInfo(n, [...bound, pod()])
    assert.equal(verdict(pod(), full), 'NodeResourcesFit: Too many pods')
    assert.equal(verdict(pod({containers: [container({cpu: '1'})]}), full), 'NodeResourcesFit: Too many pods; Insufficient cpu')
    const none = nodeInfo(node('bare', {allocatable: {}}))
    assert.equal(verdict(pod(), none), 'NodeResourcesFit: Too many pods')
  })

  it('NodePorts: a host port taken with the same protocol on the same address, or on 0.0.0.0, conflicts', () => {
    const withPort = (port: AnyObject) => pod({containers: [{name: 'c', image: 'i', ports: [{containerPort: 80, ...port}]}]})
    const n = nodeInfo(node('n'), [withPort({hostPort: 80, protocol: 'TCP', hostIP: '10.0.0.1'})])
    const conflict = "NodePorts: node(s) didn't have free ports for the requested pod ports"
    assert.equal(verdict(withPort({hostPort: 80, protocol: 'TCP'}), n), conflict)
    assert.equal(verdict(withPort({hostPort: 80, protocol: 'TCP', hostIP: '10.0.0.1'}), n), conflict)
    assert.equal(verdict(withPort({hostPort: 80, protocol: 'TCP', hostIP: '10.0.0.2'}), n), 'fits')
    assert.equal(verdict(withPort({hostPort: 80, protocol: 'UDP'}), n), 'fits')
    assert.equal(verdict(withPort({hostPort: 81, protocol: 'TCP'}), n), 'fits')
    assert.equal(verdict(withPort({protocol: 'TCP'}), n), 'fits')
  })

  it('the filters run in order and the first that refuses names the reasons', () => {
    const n = nodeInfo(node('n', {unschedulable: true, taints: [{key: 'k', effect: 'NoSchedule'}], allocatable: {cpu: '1', memory: '1Gi', pods: '1'}}))
    assert.equal(verdict(pod({containers: [container({cpu: '2'})]}), n), 'NodeUnschedulable: node(s) were unschedulable')
  })
})

describe('scheduler: bad input', () => {
  it('garbage in a pod or a node (no spec, malformed quantities, fields of the wrong type) never throws; such a node is simply not a candidate', () => {
    const odd: AnyObject = {
      metadata: {name: 'odd', namespace: 'ns', labels: null},
      spec: {containers: 'none', initContainers: [null, {resources: {requests: {cpu: 'lots'}}}], tolerations: 'all', nodeSelector: 'x', affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: 5}}}},
    }
    const info = podInfoOf(odd)
    assert.equal(info.requests.milliCPU, 0)
    assert.deepEqual(info.tolerations, [])
    const cache = new SchedulerCache()
    cache.setNode({metadata: {name: 'broken', labels: null}, spec: {taints: {}}, status: {allocatable: {cpu: 'many', pods: 'x'}, conditions: 'ready'}})
    cache.setNode({metadata: {name: 'bare'}})
    for (const name of ['broken', 'bare']) assert.equal(verdict(pod(), cache.node(name)!), 'NodeReady: node(s) were not ready')
    assert.doesNotThrow(() => podInfoOf({}))
    assert.equal(verdict(odd, nodeInfo(node('n'))), "NodeAffinity: node(s) didn't match Pod's node affinity/selector")
  })
})

describe('scheduler: messages', () => {
  it('FailedScheduling: "0/N nodes are available: <count> <reason>, ...", sorted as strings, as kube-scheduler writes it', () => {
    const histogram = new Map([
      ['Insufficient cpu', 2],
      ['node(s) had untolerated taint {dedicated: infra}', 1],
      ['Insufficient memory', 10],
    ])
    assert.equal(fitErrorMessage(13, histogram), '0/13 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 10 Insufficient memory, 2 Insufficient cpu.')
  })
})
