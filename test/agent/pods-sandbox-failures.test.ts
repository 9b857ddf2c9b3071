// A pod whose sandbox cannot start (a runtime whose network setup fails, as containerd without a CNI
// config): the start is retried after the pod worker's back-off, not in a loop driven by the relist; the
// sandbox a failed start leaves behind is removed; the status is written only when it changes; the
// pod starts once the runtime recovers.
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'

const quiet = createLogger({write: () => undefined})
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('sandbox start failures on the process runtime', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let dir: string
  let cri: CriClient
  before(async () => {
    harness = await startRuntimeHarness('orch-sandbox-failures-')
    ;({dir, cri} = harness)
  })
  after(() => stopRuntimeHarness(harness, undefined))

  it('a failing RunPodSandbox is retried after the pod worker\'s back-off period, not in a loop; it leaves no dead sandboxes and writes the status only when it changes', async () => {
    const attempts: number[] = []
    let failing = true
    const runPodSandbox = cri.runPodSandbox.bind(cri)
    // as containerd does when the network cannot be set up: the sandbox exists (not ready), the call fails
    cri.runPodSandbox = async (...args) => {
      if (!failing) return runPodSandbox(...args)
      attempts.push(Date.now())
      const id = await runPodSandbox(...args)
      await cri.stopPodSandbox(id)
      throw new Error('failed to setup network for sandbox: cni plugin not initialized')
    }
    const statuses: AnyObject[] = []
    const manager = new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 20,
      backoff: {initialMs: 300, maxMs: 1200},
      logger: quiet,
      statusSink: (p) => statuses.push(structuredClone(p.status)),
    })
    await manager.start()
    try {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: 'nonet', namespace: 'test', uid: 'uid-nonet'},
        spec: {nodeName: 'node-a', containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]},
      }
      manager.upsertPod('api', pod)
      await sleep(3000)
      // the kubelet's pod worker: every retry after the back-off period (300 ms here) plus up to half of
      // it as jitter, so 7 to 11 attempts in 3 s (a hot loop makes hundreds)
      assert.ok(attempts.length >= 6 && attempts.length <= 11, `RunPodSandbox calls in 3 s: ${attempts.length}`)
      const gaps = attempts.slice(1).map((at, i) => at - attempts[i])
      for (const gap of gaps) assert.ok(gap >= 280, `each retry after the back-off period: ${gaps.join(', ')} ms`)
      const left = await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-nonet'}})
      assert.deepEqual(left, [], 'the failed sandboxes are removed')
      assert.ok(statuses.length <= 3, `status written only when it changes: ${statuses.length} writes`)
      const waiting = statuses.at(-1)!.containerStatuses[0].state.waiting
      assert.equal(waiting.reason, 'ContainerCreating')
      assert.match(waiting.message, /Failed to create pod sandbox: .*cni plugin not initialized/)
      // the runtime recovers: the next attempt starts the pod
      failing = false
      const deadline = Date.now() + 5000
      while (statuses.at(-1)?.phase !== 'Running') {
        assert.ok(Date.now() < deadline, `never Running: ${JSON.stringify(statuses.at(-1))}`)
        await sleep(50)
      }
      assert.equal((await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': 'uid-nonet'}})).length, 1)
    } finally {
      await manager.stop({stopPods: true})
    }
  })
})
