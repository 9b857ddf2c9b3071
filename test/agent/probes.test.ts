// Container probes (src/agent/pods/prober.ts) as the kubelet runs them, on the built-in process runtime
// without a server: readiness drives `ready` and the Ready condition, a failing liveness probe kills
// and restarts the container with the Unhealthy and Killing events, a startup probe holds `started`
// and keeps liveness off, httpGet and tcpSocket probes against a server a container runs.
import assert from 'node:assert/strict'
import {unlinkSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {AgentEvents} from '../../src/agent/events.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import type {EventType, ObjectReference} from '../../src/client/events.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'

const quiet = createLogger({write: () => undefined})

interface Recorded {
  pod: string
  fieldPath?: string
  type: EventType
  reason: string
  message: string
}

/** Keeps the events instead of writing them. */
class RecordingEvents extends AgentEvents {
  readonly recorded: Recorded[] = []
  constructor(private readonly onEvent: () => void) {
    super({client: () => undefined, nodeName: 'node-a', logger: quiet})
  }
  override event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    this.recorded.push({pod: ref.name!, fieldPath: ref.fieldPath, type, reason, message})
    this.onEvent()
  }
}

function pod(name: string, spec: AnyObject): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'test', uid: `uid-${name}`}, spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 5, ...spec}}
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, resolve))
  const port = (server.address() as {port: number}).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('container probes on the process runtime', {timeout: 180_000}, () => {
  let harness: RuntimeHarness | undefined
  let dir: string
  let cri: CriClient
  let manager: PodManager
  let events: RecordingEvents
  const statuses = new Map<string, AnyObject[]>()
  const waiters = new Set<() => void>()
  const notify = (): void => {
    for (const wake of waiters) wake()
  }

  /** Resolves once check passes (looked at on each status and event), or rejects after timeoutMs. */
  function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(look)
        reject(new Error(`${what}: not seen in ${timeoutMs} ms`))
      }, timeoutMs)
      const look = (): void => {
        const value = check()
        if (value) {
          clearTimeout(timer)
          waiters.delete(look)
          resolve(value)
        }
      }
      waiters.add(look)
      look()
    })
  }
  const latest = (name: string): AnyObject | undefined => statuses.get(name)?.at(-1)
  const waitForStatus = (name: string, check: (s: AnyObject) => boolean, timeoutMs?: number): Promise<AnyObject> =>
    waitFor(`${name} status; last: ${JSON.stringify(latest(name)?.containerStatuses)}`, () => {
      const s = latest(name)
      return s && check(s) ? s : undefined
    }, timeoutMs)
  const waitForEvent = (name: string, reason: string, message: RegExp, timeoutMs?: number): Promise<Recorded> =>
    waitFor(`${name} event ${reason} ${message}`, () => events.recorded.find((e) => e.pod === name && e.reason === reason && message.test(e.message)), timeoutMs)
  const cond = (status: AnyObject, type: string): string | undefined => status.conditions?.find((c: AnyObject) => c.type === type)?.status
  const container = (status: AnyObject, name: string): AnyObject => status.containerStatuses.find((c: AnyObject) => c.name === name)

  before(async () => {
    harness = await startRuntimeHarness('orch-probes-')
    ;({dir, cri} = harness)
    events = new RecordingEvents(notify)
    manager = new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 100,
      backoff: {initialMs: 300, maxMs: 1200},
      logger: quiet,
      events,
      statusSink: (p) => {
        statuses.set(p.metadata!.name, [...(statuses.get(p.metadata!.name) ?? []), p.status])
        notify()
      },
    })
    await manager.start()
  })
  after(() => stopRuntimeHarness(harness, manager))

  it('a readiness exec probe failing then succeeding flips containerStatuses[].ready and the Ready/ContainersReady conditions, and back', async () => {
    const flag = join(dir, 'ready-flag')
    const readinessProbe = {exec: {command: ['test', '-f', flag]}, periodSeconds: 1, failureThreshold: 1}
    manager.upsertPod('api', pod('readiness', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600'], readinessProbe}]}))
    const running = await waitForStatus('readiness', (s) => s.phase === 'Running')
    assert.equal(container(running, 'app').ready, false, 'not ready before the first success')
    assert.equal(container(running, 'app').started, true, 'started: no startup probe')
    assert.equal(cond(running, 'Ready'), 'False')
    assert.equal(running.conditions.find((c: AnyObject) => c.type === 'Ready').message, 'containers with unready status: [app]')
    const failed = await waitForEvent('readiness', 'Unhealthy', /^Readiness probe failed: /)
    assert.equal(failed.type, 'Warning')
    assert.equal(failed.fieldPath, 'spec.containers{app}')
    writeFileSync(flag, '')
    const ready = await waitForStatus('readiness', (s) => container(s, 'app').ready === true)
    assert.equal(cond(ready, 'Ready'), 'True')
    assert.equal(cond(ready, 'ContainersReady'), 'True')
    const writes = statuses.get('readiness')!.length
    unlinkSync(flag)
    const unready = await waitForStatus('readiness', (s) => container(s, 'app').ready === false)
    assert.equal(cond(unready, 'Ready'), 'False')
    assert.equal(container(unready, 'app').restartCount, 0, 'readiness never restarts')
    // statuses are written when a result flips, not on each probe
    await new Promise((resolve) => setTimeout(resolve, 2500))
    assert.ok(statuses.get('readiness')!.length <= writes + 2, `${statuses.get('readiness')!.length - writes} writes after the flip`)
  })

  it('a failing liveness probe kills the container (Unhealthy, then Killing "Container app failed liveness probe, will be restarted") and it is restarted: restartCount 1', async () => {
    const livenessProbe = {exec: {command: ['sh', '-c', 'echo not alive; exit 1']}, periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 1}
    manager.upsertPod('api', pod('liveness', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600'], livenessProbe}]}))
    const restarted = await waitForStatus('liveness', (s) => container(s, 'app').restartCount >= 1 && Boolean(container(s, 'app').state.running))
    assert.ok(container(restarted, 'app').lastState.terminated, 'the killed instance is the last state')
    const unhealthy = events.recorded.filter((e) => e.pod === 'liveness' && e.reason === 'Unhealthy')
    assert.ok(unhealthy.length >= 2, 'failureThreshold failures before the kill')
    assert.equal(unhealthy[0].message, 'Liveness probe failed: not alive\n')
    assert.equal(unhealthy[0].type, 'Warning')
    const killing = events.recorded.find((e) => e.pod === 'liveness' && e.reason === 'Killing')
    assert.equal(killing?.message, 'Container app failed liveness probe, will be restarted')
    assert.equal(killing?.type, 'Normal')
    assert.equal(killing?.fieldPath, 'spec.containers{app}')
    // the kill came after the failures
    assert.ok(events.recorded.indexOf(killing!) > events.recorded.indexOf(unhealthy[1]))
  })

  it('a startup probe holds started=false and ready=false and keeps liveness off until it succeeds; then liveness runs', async () => {
    const flag = join(dir, 'started-flag')
    const startupProbe = {exec: {command: ['test', '-f', flag]}, periodSeconds: 1, failureThreshold: 60}
    const livenessProbe = {exec: {command: ['false']}, periodSeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 1}
    manager.upsertPod('api', pod('startup', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600'], startupProbe, livenessProbe}]}))
    await waitForEvent('startup', 'Unhealthy', /^Startup probe failed: /)
    await waitFor('three startup failures', () => events.recorded.filter((e) => e.pod === 'startup' && /^Startup probe failed/.test(e.message)).length >= 3)
    const held = latest('startup')!
    assert.equal(held.phase, 'Running')
    assert.equal(container(held, 'app').started, false)
    assert.equal(container(held, 'app').ready, false)
    assert.equal(container(held, 'app').restartCount, 0)
    assert.equal(events.recorded.filter((e) => e.pod === 'startup' && /^Liveness/.test(e.message)).length, 0, 'no liveness probe before the start')
    writeFileSync(flag, '')
    const started = await waitForStatus('startup', (s) => container(s, 'app').started === true)
    assert.equal(container(started, 'app').ready, true, 'no readiness probe: ready once started')
    await waitForEvent('startup', 'Killing', /^Container app failed liveness probe, will be restarted$/)
    // the new instance starts over: started=false until its startup probe succeeds
    await waitForStatus('startup', (s) => container(s, 'app').restartCount >= 1)
    manager.deletePod('api', 'uid-startup')
  })

  it('httpGet probes (port by name, path) against a node HTTP server the container runs: 200 ready, 500 "HTTP probe failed with statuscode: 500"; tcpSocket: an open port ready, a closed one "connection refused"', async () => {
    const port = await freePort()
    const closed = await freePort()
    const script = `require('http').createServer((q, s) => { s.statusCode = q.url === '/healthz' && q.headers['user-agent'].startsWith('orch-probe/') ? 200 : 500; s.end('ok') }).listen(${port})`
    const probe = (handler: AnyObject): AnyObject => ({...handler, periodSeconds: 1, failureThreshold: 1})
    manager.upsertPod(
      'api',
      pod('http', {
        containers: [
          {name: 'server', image: 'busybox', command: [process.execPath, '-e', script], ports: [{name: 'http', containerPort: port}], readinessProbe: probe({httpGet: {path: '/healthz', port: 'http'}})},
          {name: 'bad-path', image: 'busybox', command: ['sleep', '600'], readinessProbe: probe({httpGet: {path: '/nope', port}})},
          {name: 'tcp-open', image: 'busybox', command: ['sleep', '600'], readinessProbe: probe({tcpSocket: {port}})},
          {name: 'tcp-closed', image: 'busybox', command: ['sleep', '600'], readinessProbe: probe({tcpSocket: {port: closed}})},
        ],
      }),
    )
    const status = await waitForStatus('http', (s) => container(s, 'server')?.ready === true && container(s, 'tcp-open')?.ready === true)
    assert.equal(container(status, 'bad-path').ready, false)
    assert.equal(container(status, 'tcp-closed').ready, false)
    assert.equal(cond(status, 'Ready'), 'False')
    const bad = await waitForEvent('http', 'Unhealthy', /statuscode/)
    assert.equal(bad.message, 'Readiness probe failed: HTTP probe failed with statuscode: 500')
    assert.equal(bad.fieldPath, 'spec.containers{bad-path}')
    const refused = await waitForEvent('http', 'Unhealthy', /connection refused/)
    assert.match(refused.message, new RegExp(`^Readiness probe failed: dial tcp [\\d.]+:${closed}: connect: connection refused$`))
    assert.equal(refused.fieldPath, 'spec.containers{tcp-closed}')
    manager.deletePod('api', 'uid-http')
  })
})
