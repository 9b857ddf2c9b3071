// A new pod manager on a runtime that kept the pods of the one before (an agent restart on containerd,
// played by one process runtime shared by two pod managers): finished pods stay finished without a new
// sandbox, and a sandbox that cannot be re-created does not flood SandboxChanged events.
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {AgentEvents} from '../../src/agent/events.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import type {EventType, ObjectReference} from '../../src/client/events.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'
import {until} from '../support/until.js'

const quiet = createLogger({write: () => undefined})

/** The agent's events, kept in a list instead of written. */
class RecordedEvents extends AgentEvents {
  readonly list: {reason: string; type: EventType; message: string; name?: string}[] = []
  constructor() {
    super({client: () => undefined, nodeName: 'node-a', logger: quiet})
  }
  override event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    this.list.push({reason, type, message, name: ref.name})
  }
  count(reason: string, name: string): number {
    return this.list.filter((e) => e.reason === reason && e.name === name).length
  }
}

function pod(name: string, spec: AnyObject): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'test', uid: `uid-${name}`}, spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 1, ...spec}}
}

describe('pod manager restarts on a runtime that kept its pods', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let cri: CriClient
  let dir: string
  const managers: PodManager[] = []
  before(async () => {
    harness = await startRuntimeHarness('orch-pods-restart-')
    ;({dir, cri} = harness)
  })
  after(async () => {
    for (const manager of managers.splice(0)) await manager.stop({stopPods: true})
    await stopRuntimeHarness(harness, undefined)
  })

  function newManager(events: AgentEvents, statuses: Map<string, AnyObject>): PodManager {
    const manager = new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 20,
      backoff: {initialMs: 300, maxMs: 1200},
      logger: quiet,
      events,
      statusSink: (p) => statuses.set(p.metadata!.name, structuredClone(p.status)),
    })
    managers.push(manager)
    return manager
  }

  /** An agent that stops leaves its pods running. */
  async function stopLeavingPods(manager: PodManager): Promise<void> {
    managers.splice(managers.indexOf(manager), 1)
    await manager.stop()
  }

  it('The kubelet never syncs a finished pod to run again: after a restart, a Never pod whose containers all exited gets no new sandbox (no SandboxChanged) and stays Succeeded', async () => {
    const statuses = new Map<string, AnyObject>()
    const first = newManager(new RecordedEvents(), statuses)
    await first.start()
    const done = pod('done', {restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox', command: ['true']}]})
    first.upsertPod('api', done)
    const finished = await until('done Succeeded', () => statuses.get('done')?.phase === 'Succeeded' && statuses.get('done'))
    const sandboxesBefore = await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-done'}})
    await stopLeavingPods(first)

    const events = new RecordedEvents()
    statuses.clear()
    const second = newManager(events, statuses)
    await second.start()
    // the API has not seen the terminal phase yet: only what the runtime kept says the pod is done
    second.upsertPod('api', done)
    const status = await until('a status from the new manager', () => statuses.get('done'))
    assert.equal(status.phase, 'Succeeded')
    assert.equal(status.containerStatuses[0].containerID, finished.containerStatuses[0].containerID)
    assert.equal(events.count('SandboxChanged', 'done'), 0)
    const sandboxesAfter = await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-done'}})
    assert.deepEqual(sandboxesAfter.map((s) => s.id), sandboxesBefore.map((s) => s.id), 'no new sandbox')
    await stopLeavingPods(second)
  })
  it('SandboxChanged ("Pod sandbox changed, it will be killed and re-created.") only when a sync kills and re-creates a sandbox that existed, under back-off: pod updates while the re-creation backs off record none', async () => {
    const statuses = new Map<string, AnyObject>()
    const first = newManager(new RecordedEvents(), statuses)
    await first.start()
    const web = pod('web', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]})
    first.upsertPod('api', web)
    await until('web Running', () => statuses.get('web')?.phase === 'Running')
    await stopLeavingPods(first)
    // the sandbox died while no agent ran, and the runtime cannot make a new one (no CNI config)
    const [old] = await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-web'}})
    await cri.stopPodSandbox(old.id)
    const attempts: number[] = []
    const runPodSandbox = cri.runPodSandbox.bind(cri)
    cri.runPodSandbox = async (...args) => {
      attempts.push(Date.now())
      const id = await runPodSandbox(...args)
      await cri.stopPodSandbox(id)
      throw new Error('failed to setup network for sandbox: cni plugin not initialized')
    }
    try {
      const events = new RecordedEvents()
      const second = newManager(events, statuses)
      await second.start()
      second.upsertPod('api', web)
      // the API delivers updates of the pod (its own status writes, labels) while the start backs off
      for (let round = 1; round <= 4; round++) {
        await until(`attempt ${round}`, () => attempts.length >= round)
        for (let update = 0; update < 5; update++) {
          second.upsertPod('api', {...web, metadata: {...web.metadata, labels: {round: String(round), update: String(update)}}})
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
      // an attempt is counted when it starts, its FailedCreatePodSandBox once it has failed: wait for the last one
      await until('every start attempt recorded as failed', () => events.count('FailedCreatePodSandBox', 'web') === attempts.length)
      const changed = events.list.filter((e) => e.reason === 'SandboxChanged' && e.name === 'web')
      assert.ok(changed.length >= 1, 'the sandbox that existed is re-created: SandboxChanged')
      assert.equal(changed[0].message, 'Pod sandbox changed, it will be killed and re-created.')
      assert.equal(changed[0].type, 'Normal')
      const failed = events.count('FailedCreatePodSandBox', 'web')
      assert.ok(failed >= 4, `${failed} failed sandbox starts recorded`)
      assert.ok(changed.length <= failed, `SandboxChanged ${changed.length} times for ${failed} failed sandbox starts`)
    } finally {
      cri.runPodSandbox = runPodSandbox
    }
  })
})
