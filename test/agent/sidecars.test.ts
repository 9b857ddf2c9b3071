// Native sidecar containers (init containers with restartPolicy Always, gate SidecarContainers) on the
// process runtime, with real container processes: the app containers start once the sidecar started
// (and passed its startupProbe), the sidecar is restarted when it exits, it is not an init container
// that must complete, and it is stopped after the app containers.
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'
import {until} from '../support/until.js'

const quiet = createLogger({write: () => undefined})

function pod(name: string, spec: AnyObject): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'test', uid: `uid-${name}`}, spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 2, ...spec}}
}

describe('native sidecar containers on the process runtime', {timeout: 90_000}, () => {
  let harness: RuntimeHarness | undefined
  let cri: CriClient
  let dir: string
  let manager: PodManager
  const statuses = new Map<string, AnyObject>()
  before(async () => {
    harness = await startRuntimeHarness('orch-sidecars-')
    ;({dir, cri} = harness)
    manager = new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 50,
      backoff: {initialMs: 300, maxMs: 1200},
      logger: quiet,
      statusSink: (p) => statuses.set(p.metadata!.name, structuredClone(p.status)),
    })
    await manager.start()
  })
  after(() => stopRuntimeHarness(harness, manager))

  const cond = (status: AnyObject, type: string): string | undefined => status.conditions?.find((c: AnyObject) => c.type === type)?.status
  const containerId = (status: AnyObject, init: boolean): string => (init ? status.initContainerStatuses : status.containerStatuses)[0].containerID.replace(/^[^:]+:\/\//, '')

  it('initContainers[].restartPolicy Always (a sidecar): the app containers start once the sidecar has started and passed its startupProbe; it is not an init container that must complete; it is restarted when it exits', async () => {
    const ready = join(dir, 'sidecar-ready')
    const spec = {
      initContainers: [
        {name: 'proxy', image: 'busybox', restartPolicy: 'Always', command: ['sh', '-c', `sleep 0.5; touch ${ready}; exec sleep 600`], startupProbe: {exec: {command: ['test', '-e', ready]}, periodSeconds: 1, failureThreshold: 30}},
        {name: 'setup', image: 'busybox', command: ['sh', '-c', `test -e ${ready}`]},
      ],
      containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `test -e ${ready} && exec sleep 600`]}],
    }
    manager.upsertPod('api', pod('side', spec))
    const running = await until('side Running and Ready', () => {
      const s = statuses.get('side')
      return s?.phase === 'Running' && cond(s, 'Ready') === 'True' && s
    })
    assert.equal(cond(running, 'Initialized'), 'True')
    const [proxy, setup] = running.initContainerStatuses
    assert.ok(proxy.state.running, 'the sidecar keeps running')
    assert.equal(proxy.started, true)
    assert.equal(proxy.ready, true)
    assert.equal(setup.state.terminated?.exitCode, 0, 'the init container after the sidecar ran once it had started')
    assert.ok(running.containerStatuses[0].state.running, 'the app container runs (it saw the sidecar ready)')
    assert.equal(running.containerStatuses[0].restartCount, 0)

    // the sidecar exits: it is restarted; the app container is left alone
    const appId = containerId(running, false)
    await cri.stopContainer(containerId(running, true), 0)
    const restarted = await until('the sidecar restarted', () => {
      const s = statuses.get('side')
      return s?.initContainerStatuses?.[0]?.restartCount === 1 && s.initContainerStatuses[0].state.running && s
    })
    assert.equal(containerId(restarted, false), appId)
    assert.equal(restarted.containerStatuses[0].restartCount, 0)
  })

  it('a sidecar is stopped after the app containers: restartPolicy Never pod whose app container exits 0 is Succeeded, its sidecar stopped', async () => {
    manager.upsertPod('api', pod('job', {
      restartPolicy: 'Never',
      initContainers: [{name: 'logger', image: 'busybox', restartPolicy: 'Always', command: ['sleep', '600']}],
      containers: [{name: 'work', image: 'busybox', command: ['sh', '-c', 'sleep 0.3']}],
    }))
    const done = await until('job Succeeded', () => statuses.get('job')?.phase === 'Succeeded' && statuses.get('job'))
    assert.equal(done.containerStatuses[0].state.terminated.exitCode, 0)
    const logger = await until('the sidecar stopped', () => {
      const s = statuses.get('job')!.initContainerStatuses[0]
      return s.state.terminated && s
    })
    const work = done.containerStatuses[0].state.terminated
    assert.ok(Date.parse(logger.state.terminated.finishedAt) >= Date.parse(work.finishedAt), 'the sidecar stopped after the app container')
  })
})
