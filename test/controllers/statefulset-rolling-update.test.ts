// The StatefulSet RollingUpdate strategy and unavailable pods, as Kubernetes' updateStatefulSet
// (MaxUnavailableStatefulSet gate off) and updateStatefulSetAfterInvariantEstablished (gate on) do it:
// an old-revision pod is deleted only while fewer than maxUnavailable replicas are unavailable (gate
// on), or once every pod above it is available (gate off) — Parallel and OrderedReady alike.
//
// A server runs no controllers; the test plays the agent (pods/status) and drives a StatefulSet
// controller by hand, one reconcile at a time, so what each sync deleted is known exactly. The last
// test checks that `orch server --feature-gates MaxUnavailableStatefulSet=false` reaches the controller.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {RestClient} from '../../src/client/index.js'
import {StatefulSetController} from '../../src/controllers/statefulset.js'
import {silentLogger} from '../../src/machinery/log.js'
import {call, waitForCollection} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {statefulSet} from '../support/statefulset.js'

const REVISION_LABEL = 'controller-revision-hash'
const setsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const ordinal = (name: string) => Number(/-(\d+)$/.exec(name)?.[1] ?? -1)
const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')

type Policy = 'Parallel' | 'OrderedReady'
const POLICIES: Policy[] = ['Parallel', 'OrderedReady']
const GATES = [true, false]
const gateName = (gate: boolean) => `MaxUnavailableStatefulSet=${gate}`

interface PodState {
  uid: string
  revision: string
  terminating: boolean
  ready: boolean
}

describe('StatefulSet rolling update with unavailable pods', {timeout: 120_000}, () => {
  let server: OrchServer
  let client: RestClient
  let clock = Date.now()
  let namespaces = 0

  before(async () => {
    server = await startOrchServer(['--controllers='])
    client = new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key)})
  })
  after(async () => {
    await client?.close()
    await server?.cleanup()
  })

  async function ok(method: string, path: string, body?: unknown, base = server.url): Promise<any> {
    const r = await call(base, method, path, body)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }

  /** The agent's part (and the node lifecycle controller's MarkPodsNotReady): phase Running, Ready True or False. */
  async function setReady(ns: string, name: string, ready: boolean, since = clock, base = server.url): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const pod = await ok('GET', `${podsPath(ns)}/${name}`, undefined, base)
      const conditions = (pod.status?.conditions ?? []).filter((c: any) => c.type !== 'Ready')
      conditions.push({type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: isoSeconds(since)})
      const r = await call(base, 'PUT', `${podsPath(ns)}/${name}/status`, {...pod, status: {...pod.status, phase: 'Running', conditions}})
      if (r.status === 200) return
      if (r.status !== 409) assert.fail(`PUT status of ${name}: ${r.status} ${r.text}`)
    }
    assert.fail(`PUT status of ${name}: conflicts`)
  }

  async function podStates(ns: string, base = server.url): Promise<Map<string, PodState>> {
    const list = await ok('GET', podsPath(ns), undefined, base)
    const ready = (p: any) => p.status?.phase === 'Running' && p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')
    return new Map(
      list.items.map((p: any) => [
        p.metadata.name,
        {uid: p.metadata.uid, revision: p.metadata.labels?.[REVISION_LABEL] ?? '', terminating: Boolean(p.metadata.deletionTimestamp), ready: ready(p)},
      ]),
    )
  }

  /** The pods of `before` that are gone, replaced, or newly terminating now, by ordinal. */
  function deletedSince(before: Map<string, PodState>, now: Map<string, PodState>): string[] {
    return [...before]
      .filter(([name, pod]) => !pod.terminating && (now.get(name)?.uid !== pod.uid || now.get(name)!.terminating))
      .map(([name]) => name)
      .sort((a, b) => ordinal(a) - ordinal(b))
  }

  /** A set `web` in a namespace of its own, and a controller for it with the gate as given, driven by hand. */
  async function harness(options: {policy: Policy; gate: boolean; replicas?: number; spec?: Record<string, any>; nodeName?: string}) {
    const ns = `rolling-${++namespaces}`
    const replicas = options.replicas ?? 3
    await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}})
    const body = statefulSet('web', {replicas, spec: {podManagementPolicy: options.policy, ...options.spec}})
    // bound to a node: a deleted pod stays Terminating until its agent confirms, as on a node gone NotReady
    if (options.nodeName) body.spec.template.spec.nodeName = options.nodeName
    await ok('POST', setsPath(ns), body)
    const controller = new StatefulSetController(client, silentLogger, {now: () => clock, maxUnavailableStatefulSet: options.gate})
    const h = {
      ns,
      pods: () => podStates(ns),
      ready: (name: string, ready = true, since = clock) => setReady(ns, name, ready, since),
      sync: async (times = 1) => {
        for (let i = 0; i < times; i++) await controller.reconcile(`${ns}/web`)
      },
      /** syncs, letting every pod become Running and Ready, until all replicas are (ready since `since`) */
      async readyAll(since = clock): Promise<void> {
        for (let round = 0; round < 4 * replicas; round++) {
          await h.sync()
          const pods = await h.pods()
          for (const [name, pod] of pods) if (!pod.ready && !pod.terminating) await h.ready(name, true, since)
          if (pods.size === replicas && [...pods.values()].every((p) => !p.terminating)) {
            const set = await ok('GET', `${setsPath(ns)}/web`)
            if (set.status?.readyReplicas === replicas && set.status.updateRevision === set.status.currentRevision) {
              await h.sync()
              return
            }
          }
        }
        assert.fail(`${ns}: the pods never all became ready`)
      },
      async update(image: string): Promise<void> {
        const set = await ok('GET', `${setsPath(ns)}/web`)
        set.spec.template.spec.containers[0].image = image
        await ok('PUT', `${setsPath(ns)}/web`, set)
      },
      /** one sync; the pods it deleted */
      async deletedBySync(times = 1): Promise<string[]> {
        const before = await h.pods()
        await h.sync(times)
        return deletedSince(before, await h.pods())
      },
    }
    return h
  }

  for (const policy of POLICIES) {
    for (const gate of GATES) {
      it(`a rolling update waits for the updated pod to be Running and Ready before deleting the next (${policy}, ${gateName(gate)})`, async () => {
        const h = await harness({policy, gate})
        await h.readyAll()
        const old = (await h.pods()).get('web-0')!.revision
        await h.update('registry.example/app:2')
        assert.deepEqual(await h.deletedBySync(), ['web-2'], 'the highest ordinal first')
        assert.deepEqual(await h.deletedBySync(), [], 'web-2 comes back at the update revision')
        const web2 = (await h.pods()).get('web-2')!
        assert.notEqual(web2.revision, old)
        assert.deepEqual(await h.deletedBySync(3), [], 'nothing while web-2 is Pending')
        // the next one restarting meanwhile (Running, not Ready) is no reason to delete it early
        await h.ready('web-1', false)
        assert.deepEqual(await h.deletedBySync(3), [], 'nothing while web-2 is Pending and web-1 not ready')
        await h.ready('web-1')
        await h.ready('web-2', false)
        assert.deepEqual(await h.deletedBySync(3), [], 'nothing while web-2 is Running but not Ready')
        await h.ready('web-2')
        assert.deepEqual(await h.deletedBySync(), ['web-1'], 'web-2 Running and Ready: the next one')
        await h.sync()
        assert.deepEqual(await h.deletedBySync(2), [], 'nothing while web-1 is Pending')
        await h.ready('web-1')
        assert.deepEqual(await h.deletedBySync(), ['web-0'])
        await h.sync()
        await h.ready('web-0')
        await h.sync()
        const set = await ok('GET', `${setsPath(h.ns)}/web`)
        assert.equal(set.status.updatedReplicas, 3)
        assert.equal(set.status.currentRevision, set.status.updateRevision, 'the update completed')
      })

      it(`a pod turning unready during a rolling update is not deleted while another pod is unavailable (maxUnavailable 1; ${policy}, ${gateName(gate)})`, async () => {
        const h = await harness({policy, gate})
        await h.readyAll()
        await h.update('registry.example/app:2')
        assert.deepEqual(await h.deletedBySync(), ['web-2'])
        await h.sync()
        // web-2 is Pending at the update revision; web-0, of the old one, stops being ready
        await h.ready('web-0', false)
        assert.deepEqual(await h.deletedBySync(3), [], 'web-0 stays: web-2 is unavailable')
        await h.ready('web-2')
        await h.ready('web-0')
        assert.deepEqual(await h.deletedBySync(), ['web-1'], 'all available again: the next one, from the top')
      })
    }
  }

  for (const gate of GATES) {
    it(`a node going NotReady (its pods marked not ready) never has a Parallel set delete several pods at once (${gateName(gate)})`, async () => {
      // during the update: web-2 is Terminating on the unreachable node, web-0 and web-1 are old
      const during = await harness({policy: 'Parallel', gate, nodeName: 'gone'})
      await during.readyAll()
      await during.update('registry.example/app:2')
      assert.deepEqual(await during.deletedBySync(), ['web-2'])
      for (const name of ['web-0', 'web-1', 'web-2']) await during.ready(name, false)
      assert.deepEqual(await during.deletedBySync(3), [], 'web-0 and web-1 stay')
      const pods = await during.pods()
      assert.deepEqual([...pods].filter(([, p]) => p.terminating).map(([n]) => n), ['web-2'])

      // before the update: every pod is old and not ready when the template changes
      const beforeUpdate = await harness({policy: 'Parallel', gate, nodeName: 'gone'})
      await beforeUpdate.readyAll()
      for (const name of ['web-0', 'web-1', 'web-2']) await beforeUpdate.ready(name, false)
      await beforeUpdate.sync()
      await beforeUpdate.update('registry.example/app:2')
      // gate on: 3 unavailable >= maxUnavailable 1, nothing; gate off: the highest old pod, then wait for it
      assert.deepEqual(await beforeUpdate.deletedBySync(3), gate ? [] : ['web-2'])
    })
  }

  it('maxUnavailable 2 with an old pod unavailable: one more pod is deleted, the highest ordinal (Parallel, MaxUnavailableStatefulSet=true)', async () => {
    const h = await harness({policy: 'Parallel', gate: true, replicas: 4, spec: {updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 2}}}})
    await h.readyAll()
    await h.ready('web-0', false)
    await h.update('registry.example/app:2')
    assert.deepEqual(await h.deletedBySync(), ['web-3'], '2 - 1 unavailable: one, from the top')
    assert.deepEqual(await h.deletedBySync(3), [], 'web-3 Pending and web-0 not ready: the budget is spent')
    await h.ready('web-0')
    assert.deepEqual(await h.deletedBySync(), ['web-2'], 'web-0 ready again: one more')
    await h.ready('web-3')
    assert.deepEqual(await h.deletedBySync(), ['web-1'])
  })

  for (const policy of POLICIES) {
    it(`with MaxUnavailableStatefulSet=false a stored maxUnavailable is ignored: one pod at a time (${policy})`, async () => {
      // stored while the API server has the gate on; this controller runs with it off
      const h = await harness({policy, gate: false, spec: {updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 3}}}})
      await h.readyAll()
      await h.update('registry.example/app:2')
      assert.deepEqual(await h.deletedBySync(), ['web-2'])
      assert.deepEqual(await h.deletedBySync(2), [])
      await h.ready('web-2')
      assert.deepEqual(await h.deletedBySync(), ['web-1'])
    })

    for (const gate of GATES) {
      it(`minReadySeconds: an updated pod ready for less than minReadySeconds is not available; the next waits (${policy}, ${gateName(gate)})`, async () => {
        const h = await harness({policy, gate, spec: {minReadySeconds: 30}})
        await h.readyAll(clock - 60_000)
        await h.update('registry.example/app:2')
        assert.deepEqual(await h.deletedBySync(), ['web-2'])
        await h.sync()
        await h.ready('web-2', true, clock)
        assert.deepEqual(await h.deletedBySync(3), [], 'ready, not yet available')
        clock += 31_000
        assert.deepEqual(await h.deletedBySync(), ['web-1'], 'available after minReadySeconds')
      })
    }
  }

  it('orch server --feature-gates MaxUnavailableStatefulSet=false reaches the StatefulSet controller', async () => {
    const gated = await startOrchServer(['--feature-gates', 'MaxUnavailableStatefulSet=false'])
    try {
      const base = gated.url
      const ns = 'gate-off'
      await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}}, base)
      await ok('POST', setsPath(ns), statefulSet('web', {replicas: 3, spec: {podManagementPolicy: 'Parallel'}}), base)
      await waitForCollection(base, podsPath(ns), (items) => items.length === 3, 'three pods')
      await setReady(ns, 'web-0', false, Date.now(), base)
      for (const name of ['web-1', 'web-2']) await setReady(ns, name, true, Date.now(), base)
      await waitForCollection(base, setsPath(ns), (items) => items[0]?.status?.readyReplicas === 2, 'two ready', 30_000)
      const before = await podStates(ns, base)
      const set = await ok('GET', `${setsPath(ns)}/web`, undefined, base)
      set.spec.template.spec.containers[0].image = 'registry.example/app:2'
      await ok('PUT', `${setsPath(ns)}/web`, set, base)
      // gate off: the highest old pod goes although web-0 is not ready (gate on: nothing would)
      await waitForCollection(base, setsPath(ns), (items) => items[0]?.status?.updatedReplicas === 1 && items[0].status.replicas === 3, 'web-2 replaced')
      const now = await podStates(ns, base)
      assert.deepEqual(deletedSince(before, now), ['web-2'])
      assert.notEqual(now.get('web-2')!.revision, before.get('web-2')!.revision)
    } finally {
      await gated.cleanup()
    }
  })
})
