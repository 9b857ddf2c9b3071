// The agent's pod lifecycle against the built-in process runtime on a real UNIX socket, without a
// server: pods start, restart with back-off, run init containers in order, terminate within their
// grace period, report waiting reasons, honour the seccomp rules, and survive an agent restart.
import assert from 'node:assert/strict'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'

const quiet = createLogger({write: () => undefined})

/** Polls a file (written by a container process) until it matches. */
async function waitForFile(path: string, pattern: RegExp, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(existsSync(path) && pattern.test(readFileSync(path, 'utf8')))) {
    if (Date.now() > deadline) throw new Error(`${path} never matched ${pattern}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function pod(name: string, spec: AnyObject, extra: AnyObject = {}): AnyObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace: 'test', uid: `uid-${name}`, ...extra},
    spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 5, ...spec},
  }
}

describe('pod lifecycle on the process runtime', {timeout: 120_000}, () => {
  let dir: string
  let runtime: ProcessRuntimeServer
  let cri: CriClient
  let manager: PodManager
  const statuses = new Map<string, AnyObject[]>()
  const terminated: string[] = []
  const waiters = new Set<() => void>()

  const newManager = (): PodManager =>
    new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 50,
      backoff: {initialMs: 300, maxMs: 1200},
      logger: quiet,
      statusSink: (p) => {
        statuses.set(p.metadata!.name, [...(statuses.get(p.metadata!.name) ?? []), p.status])
        for (const wake of waiters) wake()
      },
      onTerminated: (p) => {
        terminated.push(p.metadata!.name)
        for (const wake of waiters) wake()
      },
    })

  /** Resolves with the first status of the pod that satisfies check (looking at the latest first). */
  function waitForStatus(name: string, check: (status: AnyObject) => boolean, timeoutMs = 20_000): Promise<AnyObject> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(look)
        reject(new Error(`${name}: no matching status; last: ${JSON.stringify(statuses.get(name)?.at(-1))}`))
      }, timeoutMs)
      const look = (): void => {
        const latest = statuses.get(name)?.at(-1)
        if (latest && check(latest)) {
          clearTimeout(timer)
          waiters.delete(look)
          resolve(latest)
        }
      }
      waiters.add(look)
      look()
    })
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-pods-'))
    runtime = await startProcessRuntime({rootDir: join(dir, 'runtime'), imageRules: ['!docker.io/library/missing*']})
    cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
    manager = newManager()
    await manager.start()
  })
  after(async () => {
    await manager?.stop({stopPods: true})
    cri?.close()
    await runtime?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  const waitingReason = (status: AnyObject, index = 0): string | undefined => status.containerStatuses?.[index]?.state?.waiting?.reason
  const cond = (status: AnyObject, type: string): string | undefined => status.conditions?.find((c: AnyObject) => c.type === type)?.status

  it('a pod runs its container as a real process: Running, Ready and ContainersReady True, podIP, startTime, containerID', async () => {
    manager.upsertPod('api', pod('sleeper', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]}))
    const status = await waitForStatus('sleeper', (s) => s.phase === 'Running' && cond(s, 'Ready') === 'True')
    assert.equal(cond(status, 'ContainersReady'), 'True')
    assert.equal(cond(status, 'Initialized'), 'True')
    assert.equal(cond(status, 'PodScheduled'), 'True')
    assert.ok(status.podIP && status.startTime)
    assert.match(status.containerStatuses[0].containerID, /^orch-process:\/\//)
    assert.ok(status.containerStatuses[0].state.running.startedAt)
    assert.ok(manager.findContainer('test', 'sleeper', 'app'))
    assert.equal(manager.findContainer('test', 'sleeper', 'nope'), undefined)
    assert.equal(manager.synced(), true)
  })

  it('restartPolicy Always: an exiting container is restarted and restartCount grows; back-off shows CrashLoopBackOff', async () => {
    manager.upsertPod('api', pod('crasher', {containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'exit 3']}]}))
    const status = await waitForStatus('crasher', (s) => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 2)
    assert.equal(status.containerStatuses[0].lastState.terminated.exitCode, 3)
    assert.ok(statuses.get('crasher')!.some((s) => waitingReason(s) === 'CrashLoopBackOff'), 'CrashLoopBackOff while backing off')
  })

  it('restartPolicy Never: exit 3 ends the pod Failed; OnFailure with exit 0 ends it Succeeded', async () => {
    manager.upsertPod('api', pod('never', {restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'exit 3']}]}))
    manager.upsertPod('api', pod('onfailure', {restartPolicy: 'OnFailure', containers: [{name: 'app', image: 'busybox', command: ['true']}]}))
    const failed = await waitForStatus('never', (s) => s.phase === 'Failed')
    assert.equal(failed.containerStatuses[0].state.terminated.exitCode, 3)
    assert.equal(failed.containerStatuses[0].restartCount, 0)
    const done = await waitForStatus('onfailure', (s) => s.phase === 'Succeeded')
    assert.equal(done.containerStatuses[0].state.terminated.reason, 'Completed')
    assert.equal(cond(done, 'Ready'), 'False')
  })

  it('init containers run in order, each to completion, before the app container', async () => {
    const file = join(dir, 'order.txt')
    manager.upsertPod(
      'api',
      pod('inits', {
        initContainers: [
          {name: 'first', image: 'busybox', command: ['sh', '-c', `sleep 0.2; echo first >> ${file}`]},
          {name: 'second', image: 'busybox', command: ['sh', '-c', `echo second >> ${file}`]},
        ],
        containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `echo app >> ${file}; exec sleep 600`]}],
      }),
    )
    const status = await waitForStatus('inits', (s) => s.phase === 'Running' && cond(s, 'Ready') === 'True')
    await waitForFile(file, /app/)
    assert.equal(readFileSync(file, 'utf8'), 'first\nsecond\napp\n')
    assert.deepEqual(status.initContainerStatuses.map((s: AnyObject) => s.state.terminated?.reason), ['Completed', 'Completed'])
    assert.ok(statuses.get('inits')!.some((s) => waitingReason(s) === 'PodInitializing'), 'PodInitializing while init containers run')
  })

  it('a failing init container with restartPolicy Never fails the pod; the app container never starts', async () => {
    manager.upsertPod('api', pod('badinit', {restartPolicy: 'Never', initContainers: [{name: 'init', image: 'busybox', command: ['false']}], containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]}))
    const status = await waitForStatus('badinit', (s) => s.phase === 'Failed')
    assert.equal(status.initContainerStatuses[0].state.terminated.exitCode, 1)
    assert.equal(status.containerStatuses[0].state.waiting?.reason, 'PodInitializing')
  })

  it('deletion stops the containers within the grace period (a TERM-ignoring process is killed after it) and reports the pod terminated', async () => {
    // the trap is set once the marker exists: a TERM before that (Running is reported at spawn) would end it at once
    const marker = join(dir, 'stubborn-trapped')
    const containers = [{name: 'app', image: 'busybox', command: ['sh', '-c', `trap "" TERM; touch ${marker}; exec sleep 8081`]}]
    manager.upsertPod('api', pod('stubborn', {terminationGracePeriodSeconds: 1, containers}))
    await waitForStatus('stubborn', (s) => s.phase === 'Running')
    await waitForFile(marker, /^$/)
    const started = Date.now()
    manager.upsertPod('api', pod('stubborn', {terminationGracePeriodSeconds: 1, containers}, {deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 1}))
    await new Promise<void>((resolve) => {
      const look = (): void => {
        if (terminated.includes('stubborn')) {
          waiters.delete(look)
          resolve()
        }
      }
      waiters.add(look)
      look()
    })
    const took = Date.now() - started
    assert.ok(took >= 900 && took < 5000, `killed after the 1 s grace period: ${took} ms`)
    const last = statuses.get('stubborn')!.at(-1)!
    assert.ok(last.containerStatuses[0].state.terminated, JSON.stringify(last.containerStatuses[0]))
  })

  it('an image the runtime refuses reports ErrImagePull, then ImagePullBackOff', async () => {
    manager.upsertPod('api', pod('noimage', {containers: [{name: 'app', image: 'missing:1.0', command: ['sleep', '1']}]}))
    await waitForStatus('noimage', (s) => waitingReason(s) === 'ErrImagePull')
    await waitForStatus('noimage', (s) => waitingReason(s) === 'ImagePullBackOff')
  })

  it('If a `Localhost` profile is absent at container creation, creation fails with `CreateContainerError`', async () => {
    manager.upsertPod('api', pod('seccomp-missing', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600'], securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: 'nope.json'}}}]}))
    const status = await waitForStatus('seccomp-missing', (s) => waitingReason(s) === 'CreateContainerError')
    assert.match(status.containerStatuses[0].state.waiting.message, /nope\.json/)
  })

  it("A container's own seccomp setting takes precedence over the pod's; a privileged container always runs Unconfined", async () => {
    mkdirSync(join(dir, 'agent', 'seccomp'), {recursive: true})
    writeFileSync(join(dir, 'agent', 'seccomp', 'audit.json'), JSON.stringify({defaultAction: 'SCMP_ACT_LOG'}))
    manager.upsertPod(
      'api',
      pod('seccomp', {
        securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: 'absent.json'}},
        containers: [
          {name: 'own', image: 'busybox', command: ['sleep', '600'], securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: 'audit.json'}}},
          {name: 'privileged', image: 'busybox', command: ['sleep', '600'], securityContext: {privileged: true}},
        ],
      }),
    )
    await waitForStatus('seccomp', (s) => s.phase === 'Running' && cond(s, 'Ready') === 'True')
    const info = async (container: string): Promise<string> => {
      const id = manager.findContainer('test', 'seccomp', container)!.containerId
      return JSON.stringify((await cri.containerStatus(id, true)).info)
    }
    assert.match(await info('own'), /Localhost/)
    assert.match(await info('own'), /audit\.json/)
    assert.match(await info('privileged'), /Unconfined/)
  })

  it('a new pod manager on the same runtime adopts running pods without restarting them (agent restart)', async () => {
    const before = manager.findContainer('test', 'sleeper', 'app')!.containerId
    const {status} = await cri.containerStatus(before, true)
    await manager.stop()
    manager = newManager()
    await manager.start()
    manager.upsertPod('api', pod('sleeper', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]}))
    statuses.delete('sleeper')
    const after = await waitForStatus('sleeper', (s) => s.phase === 'Running')
    assert.equal(after.containerStatuses[0].containerID, `orch-process://${before}`)
    assert.equal(after.containerStatuses[0].restartCount, 0)
    assert.equal(manager.findContainer('test', 'sleeper', 'app')!.containerId, before)
    assert.ok(status?.startedAt)
  })

  it('subscribers see each local status change (the pod-info watch)', async () => {
    const seen: AnyObject[] = []
    const unsubscribe = manager.subscribe((p) => seen.push(p))
    manager.upsertPod('api', pod('watched', {containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'sleep 0.2; exit 1']}]}))
    await waitForStatus('watched', (s) => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 1)
    unsubscribe()
    assert.ok(seen.some((p) => p.metadata!.name === 'watched' && p.status.containerStatuses?.[0]?.restartCount >= 1))
    assert.ok(manager.pods().some((p) => p.metadata!.name === 'watched'))
  })

  it('a pod removed from its source is stopped and forgotten', async () => {
    const id = manager.findContainer('test', 'sleeper', 'app')?.containerId
    assert.ok(id)
    manager.setPods('api', manager.pods().filter((p) => p.metadata!.name !== 'sleeper'))
    await new Promise<void>((resolve) => {
      const look = (): void => {
        if (terminated.includes('sleeper')) {
          waiters.delete(look)
          resolve()
        }
      }
      waiters.add(look)
      look()
    })
    await assert.rejects(cri.containerStatus(id!), /not found/i)
  })
})
