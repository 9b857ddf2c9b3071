// The agent's host-local parts without a server: lock file, init-system notifications over a real
// UNIX datagram socket, static pod manifests, host readings, lease backoff, certificate renewal time.
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {hostCapacity, hostIdentity, hostPressure, osImage, readMeminfo} from '../../src/agent/host.js'
import {LeaseRenewer} from '../../src/agent/lease.js'
import {acquireLock, LockHeldError} from '../../src/agent/lock.js'
import {startNotifier, watchdogUsec} from '../../src/agent/notify.js'
import {CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, mirrorPodOf, podsFromManifest, StaticPodSource} from '../../src/agent/static-pods.js'
import {renewalTime} from '../../src/agent/certificates.js'
import {createLogger} from '../../src/machinery/log.js'

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
    const notifier = startNotifier({NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '200000'}, quiet)
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
    assert.equal(startNotifier({}, quiet), undefined)
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
