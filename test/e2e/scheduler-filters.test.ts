// The scheduler's filters end to end: a real `orch server --controllers=scheduler`, nodes created
// through the API, and pods that either land on the node a filter lets through or stay Pending with
// the filter's reason in their PodScheduled condition. Each test removes its nodes and pods, so the
// next one starts from an empty cluster.
import assert from 'node:assert/strict'
import {after, afterEach, before, describe, it} from 'node:test'
import {startOrchServer, type RunningOrch} from '../support/server.js'
import {Cluster, pod} from './scheduler-support.js'

const TIMEOUT = {timeout: 60_000}

describe('scheduler filters', () => {
  let server: RunningOrch
  let cluster: Cluster
  let nodes: string[] = []
  const namespaces: string[] = []

  before(async () => {
    server = await startOrchServer(['--controllers=scheduler'])
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

  it('NodeReady: a node whose Ready condition is not True, or that has no status, is not a candidate ("node(s) were not ready")', TIMEOUT, async () => {
    const ns = await setup('ready', 'ready-false', 'ready-none')
    const notReady = await cluster.createNode('ready-false', {ready: 'False'})
    await cluster.createNode('ready-none', {ready: 'none'})
    await cluster.createPod(ns, pod('waiting'))
    await cluster.waitForUnschedulable(ns, 'waiting', '0/2 nodes are available: 2 node(s) were not ready.')
    await cluster.setNodeStatus(notReady, 'True')
    assert.deepEqual(await cluster.waitForBound(ns, ['waiting']), {waiting: 'ready-false'})
    const scheduled = (await cluster.pod(ns, 'waiting')).status.conditions.find((c: any) => c.type === 'PodScheduled')
    assert.equal(scheduled.status, 'True')
  })

  it('NodeUnschedulable: a node with spec.unschedulable is skipped unless the pod tolerates node.orch.io/unschedulable:NoSchedule', TIMEOUT, async () => {
    const ns = await setup('cordoned', 'cordoned-node')
    await cluster.createNode('cordoned-node', {unschedulable: true})
    await cluster.createPod(ns, pod('plain'))
    await cluster.createPod(ns, pod('tolerant', {spec: {tolerations: [{key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule'}]}}))
    assert.deepEqual(await cluster.waitForBound(ns, ['tolerant']), {tolerant: 'cordoned-node'})
    await cluster.waitForUnschedulable(ns, 'plain', '0/1 nodes are available: 1 node(s) were unschedulable.')
  })

  it('TaintToleration: NoSchedule and NoExecute taints must be tolerated (Equal, Exists, empty key with Exists, matching effect; tolerationSeconds ignored); PreferNoSchedule does not filter', TIMEOUT, async () => {
    const ns = await setup('taints', 'tainted')
    await cluster.createNode('tainted', {
      taints: [
        {key: 'dedicated', value: 'gpu', effect: 'NoSchedule'},
        {key: 'maintenance', effect: 'NoExecute'},
        {key: 'soft', value: 'x', effect: 'PreferNoSchedule'},
      ],
    })
    const both = [
      {key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule'},
      {key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0},
    ]
    const tolerating = {
      'equal-and-exists': both,
      'empty-key-exists': [{operator: 'Exists'}],
      'no-effect-given': [
        {key: 'dedicated', operator: 'Equal', value: 'gpu'},
        {key: 'maintenance', operator: 'Exists'},
      ],
    }
    const refused = {
      'no-tolerations': undefined,
      'wrong-value': [{key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule'}, both[1]],
      'wrong-effect': [{key: 'dedicated', operator: 'Exists', effect: 'NoExecute'}, both[1]],
      'first-only': [both[0]],
    }
    for (const [name, tolerations] of Object.entries({...tolerating, ...refused})) {
      await cluster.createPod(ns, pod(name, {spec: tolerations ? {tolerations} : {}}))
    }
    const bound = await cluster.waitForBound(ns, Object.keys(tolerating))
    assert.deepEqual(Object.values(bound), ['tainted', 'tainted', 'tainted'])
    for (const name of ['no-tolerations', 'wrong-value', 'wrong-effect']) {
      await cluster.waitForUnschedulable(ns, name, '0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}.')
    }
    await cluster.waitForUnschedulable(ns, 'first-only', '0/1 nodes are available: 1 node(s) had untolerated taint {maintenance: }.')
  })

  it('NodeAffinity: every nodeSelector label must match the node', TIMEOUT, async () => {
    const ns = await setup('selector', 'ssd-node', 'hdd-node')
    await cluster.createNode('ssd-node', {labels: {disk: 'ssd', zone: 'a'}})
    await cluster.createNode('hdd-node', {labels: {disk: 'hdd', zone: 'a'}})
    await cluster.createPod(ns, pod('wants-ssd', {spec: {nodeSelector: {disk: 'ssd', zone: 'a'}}}))
    await cluster.createPod(ns, pod('wants-nvme', {spec: {nodeSelector: {disk: 'nvme'}}}))
    assert.deepEqual(await cluster.waitForBound(ns, ['wants-ssd']), {'wants-ssd': 'ssd-node'})
    await cluster.waitForUnschedulable(ns, 'wants-nvme', "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
  })

  it('NodeAffinity: required node affinity matches In, NotIn, Exists, DoesNotExist, Gt, Lt and matchFields metadata.name (terms ORed, expressions ANDed)', TIMEOUT, async () => {
    const ns = await setup('affinity', 'aff-small', 'aff-big', 'aff-bare')
    await cluster.createNode('aff-small', {labels: {cores: '4', zone: 'a', gpu: 'yes'}})
    await cluster.createNode('aff-big', {labels: {cores: '64', zone: 'b'}})
    await cluster.createNode('aff-bare')
    const required = (terms: any[]) => ({
      spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: terms}}}},
    })
    const expect: Record<string, [any[], string]> = {
      in: [[{matchExpressions: [{key: 'zone', operator: 'In', values: ['b', 'c']}]}], 'aff-big'],
      'not-in-and-exists': [[{matchExpressions: [{key: 'zone', operator: 'NotIn', values: ['b']}, {key: 'zone', operator: 'Exists'}]}], 'aff-small'],
      'does-not-exist': [[{matchExpressions: [{key: 'zone', operator: 'DoesNotExist'}]}], 'aff-bare'],
      gt: [[{matchExpressions: [{key: 'cores', operator: 'Gt', values: ['8']}]}], 'aff-big'],
      lt: [[{matchExpressions: [{key: 'cores', operator: 'Lt', values: ['8']}]}], 'aff-small'],
      'match-fields': [[{matchFields: [{key: 'metadata.name', operator: 'In', values: ['aff-bare']}]}], 'aff-bare'],
      'terms-ored': [[{matchExpressions: [{key: 'zone', operator: 'In', values: ['z']}]}, {matchExpressions: [{key: 'gpu', operator: 'Exists'}]}], 'aff-small'],
    }
    for (const [name, [terms]] of Object.entries(expect)) await cluster.createPod(ns, pod(name, required(terms)))
    await cluster.createPod(ns, pod('anded-to-nothing', required([{matchExpressions: [{key: 'zone', operator: 'In', values: ['a']}, {key: 'cores', operator: 'Gt', values: ['8']}]}])))
    const bound = await cluster.waitForBound(ns, Object.keys(expect))
    assert.deepEqual(bound, Object.fromEntries(Object.entries(expect).map(([name, [, node]]) => [name, node])))
    await cluster.waitForUnschedulable(ns, 'anded-to-nothing', "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
  })

  it('NodeResourcesFit: cpu, memory and the pod count must fit allocatable minus what the bound pods request', TIMEOUT, async () => {
    const ns = await setup('fit', 'fit-node')
    await cluster.createNode('fit-node', {allocatable: {cpu: '2', memory: '4Gi', pods: '3'}})
    // a pod bound by someone else counts too
    await cluster.createPod(ns, pod('bound-elsewhere', {requests: {cpu: '1', memory: '1Gi'}, spec: {nodeName: 'fit-node'}}))
    await cluster.createPod(ns, pod('fits', {requests: {cpu: '1', memory: '2Gi'}}))
    assert.deepEqual(await cluster.waitForBound(ns, ['fits']), {fits: 'fit-node'})
    await cluster.createPod(ns, pod('too-much-cpu', {requests: {cpu: '100m'}}))
    await cluster.waitForUnschedulable(ns, 'too-much-cpu', '0/1 nodes are available: 1 Insufficient cpu.')
    await cluster.createPod(ns, pod('too-much-memory', {requests: {memory: '1025Mi'}}))
    await cluster.waitForUnschedulable(ns, 'too-much-memory', '0/1 nodes are available: 1 Insufficient memory.')
    await cluster.createPod(ns, pod('too-much-of-both', {requests: {cpu: '1', memory: '2Gi'}}))
    await cluster.waitForUnschedulable(ns, 'too-much-of-both', '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.')
    await cluster.createPod(ns, pod('no-requests'))
    // two pods bound: a third fits the pod count, a fourth would not
    assert.deepEqual(await cluster.waitForBound(ns, ['no-requests']), {'no-requests': 'fit-node'})
    await cluster.createPod(ns, pod('one-too-many'))
    await cluster.waitForUnschedulable(ns, 'one-too-many', '0/1 nodes are available: 1 Too many pods.')
  })

  it('NodeResourcesFit: init containers count as the largest init container when that is more than the sum of the containers', TIMEOUT, async () => {
    const ns = await setup('init', 'init-node')
    await cluster.createNode('init-node', {allocatable: {cpu: '1', memory: '1Gi', pods: '10'}})
    const withInit = (name: string, init: string, containers: string[]) => ({
      ...pod(name),
      spec: {
        initContainers: [{name: 'init', image: 'busybox', resources: {requests: {cpu: init}}}],
        containers: containers.map((cpu, i) => ({name: `c${i}`, image: 'busybox', resources: {requests: {cpu}}})),
      },
    })
    // max(1200m, 200m + 200m) = 1200m > 1: refused; max(800m, 300m + 300m) = 800m (not 1400m): fits
    await cluster.createPod(ns, withInit('big-init', '1200m', ['200m', '200m']))
    await cluster.waitForUnschedulable(ns, 'big-init', '0/1 nodes are available: 1 Insufficient cpu.')
    await cluster.createPod(ns, withInit('small-init', '800m', ['300m', '300m']))
    assert.deepEqual(await cluster.waitForBound(ns, ['small-init']), {'small-init': 'init-node'})
    // 800m are taken now: max(100m, 150m + 150m) = 300m > 200m left
    await cluster.createPod(ns, withInit('sum-wins', '100m', ['150m', '150m']))
    await cluster.waitForUnschedulable(ns, 'sum-wins', '0/1 nodes are available: 1 Insufficient cpu.')
  })

  it('NodePorts: a host port (protocol, address) already taken on a node is a conflict', TIMEOUT, async () => {
    const ns = await setup('ports', 'port-node')
    await cluster.createNode('port-node')
    const withPort = (name: string, port: Record<string, unknown>) => ({
      ...pod(name),
      spec: {containers: [{name: 'app', image: 'busybox', ports: [{containerPort: 80, protocol: 'TCP', ...port}]}]},
    })
    await cluster.createPod(ns, withPort('first', {hostPort: 8080}))
    assert.deepEqual(await cluster.waitForBound(ns, ['first']), {first: 'port-node'})
    await cluster.createPod(ns, withPort('udp-same-port', {hostPort: 8080, protocol: 'UDP'}))
    await cluster.createPod(ns, withPort('other-port', {hostPort: 8081}))
    await cluster.waitForBound(ns, ['udp-same-port', 'other-port'])
    await cluster.createPod(ns, withPort('same-port', {hostPort: 8080}))
    await cluster.createPod(ns, withPort('same-port-one-address', {hostPort: 8080, hostIP: '10.0.0.1'}))
    for (const name of ['same-port', 'same-port-one-address']) {
      await cluster.waitForUnschedulable(ns, name, "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.")
    }
  })

  it('bad input: a pod with a malformed toleration or node affinity is refused at creation (422, with field paths)', TIMEOUT, async () => {
    const ns = await setup('bad-input')
    const affinity = (expression: any) => ({
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [expression]}]}}},
    })
    const term = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]'
    const cases: [string, any, string][] = [
      ['exists-with-value', {tolerations: [{key: 'k', operator: 'Exists', value: 'v'}]}, 'spec.tolerations[0].operator'],
      ['unknown-operator', {tolerations: [{key: 'k', operator: 'Like'}]}, 'spec.tolerations[0].operator'],
      ['unknown-effect', {tolerations: [{key: 'k', operator: 'Exists', effect: 'Sometimes'}]}, 'spec.tolerations[0].effect'],
      ['gt-not-integer', affinity({key: 'cores', operator: 'Gt', values: ['many']}), `${term}.values[0]`],
      ['lt-two-values', affinity({key: 'cores', operator: 'Lt', values: ['1', '2']}), `${term}.values`],
      ['in-without-values', affinity({key: 'zone', operator: 'In'}), `${term}.values`],
      ['exists-with-values', affinity({key: 'zone', operator: 'Exists', values: ['a']}), `${term}.values`],
      ['does-not-exist-with-values', affinity({key: 'zone', operator: 'DoesNotExist', values: ['a']}), `${term}.values`],
    ]
    for (const [name, spec, field] of cases) {
      const r = await cluster.api('POST', `/api/v1/namespaces/${ns}/pods`, pod(name, {spec}))
      assert.equal(r.status, 422, `${name}: ${r.text}`)
      assert.equal(r.json.reason, 'Invalid')
      assert.deepEqual(
        r.json.details.causes.map((c: any) => c.field),
        [field],
        name,
      )
    }
  })
})
