// When a pod's status reports a container: as the kubelet's generateAPIPodStatus does, a sync reports the
// runtime as it found it; a container the sync started is reported by a later sync (the one the next
// relist wakes), from what the runtime says then. A container that exits before that look is never
// reported running, nor ready.
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'
import {until} from '../support/until.js'

const quiet = createLogger({write: () => undefined})

function pod(name: string, spec: AnyObject): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'test', uid: `uid-${name}`}, spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 1, ...spec}}
}

const condition = (status: AnyObject, type: string): string | undefined => status.conditions?.find((c: AnyObject) => c.type === type)?.status

/** A pod manager on its own process runtime, every status it writes kept per pod. */
async function startManager(prefix: string, relistPeriodMs: number, backoffMs: number): Promise<{harness: RuntimeHarness; manager: PodManager; statuses: Map<string, AnyObject[]>}> {
  const harness = await startRuntimeHarness(prefix)
  const statuses = new Map<string, AnyObject[]>()
  const manager = new PodManager({
    cri: harness.cri,
    rootDir: join(harness.dir, 'agent'),
    nodeName: 'node-a',
    relistPeriodMs,
    backoff: {initialMs: backoffMs, maxMs: backoffMs},
    logger: quiet,
    statusSink: (p) => statuses.set(p.metadata!.name, [...(statuses.get(p.metadata!.name) ?? []), structuredClone(p.status)]),
  })
  await manager.start()
  return {harness, manager, statuses}
}

describe('pod status follows the runtime, not the start call', {timeout: 90_000}, () => {
  let harness: RuntimeHarness | undefined
  let manager: PodManager | undefined
  let statuses: Map<string, AnyObject[]>
  // the relist never comes during the test: the test plays it, waking the pod only once the runtime
  // reports the container exited, so that no look at the runtime can fall in the container's short life
  before(async () => ({harness, manager, statuses} = await startManager('orch-pods-status-timing-', 600_000, 1000)))
  after(() => stopRuntimeHarness(harness, manager))

  /** Runs the pod until its container was restarted `restarts` times, waking it after each exit as the relist would. */
  async function runUntilRestarted(crashing: AnyObject, restarts: number): Promise<AnyObject[]> {
    const {name, uid} = crashing.metadata as {name: string; uid: string}
    const woken = new Set<string>()
    manager!.upsertPod('api', crashing)
    await until(
      `${restarts} restarts`,
      async () => {
        for (const c of await harness!.cri.listContainers({labelSelector: {'io.orch.pod.uid': uid}})) {
          if (c.state !== 'CONTAINER_EXITED' || woken.has(c.id)) continue
          woken.add(c.id)
          manager!.upsertPod('api', crashing)
        }
        return (statuses.get(name)?.at(-1)?.containerStatuses?.[0]?.restartCount ?? 0) >= restarts
      },
      {timeoutMs: 30_000},
    )
    return statuses.get(name)!
  }

  for (const [name, script] of [
    ['flash', 'echo bad; exit 1'],
    ['flash-later', 'echo bad; sleep 0.3; exit 1'],
  ]) {
    it(`a container that exits before the next look at the runtime (\`${script}\`, restartPolicy Always, no readiness probe) is never reported running or ready: no status has Ready or ContainersReady True, ready true or state.running, on its first start or any restart`, async () => {
      const seen = await runUntilRestarted(pod(name, {containers: [{name: 'app', image: 'busybox', command: ['/bin/sh', '-c', script]}]}), 3)
      for (const status of seen) {
        const container = status.containerStatuses?.[0]
        assert.notEqual(condition(status, 'Ready'), 'True', `Ready True in ${JSON.stringify(status)}`)
        assert.notEqual(condition(status, 'ContainersReady'), 'True', `ContainersReady True in ${JSON.stringify(status)}`)
        assert.notEqual(container?.ready, true, `ready in ${JSON.stringify(container)}`)
        assert.equal(container?.state?.running, undefined, `running in ${JSON.stringify(container)}`)
      }
      // it is reported as it is: terminated with its exit code (reason Error), or waiting in back-off
      const terminated = seen.map((s) => s.containerStatuses?.[0]?.state?.terminated).find(Boolean)
      assert.equal(terminated?.exitCode, 1)
      assert.equal(terminated?.reason, 'Error')
      assert.ok(seen.some((s) => s.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff'), 'CrashLoopBackOff while backing off')
      assert.equal(seen.at(-1)!.phase, 'Running')
    })
  }
})

describe('a long-running container with the relist running', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let manager: PodManager | undefined
  let statuses: Map<string, AnyObject[]>
  before(async () => ({harness, manager, statuses} = await startManager('orch-pods-status-steady-', 1000, 10_000)))
  after(() => stopRuntimeHarness(harness, manager))

  it('is reported running and Ready once the runtime says it runs, within about a relist period (1 s here) of its start', async () => {
    const started = Date.now()
    manager!.upsertPod('api', pod('steady', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]}))
    await until(
      'steady Ready',
      () => {
        const status = statuses.get('steady')?.at(-1)
        return status && condition(status, 'Ready') === 'True' && status.containerStatuses[0].state.running && status.containerStatuses[0].ready
      },
      {timeoutMs: 10_000},
    )
    assert.ok(Date.now() - started < 2500, `Ready ${Date.now() - started} ms after the pod came`)
  })
})
