// The agent's host-local parts without a server: lock file, init-system notifications over a real
// UNIX datagram socket, static pod manifests, host readings, lease backoff, certificate renewal time.
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {hostCapacity, hostIdentity, hostPressure, osImage, readMeminfo} from '../../src/agent/host.js'
import {LeaseRenewer} from '../../src/agent/lease.js'
import {acquireLock, LockHeldError} from '../../src/agent/lock.js'
import {Agent, syncLoopMaxAgeMs} from '../../src/agent/agent.js'
import {loadAgentConfiguration} from '../../src/agent/config/load.js'
import {CriClient} from '../../src/agent/cri/client.js'
import {startNotifier, watchdogUsec} from '../../src/agent/notify.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {startProcessRuntime} from '../../src/agent/runtime/process/server.js'
import {settingsFrom} from '../../src/cli/agent.js'
import {CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, mirrorPodOf, podsFromManifest, StaticPodSource} from '../../src/agent/static-pods.js'
import {renewalTime} from '../../src/agent/certificates.js'
import {createLogger} from '../../src/machinery/log.js'
import {runOrch} from '../support/server.js'

const require = createRequire(import.meta.url)
const unixDgram = require('unix-dgram') as {
  createSocket(type: 'unix_dgram', listener?: (message: Buffer) => void): {bind(path: string): void; on(event: string, fn: (...args: unknown[]) => void): void; close(): void}
}

const dir = mkdtempSync(join(tmpdir(), 'orch-agent-local-'))
after(() => rmSync(dir, {recursive: true, force: true}))
const quiet = createLogger({write: () => undefined})

describe('agent lock file', () => {
  it('--lock-file: a second agent on the same lock refuses to start', async () => {
    const path = join(dir, 'run', 'agent.lock')
    const lock = acquireLock(path)
    assert.equal(readFileSync(path, 'utf8').trim(), String(process.pid))
    // another live process holding the lock: a child that is still running
    lock.release()
    const child = spawn(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(path)}, String(process.pid)); setTimeout(() => {}, 60000)`])
    try {
      await new Promise<void>((resolve) => {
        const check = (): void => {
          try {
            if (readFileSync(path, 'utf8').trim() === String(child.pid)) return resolve()
          } catch {
            // not written yet
          }
          setImmediate(check)
        }
        check()
      })
      assert.throws(() => acquireLock(path), (error: Error) => error instanceof LockHeldError && error.message.includes(String(child.pid)))
    } finally {
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    // the owner is gone: the stale lock is taken over
    const again = acquireLock(path)
    again.release()
  })

  it('two agents with different lock paths do not detect each other', () => {
    const a = acquireLock(join(dir, 'a.lock'))
    const b = acquireLock(join(dir, 'b.lock'))
    a.release()
    b.release()
  })
})

describe('init-system watchdog integration', () => {
  it('sends READY=1 and WATCHDOG=1 every WatchdogSec / 2 as datagrams on NOTIFY_SOCKET', async () => {
    const socketPath = join(dir, 'notify.sock')
    const received: string[] = []
    let wake: (() => void) | undefined
    const server = unixDgram.createSocket('unix_dgram', (message: Buffer) => {
      received.push(message.toString())
      wake?.()
    })
    server.bind(socketPath)
    const notifier = startNotifier({NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '200000'}, quiet, {watchdog: true})
    try {
      assert.equal(notifier?.watchdogIntervalMs, 100)
      await notifier!.ready()
      const started = Date.now()
      await new Promise<void>((resolve) => {
        wake = () => {
          if (received.filter((m) => m === 'WATCHDOG=1').length >= 3 && received.includes('READY=1')) resolve()
        }
        wake()
      })
      // three keep-alives (one at start, then every 100 ms) take about 200 ms
      assert.ok(Date.now() - started >= 150, `keep-alives came too fast: ${Date.now() - started} ms`)
    } finally {
      notifier?.close()
      server.close()
    }
  })

  it('Disabled: WatchdogSec omitted or 0 sends no keep-alives; no NOTIFY_SOCKET, no notifier', () => {
    assert.equal(watchdogUsec({}), undefined)
    assert.equal(watchdogUsec({WATCHDOG_USEC: '0'}), undefined)
    assert.equal(watchdogUsec({WATCHDOG_USEC: '15000000', WATCHDOG_PID: String(process.pid + 1)}), undefined)
    assert.equal(watchdogUsec({WATCHDOG_USEC: '15000000'}), 15_000_000)
    assert.equal(startNotifier({}, quiet, {watchdog: true}), undefined)
  })

  /** A datagram socket of our own standing in for the init system: what it received, and waits on it. */
  function initSystem(name: string): {path: string; received: string[]; waitFor: (check: (received: string[]) => boolean, timeoutMs?: number) => Promise<void>; close: () => void} {
    const path = join(dir, name)
    const received: string[] = []
    const waiters = new Set<() => void>()
    const server = unixDgram.createSocket('unix_dgram', (message: Buffer) => {
      received.push(message.toString())
      for (const wake of waiters) wake()
    })
    server.bind(path)
    const waitFor = (check: (received: string[]) => boolean, timeoutMs = 10_000): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(look)
          reject(new Error(`never seen; received: ${JSON.stringify(received)}`))
        }, timeoutMs)
        const look = (): void => {
          if (!check(received)) return
          clearTimeout(timer)
          waiters.delete(look)
          resolve()
        }
        waiters.add(look)
        look()
      })
    return {path, received, waitFor, close: () => server.close()}
  }
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
  const keepAlives = (received: string[]): number => received.filter((m) => m === 'WATCHDOG=1').length

  it('Feature stage: beta (release 1.32) — with gate SystemdWatchdog off no `WATCHDOG=1` is sent although WatchdogSec is set; READY=1 still is', async () => {
    const init = initSystem('notify-gate-off.sock')
    const notifier = startNotifier({NOTIFY_SOCKET: init.path, WATCHDOG_USEC: '200000'}, quiet, {watchdog: false})
    try {
      assert.equal(notifier?.watchdogIntervalMs, undefined)
      await notifier!.ready()
      await init.waitFor((r) => r.includes('READY=1'))
      await sleep(450) // more than four keep-alive periods
      assert.equal(keepAlives(init.received), 0, `keep-alives sent with the gate off: ${JSON.stringify(init.received)}`)
    } finally {
      notifier?.close()
      init.close()
    }
  })

  it('Keep-alive: the agent calls sd_notify() with `WATCHDOG=1` every `WatchdogSec / 2` — only in rounds where its health checks pass', async () => {
    const init = initSystem('notify-health.sock')
    let problem: string | undefined = 'sync loop took longer than expected'
    const notifier = startNotifier({NOTIFY_SOCKET: init.path, WATCHDOG_USEC: '200000'}, quiet, {watchdog: true, healthCheck: () => problem})
    try {
      await sleep(450)
      assert.equal(keepAlives(init.received), 0, 'no keep-alive while unhealthy')
      problem = undefined
      await init.waitFor((r) => keepAlives(r) >= 2)
      // a check that does not answer within a quarter of the period counts as a failure
      const before = keepAlives(init.received)
      notifier!.close()
      const hanging = startNotifier({NOTIFY_SOCKET: init.path, WATCHDOG_USEC: '200000'}, quiet, {watchdog: true, healthCheck: () => new Promise<undefined>(() => undefined)})
      await sleep(450)
      hanging?.close()
      assert.equal(keepAlives(init.received), before, 'no keep-alive while the health check hangs')
    } finally {
      notifier?.close()
      init.close()
    }
  })

  it('Keep-alive and Timeout: a stuck sync loop (no relist round for max(2 × syncFrequency, 5 min)) stops the keep-alives; they resume when it moves again', async () => {
    const runtime = await startProcessRuntime({rootDir: join(dir, 'watchdog-runtime')})
    const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
    // the runtime stalls on demand: a relist then never finishes until released
    let stalled: (() => void)[] | undefined
    const listPodSandbox = cri.listPodSandbox.bind(cri)
    cri.listPodSandbox = async (...args) => {
      if (stalled) await new Promise<void>((resolve) => stalled!.push(resolve))
      return listPodSandbox(...args)
    }
    let clock = Date.now()
    const manager = new PodManager({cri, rootDir: join(dir, 'watchdog-agent'), nodeName: 'n', relistPeriodMs: 20, logger: quiet, now: () => new Date(clock)})
    const maxAge = syncLoopMaxAgeMs(60_000)
    assert.equal(maxAge, 5 * 60_000, 'the kubelet: at least 5 minutes')
    assert.equal(syncLoopMaxAgeMs(10 * 60_000), 20 * 60_000, 'the kubelet: twice syncFrequency when longer')
    const init = initSystem('notify-syncloop.sock')
    const notifier = startNotifier({NOTIFY_SOCKET: init.path, WATCHDOG_USEC: '200000'}, quiet, {watchdog: true, healthCheck: () => manager.syncLoopProblem(maxAge)})
    try {
      await manager.start()
      await init.waitFor((r) => keepAlives(r) >= 1)
      // time passes but the loop keeps coming round: healthy
      clock += 6 * 60_000
      await sleep(100)
      assert.equal(manager.syncLoopProblem(maxAge), undefined)
      // the loop gets stuck in a runtime call; 6 minutes later the agent is unhealthy: no keep-alives
      stalled = []
      await sleep(100)
      clock += 6 * 60_000
      assert.match(manager.syncLoopProblem(maxAge) ?? '', /sync loop took longer than expected/)
      await sleep(150)
      const count = keepAlives(init.received)
      await sleep(450)
      assert.equal(keepAlives(init.received), count, 'no keep-alive while the sync loop is stuck')
      // released: the loop comes round again and the keep-alives resume
      const waiting = stalled
      stalled = undefined
      for (const release of waiting) release()
      await init.waitFor((r) => keepAlives(r) >= count + 2)
      assert.equal(manager.syncLoopProblem(maxAge), undefined)
    } finally {
      notifier?.close()
      init.close()
      if (stalled) for (const release of stalled.splice(0)) release()
      stalled = undefined
      await manager.stop()
      cri.close()
      await runtime.close()
    }
  })

  it('the agent wires it: gate SystemdWatchdog on (default) sends READY=1 and keep-alives; off, READY=1 only', async () => {
    const flags = {'root-dir': join(dir, 'wd-root'), 'lock-file': join(dir, 'wd-agent.lock'), 'relist-period': '50ms', 'print-config': false, v: 0, 'hostname-override': 'n'}
    const base = {...settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0'), registerNode: false, enableServer: false, staticPodPath: undefined, failSwapOn: false}
    for (const gate of [true, false]) {
      const init = initSystem(`notify-agent-${gate}.sock`)
      const agent = new Agent({...base, featureGates: {SystemdWatchdog: gate}}, quiet, {NOTIFY_SOCKET: init.path, WATCHDOG_USEC: '200000'})
      try {
        await agent.start()
        await init.waitFor((r) => r.includes('READY=1'))
        if (gate) await init.waitFor((r) => keepAlives(r) >= 2)
        else {
          await sleep(450)
          assert.equal(keepAlives(init.received), 0, `gate off: ${JSON.stringify(init.received)}`)
        }
        assert.equal(agent.healthProblem(), undefined)
      } finally {
        await agent.stop()
        init.close()
      }
    }
  })
})

describe('agent local files and sockets', () => {
  const startAgent = async (name: string, featureGates: Record<string, boolean>): Promise<string> => {
    const flags = {'root-dir': join(dir, name), 'lock-file': join(dir, `${name}.lock`), 'relist-period': '1s', 'print-config': false, v: 0, 'hostname-override': 'n'}
    const settings = {...settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0'), featureGates, registerNode: false, enableServer: false, staticPodPath: undefined, failSwapOn: false}
    const agent = new Agent(settings, quiet, {})
    await agent.start()
    await agent.stop()
    return settings.rootDir
  }
  const files = ['image_manager/pulling', 'image_manager/pulled', 'allocated_pods_state', 'actuated_pods_state']

  it('Image pull records (beta, default enabled) and Pod resource state (gate `InPlacePodVerticalScaling`; stable, default enabled) live under {agent_root_dir}', async () => {
    const root = await startAgent('files-on', {})
    for (const file of files) assert.equal(existsSync(join(root, file)), true, file)
  })

  it('with gates KubeletEnsureSecretPulledImages and InPlacePodVerticalScaling off the agent writes neither', async () => {
    const root = await startAgent('files-off', {KubeletEnsureSecretPulledImages: false, InPlacePodVerticalScaling: false})
    for (const file of [...files, 'image_manager']) assert.equal(existsSync(join(root, file)), false, file)
    assert.equal(existsSync(join(root, 'pods')), true)
  })
})

describe('agent credentials', () => {
  it('a --kubeconfig that does not exist, without --bootstrap-kubeconfig, stops the agent with one line naming the file (not standalone mode), exit 1', async () => {
    const missing = join(dir, 'no-such.kubeconfig')
    const flags = {'root-dir': join(dir, 'kc-missing'), 'lock-file': join(dir, 'kc-missing.lock'), 'relist-period': '1s', 'print-config': false, v: 0, 'hostname-override': 'n', kubeconfig: missing}
    const settings = {...settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0'), enableServer: false, staticPodPath: undefined, failSwapOn: false}
    const agent = new Agent(settings, quiet, {})
    await assert.rejects(agent.start(), {message: `unable to load kubeconfig: stat ${missing}: no such file or directory`})
    assert.doesNotThrow(() => acquireLock(join(dir, 'kc-missing.lock')).release(), 'the failed start released its lock')
    const result = await runOrch(['agent', '--kubeconfig', missing, '--root-dir', join(dir, 'kc-missing-cli'), '--lock-file', join(dir, 'kc-missing-cli.lock'), '--no-fail-swap-on', '--port', '0'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, `error: agent cannot start: unable to load kubeconfig: stat ${missing}: no such file or directory\n`)
    assert.doesNotMatch(result.stderr + result.stdout, /standalone/)
  })
})

describe('static pod manifests', () => {
  const manifest = (name: string): string => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    command: [sleep, "600"]\n`

  it('a static pod is named <name>-<node>, bound to the node, in default, with a UID hashed from its manifest', () => {
    const [pod] = podsFromManifest('/m/web.yaml', manifest('web'), 'node-a')
    assert.equal(pod.metadata!.name, 'web-node-a')
    assert.equal(pod.metadata!.namespace, 'default')
    assert.equal(pod.spec.nodeName, 'node-a')
    assert.match(pod.metadata!.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    assert.equal(pod.metadata!.annotations[CONFIG_HASH_ANNOTATION], pod.metadata!.uid)
    const [same] = podsFromManifest('/m/web.yaml', manifest('web'), 'node-a')
    assert.equal(same.metadata!.uid, pod.metadata!.uid)
    const [edited] = podsFromManifest('/m/web.yaml', manifest('web').replace('600', '700'), 'node-a')
    assert.notEqual(edited.metadata!.uid, pod.metadata!.uid)
    const mirror = mirrorPodOf(pod, {name: 'node-a', uid: 'n-1'})
    assert.equal(mirror.metadata!.annotations[CONFIG_MIRROR_ANNOTATION], pod.metadata!.uid)
    assert.equal(mirror.metadata!.ownerReferences[0].kind, 'Node')
  })

  it('A malformed manifest in staticPodPath is logged and skipped, others still run', () => {
    const manifests = join(dir, 'manifests')
    mkdirSync(manifests)
    writeFileSync(join(manifests, 'a-good.yaml'), manifest('good'))
    writeFileSync(join(manifests, 'b-broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: [\n')
    writeFileSync(join(manifests, 'c-nocontainers.json'), JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'x'}, spec: {}}))
    writeFileSync(join(manifests, 'd-good.json'), JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'other', namespace: 'kube'}, spec: {containers: [{name: 'c', image: 'i'}]}}))
    const warnings: string[] = []
    const logger = createLogger({write: (line: string) => warnings.push(line)})
    let seen: string[] = []
    const source = new StaticPodSource({path: manifests, nodeName: 'n', checkIntervalMs: 60_000, logger, onPods: (pods) => (seen = pods.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`))})
    source.scan()
    assert.deepEqual(seen, ['default/good-n', 'kube/other-n'])
    assert.equal(warnings.filter((w) => w.includes('b-broken.yaml')).length, 1)
    assert.ok(warnings.some((w) => w.includes('c-nocontainers.json') && w.includes('spec.containers')))
    source.scan()
    assert.equal(warnings.filter((w) => w.includes('b-broken.yaml')).length, 1, 'the same problem is logged once')
  })
})

describe('host readings', () => {
  it('nodeInfo and capacity come from the host', () => {
    const identity = hostIdentity()
    assert.ok(identity.kernelVersion.length > 0)
    assert.equal(identity.operatingSystem, 'linux')
    assert.ok(identity.bootID.length > 0)
    assert.notEqual(osImage('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'), 'Unknown')
    assert.equal(osImage('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'), 'Debian GNU/Linux 12 (bookworm)')
    const capacity = hostCapacity(dir)
    assert.ok(capacity.cpu >= 1 && capacity.memoryBytes > 0 && capacity.diskBytes > 0)
    assert.equal(readMeminfo('MemTotal:       16384 kB\nSwapTotal:           0 kB\n').MemTotal, 16384 * 1024)
    const pressure = hostPressure(dir)
    for (const reading of [pressure.memory, pressure.disk, pressure.pid]) assert.match(reading.status, /^(True|False)$/)
  })
})

describe('heartbeat and certificate timing', () => {
  it('Lease heartbeat: on failure exponential backoff from 200 ms up to 7 seconds', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map((n) => LeaseRenewer.backoffMs(n)), [200, 400, 800, 1600, 3200, 6400, 7000, 7000])
  })

  it('client certificates are renewed between 70% and 90% of their life', () => {
    const start = new Date('2026-01-01T00:00:00Z')
    const end = new Date('2026-01-11T00:00:00Z')
    assert.equal(renewalTime(start, end, 0).toISOString(), '2026-01-08T00:00:00.000Z')
    assert.equal(renewalTime(start, end, 1).toISOString(), '2026-01-10T00:00:00.000Z')
  })
})
