// The StatefulSet controller end to end: a real `orch server` runs it; the tests create StatefulSets
// over HTTP and play the node agent, setting pod readiness through pods/{name}/status (phase Running,
// condition Ready True). Every wait is a watch (list, then watch from its resourceVersion), never a sleep.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, describe, it} from 'node:test'
import {hashRevision} from '../../src/controllers/statefulset/utils.js'
import {call, openWatch, waitForCollection, type HttpResult, type WatchStream} from '../support/http.js'
import {startOrchServer, tempDir, type RunningOrch} from '../support/server.js'
import {statefulSet} from '../support/statefulset.js'

const TIMEOUT = {timeout: 60_000}
const POD_NAME_LABEL = 'statefulset.orch.io/pod-name'
const POD_INDEX_LABEL = 'apps.orch.io/pod-index'
const REVISION_LABEL = 'controller-revision-hash'

const setsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const claimsPath = (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`
const revisionsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/controllerrevisions`
const eventsPath = (ns: string) => `/api/v1/namespaces/${ns}/events`

const names = (items: any[]) => items.map((i) => i.metadata.name).sort(byOrdinal)
const byOrdinal = (a: string, b: string) => Number(/-(\d+)$/.exec(a)?.[1] ?? 0) - Number(/-(\d+)$/.exec(b)?.[1] ?? 0) || (a < b ? -1 : a > b ? 1 : 0)
const isReady = (pod: any) => pod.status?.phase === 'Running' && pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')
const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')

describe('StatefulSet controller', () => {
  let server: RunningOrch
  /** the server the helpers talk to (another one only in the restart test) */
  let base = ''
  const api = (method: string, path: string, body?: unknown): Promise<HttpResult> => call(base, method, path, body)

  before(async () => {
    server = await startOrchServer()
    base = server.url
  })
  after(async () => server.cleanup())

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await api(method, path, body)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }

  async function namespace(name: string): Promise<string> {
    await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
    return name
  }

  /** waitForCollection on the server the helpers talk to */
  function waitUntil<T>(path: string, check: (items: any[]) => T | undefined | false, what: string, timeoutMs?: number): Promise<T> {
    return waitForCollection(base, path, check, what, timeoutMs)
  }

  /** Waits until the set's status satisfies the predicate; returns the set. */
  function waitForSet(ns: string, name: string, predicate: (status: any, set: any) => boolean, what: string): Promise<any> {
    return waitUntil(setsPath(ns), (items) => items.find((s) => s.metadata.name === name && predicate(s.status ?? {}, s)), `${ns}/${name}: ${what}`)
  }

  /** Waits until the namespace's pods satisfy the predicate; returns them sorted by ordinal. */
  function waitForPods(ns: string, predicate: (pods: any[]) => boolean, what: string): Promise<any[]> {
    return waitUntil(podsPath(ns), (items) => {
      const sorted = [...items].sort((a, b) => byOrdinal(a.metadata.name, b.metadata.name))
      return predicate(sorted) ? sorted : undefined
    }, `${ns} pods: ${what}`)
  }

  /** The agent's part: phase Running and condition Ready True (or Ready False) through /status. */
  async function setReady(ns: string, name: string, ready = true, transition = seconds(Date.now())): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const pod = await ok('GET', `${podsPath(ns)}/${name}`)
      const conditions = (pod.status?.conditions ?? []).filter((c: any) => c.type !== 'Ready')
      conditions.push({type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: transition})
      const r = await api('PUT', `${podsPath(ns)}/${name}/status`, {...pod, status: {...pod.status, phase: 'Running', conditions}})
      if (r.status === 200) return
      if (r.status !== 409) assert.fail(`PUT status of ${name}: ${r.status} ${r.text}`)
    }
    assert.fail(`PUT status of ${name}: conflicts`)
  }

  /** Every pod watch event of the namespace from now on, in order. */
  async function recordPods(ns: string): Promise<WatchStream> {
    const list = await ok('GET', podsPath(ns))
    return openWatch(base, `${podsPath(ns)}?watch=1&resourceVersion=${list.metadata.resourceVersion}`)
  }

  /** An agent for the namespace: every pod that appears (or stops being ready) becomes Running and Ready. */
  async function startAgent(ns: string): Promise<{stop(): void}> {
    const stream = await recordPods(ns)
    let stopped = false
    void (async () => {
      const pending = await ok('GET', podsPath(ns))
      for (const pod of pending.items) if (!isReady(pod)) await setReady(ns, pod.metadata.name).catch(() => undefined)
      for (let n = 1; !stopped; n++) {
        const events = await Promise.race([stream.waitFor(n), stream.ended.then(() => undefined)])
        if (!events || stopped) return
        const event = events[n - 1]
        if ((event.type === 'ADDED' || event.type === 'MODIFIED') && !isReady(event.object) && !event.object.metadata.deletionTimestamp) {
          await setReady(ns, event.object.metadata.name).catch(() => undefined)
        }
      }
    })()
    return {
      stop() {
        stopped = true
        stream.close()
      },
    }
  }

  const podEvents = (events: any[], type?: string) =>
    events.filter((e) => e.type !== 'BOOKMARK' && (!type || e.type === type)).map((e) => `${e.type} ${e.object.metadata.name}`)

  async function updateSet(ns: string, name: string, change: (set: any) => void): Promise<any> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const set = await ok('GET', `${setsPath(ns)}/${name}`)
      change(set)
      const r = await api('PUT', `${setsPath(ns)}/${name}`, set)
      if (r.status === 200) return r.json
      if (r.status !== 409) assert.fail(`PUT ${name}: ${r.status} ${r.text}`)
    }
    assert.fail(`PUT ${name}: conflicts`)
  }

  it('pods are named <name>-<ordinal> with the identity labels, a controller reference, hostname and subdomain', TIMEOUT, async () => {
    const ns = await namespace('identity')
    const created = await ok('POST', setsPath(ns), statefulSet('web', {replicas: 1, spec: {serviceName: 'nginx'}}))
    const [pod] = await waitForPods(ns, (pods) => pods.length === 1, 'web-0')
    const set = await waitForSet(ns, 'web', (s) => s.replicas === 1 && Boolean(s.updateRevision), 'status after web-0')
    assert.equal(pod.metadata.name, 'web-0')
    assert.equal(pod.metadata.generateName, 'web-')
    assert.deepEqual(pod.metadata.labels, {app: 'web', [POD_NAME_LABEL]: 'web-0', [POD_INDEX_LABEL]: '0', [REVISION_LABEL]: set.status.updateRevision})
    assert.deepEqual(pod.metadata.ownerReferences, [
      {apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true},
    ])
    assert.equal(pod.spec.hostname, 'web-0')
    assert.equal(pod.spec.subdomain, 'nginx')
    assert.equal(pod.spec.nodeName, undefined)
    assert.equal(pod.spec.containers[0].image, 'registry.example/app:1')
  })

  it('volumeClaimTemplates: claim <claim>-<sts>-<ordinal> is created before the pod, whose volume names it (over a same-named template volume)', TIMEOUT, async () => {
    const ns = await namespace('claims')
    const body = statefulSet('db', {claims: ['data']})
    body.spec.template.spec.containers[0].volumeMounts.push({name: 'cache', mountPath: '/cache'})
    body.spec.template.spec.volumes = [
      {name: 'data', emptyDir: {}},
      {name: 'cache', emptyDir: {}},
    ]
    body.spec.volumeClaimTemplates[0].metadata.labels = {tier: 'storage'}
    await ok('POST', setsPath(ns), body)
    const [pod] = await waitForPods(ns, (pods) => pods.length === 1, 'db-0')
    const claims = await waitUntil(claimsPath(ns), (items) => (items.length === 1 ? items : undefined), 'claim data-db-0')
    const claim = claims[0]
    assert.equal(claim.metadata.name, 'data-db-0')
    assert.deepEqual(claim.metadata.labels, {tier: 'storage', app: 'db'})
    assert.equal(claim.metadata.ownerReferences, undefined, 'whenDeleted/whenScaled Retain: no owner')
    assert.deepEqual(claim.spec.resources, {requests: {storage: '1Gi'}})
    // one revision counter for all kinds: the claim was written first
    assert.ok(Number(claim.metadata.resourceVersion) < Number(pod.metadata.resourceVersion), 'the claim exists before the pod')
    assert.deepEqual(pod.spec.volumes, [
      {name: 'data', persistentVolumeClaim: {claimName: 'data-db-0'}},
      {name: 'cache', emptyDir: {}},
    ])
  })

  describe('5 replicas OrderedReady, a rolling update with partition 2, a scale down with whenScaled: Delete', () => {
    const ns = 'ordered'
    let pods: WatchStream
    let firstRevision: string
    let secondRevision: string

    before(async () => {
      await namespace(ns)
      pods = await recordPods(ns)
      await ok('POST', setsPath(ns), statefulSet('web', {replicas: 5, claims: ['data'], spec: {persistentVolumeClaimRetentionPolicy: {whenScaled: 'Delete'}}}))
    })
    after(() => pods.close())

    it('OrderedReady: pods appear one at a time in ordinal order, each once the previous is Running and Ready; status after each step', TIMEOUT, async () => {
      for (let k = 0; k < 5; k++) {
        // a status counting web-k as created comes from a sync that saw web-k Pending: it created no more
        const set = await waitForSet(ns, 'web', (s) => s.replicas === k + 1 && (s.readyReplicas ?? 0) === k, `web-${k} created`)
        const now = await ok('GET', podsPath(ns))
        assert.deepEqual(names(now.items), Array.from({length: k + 1}, (_, i) => `web-${i}`), `only web-0..web-${k} exist`)
        const s = set.status
        assert.equal(s.observedGeneration, 1)
        assert.equal(s.currentReplicas, k + 1)
        assert.equal(s.updatedReplicas, k + 1)
        assert.equal(s.availableReplicas, k)
        assert.equal(s.currentRevision, s.updateRevision)
        assert.equal(s.collisionCount, 0)
        firstRevision = s.updateRevision
        await setReady(ns, `web-${k}`)
      }
      const set = await waitForSet(ns, 'web', (s) => s.readyReplicas === 5 && s.availableReplicas === 5, 'all ready')
      assert.equal(set.status.replicas, 5)
      assert.equal(set.status.currentReplicas, 5)
      assert.equal(set.status.updatedReplicas, 5)
      assert.deepEqual(podEvents(pods.events, 'ADDED'), ['ADDED web-0', 'ADDED web-1', 'ADDED web-2', 'ADDED web-3', 'ADDED web-4'])
      const claims = await ok('GET', claimsPath(ns))
      assert.deepEqual(names(claims.items), ['data-web-0', 'data-web-1', 'data-web-2', 'data-web-3', 'data-web-4'])
    })

    it('RollingUpdate with partition 2: only ordinals 4, 3, 2 are replaced, highest first, one at a time', TIMEOUT, async () => {
      const before = new Map<string, string>((await ok('GET', podsPath(ns))).items.map((p: any) => [p.metadata.name, p.metadata.uid]))
      const mark = pods.events.length
      await updateSet(ns, 'web', (set) => {
        set.spec.template.spec.containers[0].image = 'registry.example/app:2'
        set.spec.updateStrategy = {type: 'RollingUpdate', rollingUpdate: {partition: 2}}
      })
      for (const k of [4, 3, 2]) {
        const now = await waitForPods(ns, (list) => list.some((p) => p.metadata.name === `web-${k}` && p.metadata.uid !== before.get(`web-${k}`)), `web-${k} recreated`)
        const pod = now.find((p) => p.metadata.name === `web-${k}`)
        secondRevision = pod.metadata.labels[REVISION_LABEL]
        assert.notEqual(secondRevision, firstRevision)
        assert.equal(pod.spec.containers[0].image, 'registry.example/app:2')
        assert.deepEqual(names(now), ['web-0', 'web-1', 'web-2', 'web-3', 'web-4'])
        for (const p of now) {
          const ordinal = Number(p.metadata.labels[POD_INDEX_LABEL])
          assert.equal(p.metadata.labels[REVISION_LABEL], ordinal >= k ? secondRevision : firstRevision, `${p.metadata.name} revision while web-${k} updates`)
        }
        await setReady(ns, `web-${k}`)
      }
      const set = await waitForSet(ns, 'web', (s) => s.updatedReplicas === 3 && s.readyReplicas === 5, 'three updated and all ready')
      assert.equal(set.status.observedGeneration, 2)
      assert.equal(set.status.replicas, 5)
      assert.equal(set.status.currentReplicas, 2)
      assert.equal(set.status.availableReplicas, 5)
      assert.equal(set.status.currentRevision, firstRevision, 'a partitioned update never completes')
      assert.equal(set.status.updateRevision, secondRevision)
      assert.deepEqual(
        podEvents(pods.events.slice(mark)).filter((e) => !e.startsWith('MODIFIED')),
        ['DELETED web-4', 'ADDED web-4', 'DELETED web-3', 'ADDED web-3', 'DELETED web-2', 'ADDED web-2'],
      )
      const after = await ok('GET', podsPath(ns))
      for (const p of after.items.filter((x: any) => ['web-0', 'web-1'].includes(x.metadata.name))) assert.equal(p.metadata.uid, before.get(p.metadata.name))
      const revisions = await ok('GET', revisionsPath(ns))
      assert.deepEqual(revisions.items.map((r: any) => [r.metadata.name, r.revision]).sort(), [[firstRevision, 1], [secondRevision, 2]].sort())
    })

    it('scale to 2 with whenScaled: Delete deletes pods 4, 3, 2 in reverse order, one at a time, and their claims', TIMEOUT, async () => {
      const mark = pods.events.length
      await updateSet(ns, 'web', (set) => (set.spec.replicas = 2))
      await waitForPods(ns, (list) => list.length === 2, 'two pods left')
      const claims = await waitUntil(claimsPath(ns), (items) => (items.length === 2 ? items : undefined), 'two claims left')
      assert.deepEqual(names(claims), ['data-web-0', 'data-web-1'])
      assert.deepEqual(podEvents(pods.events.slice(mark), 'DELETED'), ['DELETED web-4', 'DELETED web-3', 'DELETED web-2'])
      assert.deepEqual(podEvents(pods.events.slice(mark), 'ADDED'), [])
      const set = await waitForSet(ns, 'web', (s) => s.replicas === 2 && s.observedGeneration === 3, 'status after scale down')
      assert.equal(set.status.readyReplicas, 2)
      assert.equal(set.status.availableReplicas, 2)
      assert.equal(set.status.currentReplicas, 2)
      assert.equal(set.status.updatedReplicas ?? 0, 0)
      assert.equal(set.status.currentRevision, firstRevision)
      assert.equal(set.status.updateRevision, secondRevision)
    })

    it('events: SuccessfulCreate and SuccessfulDelete on the StatefulSet, worded as Kubernetes words them', TIMEOUT, async () => {
      const set = await ok('GET', `${setsPath(ns)}/web`)
      const events = await waitUntil(
        `${eventsPath(ns)}?fieldSelector=involvedObject.name%3Dweb`,
        (items) => (items.some((e) => e.message === 'delete Pod web-2 in StatefulSet web successful') ? items : undefined),
        'the last delete event',
      )
      const messages = events.map((e: any) => `${e.reason}: ${e.message}`)
      for (const expected of [
        'SuccessfulCreate: create Claim data-web-0 Pod web-0 in StatefulSet web success',
        'SuccessfulCreate: create Pod web-0 in StatefulSet web successful',
        'SuccessfulCreate: create Pod web-4 in StatefulSet web successful',
        'SuccessfulDelete: delete Pod web-4 in StatefulSet web successful',
        'SuccessfulDelete: delete Pod web-3 in StatefulSet web successful',
      ]) {
        assert.ok(messages.includes(expected), `missing "${expected}" in ${JSON.stringify(messages)}`)
      }
      const event = events.find((e: any) => e.message === 'create Pod web-0 in StatefulSet web successful')
      assert.equal(event.type, 'Normal')
      assert.deepEqual(
        {kind: event.involvedObject.kind, apiVersion: event.involvedObject.apiVersion, name: event.involvedObject.name, namespace: event.involvedObject.namespace, uid: event.involvedObject.uid},
        {kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'web', namespace: ns, uid: set.metadata.uid},
      )
      assert.equal(event.source.component, 'statefulset-controller')
      assert.equal(event.count, 1)
    })
  })

  it('OrderedReady: a pod that is not Running and Ready blocks scale down until it is ready again', TIMEOUT, async () => {
    const ns = await namespace('blocked')
    const agent = await startAgent(ns)
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 3}))
    await waitForSet(ns, 'web', (s) => s.readyReplicas === 3, 'three ready')
    agent.stop()
    await setReady(ns, 'web-0', false)
    await waitForSet(ns, 'web', (s) => s.readyReplicas === 2, 'web-0 not ready')
    const recorder = await recordPods(ns)
    await updateSet(ns, 'web', (set) => (set.spec.replicas = 1))
    // the status of generation 2 comes from a sync that saw the scale down and web-0 not ready
    await waitForSet(ns, 'web', (s) => s.observedGeneration === 2, 'generation 2 observed')
    assert.deepEqual(names((await ok('GET', podsPath(ns))).items), ['web-0', 'web-1', 'web-2'], 'nothing deleted while web-0 is not ready')
    await setReady(ns, 'web-0')
    await waitForPods(ns, (list) => list.length === 1, 'one pod left')
    assert.deepEqual(podEvents(recorder.events, 'DELETED'), ['DELETED web-2', 'DELETED web-1'])
    recorder.close()
  })

  it('minReadySeconds: the next pod waits until the previous has been ready for minReadySeconds; availableReplicas follows', TIMEOUT, async () => {
    const ns = await namespace('minready')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 2, spec: {minReadySeconds: 2}}))
    await waitForSet(ns, 'web', (s) => s.replicas === 1, 'web-0 created')
    const since = Math.floor(Date.now() / 1000) * 1000
    await setReady(ns, 'web-0', true, seconds(since))
    const set = await waitForSet(ns, 'web', (s) => s.readyReplicas === 1, 'web-0 ready')
    const [, second] = await waitForPods(ns, (list) => list.length === 2, 'web-1 created')
    if (set.status.replicas === 1) assert.equal(set.status.availableReplicas, 0, 'ready is not yet available')
    assert.ok(Date.parse(second.metadata.creationTimestamp) >= since + 2000, `web-1 created at ${second.metadata.creationTimestamp}, web-0 ready since ${seconds(since)}`)
    await waitForSet(ns, 'web', (s) => s.availableReplicas === 1 && s.replicas === 2, 'web-0 available')
  })

  it('Parallel: pods are created and deleted all at once, without waiting for readiness', TIMEOUT, async () => {
    const ns = await namespace('parallel')
    const recorder = await recordPods(ns)
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 4, spec: {podManagementPolicy: 'Parallel'}}))
    const created = await waitForPods(ns, (list) => list.length === 4, 'four pods')
    assert.ok(created.every((p) => !isReady(p)), 'none of them ready')
    const set = await waitForSet(ns, 'web', (s) => s.replicas === 4, 'four counted')
    assert.equal(set.status.readyReplicas ?? 0, 0)
    await updateSet(ns, 'web', (s) => (s.spec.replicas = 0))
    await waitForPods(ns, (list) => list.length === 0, 'all deleted')
    assert.equal(podEvents(recorder.events, 'DELETED').length, 4)
    await waitForSet(ns, 'web', (s) => s.replicas === 0 && s.observedGeneration === 2, 'zero counted')
    recorder.close()
  })

  it('ordinals.start 5: pods web-5, web-6, web-7, in that order', TIMEOUT, async () => {
    const ns = await namespace('ordinals')
    const agent = await startAgent(ns)
    const recorder = await recordPods(ns)
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 3, spec: {ordinals: {start: 5}}}))
    await waitForSet(ns, 'web', (s) => s.readyReplicas === 3, 'three ready')
    agent.stop()
    const list = (await ok('GET', podsPath(ns))).items
    assert.deepEqual(names(list), ['web-5', 'web-6', 'web-7'])
    assert.deepEqual(list.map((p: any) => p.metadata.labels[POD_INDEX_LABEL]).sort(), ['5', '6', '7'])
    assert.deepEqual(podEvents(recorder.events, 'ADDED'), ['ADDED web-5', 'ADDED web-6', 'ADDED web-7'])
    recorder.close()
  })

  it('ControllerRevisions: one per distinct template, named <sts>-<hash>, numbered upward, a rollback renumbers, pruned to revisionHistoryLimit', TIMEOUT, async () => {
    const ns = await namespace('history')
    const created = await ok('POST', setsPath(ns), statefulSet('web', {replicas: 0, spec: {revisionHistoryLimit: 2}}))
    const first = (await waitForSet(ns, 'web', (s) => Boolean(s.updateRevision), 'first revision')).status.updateRevision
    const revision = await ok('GET', `${revisionsPath(ns)}/${first}`)
    assert.equal(revision.revision, 1)
    assert.equal(revision.metadata.name, `web-${hashRevision(revision.data, 0)}`)
    assert.equal(revision.metadata.labels['controller.orch.io/hash'], hashRevision(revision.data, 0))
    assert.equal(revision.metadata.labels.app, 'web')
    assert.deepEqual(revision.metadata.ownerReferences, [
      {apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true},
    ])
    const {$patch, ...template} = revision.data.spec.template
    assert.equal($patch, 'replace')
    // the template as Go's types encode it: creationTimestamp null, every container's resources {}
    const goEncoded = {
      ...created.spec.template,
      metadata: {creationTimestamp: null, ...created.spec.template.metadata},
      spec: {...created.spec.template.spec, containers: created.spec.template.spec.containers.map((c: any) => ({...c, resources: c.resources ?? {}}))},
    }
    assert.deepEqual(template, goEncoded)
    assert.deepEqual(Object.keys(revision.data.spec.template), Object.keys(revision.data.spec.template).sort(), 'keys sorted as Go marshals maps')

    const byImage = new Map<number, string>([[1, first]])
    for (const version of [2, 3, 4, 5]) {
      await updateSet(ns, 'web', (set) => (set.spec.template.spec.containers[0].image = `registry.example/app:${version}`))
      const set = await waitForSet(ns, 'web', (s) => s.observedGeneration === version && s.currentRevision === s.updateRevision, `revision ${version}`)
      byImage.set(version, set.status.updateRevision)
    }
    assert.equal(new Set(byImage.values()).size, 5, 'five distinct revisions')
    const pruned = await waitUntil(revisionsPath(ns), (items) => (items.length === 3 ? items : undefined), 'history pruned to 2 + the live one')
    assert.deepEqual(pruned.map((r: any) => [r.revision, r.metadata.name]).sort(), [[3, byImage.get(3)], [4, byImage.get(4)], [5, byImage.get(5)]])

    // back to the template of revision 4: no new revision, revision 4 becomes number 6
    await updateSet(ns, 'web', (set) => (set.spec.template.spec.containers[0].image = 'registry.example/app:4'))
    const rolledBack = await waitForSet(ns, 'web', (s) => s.observedGeneration === 6 && s.currentRevision === s.updateRevision, 'rollback')
    assert.equal(rolledBack.status.updateRevision, byImage.get(4))
    const after = await waitUntil(revisionsPath(ns), (items) => (items.some((r) => r.revision === 6) ? items : undefined), 'renumbered')
    assert.deepEqual(after.map((r: any) => [r.revision, r.metadata.name]).sort(), [[3, byImage.get(3)], [5, byImage.get(5)], [6, byImage.get(4)]])
  })

  it('ControllerRevision data is getPatch\'s bytes, Go\'s encoding of the typed template with keys sorted (creationTimestamp null, resources {}), which kubectl rollout undo compares byte for byte', TIMEOUT, async () => {
    const ns = await namespace('revision-bytes')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 0}))
    const name = (await waitForSet(ns, 'web', (s) => Boolean(s.updateRevision), 'first revision')).status.updateRevision
    const raw = await api('GET', `${revisionsPath(ns)}/${name}`)
    const data = /"data":(\{.*\}),"revision"/.exec(raw.text)?.[1] ?? /"data":(\{.*\})\s*,?\s*"/.exec(raw.text)?.[1]
    const expected =
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"registry.example/app:1","imagePullPolicy":"IfNotPresent","name":"app","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"orch-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}'
    assert.equal(JSON.stringify(raw.json.data), expected)
    assert.ok(data === undefined || data === expected, `served bytes: ${data}`)
  })

  it('a revision written before its template was Go-encoded still equals the template: no new revision, no rolling update', TIMEOUT, async () => {
    const ns = await namespace('revision-upgrade')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 1}))
    const first = (await waitForSet(ns, 'web', (s) => Boolean(s.updateRevision), 'first revision')).status.updateRevision
    const revision = await ok('GET', `${revisionsPath(ns)}/${first}`)
    // the data as orch stored it before: the template as the set holds it, without Go's zero fields
    const set = await ok('GET', `${setsPath(ns)}/web`)
    await ok('PUT', `${revisionsPath(ns)}/${first}`, {...revision, data: {spec: {template: {$patch: 'replace', ...set.spec.template}}}})
    // a spec change outside the template: the controller compares the template with the revisions again
    const scaled = await updateSet(ns, 'web', (s) => (s.spec.replicas = 2))
    await waitForSet(ns, 'web', (s) => s.observedGeneration === scaled.metadata.generation, 'observed')
    const revisions = await ok('GET', revisionsPath(ns))
    assert.deepEqual(revisions.items.map((r: any) => r.metadata.name), [first])
    assert.equal((await ok('GET', `${setsPath(ns)}/web`)).status.updateRevision, first)
  })

  it('collisionCount: a revision name taken by different data counts a collision and is rehashed', TIMEOUT, async () => {
    const probeNs = await namespace('collision-probe')
    const ns = await namespace('collision')
    await ok('POST', setsPath(probeNs), statefulSet('web', {replicas: 0}))
    const probe = (await waitForSet(probeNs, 'web', (s) => Boolean(s.updateRevision), 'probe revision')).status.updateRevision
    const data = (await ok('GET', `${revisionsPath(probeNs)}/${probe}`)).data
    // the same template in another namespace hashes the same: take that name with other data
    await ok('POST', revisionsPath(ns), {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: {name: probe}, data: {spec: {template: {$patch: 'replace'}}}, revision: 1})
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 0}))
    const set = await waitForSet(ns, 'web', (s) => Boolean(s.updateRevision), 'revision despite the collision')
    assert.equal(set.status.collisionCount, 1)
    assert.equal(set.status.updateRevision, `web-${hashRevision(data, 1)}`)
    assert.notEqual(set.status.updateRevision, probe)
    const revision = await ok('GET', `${revisionsPath(ns)}/${set.status.updateRevision}`)
    assert.deepEqual(revision.data, data)
  })

  it('RollingUpdate maxUnavailable: at most maxUnavailable pods (30% of 5, rounded up: 2) unavailable at a time', TIMEOUT, async () => {
    const ns = await namespace('maxunavailable')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 5, spec: {podManagementPolicy: 'Parallel', updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: '30%'}}}}))
    await waitForPods(ns, (list) => list.length === 5, 'five pods')
    for (let k = 0; k < 5; k++) await setReady(ns, `web-${k}`)
    await waitForSet(ns, 'web', (s) => s.readyReplicas === 5, 'five ready')
    const before = new Map<string, string>((await ok('GET', podsPath(ns))).items.map((p: any) => [p.metadata.name, p.metadata.uid]))
    const recorder = await recordPods(ns)
    await updateSet(ns, 'web', (set) => (set.spec.template.spec.containers[0].image = 'registry.example/app:2'))
    // a status of 5 pods, 2 of them updated (and not ready), comes from a sync that declined a third deletion
    await waitForSet(ns, 'web', (s) => s.replicas === 5 && s.updatedReplicas === 2 && s.readyReplicas === 3, 'two replaced')
    const now = await ok('GET', podsPath(ns))
    const replaced = now.items.filter((p: any) => p.metadata.uid !== before.get(p.metadata.name)).map((p: any) => p.metadata.name)
    assert.deepEqual(replaced.sort(byOrdinal), ['web-3', 'web-4'], 'the two highest ordinals first')
    const agent = await startAgent(ns)
    const done = await waitForSet(ns, 'web', (s) => s.updatedReplicas === 5 && s.readyReplicas === 5 && s.currentRevision === s.updateRevision, 'all updated')
    agent.stop()
    assert.equal(done.status.currentReplicas, 5)
    // replay the pod events: never more than two of the five ordinals without a ready pod
    const ready = new Map<string, boolean>([...before.keys()].map((n) => [n, true]))
    let worst = 0
    for (const event of recorder.events) {
      if (event.type === 'DELETED') ready.set(event.object.metadata.name, false)
      else if (event.type === 'ADDED' || event.type === 'MODIFIED') ready.set(event.object.metadata.name, isReady(event.object))
      worst = Math.max(worst, [...ready.values()].filter((r) => !r).length)
    }
    recorder.close()
    assert.equal(worst, 2)
  })

  it('updateStrategy.rollingUpdate.maxUnavailable: "default 1; beta, enabled by default"; with MaxUnavailableStatefulSet=false it is dropped unless the stored set already uses it', {timeout: 90_000}, async () => {
    const ns = await namespace('maxunavailable-default')
    const created = await ok('POST', setsPath(ns), statefulSet('web', {replicas: 0}))
    assert.deepEqual(created.spec.updateStrategy, {type: 'RollingUpdate', rollingUpdate: {partition: 0, maxUnavailable: 1}})
    const dataDir = tempDir()
    let other: RunningOrch | undefined
    try {
      // stored while the gate is on ...
      other = await startOrchServer(['--controllers='], {dataDir})
      base = other.url
      await namespace('gate')
      const rolling = (maxUnavailable: number) => ({updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable}}})
      await ok('POST', setsPath('gate'), statefulSet('early', {replicas: 0, spec: rolling(2)}))
      await other.cleanup()
      other = undefined
      // ... then served with it off
      other = await startOrchServer(['--controllers=', '--feature-gates', 'MaxUnavailableStatefulSet=false'], {dataDir})
      base = other.url
      const late = await ok('POST', setsPath('gate'), statefulSet('late', {replicas: 0, spec: rolling(2)}))
      assert.deepEqual(late.spec.updateStrategy.rollingUpdate, {partition: 0}, 'dropped on create, no default')
      const lateUpdate = await ok('PUT', `${setsPath('gate')}/late`, {...late, spec: {...late.spec, ...rolling(3)}})
      assert.deepEqual(lateUpdate.spec.updateStrategy.rollingUpdate, {partition: 0}, 'dropped on update')
      const early = await ok('GET', `${setsPath('gate')}/early`)
      const earlyUpdate = await ok('PUT', `${setsPath('gate')}/early`, {...early, spec: {...early.spec, ...rolling(3)}})
      assert.equal(earlyUpdate.spec.updateStrategy.rollingUpdate.maxUnavailable, 3, 'kept: the stored set uses it')
    } finally {
      await other?.cleanup()
      base = server.url
      rmSync(dataDir, {recursive: true, force: true})
    }
  })

  it('OnDelete: a template change deletes nothing; a pod deleted by hand comes back at the update revision', TIMEOUT, async () => {
    const ns = await namespace('ondelete')
    const agent = await startAgent(ns)
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 2, spec: {updateStrategy: {type: 'OnDelete'}}}))
    const first = await waitForSet(ns, 'web', (s) => s.readyReplicas === 2, 'two ready')
    const before = await ok('GET', podsPath(ns))
    await updateSet(ns, 'web', (set) => (set.spec.template.spec.containers[0].image = 'registry.example/app:2'))
    const changed = await waitForSet(ns, 'web', (s) => s.observedGeneration === 2, 'generation 2')
    assert.notEqual(changed.status.updateRevision, first.status.updateRevision)
    assert.equal(changed.status.currentRevision, first.status.currentRevision)
    assert.equal(changed.status.updatedReplicas ?? 0, 0)
    assert.deepEqual((await ok('GET', podsPath(ns))).items.map((p: any) => p.metadata.uid), before.items.map((p: any) => p.metadata.uid), 'nothing deleted')
    await ok('DELETE', `${podsPath(ns)}/web-1`)
    const set = await waitForSet(ns, 'web', (s) => s.updatedReplicas === 1 && s.readyReplicas === 2, 'web-1 back')
    agent.stop()
    const web1 = await ok('GET', `${podsPath(ns)}/web-1`)
    assert.equal(web1.metadata.labels[REVISION_LABEL], changed.status.updateRevision)
    assert.equal(web1.spec.containers[0].image, 'registry.example/app:2')
    const web0 = await ok('GET', `${podsPath(ns)}/web-0`)
    assert.equal(web0.metadata.uid, before.items.find((p: any) => p.metadata.name === 'web-0').metadata.uid)
    assert.equal(set.status.currentReplicas, 1)
  })

  it('a Failed pod is deleted and created again', TIMEOUT, async () => {
    const ns = await namespace('failed')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 1}))
    const [pod] = await waitForPods(ns, (list) => list.length === 1, 'web-0')
    // unconditional (no resourceVersion): the scheduler may have written PodScheduled meanwhile
    const {resourceVersion: _rv, ...metadata} = pod.metadata
    await ok('PUT', `${podsPath(ns)}/web-0/status`, {...pod, metadata, status: {...pod.status, phase: 'Failed'}})
    const [again] = await waitForPods(ns, (list) => list.length === 1 && list[0].metadata.uid !== pod.metadata.uid, 'web-0 again')
    assert.equal(again.status.phase, 'Pending')
  })

  it('the same event again bumps the count and lastTimestamp of the Event already written (client-go\'s EventCorrelator), instead of a new Event each time', TIMEOUT, async () => {
    const ns = await namespace('repeated-events')
    await ok('POST', setsPath(ns), statefulSet('web', {replicas: 1}))
    let [pod] = await waitForPods(ns, (list) => list.length === 1, 'web-0')
    for (let round = 0; round < 2; round++) {
      await ok('DELETE', `${podsPath(ns)}/web-0?gracePeriodSeconds=0`)
      const uid = pod.metadata.uid
      ;[pod] = await waitForPods(ns, (list) => list.length === 1 && list[0].metadata.uid !== uid, 'web-0 again')
    }
    const creates = await waitUntil(
      `${eventsPath(ns)}?fieldSelector=involvedObject.name%3Dweb`,
      (items) => {
        const matching = items.filter((e) => e.message === 'create Pod web-0 in StatefulSet web successful')
        return matching.length === 1 && matching[0].count === 3 ? matching : undefined
      },
      'one SuccessfulCreate Event for web-0 with count 3',
    )
    assert.equal(creates[0].reason, 'SuccessfulCreate')
    assert.ok(creates[0].lastTimestamp >= creates[0].firstTimestamp)
  })

  it('an orphan pod that matches the selector and the name is adopted; once ready its identity labels are restored', TIMEOUT, async () => {
    const ns = await namespace('adopt')
    const orphan = await ok('POST', podsPath(ns), {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web-0', labels: {app: 'web'}}, spec: {containers: [{name: 'app', image: 'registry.example/app:1'}]}})
    const created = await ok('POST', setsPath(ns), statefulSet('web', {replicas: 1}))
    const [adopted] = await waitForPods(ns, (list) => list[0]?.metadata.ownerReferences?.length === 1, 'web-0 adopted')
    assert.equal(adopted.metadata.uid, orphan.metadata.uid)
    assert.deepEqual(adopted.metadata.ownerReferences, [
      {apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true},
    ])
    await setReady(ns, 'web-0')
    // ready: its identity labels are put back; it has no revision, so the rolling update replaces it
    const [replaced] = await waitForPods(ns, (list) => list.length === 1 && list[0].metadata.uid !== orphan.metadata.uid, 'web-0 replaced')
    assert.equal(replaced.metadata.labels[POD_NAME_LABEL], 'web-0')
    const events = await ok('GET', `${eventsPath(ns)}?fieldSelector=involvedObject.name%3Dweb`)
    const messages = events.items.map((e: any) => `${e.reason}: ${e.message}`)
    assert.ok(messages.includes('SuccessfulUpdate: update Pod web-0 in StatefulSet web successful'), JSON.stringify(messages))
    assert.ok(messages.includes('SuccessfulDelete: delete Pod web-0 in StatefulSet web successful'), JSON.stringify(messages))
  })

  it('whenDeleted: Delete: deleting the StatefulSet deletes its pods, revisions and the claims it owns; Retain keeps them', TIMEOUT, async () => {
    const ns = await namespace('deleted')
    const gone = await ok('POST', setsPath(ns), statefulSet('gone', {replicas: 2, claims: ['data'], spec: {podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: {whenDeleted: 'Delete'}}}))
    await ok('POST', setsPath(ns), statefulSet('kept', {replicas: 1, claims: ['data'], spec: {podManagementPolicy: 'Parallel'}}))
    await waitForPods(ns, (list) => list.length === 3, 'three pods')
    const claims = await waitUntil(claimsPath(ns), (items) => (items.length === 3 ? items : undefined), 'three claims')
    for (const claim of claims.filter((c: any) => c.metadata.name.startsWith('data-gone-'))) {
      assert.deepEqual(claim.metadata.ownerReferences, [
        {apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'gone', uid: gone.metadata.uid, controller: true, blockOwnerDeletion: true},
      ])
    }
    await ok('DELETE', `${setsPath(ns)}/gone`)
    await ok('DELETE', `${setsPath(ns)}/kept`)
    await waitForPods(ns, (list) => list.length === 0, 'no pods')
    const left = await waitUntil(claimsPath(ns), (items) => (items.length === 1 ? items : undefined), 'only the retained claim')
    assert.deepEqual(names(left), ['data-kept-0'])
    await waitUntil(revisionsPath(ns), (items) => items.length === 0, 'no revisions')
  })

  it('what a StatefulSet deleted while no controller ran owned is deleted when the controller starts', {timeout: 90_000}, async () => {
    const dataDir = tempDir()
    const ns = 'restart'
    try {
      let other = await startOrchServer([], {dataDir})
      base = other.url
      await namespace(ns)
      await ok('POST', setsPath(ns), statefulSet('gone', {replicas: 2, claims: ['data'], spec: {podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: {whenDeleted: 'Delete'}}}))
      await waitForPods(ns, (list) => list.length === 2, 'two pods')
      await waitUntil(claimsPath(ns), (items) => items.length === 2, 'two claims')
      await other.cleanup()

      other = await startOrchServer(['--controllers='], {dataDir})
      base = other.url
      await ok('DELETE', `${setsPath(ns)}/gone`)
      assert.equal((await ok('GET', podsPath(ns))).items.length, 2, 'no controller: the pods stay')
      await other.cleanup()

      other = await startOrchServer([], {dataDir})
      base = other.url
      await waitForPods(ns, (list) => list.length === 0, 'pods deleted')
      await waitUntil(claimsPath(ns), (items) => items.length === 0, 'claims deleted')
      await waitUntil(revisionsPath(ns), (items) => items.length === 0, 'revisions deleted')
      await other.cleanup()
    } finally {
      base = server.url
      rmSync(dataDir, {recursive: true, force: true})
    }
  })
})
