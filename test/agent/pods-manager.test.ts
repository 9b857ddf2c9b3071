// The agent's pod lifecycle against the built-in process runtime on a real UNIX socket, without a
// server: pods start, restart with back-off, run init containers in order, terminate within their
// grace period, report waiting reasons, honour the seccomp rules, and survive an agent restart.
import assert from 'node:assert/strict'
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'

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
  let harness: RuntimeHarness | undefined
  let dir: string
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
    harness = await startRuntimeHarness('orch-pods-', {imageRules: ['!docker.io/library/missing*']})
    ;({dir, cri} = harness)
    manager = newManager()
    await manager.start()
  })
  after(() => stopRuntimeHarness(harness, manager))

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

  it('the CrashLoopBackOff message names the pod as the kubelet\'s format.Pod: `back-off <delay> restarting failed container=<c> pod=<name>_<namespace>(<uid>)`', async () => {
    manager.upsertPod('api', pod('crashfmt', {containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'exit 1']}]}))
    const status = await waitForStatus('crashfmt', (s) => waitingReason(s) === 'CrashLoopBackOff')
    assert.match(status.containerStatuses[0].state.waiting.message, /^back-off \d+s restarting failed container=app pod=crashfmt_test\(uid-crashfmt\)$/)
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

describe('serializeImagePulls on the process runtime', {timeout: 120_000}, () => {
  let dir: string
  let runtime: ProcessRuntimeServer
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-pulls-'))
    runtime = await startProcessRuntime({rootDir: join(dir, 'runtime')})
  })
  after(async () => {
    await runtime?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  /** Runs three pods with three images on a fresh manager; returns the most pulls seen at once and the pulls' order. */
  async function pullConcurrency(name: string, serializeImagePulls: boolean | undefined): Promise<{most: number; order: string[]}> {
    const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
    let running = 0
    let most = 0
    const order: string[] = []
    const pullImage = cri.pullImage.bind(cri)
    // each pull takes 300 ms on the real runtime; we count how many overlap
    cri.pullImage = async (...args) => {
      running++
      most = Math.max(most, running)
      order.push(String(args[0]))
      try {
        await new Promise((resolve) => setTimeout(resolve, 300))
        return await pullImage(...args)
      } finally {
        running--
      }
    }
    const started = new Set<string>()
    let wake: (() => void) | undefined
    const manager = new PodManager({
      cri,
      rootDir: join(dir, name),
      nodeName: 'node-a',
      relistPeriodMs: 50,
      logger: quiet,
      ...(serializeImagePulls === undefined ? {} : {serializeImagePulls}),
      statusSink: (p) => {
        if (p.status?.phase === 'Running') started.add(p.metadata!.name)
        wake?.()
      },
    })
    await manager.start()
    try {
      const images = ['busybox:1.36', 'alpine:3.20', 'registry.example/tools:v1'].map((image) => `${image}-${name}`)
      images.forEach((image, index) =>
        manager.upsertPod('api', pod(`${name}-${index}`, {containers: [{name: 'app', image, imagePullPolicy: 'Always', command: ['sleep', '600']}]})),
      )
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`pods never all ran: ${[...started].join(', ')}`)), 30_000)
        wake = () => {
          if (started.size === images.length) {
            clearTimeout(timer)
            resolve()
          }
        }
        wake()
      })
      return {most, order}
    } finally {
      await manager.stop({stopPods: true})
      cri.close()
    }
  }

  it('serializeImagePulls (default true): image pulls go one at a time, through a queue shared by all pods', async () => {
    const {most, order} = await pullConcurrency('serial', undefined)
    assert.equal(order.length, 3)
    assert.equal(most, 1, 'never two pulls at once')
  })

  it('serializeImagePulls false: the pods pull their images in parallel', async () => {
    const {most, order} = await pullConcurrency('parallel', false)
    assert.equal(order.length, 3)
    assert.equal(most, 3, 'all three pulls at once')
  })
})

describe('agent local files: image pull records and pod resource state on the process runtime', {timeout: 120_000}, () => {
  let dir: string
  let runtime: ProcessRuntimeServer
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-state-files-'))
    runtime = await startProcessRuntime({rootDir: join(dir, 'runtime')})
  })
  after(async () => {
    await runtime?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  const sha = (text: string): string => `sha256-${createHash('sha256').update(text).digest('hex')}`
  const readJSON = (path: string): any => JSON.parse(readFileSync(path, 'utf8'))

  it('Image pull records (gate KubeletEnsureSecretPulledImages): `pulling` holds pulls in progress, `pulled` successful pulls with credential metadata; Pod resource state (gate InPlacePodVerticalScaling): allocated_pods_state and actuated_pods_state', async () => {
    const root = join(dir, 'on')
    const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
    const image = 'docker.io/library/busybox:1.36'
    const intent = join(root, 'image_manager', 'pulling', sha(image))
    let intentDuringPull: any
    const pullImage = cri.pullImage.bind(cri)
    cri.pullImage = async (...args) => {
      intentDuringPull = existsSync(intent) ? readJSON(intent) : undefined
      return pullImage(...args)
    }
    const running = new Set<string>()
    const terminated = new Set<string>()
    let wake: (() => void) | undefined
    // checked on every status change and every 20 ms
    const until = (check: () => boolean, what: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          clearInterval(poll)
          reject(new Error(`timed out waiting for ${what}`))
        }, 20_000)
        const poll = setInterval(() => wake?.(), 20)
        wake = () => {
          if (!check()) return
          clearTimeout(timer)
          clearInterval(poll)
          resolve()
        }
        wake()
      })
    const manager = new PodManager({
      cri,
      rootDir: root,
      nodeName: 'node-a',
      relistPeriodMs: 50,
      logger: quiet,
      imagePullRecords: true,
      podResourceState: true,
      statusSink: (p) => {
        if (p.status?.phase === 'Running') running.add(p.metadata!.name)
        wake?.()
      },
      onTerminated: (p) => {
        terminated.add(p.metadata!.name)
        wake?.()
      },
    })
    await manager.start()
    const resources = {requests: {memory: '64Mi', cpu: '100m'}, limits: {memory: '128Mi'}}
    const p = pod('stateful', {containers: [{name: 'app', image, imagePullPolicy: 'Always', command: ['sleep', '600'], resources}]})
    try {
      manager.upsertPod('api', p)
      await until(() => running.has('stateful'), 'Running')
      assert.deepEqual(intentDuringPull, {kind: 'ImagePullIntent', apiVersion: 'agent.config.orch.io/v1beta1', image}, 'the intent is written before the pull')
      assert.equal(existsSync(intent), false, 'the intent goes once the pull succeeded')
      const imageRef = (await cri.imageStatus(image)).image!.id
      const record = readJSON(join(root, 'image_manager', 'pulled', sha(imageRef)))
      assert.equal(record.kind, 'ImagePulledRecord')
      assert.equal(record.imageRef, imageRef)
      assert.deepEqual(record.credentialMapping, {'docker.io/library/busybox': {nodePodsAccessible: true}})
      assert.match(record.lastUpdatedTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.equal(statSync(join(root, 'image_manager', 'pulled', sha(imageRef))).mode & 0o777, 0o600)
      for (const name of ['allocated_pods_state', 'actuated_pods_state']) {
        const state = readJSON(join(root, name))
        assert.deepEqual(state.entries, {'uid-stateful': {containerResources: {app: resources}}}, name)
        assert.equal(typeof state.checksum, 'number')
      }
      // the pod goes: so do its entries
      manager.setPods('api', [])
      await until(() => terminated.has('stateful'), 'terminated')
      await until(() => readJSON(join(root, 'allocated_pods_state')).entries['uid-stateful'] === undefined, 'the allocation to go')
      assert.deepEqual(readJSON(join(root, 'actuated_pods_state')).entries, {})
    } finally {
      await manager.stop({stopPods: true})
      cri.close()
    }
  })

  it('with the gates off neither image_manager nor the pod resource state files are written', async () => {
    const root = join(dir, 'off')
    const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
    let started = false
    let wake: (() => void) | undefined
    const manager = new PodManager({cri, rootDir: root, nodeName: 'node-a', relistPeriodMs: 50, logger: quiet, statusSink: (p) => {
      if (p.status?.phase === 'Running') started = true
      wake?.()
    }})
    await manager.start()
    try {
      manager.upsertPod('api', pod('stateless', {containers: [{name: 'app', image: 'busybox:1.37', imagePullPolicy: 'Always', command: ['sleep', '600']}]}))
      await new Promise<void>((resolve) => {
        wake = () => started && resolve()
        wake()
      })
      for (const name of ['image_manager', 'allocated_pods_state', 'actuated_pods_state']) assert.equal(existsSync(join(root, name)), false, name)
    } finally {
      await manager.stop({stopPods: true})
      cri.close()
    }
  })
})
