// orch server + orch agent (process runtime) as child processes: the agent records the kubelet's Events.
// A pod that runs gets Pulled, Created, Started (source agent/<node>, fieldPath spec.containers{app}) and,
// deleted, Killing; a pod whose container keeps exiting gets the same and then BackOff; the Node gets
// Starting and the condition events (NodeHasSufficientMemory, ..., NodeReady), which orch describe node shows. Events are polled with a
// deadline.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const TIMEOUT = {timeout: 120_000}

type Event = any

describe('orch agent records Events (process runtime)', TIMEOUT, () => {
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    api = (method, path, body) => call(server.url, method, path, body)
    const config = join(tempDir('orch-agent-config-'), 'agent.yaml')
    writeFileSync(config, ['apiVersion: agent.config.orch.io/v1beta1', 'kind: AgentConfiguration', 'nodeStatusUpdateFrequency: 1s', ''].join('\n'))
    agent = await startAgent({server, args: ['--config', config]})
  })
  after(async () => {
    await agent?.cleanup()
    await server?.cleanup()
  })

  /** The events about an object, in the order they were recorded (their names carry the time in ns). */
  async function eventsAbout(namespace: string, kind: string, name: string): Promise<Event[]> {
    const selector = encodeURIComponent(`involvedObject.kind=${kind},involvedObject.name=${name}`)
    const list = await api('GET', `/api/v1/namespaces/${namespace}/events?fieldSelector=${selector}`)
    assert.equal(list.status, 200, list.text)
    const stamp = (e: Event): bigint => BigInt(`0x${e.metadata.name.slice(e.metadata.name.lastIndexOf('.') + 1)}`)
    return list.json.items.sort((a: Event, b: Event) => (stamp(a) < stamp(b) ? -1 : stamp(a) > stamp(b) ? 1 : 0))
  }

  /** Polls the events about an object until check holds, for at most timeoutMs. */
  async function waitForEvents(namespace: string, kind: string, name: string, check: (events: Event[]) => boolean, what: string, timeoutMs = 60_000): Promise<Event[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const events = await eventsAbout(namespace, kind, name)
      if (check(events)) return events
      if (Date.now() > deadline) {
        assert.fail(`${what}: not seen within ${timeoutMs} ms; events: ${JSON.stringify(events.map((e) => [e.reason, e.message]))}\nagent log:\n${agent.logs().slice(-3000)}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  const reasons = (events: Event[]): string[] => events.map((e) => e.reason)
  /** the reasons in the order of their first occurrence */
  const firstSeen = (events: Event[]): string[] => [...new Set(reasons(events))]

  it('a pod that runs gets Pulled, Created, Started about its container, as the kubelet records them, and Killing when deleted', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'runner'},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sleep', '6062']}]},
    })
    assert.equal(created.status, 201, created.text)
    const uid = created.json.metadata.uid
    const events = await waitForEvents('default', 'Pod', 'runner', (list) => reasons(list).includes('Started'), 'Started')
    const mine = firstSeen(events).filter((r) => r !== 'Scheduled' && r !== 'Pulling')
    assert.deepEqual(mine, ['Pulled', 'Created', 'Started'])
    const byReason = (reason: string): Event => events.find((e) => e.reason === reason)
    assert.match(byReason('Pulled').message, /^(Successfully pulled image "busybox" in \S+ \(\S+ including waiting\)\. Image size: \d+ bytes\.|Container image "busybox" already present on machine)$/)
    assert.equal(byReason('Created').message, 'Created container app')
    assert.equal(byReason('Started').message, 'Started container app')
    for (const event of events.filter((e) => e.source?.component === 'agent')) {
      assert.deepEqual(event.source, {component: 'agent', host: agent.nodeName})
      assert.equal(event.type, 'Normal')
      assert.equal(event.reportingComponent, 'agent')
      assert.equal(event.reportingInstance, agent.nodeName)
      assert.equal(event.involvedObject.uid, uid)
      assert.equal(event.involvedObject.fieldPath, 'spec.containers{app}')
    }
    assert.equal((await api('DELETE', '/api/v1/namespaces/default/pods/runner')).status, 200)
    const killed = await waitForEvents('default', 'Pod', 'runner', (list) => reasons(list).includes('Killing'), 'Killing')
    assert.equal(killed.find((e) => e.reason === 'Killing').message, 'Stopping container app')
  })

  it('a pod whose container keeps exiting gets Pulled, Created, Started, then BackOff (counted on one Event)', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'looper'},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'sleep 0.2; exit 3']}]},
    })
    assert.equal(created.status, 201, created.text)
    const uid = created.json.metadata.uid
    const events = await waitForEvents('default', 'Pod', 'looper', (list) => reasons(list).includes('BackOff'), 'BackOff')
    const mine = firstSeen(events).filter((r) => r !== 'Scheduled' && r !== 'Pulling')
    assert.deepEqual(mine, ['Pulled', 'Created', 'Started', 'BackOff'])
    const backOff = events.find((e) => e.reason === 'BackOff')
    assert.equal(backOff.type, 'Warning')
    assert.equal(backOff.message, `Back-off restarting failed container app in pod looper_default(${uid})`)
    assert.equal(backOff.involvedObject.fieldPath, 'spec.containers{app}')
    // the container was started twice (the first restart is at once): one Started Event, count 2
    const started = events.filter((e) => e.reason === 'Started')
    assert.equal(started.length, 1, JSON.stringify(started))
    assert.ok(started[0].count >= 2, `Started counted: ${started[0].count}`)
    await api('DELETE', '/api/v1/namespaces/default/pods/looper')
  })

  it('the Node gets Starting ("Starting agent.") and then the condition events, NodeReady last', async () => {
    const want = ['Starting', 'NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID', 'NodeReady']
    const events = await waitForEvents('default', 'Node', agent.nodeName, (list) => want.every((r) => reasons(list).includes(r)), 'node events')
    assert.deepEqual(
      reasons(events).filter((r) => want.includes(r)),
      want,
    )
    const starting = events.find((e) => e.reason === 'Starting')
    assert.equal(starting.message, 'Starting agent.')
    assert.deepEqual(starting.involvedObject, {kind: 'Node', name: agent.nodeName, uid: agent.nodeName})
    assert.deepEqual(starting.source, {component: 'agent', host: agent.nodeName})
    assert.equal(events.find((e) => e.reason === 'NodeReady').message, `Node ${agent.nodeName} status is now: NodeReady`)
    // orch describe node finds them although their uid is the node's name (as kubectl does)
    const described = await runOrch(['describe', 'node', agent.nodeName], {env: server.cliEnv})
    assert.equal(described.code, 0, described.stderr)
    assert.match(described.stdout, /Starting\s.*Starting agent\./)
    assert.match(described.stdout, /NodeReady\s.*status is now: NodeReady/)
  })
})
