// Deletion propagation for StatefulSets (DeleteOptions.propagationPolicy and the deprecated
// orphanDependents): the API server marks the set with the orphan or foregroundDeletion finalizer, as
// Kubernetes' registry does for every kind, and the garbage collector orphans or deletes the set's
// dependents before the finalizer goes (the StatefulSet controller leaves a set being deleted alone).
// Every wait is a watch.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, waitForCollection, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, type OrchServer} from '../support/server.js'
import {statefulSet as manifest} from '../support/statefulset.js'

const TIMEOUT = {timeout: 60_000}
const setsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const revisionsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/controllerrevisions`
/** `replicas` pods, created and deleted all at once */
const statefulSet = (name: string, replicas: number) => manifest(name, {replicas, spec: {podManagementPolicy: 'Parallel'}})
const deleteOptions = (options: Record<string, unknown>) => ({kind: 'DeleteOptions', apiVersion: 'v1', ...options})

const namesOf = (items: any[]) => items.map((i) => i.metadata.name).sort()
const ownedBy = (uid: string) => (object: any) => (object.metadata.ownerReferences ?? []).some((r: any) => r.uid === uid)

function client(server: () => OrchServer) {
  const api = (method: string, path: string, body?: unknown): Promise<HttpResult> => call(server().url, method, path, body)
  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await api(method, path, body)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }
  /** Waits (list, then watch) until check(items) holds; returns the items. */
  function waitUntil(path: string, check: (items: any[]) => boolean, what: string): Promise<any[]> {
    return waitForCollection(server().url, path, (items) => check(items) && items, what, 60_000)
  }
  async function namespace(name: string): Promise<string> {
    await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
    return name
  }
  return {api, ok, waitUntil, namespace}
}

describe('StatefulSet deletion propagation with the StatefulSet controller and the garbage collector', () => {
  let server: OrchServer
  const {api, ok, waitUntil, namespace} = client(() => server)
  before(async () => {
    server = await startOrchServer(['--controllers', 'statefulset,garbagecollector'])
  })
  after(async () => server.cleanup())

  /** A set of `replicas` pods, once its pods and its revision are there; returns the set. */
  async function runningSet(ns: string, name: string, replicas: number): Promise<any> {
    const set = await ok('POST', setsPath(ns), statefulSet(name, replicas))
    await waitUntil(podsPath(ns), (pods) => pods.filter(ownedBy(set.metadata.uid)).length === replicas, `${replicas} pods of ${name}`)
    await waitUntil(revisionsPath(ns), (revisions) => revisions.some(ownedBy(set.metadata.uid)), `a revision of ${name}`)
    return set
  }

  it('propagationPolicy Orphan: the StatefulSet is marked with the orphan finalizer and goes; its pods and revisions stay, without a reference to it', TIMEOUT, async () => {
    const ns = await namespace('orphaning')
    const set = await runningSet(ns, 'web', 2)
    const deleted = await api('DELETE', `${setsPath(ns)}/web`, deleteOptions({propagationPolicy: 'Orphan'}))
    assert.equal(deleted.status, 200, deleted.text)
    assert.deepEqual(deleted.json.metadata.finalizers, ['orphan'])
    assert.ok(deleted.json.metadata.deletionTimestamp)
    await waitUntil(setsPath(ns), (sets) => sets.length === 0, 'the set gone')
    const pods = (await ok('GET', podsPath(ns))).items
    assert.deepEqual(namesOf(pods), ['web-0', 'web-1'])
    for (const pod of pods) assert.equal(pod.metadata.deletionTimestamp, undefined)
    assert.deepEqual(pods.filter(ownedBy(set.metadata.uid)), [])
    const revisions = (await ok('GET', revisionsPath(ns))).items
    assert.equal(revisions.length, 1)
    assert.deepEqual(revisions.filter(ownedBy(set.metadata.uid)), [])
  })

  it('orphanDependents=true (deprecated) orphans too', TIMEOUT, async () => {
    const ns = await namespace('orphaning-deprecated')
    const set = await runningSet(ns, 'db', 1)
    const deleted = await api('DELETE', `${setsPath(ns)}/db?orphanDependents=true`)
    assert.equal(deleted.status, 200, deleted.text)
    assert.deepEqual(deleted.json.metadata.finalizers, ['orphan'])
    await waitUntil(setsPath(ns), (sets) => sets.length === 0, 'the set gone')
    const pods = (await ok('GET', podsPath(ns))).items
    assert.deepEqual(namesOf(pods), ['db-0'])
    assert.deepEqual(pods.filter(ownedBy(set.metadata.uid)), [], 'the pod was orphaned before the set went')
  })

  it('propagationPolicy Foreground: the StatefulSet is marked with foregroundDeletion and stays until its dependents are gone, a pod held by a finalizer included', TIMEOUT, async () => {
    const ns = await namespace('foreground')
    const set = await runningSet(ns, 'app', 2)
    // a finalizer of someone else's holds app-0 after its deletion, so the set must wait for it
    const hold = await call(server.url, 'PATCH', `${podsPath(ns)}/app-0`, {metadata: {finalizers: ['example.com/hold']}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(hold.status, 200, hold.text)
    const deleted = await api('DELETE', `${setsPath(ns)}/app`, deleteOptions({propagationPolicy: 'Foreground'}))
    assert.equal(deleted.status, 200, deleted.text)
    assert.deepEqual(deleted.json.metadata.finalizers, ['foregroundDeletion'])
    const sets = await openWatch(server.url, `${setsPath(ns)}?watch=1&resourceVersion=${deleted.json.metadata.resourceVersion}`)
    try {
      const left = await waitUntil(podsPath(ns), (pods) => pods.length === 1 && Boolean(pods[0].metadata.deletionTimestamp), 'only app-0, being deleted')
      assert.deepEqual(namesOf(left), ['app-0'])
      await waitUntil(revisionsPath(ns), (revisions) => !revisions.some(ownedBy(set.metadata.uid)), 'no revision of the set')
      // releasing app-0 deletes it; only then may the set go
      const held = left[0]
      const released = await ok('PUT', `${podsPath(ns)}/app-0`, {...held, metadata: {...held.metadata, finalizers: []}})
      const podGoneAt = Number(released.metadata.resourceVersion)
      for (let n = 1; ; n++) {
        const event = (await sets.waitFor(n))[n - 1]
        if (event.type !== 'DELETED') continue
        assert.ok(Number(event.object.metadata.resourceVersion) > podGoneAt, `the set went at ${event.object.metadata.resourceVersion}, before its pod (${podGoneAt})`)
        break
      }
    } finally {
      sets.close()
    }
  })

  it('orch delete --cascade=orphan keeps the pods; the default (background) deletes them', TIMEOUT, async () => {
    const ns = await namespace('cascade-cli')
    const kept = await runningSet(ns, 'kept', 1)
    await runningSet(ns, 'gone', 1)
    const orphaned = await runOrch(['delete', 'statefulset', 'kept', '-n', ns, '--cascade=orphan'], {env: server.cliEnv})
    assert.equal(orphaned.code, 0, orphaned.stderr)
    const background = await runOrch(['delete', 'statefulset', 'gone', '-n', ns], {env: server.cliEnv})
    assert.equal(background.code, 0, background.stderr)
    await waitUntil(setsPath(ns), (sets) => sets.length === 0, 'both sets gone')
    const pods = await waitUntil(podsPath(ns), (items) => !items.some((p) => p.metadata.name === 'gone-0'), 'gone-0 deleted')
    assert.deepEqual(namesOf(pods), ['kept-0'])
    assert.deepEqual(pods.filter(ownedBy(kept.metadata.uid)), [], 'kept-0 was orphaned before its set went')
  })

  it('propagationPolicy Foreground waits for a claim the set owns (whenDeleted: Delete) that a finalizer holds', TIMEOUT, async () => {
    const ns = await namespace('foreground-claim')
    const body = manifest('vol', {replicas: 1, claims: ['data'], spec: {persistentVolumeClaimRetentionPolicy: {whenDeleted: 'Delete'}}})
    const set = await ok('POST', setsPath(ns), body)
    const claimPath = `/api/v1/namespaces/${ns}/persistentvolumeclaims/data-vol-0`
    await waitUntil(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, (claims) => claims.some(ownedBy(set.metadata.uid)), 'the claim of vol-0')
    const hold = await call(server.url, 'PATCH', claimPath, {metadata: {finalizers: ['example.com/hold']}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(hold.status, 200, hold.text)
    const deleted = await ok('DELETE', `${setsPath(ns)}/vol`, deleteOptions({propagationPolicy: 'Foreground'}))
    const claims = await waitUntil(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, (items) => items.length === 1 && Boolean(items[0].metadata.deletionTimestamp), 'the claim being deleted')
    await waitUntil(podsPath(ns), (pods) => pods.length === 0, 'no pods')
    const sets = await openWatch(server.url, `${setsPath(ns)}?watch=1&resourceVersion=${deleted.metadata.resourceVersion}`)
    try {
      const released = await ok('PUT', claimPath, {...claims[0], metadata: {...claims[0].metadata, finalizers: []}})
      for (let n = 1; ; n++) {
        const event = (await sets.waitFor(n))[n - 1]
        if (event.type !== 'DELETED') continue
        assert.ok(Number(event.object.metadata.resourceVersion) > Number(released.metadata.resourceVersion), 'the set went only after its claim')
        break
      }
    } finally {
      sets.close()
    }
  })
})

describe('StatefulSet deletion propagation in the API server (no controller runs)', () => {
  let server: OrchServer
  const {api, ok, namespace} = client(() => server)
  before(async () => {
    server = await startOrchServer(['--controllers='])
  })
  after(async () => server.cleanup())

  it('a later DELETE changes the propagation of an object being deleted: Foreground swaps orphan for foregroundDeletion; Background removes it and the object goes', async () => {
    const ns = await namespace('swap')
    await ok('POST', setsPath(ns), {...statefulSet('s', 1), metadata: {name: 's', finalizers: ['example.com/keep']}})
    const orphaned = await ok('DELETE', `${setsPath(ns)}/s`, deleteOptions({propagationPolicy: 'Orphan'}))
    assert.deepEqual(orphaned.metadata.finalizers, ['example.com/keep', 'orphan'])
    const again = await ok('DELETE', `${setsPath(ns)}/s`)
    assert.deepEqual(again.metadata.finalizers, ['example.com/keep', 'orphan'], 'without a say in the request, the finalizer stands')
    const foreground = await ok('DELETE', `${setsPath(ns)}/s`, deleteOptions({propagationPolicy: 'Foreground'}))
    assert.deepEqual(foreground.metadata.finalizers, ['example.com/keep', 'foregroundDeletion'])
    assert.equal(foreground.metadata.deletionTimestamp, orphaned.metadata.deletionTimestamp)
    const background = await ok('DELETE', `${setsPath(ns)}/s`, deleteOptions({propagationPolicy: 'Background'}))
    assert.deepEqual(background.metadata.finalizers, ['example.com/keep'])
    // the other finalizer still holds it; once that goes, so does the set
    await ok('PUT', `${setsPath(ns)}/s`, {...background, metadata: {...background.metadata, finalizers: []}})
    assert.equal((await api('GET', `${setsPath(ns)}/s`)).status, 404)

    await ok('POST', setsPath(ns), statefulSet('t', 1))
    await ok('DELETE', `${setsPath(ns)}/t`, deleteOptions({propagationPolicy: 'Foreground'}))
    const gone = await api('DELETE', `${setsPath(ns)}/t`, deleteOptions({propagationPolicy: 'Background'}))
    assert.equal(gone.status, 200, gone.text)
    assert.equal(gone.json.kind, 'Status')
    assert.equal((await api('GET', `${setsPath(ns)}/t`)).status, 404)
  })

  it('a null propagationPolicy or orphanDependents is no say (a nil pointer in Kubernetes): the finalizer the object has stands', async () => {
    const ns = await namespace('nulls')
    await ok('POST', setsPath(ns), statefulSet('n', 1))
    await ok('DELETE', `${setsPath(ns)}/n`, deleteOptions({propagationPolicy: 'Orphan'}))
    const again = await ok('DELETE', `${setsPath(ns)}/n`, deleteOptions({propagationPolicy: null}))
    assert.deepEqual(again.metadata.finalizers, ['orphan'])
    const deprecated = await ok('DELETE', `${setsPath(ns)}/n`, deleteOptions({orphanDependents: null}))
    assert.deepEqual(deprecated.metadata.finalizers, ['orphan'])
  })

  it('orphanDependents=false on a set another finalizer holds answers 202 with the marked object', async () => {
    const ns = await namespace('accepted')
    await ok('POST', setsPath(ns), {...statefulSet('a', 1), metadata: {name: 'a', finalizers: ['example.com/keep']}})
    const deleted = await api('DELETE', `${setsPath(ns)}/a`, deleteOptions({orphanDependents: false}))
    assert.equal(deleted.status, 202, deleted.text)
    assert.deepEqual(deleted.json.metadata.finalizers, ['example.com/keep'])
  })

  it('marking an object for deletion bumps its generation (markAsDeleting); a later DELETE does not', async () => {
    const ns = await namespace('generation')
    const created = await ok('POST', setsPath(ns), statefulSet('g', 1))
    const marked = await ok('DELETE', `${setsPath(ns)}/g`, deleteOptions({propagationPolicy: 'Orphan'}))
    assert.equal(marked.metadata.generation, created.metadata.generation + 1)
    const again = await ok('DELETE', `${setsPath(ns)}/g`, deleteOptions({propagationPolicy: 'Foreground'}))
    assert.equal(again.metadata.generation, marked.metadata.generation)
  })

  it('"finalizer orphan and foregroundDeletion cannot be both set": 422, nothing stored', async () => {
    const ns = await namespace('both')
    const r = await api('POST', setsPath(ns), {...statefulSet('b', 1), metadata: {name: 'b', finalizers: ['orphan', 'foregroundDeletion']}})
    assert.equal(r.status, 422, r.text)
    assert.match(r.json.message, /finalizer orphan and foregroundDeletion cannot be both set/)
    assert.equal(r.json.details.causes[0].field, 'metadata.finalizers')
    assert.equal((await api('GET', `${setsPath(ns)}/b`)).status, 404)
  })

  it('dryRun=All with Orphan answers the marked object and stores nothing', async () => {
    const ns = await namespace('dry')
    await ok('POST', setsPath(ns), statefulSet('d', 1))
    const dry = await ok('DELETE', `${setsPath(ns)}/d?dryRun=All`, deleteOptions({propagationPolicy: 'Orphan'}))
    assert.deepEqual(dry.metadata.finalizers, ['orphan'])
    const stored = await ok('GET', `${setsPath(ns)}/d`)
    assert.equal(stored.metadata.finalizers, undefined)
    assert.equal(stored.metadata.deletionTimestamp, undefined)
  })

  it('every kind is marked, not only StatefulSets: a ConfigMap deleted with Orphan or Foreground carries the finalizer (with no collector running, it stays)', async () => {
    const ns = await namespace('plain')
    for (const [policy, finalizer] of [['Orphan', 'orphan'], ['Foreground', 'foregroundDeletion']]) {
      const name = `cm-${policy.toLowerCase()}`
      await ok('POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})
      const deleted = await api('DELETE', `/api/v1/namespaces/${ns}/configmaps/${name}`, deleteOptions({propagationPolicy: policy}))
      assert.equal(deleted.status, 200, deleted.text)
      assert.deepEqual(deleted.json.metadata.finalizers, [finalizer])
      assert.ok(deleted.json.metadata.deletionTimestamp)
      const stored = await ok('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)
      assert.deepEqual(stored.metadata.finalizers, [finalizer])
      // Background takes the finalizer off again, and the object goes
      const gone = await api('DELETE', `/api/v1/namespaces/${ns}/configmaps/${name}`, deleteOptions({propagationPolicy: 'Background'}))
      assert.equal(gone.status, 200, gone.text)
      assert.equal((await api('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).status, 404)
    }
  })
})
