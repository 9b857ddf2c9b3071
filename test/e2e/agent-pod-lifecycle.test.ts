// orch server + orch agent (process runtime) as child processes: pod-wide lifecycle rules of the
// kubelet — a pod in a terminal phase never runs again after an agent restart (its statuses, restart
// counts and logs stay), and activeDeadlineSeconds fails a pod with DeadlineExceeded.
import assert from 'node:assert/strict'
import {readdirSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

describe('pod lifecycle rules on a real agent (process runtime)', {timeout: 180_000}, () => {
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>
  const scratch = tempDir('orch-pod-lifecycle-')

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    api = (method, path, body) => call(server.url, method, path, body)
    agent = await startAgent({server})
  })
  after(async () => {
    await agent?.cleanup()
    await server?.cleanup()
    rmSync(scratch, {recursive: true, force: true})
  })

  async function createPod(name: string, spec: Record<string, unknown>): Promise<any> {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, ...spec},
    })
    assert.equal(created.status, 201, created.text)
    return created.json
  }

  /** Watches the pod until check holds; resolves with the pod and when it was seen. */
  async function waitForPod(name: string, check: (pod: any) => boolean, timeoutMs = 60_000): Promise<{pod: any; seenAt: number}> {
    const list = (await api('GET', '/api/v1/namespaces/default/pods')).json
    const found = list.items.find((p: any) => p.metadata.name === name)
    if (found && check(found)) return {pod: found, seenAt: Date.now()}
    const stream = await openWatch(server.url, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`pod ${name} never matched:\n${agent.logs().slice(-3000)}`)), timeoutMs)))
    try {
      for (let n = 1; ; n++) {
        const events = await Promise.race([stream.waitFor(n), expired])
        if (check(events[n - 1].object)) return {pod: events[n - 1].object, seenAt: Date.now()}
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  const logDir = (pod: any, container: string): string => join(agent.rootDir, 'pods', `default_${pod.metadata.name}_${pod.metadata.uid}`, container)

  it('After an agent restart, a pod whose API phase is terminal (Succeeded or Failed) is never synced to run again: its container statuses, restartCount and 0.log stay', async () => {
    const marker = join(scratch, 'onfail-ran-once')
    await createPod('done-never', {restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'echo ran-once']}]})
    await createPod('fail-never', {restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'exit 3']}]})
    await createPod('onfail', {restartPolicy: 'OnFailure', containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `if [ -e ${marker} ]; then echo second; exit 0; fi; touch ${marker}; exit 1`]}]})
    const before = {
      'done-never': (await waitForPod('done-never', (p) => p.status?.phase === 'Succeeded')).pod,
      'fail-never': (await waitForPod('fail-never', (p) => p.status?.phase === 'Failed')).pod,
      onfail: (await waitForPod('onfail', (p) => p.status?.phase === 'Succeeded')).pod,
    }
    assert.equal(before.onfail.status.containerStatuses[0].restartCount, 1)
    const log = readFileSync(join(logDir(before['done-never'], 'app'), '0.log'), 'utf8')
    assert.match(log, /ran-once/)

    const logFiles = Object.fromEntries(Object.entries(before).map(([name, pod]) => [name, readdirSync(logDir(pod, 'app')).sort()]))
    await agent.stop()
    agent = await startAgent({rootDir: agent.rootDir, nodeName: agent.nodeName, server})
    // a pod created after the restart runs: the restarted agent has synced the pods bound to it
    await createPod('later', {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]})
    await waitForPod('later', (p) => p.status?.phase === 'Running')
    await agent.waitForLog(/started container.*pod=default\/later/)

    for (const [name, old] of Object.entries(before)) {
      assert.doesNotMatch(agent.logs(), new RegExp(`started (pod sandbox|container).*pod=default/${name}\\b`), `${name} was started again`)
      const now = (await api('GET', `/api/v1/namespaces/default/pods/${name}`)).json
      assert.equal(now.status.phase, old.status.phase, name)
      const [was, is] = [old.status.containerStatuses[0], now.status.containerStatuses[0]]
      assert.equal(is.containerID, was.containerID, `${name}: the same container`)
      assert.equal(is.restartCount, was.restartCount, `${name}: restartCount kept`)
      assert.deepEqual(is.state, was.state, `${name}: its terminated state kept`)
      assert.deepEqual(readdirSync(logDir(old, 'app')).sort(), logFiles[name], `${name}: no new log file`)
    }
    assert.equal(readFileSync(join(logDir(before['done-never'], 'app'), '0.log'), 'utf8'), log, '0.log not overwritten')
  })
  it('activeDeadlineSeconds: once startTime + activeDeadlineSeconds has passed the containers are killed and the pod is Failed, reason DeadlineExceeded, message "Pod was active on the node longer than the specified deadline", with an Event — within about a second of the deadline', async () => {
    const created = await createPod('deadline', {activeDeadlineSeconds: 3, containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]})
    const running = (await waitForPod('deadline', (p) => p.status?.phase === 'Running')).pod
    const {pod, seenAt} = await waitForPod('deadline', (p) => p.status?.phase === 'Failed', 30_000)
    assert.equal(pod.status.reason, 'DeadlineExceeded')
    assert.equal(pod.status.message, 'Pod was active on the node longer than the specified deadline')
    assert.ok(pod.status.containerStatuses[0].state.terminated, 'the container was killed')
    assert.equal(pod.status.containerStatuses[0].containerID, running.status.containerStatuses[0].containerID, 'and not restarted')
    // startTime is written in whole seconds: the pod started within the second after it
    const deadline = Date.parse(pod.status.startTime) + 3000
    assert.ok(seenAt - deadline < 2500, `Failed ${seenAt - deadline} ms after the deadline`)
    const selector = encodeURIComponent(`involvedObject.kind=Pod,involvedObject.name=deadline,involvedObject.uid=${created.metadata.uid}`)
    const event = await until('the DeadlineExceeded Event', async () => (await api('GET', `/api/v1/namespaces/default/events?fieldSelector=${selector}`)).json.items.find((e: any) => e.reason === 'DeadlineExceeded'))
    assert.equal(event.message, 'Pod was active on the node longer than the specified deadline')
    assert.equal(event.source.component, 'agent')
    // as the kubelet's active_deadline.go records it
    assert.equal(event.type, 'Normal')
    // a Failed pod stays Failed: its container is not started again
    assert.doesNotMatch(agent.logs(), /started container.*pod=default\/deadline.*attempt=1/)
  })
})
