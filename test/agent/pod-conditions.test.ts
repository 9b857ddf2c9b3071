// Pod conditions as the kubelet generates them: Initialized is True whenever there are no init
// containers; Ready and ContainersReady False name the unready containers (ContainersNotReady,
// "containers with unready status: [c]"); PodReadyToStartContainers follows the sandbox, False once a
// finished pod's sandbox is stopped.
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {computePodStatus, type PodView} from '../../src/agent/pods/status.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'

const cond = (status: AnyObject, type: string): AnyObject => status.conditions.find((c: AnyObject) => c.type === type)

const view = (extra: Partial<PodView> = {}): PodView => ({
  latest: new Map(),
  previous: new Map(),
  waiting: new Map(),
  initialized: false,
  failed: false,
  terminated: false,
  runtimeName: 'test',
  ...extra,
})

const pod = (spec: AnyObject): AnyObject => ({metadata: {name: 'p', namespace: 'ns', uid: 'u'}, spec: {nodeName: 'n', ...spec}})
const status = (p: AnyObject, v: PodView): AnyObject => computePodStatus(p, v, undefined, '2025-01-01T00:00:00Z', '10.0.0.1', new Date())

describe('pod conditions from the status', () => {
  it('Initialized is True for a pod without init containers, even while its sandbox cannot start', () => {
    const waiting = new Map([['c', {reason: 'ContainerCreating', message: 'Failed to create pod sandbox: no network'}]])
    const s = status(pod({containers: [{name: 'c', image: 'busybox'}]}), view({waiting}))
    assert.equal(cond(s, 'Initialized').status, 'True')
    assert.equal(cond(s, 'Initialized').reason, undefined)
    assert.equal(cond(s, 'PodReadyToStartContainers').status, 'False')
  })

  it('Initialized is False with ContainersNotInitialized naming the init containers not done', () => {
    const s = status(pod({initContainers: [{name: 'i1', image: 'busybox'}, {name: 'i2', image: 'busybox'}], containers: [{name: 'c', image: 'busybox'}]}), view({sandboxReady: true}))
    assert.deepEqual(
      {status: cond(s, 'Initialized').status, reason: cond(s, 'Initialized').reason, message: cond(s, 'Initialized').message},
      {status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i1 i2]'},
    )
  })

  it('Ready and ContainersReady False carry reason ContainersNotReady and the unready containers', () => {
    const s = status(pod({containers: [{name: 'a', image: 'busybox'}, {name: 'b', image: 'busybox'}]}), view({initialized: true, sandboxReady: true}))
    for (const type of ['Ready', 'ContainersReady']) {
      assert.equal(cond(s, type).status, 'False')
      assert.equal(cond(s, type).reason, 'ContainersNotReady')
      assert.equal(cond(s, type).message, 'containers with unready status: [a b]')
    }
    assert.equal(cond(s, 'PodReadyToStartContainers').status, 'True')
  })
})

describe('pod IPs in the status', () => {
  it('a finished pod keeps the IPs it ran with once its sandbox is gone (the kubelet still reports them)', () => {
    const previous = {podIP: '192.0.2.7', podIPs: [{ip: '192.0.2.7'}]}
    const p = pod({restartPolicy: 'Never', containers: [{name: 'c', image: 'busybox'}]})
    const finished = computePodStatus(p, view({failed: true, initialized: true}), previous, '2025-01-01T00:00:00Z', '10.0.0.1', new Date())
    assert.equal(finished.phase, 'Failed')
    assert.equal(finished.podIP, '192.0.2.7')
    assert.deepEqual(finished.podIPs, [{ip: '192.0.2.7'}])
    // a pod that is not finished shows only what its sandbox has now
    const waiting = new Map([['c', {reason: 'ContainerCreating'}]])
    const pending = computePodStatus(p, view({initialized: true, waiting}), previous, '2025-01-01T00:00:00Z', '10.0.0.1', new Date())
    assert.equal(pending.phase, 'Pending')
    assert.equal(pending.podIP, undefined)
  })
})

describe('PodReadyToStartContainers on the process runtime', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let dir: string
  let cri: CriClient
  before(async () => {
    harness = await startRuntimeHarness('orch-pod-conditions-')
    ;({dir, cri} = harness)
  })
  after(() => stopRuntimeHarness(harness, undefined))

  it('a pod that completed (restartPolicy Never) has its sandbox stopped and PodReadyToStartContainers False', async () => {
    const statuses: AnyObject[] = []
    const manager = new PodManager({cri, rootDir: join(dir, 'agent'), nodeName: 'node-a', relistPeriodMs: 50, logger: createLogger({write: () => undefined}), statusSink: (p) => statuses.push(p.status)})
    await manager.start()
    try {
      manager.upsertPod('api', {metadata: {name: 'once', namespace: 'test', uid: 'uid-once'}, spec: {nodeName: 'node-a', restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox', command: ['true']}]}})
      const deadline = Date.now() + 20_000
      while (statuses.at(-1)?.phase !== 'Succeeded') {
        assert.ok(Date.now() < deadline, `never Succeeded: ${JSON.stringify(statuses.at(-1))}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.ok(statuses.some((s) => cond(s, 'PodReadyToStartContainers').status === 'True'), 'True while the sandbox ran')
      const [sandbox] = await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-once'}})
      assert.equal(sandbox.state, 'SANDBOX_NOTREADY')
      const last = statuses.at(-1)!
      assert.equal(cond(last, 'PodReadyToStartContainers').status, 'False')
      assert.equal(cond(last, 'Initialized').status, 'True')
      assert.equal(cond(last, 'Ready').reason, 'PodCompleted')
    } finally {
      await manager.stop({stopPods: true})
    }
  })
})
