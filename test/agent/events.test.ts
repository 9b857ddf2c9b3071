// The agent's event recorder (src/agent/events.ts over src/client/events.ts) against a fake API: the
// core/v1 Event the kubelet writes (source agent/<node>, involvedObject with the container's fieldPath,
// the node's reference), repeats counted on one Event through PATCH, client-go's spam filter (25 per
// object then one every 5 minutes), an API that is down or hangs never holding the caller, and nothing
// written in standalone mode.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {AgentEvents} from '../../src/agent/events.js'
import {goDuration} from '../../src/machinery/duration.js'
import type {AnyObject} from '../../src/api/types.js'
import {ApiStatusError, type RestClient} from '../../src/client/index.js'
import {createLogger} from '../../src/machinery/log.js'

interface Call {
  verb: 'create' | 'patch'
  locator: AnyObject
  body: any
}

/** A RestClient that keeps the events it is given (or fails, or never answers). */
function fakeApi(mode: 'ok' | 'down' | 'hang' = 'ok'): {client: RestClient; calls: Call[]; stored: Map<string, Call['body']>} {
  const calls: Call[] = []
  const stored = new Map<string, Call['body']>()
  const answer = async <T>(call: Call, result: () => T): Promise<T> => {
    calls.push(call)
    if (mode === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:6443')
    if (mode === 'hang') return new Promise<T>(() => undefined)
    return result()
  }
  const client = {
    create: (locator: AnyObject, body: Call['body']) =>
      answer({verb: 'create', locator, body}, () => {
        stored.set(`${locator.namespace}/${body.metadata.name}`, structuredClone(body))
        return body
      }),
    patch: (locator: AnyObject, _type: string, body: Call['body']) =>
      answer({verb: 'patch', locator, body}, () => {
        const event = stored.get(`${locator.namespace}/${locator.name}`)
        if (!event) throw new ApiStatusError({code: 404, reason: 'NotFound', message: 'not found'} as AnyObject as ConstructorParameters<typeof ApiStatusError>[0])
        Object.assign(event, body)
        return event
      }),
  } as unknown as RestClient
  return {client, calls, stored}
}

const pod: AnyObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name: 'web', namespace: 'shop', uid: 'uid-1', resourceVersion: '7'},
  spec: {initContainers: [{name: 'setup'}], containers: [{name: 'app'}]},
}

function lines(): {logger: ReturnType<typeof createLogger>; logged: string[]} {
  const logged: string[] = []
  return {logger: createLogger({verbosity: 3, write: (line) => logged.push(line)}), logged}
}

async function flushed(events: AgentEvents): Promise<void> {
  await events.flush(5_000)
}

describe('agent events', () => {
  it('a container event is a core/v1 Event as the kubelet writes it: source agent/<node>, fieldPath spec.containers{name}, reporting agent/<node>', async () => {
    const api = fakeApi()
    const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger: lines().logger, now: () => Date.parse('2025-01-02T03:04:05.678Z')})
    events.created(pod, 'app')
    events.started(pod, 'setup')
    await flushed(events)
    assert.equal(api.calls.length, 2)
    const [created, started] = api.calls.map((c) => c.body)
    assert.deepEqual(api.calls[0].locator, {group: '', version: 'v1', resource: 'events', namespace: 'shop'})
    assert.match(created.metadata.name, /^web\.[0-9a-f]+$/)
    assert.equal(created.metadata.namespace, 'shop')
    assert.deepEqual(created.involvedObject, {kind: 'Pod', namespace: 'shop', name: 'web', uid: 'uid-1', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{app}'})
    assert.equal(created.reason, 'Created')
    assert.equal(created.message, 'Created container app')
    assert.equal(created.type, 'Normal')
    assert.deepEqual(created.source, {component: 'agent', host: 'node-a'})
    assert.equal(created.reportingComponent, 'agent')
    assert.equal(created.reportingInstance, 'node-a')
    assert.equal(created.count, 1)
    assert.equal(created.firstTimestamp, '2025-01-02T03:04:05Z')
    assert.equal(created.lastTimestamp, '2025-01-02T03:04:05Z')
    assert.equal(created.action, undefined)
    assert.equal(started.involvedObject.fieldPath, 'spec.initContainers{setup}')
    assert.equal(started.message, 'Started container setup')
  })

  it('node events: Starting and the condition transitions about the Node (no namespace → default, uid = node name), message "Node <name> status is now: <reason>"', async () => {
    const api = fakeApi()
    const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger: lines().logger})
    events.starting()
    const ok = [
      {type: 'MemoryPressure', status: 'False'},
      {type: 'DiskPressure', status: 'False'},
      {type: 'PIDPressure', status: 'False'},
      {type: 'Ready', status: 'True'},
    ]
    events.nodeConditions(undefined, ok)
    events.nodeConditions(ok, ok)
    events.nodeConditions(ok, [...ok.slice(0, 3), {type: 'Ready', status: 'False'}])
    events.nodeConditions(ok, [{type: 'MemoryPressure', status: 'True'}, ...ok.slice(1)])
    await flushed(events)
    const bodies = api.calls.map((c) => c.body)
    assert.deepEqual(
      bodies.map((b) => b.reason),
      ['Starting', 'NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID', 'NodeReady', 'NodeNotReady', 'NodeHasInsufficientMemory'],
    )
    assert.equal(bodies[0].message, 'Starting agent.')
    assert.equal(bodies[4].message, 'Node node-a status is now: NodeReady')
    assert.deepEqual(bodies[0].involvedObject, {kind: 'Node', name: 'node-a', uid: 'node-a'})
    assert.equal(bodies[0].metadata.namespace, 'default')
    assert.ok(bodies.every((b) => b.type === 'Normal'))
  })

  it('the same event again bumps count and lastTimestamp of the Event already written (PATCH); another message is another Event', async () => {
    const api = fakeApi()
    let now = Date.parse('2025-01-02T03:04:05Z')
    const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger: lines().logger, now: () => now})
    events.restartBackOff(pod, 'app')
    now += 10_000
    events.restartBackOff(pod, 'app')
    now += 20_000
    events.restartBackOff(pod, 'app')
    events.killing(pod, 'app')
    await flushed(events)
    assert.deepEqual(
      api.calls.map((c) => c.verb),
      ['create', 'patch', 'patch', 'create'],
    )
    assert.equal(api.stored.size, 2)
    const backOff = [...api.stored.values()].find((e) => e.reason === 'BackOff')!
    assert.equal(backOff.message, 'Back-off restarting failed container app in pod web_shop(uid-1)')
    assert.equal(backOff.type, 'Warning')
    assert.equal(backOff.count, 3)
    assert.equal(backOff.firstTimestamp, '2025-01-02T03:04:05Z')
    assert.equal(backOff.lastTimestamp, '2025-01-02T03:04:35Z')
    assert.equal([...api.stored.values()].find((e) => e.reason === 'Killing')!.message, 'Stopping container app')
  })

  it('an Event deleted meanwhile (PATCH 404) is written again', async () => {
    const api = fakeApi()
    const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger: lines().logger})
    events.sandboxChanged(pod)
    await flushed(events)
    api.stored.clear()
    events.sandboxChanged(pod)
    await flushed(events)
    assert.deepEqual(
      api.calls.map((c) => c.verb),
      ['create', 'patch', 'create'],
    )
    assert.equal([...api.stored.values()][0].count, 1)
  })

  it('spam filter: 25 events about one pod (all its containers together), then one per 5 minutes; other objects are not held back', async () => {
    const api = fakeApi()
    let now = 0
    const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger: lines().logger, now: () => now})
    for (let i = 0; i < 40; i++) events.failed(pod, i % 2 ? 'app' : 'setup', `boom ${i}`)
    await flushed(events)
    assert.equal(api.calls.length, 25)
    assert.equal(events.dropped, 15)
    events.node('Normal', 'Starting', 'Starting agent.')
    await flushed(events)
    assert.equal(api.calls.length, 26)
    now += 299_000
    events.failed(pod, 'app', 'still failing')
    now += 2_000
    events.failed(pod, 'app', 'still failing')
    events.failed(pod, 'app', 'still failing')
    await flushed(events)
    assert.equal(api.calls.length, 27)
    now += 600_000
    events.failed(pod, 'app', 'still failing')
    events.failed(pod, 'app', 'still failing')
    events.failed(pod, 'app', 'still failing')
    await flushed(events)
    assert.equal(api.calls.length, 29)
  })

  it('an API that is down or never answers does not hold the caller: events are dropped with a log line', async () => {
    for (const mode of ['down', 'hang'] as const) {
      const api = fakeApi(mode)
      const {logger, logged} = lines()
      const events = new AgentEvents({client: () => api.client, nodeName: 'node-a', logger, maxQueued: 10})
      const began = Date.now()
      for (let i = 0; i < 20; i++) events.started(pod, `c${i}`)
      assert.ok(Date.now() - began < 100, 'recording returned at once')
      if (mode === 'down') {
        // one written at once, 10 waiting, 9 dropped: the 11 written all fail and are logged
        await flushed(events)
        assert.equal(api.calls.length, 11)
        assert.equal(events.dropped, 9)
        assert.equal(logged.filter((l) => l.includes('event not recorded')).length, 11)
        assert.match(logged.find((l) => l.includes('event not recorded'))!, /ECONNREFUSED/)
      } else {
        // one write hangs (it is abandoned after 10 s); the queue holds 10 and the rest are dropped
        assert.equal(api.calls.length, 1)
        assert.equal(events.dropped, 9)
        void events.shutdown()
        assert.equal(events.dropped, 19)
      }
    }
  })

  it('standalone (no API client): nothing is written, the event is only logged', async () => {
    const {logger, logged} = lines()
    const events = new AgentEvents({client: () => undefined, nodeName: 'node-a', logger})
    events.starting()
    events.created(pod, 'app')
    await flushed(events)
    assert.equal(events.dropped, 0)
    assert.ok(logged.some((l) => l.includes('Starting agent.')))
    assert.ok(logged.some((l) => l.includes('Created container app')))
  })

  it('durations in Pulled messages are Go durations', () => {
    assert.equal(goDuration(0), '0s')
    assert.equal(goDuration(345), '345ms')
    assert.equal(goDuration(1234), '1.234s')
    assert.equal(goDuration(1200), '1.2s')
    assert.equal(goDuration(2000), '2s')
    assert.equal(goDuration(123_500), '2m3.5s')
    assert.equal(goDuration(3_600_000), '1h0m0s')
  })
})
