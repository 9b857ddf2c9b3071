// The garbage collector (`--controllers=garbagecollector`) against a real `orch server`: background
// collection of dependents whose owners are gone (confirmed by a live GET), dangling references removed
// while another owner stays, orphaning and foreground deletion for any kind, cross-kind owners (a
// StatefulSet's pods, ConfigMaps owned by a StatefulSet or a pod, a Node's Lease written by a real
// agent), and dependents of owners deleted while no collector ran. Every wait is a list and a watch.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, describe, it} from 'node:test'
import {NODE_LEASE_NAMESPACE} from '../../src/api/coordination/lease.js'
import {BOOTSTRAP_TOKEN, startAgent} from '../support/agent.js'
import {call, openWatch, waitForCollection, type HttpResult} from '../support/http.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {statefulSet} from '../support/statefulset.js'

const TIMEOUT = {timeout: 90_000}
const CONTROLLERS = '--controllers=garbagecollector,statefulset,csrapproving,csrsigning'
const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const setsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`
const deleteOptions = (options: Record<string, unknown>) => ({kind: 'DeleteOptions', apiVersion: 'v1', ...options})
const MERGE = {'Content-Type': 'application/merge-patch+json'}

/** An owner reference to `owner` (an object as the server answered it). */
function refTo(owner: any, extra: Record<string, unknown> = {}): any {
  return {apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, ...extra}
}

function configMap(name: string, ownerReferences?: any[], finalizers?: string[]): any {
  return {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, ...(ownerReferences ? {ownerReferences} : {}), ...(finalizers ? {finalizers} : {})}}
}

const namesOf = (items: any[]) => items.map((i) => i.metadata.name).sort()
const refsOf = (object: any) => object.metadata.ownerReferences ?? []

describe('the garbage collector', () => {
  let server: OrchServer
  let base = ''
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult> => call(base, method, path, body, headers)
  async function ok(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any> {
    const r = await api(method, path, body, headers)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }
  /** Lists, then watches, until check(items) holds; returns the items. */
  const waitUntil = (path: string, check: (items: any[]) => boolean, what: string): Promise<any[]> =>
    waitForCollection(base, path, (items) => check(items) && items, what, 60_000)
  async function namespace(name: string): Promise<string> {
    await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
    return name
  }
  /** Resolves with the resourceVersion of the named object's DELETED event, watched from `fromRv`. */
  async function deletedAt(collection: string, name: string, fromRv: string): Promise<number> {
    const stream = await openWatch(base, `${collection}?watch=1&resourceVersion=${fromRv}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let n = 1; ; n++) {
        const event = (await Promise.race([stream.waitFor(n), stream.ended.then(() => undefined)]))?.[n - 1]
        if (!event) throw new Error(`the watch of ${name} ended before its deletion`)
        if (event.type === 'DELETED') return Number(event.object.metadata.resourceVersion)
      }
    } finally {
      stream.close()
    }
  }

  before(async () => {
    server = await startOrchServer([CONTROLLERS, '--bootstrap-token', BOOTSTRAP_TOKEN])
    base = server.url
  })
  after(async () => server?.cleanup())

  it('a dependent whose owner is gone is deleted (Background), and so is its own dependent', TIMEOUT, async () => {
    const ns = await namespace('background')
    const owner = await ok('POST', cmPath(ns), configMap('owner'))
    const child = await ok('POST', cmPath(ns), configMap('child', [refTo(owner)]))
    await ok('POST', cmPath(ns), configMap('grandchild', [refTo(child)]))
    await ok('POST', cmPath(ns), configMap('bystander'))
    const deleted = await api('DELETE', `${cmPath(ns)}/owner`)
    assert.equal(deleted.status, 200, deleted.text)
    assert.equal(deleted.json.kind, 'Status', 'Background: the owner goes at once')
    const left = await waitUntil(cmPath(ns), (items) => !items.some((i) => ['child', 'grandchild'].includes(i.metadata.name)), 'child and grandchild collected')
    assert.deepEqual(namesOf(left), ['bystander'])
  })

  it('an owner that does not exist, or is another object of that name (other uid), is absent: the dependent is deleted, the other object stays', TIMEOUT, async () => {
    const ns = await namespace('absent-owners')
    const real = await ok('POST', cmPath(ns), configMap('real'))
    await ok('POST', cmPath(ns), configMap('of-a-ghost', [{apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '6d1f4c1e-0000-4000-8000-000000000001'}]))
    await ok('POST', cmPath(ns), configMap('of-an-earlier-real', [{...refTo(real), uid: '6d1f4c1e-0000-4000-8000-000000000002'}]))
    await ok('POST', cmPath(ns), configMap('of-the-real', [refTo(real)]))
    const left = await waitUntil(cmPath(ns), (items) => !items.some((i) => i.metadata.name.startsWith('of-a')), 'the dependents of absent owners collected')
    assert.deepEqual(
      namesOf(left),
      ['of-the-real', 'real'],
    )
  })

  it('owner references resolve in the dependent\'s namespace: an owner of that name and uid in another namespace does not keep it', TIMEOUT, async () => {
    const home = await namespace('ref-home')
    const elsewhere = await namespace('ref-elsewhere')
    const owner = await ok('POST', cmPath(home), configMap('owner'))
    // names the owner of another namespace: nothing of that name is in its own
    await ok('POST', cmPath(elsewhere), configMap('stray', [refTo(owner)]))
    await ok('POST', cmPath(home), configMap('kept', [refTo(owner)]))
    await waitUntil(cmPath(elsewhere), (items) => !items.some((i) => i.metadata.name === 'stray'), 'the stray dependent collected')
    assert.equal((await api('GET', `${cmPath(home)}/owner`)).status, 200)
    assert.equal((await api('GET', `${cmPath(home)}/kept`)).status, 200)
  })

  it('a dependent with one owner left keeps it and loses the dangling reference', TIMEOUT, async () => {
    const ns = await namespace('two-owners')
    const first = await ok('POST', cmPath(ns), configMap('first'))
    const second = await ok('POST', cmPath(ns), configMap('second'))
    const shared = await ok('POST', cmPath(ns), configMap('shared', [refTo(first, {blockOwnerDeletion: true}), refTo(second)]))
    await ok('DELETE', `${cmPath(ns)}/first`)
    const items = await waitUntil(cmPath(ns), (list) => list.some((i) => i.metadata.name === 'shared' && refsOf(i).length === 1), 'the reference to the first owner removed')
    const kept = items.find((i) => i.metadata.name === 'shared')
    assert.deepEqual(refsOf(kept), [refTo(second)])
    assert.equal(kept.metadata.uid, shared.metadata.uid, 'the same object: patched, not re-created')
    assert.equal(kept.metadata.deletionTimestamp, undefined)
  })

  it('orphan: dependents lose the ownerReference and stay', TIMEOUT, async () => {
    const ns = await namespace('orphan')
    const owner = await ok('POST', cmPath(ns), configMap('owner'))
    const other = await ok('POST', cmPath(ns), configMap('other'))
    await ok('POST', cmPath(ns), configMap('only-child', [refTo(owner, {controller: true, blockOwnerDeletion: true})]))
    await ok('POST', cmPath(ns), configMap('two-parents', [refTo(owner), refTo(other)]))
    const deleted = await ok('DELETE', `${cmPath(ns)}/owner`, deleteOptions({propagationPolicy: 'Orphan'}))
    assert.deepEqual(deleted.metadata.finalizers, ['orphan'])
    assert.ok(deleted.metadata.deletionTimestamp)
    const left = await waitUntil(cmPath(ns), (items) => !items.some((i) => i.metadata.name === 'owner'), 'the owner gone')
    const byName = new Map(left.map((i) => [i.metadata.name, i]))
    assert.deepEqual(refsOf(byName.get('only-child')), [], 'orphaned before the owner went')
    assert.deepEqual(refsOf(byName.get('two-parents')), [refTo(other)])
    for (const name of ['only-child', 'two-parents']) assert.equal(byName.get(name).metadata.deletionTimestamp, undefined)
  })

  it('foreground: the owner goes only after dependents with blockOwnerDeletion', TIMEOUT, async () => {
    const ns = await namespace('foreground')
    const owner = await ok('POST', cmPath(ns), configMap('owner'))
    // a finalizer of someone else's holds the blocking dependent once deleted, so the owner must wait
    await ok('POST', cmPath(ns), configMap('blocking', [refTo(owner, {blockOwnerDeletion: true})], ['example.com/hold']))
    await ok('POST', cmPath(ns), configMap('not-blocking', [refTo(owner)]))
    const deleted = await ok('DELETE', `${cmPath(ns)}/owner`, deleteOptions({propagationPolicy: 'Foreground'}))
    assert.deepEqual(deleted.metadata.finalizers, ['foregroundDeletion'])
    const items = await waitUntil(
      cmPath(ns),
      (list) => !list.some((i) => i.metadata.name === 'not-blocking') && Boolean(list.find((i) => i.metadata.name === 'blocking')?.metadata.deletionTimestamp),
      'both dependents deleted (the blocking one held by its finalizer)',
    )
    const waiting = items.find((i) => i.metadata.name === 'owner')
    assert.ok(waiting, 'the owner waits while a blocking dependent is there')
    assert.deepEqual(waiting.metadata.finalizers, ['foregroundDeletion'])
    const held = items.find((i) => i.metadata.name === 'blocking')
    const gone = deletedAt(cmPath(ns), 'owner', deleted.metadata.resourceVersion)
    const released = await ok('PATCH', `${cmPath(ns)}/blocking`, {metadata: {finalizers: null}}, MERGE)
    assert.equal(released.metadata.uid, held.metadata.uid)
    const ownerGoneAt = await gone
    assert.ok(ownerGoneAt > Number(released.metadata.resourceVersion), `the owner went at ${ownerGoneAt}, before its dependent (${released.metadata.resourceVersion})`)
  })

  it('foreground: a dependent that does not block its owner is deleted but not waited for', TIMEOUT, async () => {
    const ns = await namespace('foreground-nonblocking')
    const owner = await ok('POST', cmPath(ns), configMap('owner'))
    await ok('POST', cmPath(ns), configMap('held', [refTo(owner, {blockOwnerDeletion: false})], ['example.com/hold']))
    await ok('DELETE', `${cmPath(ns)}/owner`, deleteOptions({propagationPolicy: 'Foreground'}))
    // the owner's finalizer and the dependent's deletion are two independent steps of the collector (in
    // Kubernetes too), so either may be seen first: what matters is that the owner goes while the held
    // dependent is still there
    const items = await waitUntil(
      cmPath(ns),
      (list) => !list.some((i) => i.metadata.name === 'owner') && Boolean(list.find((i) => i.metadata.name === 'held')?.metadata.deletionTimestamp),
      'the owner gone and the dependent deleted',
    )
    const held = items.find((i) => i.metadata.name === 'held')
    assert.ok(held?.metadata.deletionTimestamp, 'the dependent was deleted (its finalizer holds it)')
    await ok('PATCH', `${cmPath(ns)}/held`, {metadata: {finalizers: null}}, MERGE)
  })

  it('foreground: a dependent with dependents of its own is deleted in the foreground too; each waits for what blocks it', TIMEOUT, async () => {
    const ns = await namespace('foreground-chain')
    const top = await ok('POST', cmPath(ns), configMap('top'))
    const middle = await ok('POST', cmPath(ns), configMap('middle', [refTo(top, {blockOwnerDeletion: true})]))
    await ok('POST', cmPath(ns), configMap('bottom', [refTo(middle, {blockOwnerDeletion: true})], ['example.com/hold']))
    const deleted = await ok('DELETE', `${cmPath(ns)}/top`, deleteOptions({propagationPolicy: 'Foreground'}))
    const items = await waitUntil(cmPath(ns), (list) => Boolean(list.find((i) => i.metadata.name === 'bottom')?.metadata.deletionTimestamp), 'bottom being deleted')
    const byName = new Map(items.map((i) => [i.metadata.name, i]))
    assert.deepEqual(byName.get('middle')?.metadata.finalizers, ['foregroundDeletion'], 'middle was deleted with Foreground')
    assert.ok(byName.get('top'), 'top waits for middle')
    const topGone = deletedAt(cmPath(ns), 'top', deleted.metadata.resourceVersion)
    const middleGone = deletedAt(cmPath(ns), 'middle', deleted.metadata.resourceVersion)
    const released = await ok('PATCH', `${cmPath(ns)}/bottom`, {metadata: {finalizers: null}}, MERGE)
    const [topAt, middleAt] = await Promise.all([topGone, middleGone])
    assert.ok(middleAt > Number(released.metadata.resourceVersion), 'middle went after bottom')
    assert.ok(topAt > middleAt, 'top went after middle')
  })

  it('cross-kind: a StatefulSet\'s pods go with it, and so do a ConfigMap it owns and a ConfigMap owned by one of its pods', TIMEOUT, async () => {
    const ns = await namespace('cross-kind')
    const set = await ok('POST', setsPath(ns), statefulSet('web', {replicas: 2, spec: {podManagementPolicy: 'Parallel'}}))
    const pods = await waitUntil(podsPath(ns), (items) => items.filter((p) => refsOf(p).some((r: any) => r.uid === set.metadata.uid)).length === 2, 'two pods of web')
    const pod = pods.find((p) => p.metadata.name === 'web-0')
    await ok('POST', cmPath(ns), configMap('of-the-set', [refTo({...set, apiVersion: 'apps/v1', kind: 'StatefulSet'})]))
    await ok('POST', cmPath(ns), configMap('of-a-pod', [refTo({...pod, apiVersion: 'v1', kind: 'Pod'})]))
    await ok('POST', cmPath(ns), configMap('unowned'))
    await ok('DELETE', `${setsPath(ns)}/web`)
    await waitUntil(podsPath(ns), (items) => items.length === 0, 'the pods gone')
    const left = await waitUntil(cmPath(ns), (items) => !items.some((i) => i.metadata.name.startsWith('of-')), 'the ConfigMaps owned by the set and the pod gone')
    assert.deepEqual(namesOf(left), ['unowned'])
  })

  it('a cluster-scoped dependent may only have cluster-scoped owners: one naming a namespaced kind is never collected', TIMEOUT, async () => {
    const role = (name: string, ownerReferences: any[]) => ({apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name, ownerReferences}, rules: []})
    await ok('POST', '/apis/rbac.orch.io/v1/clusterroles', role('gc-invalid-owner', [{apiVersion: 'v1', kind: 'ConfigMap', name: 'nowhere', uid: '6d1f4c1e-0000-4000-8000-000000000003'}]))
    // created after it: once this one (whose cluster-scoped owner does not exist) is collected, the first was looked at too
    await ok('POST', '/apis/rbac.orch.io/v1/clusterroles', role('gc-absent-owner', [{apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', name: 'nowhere', uid: '6d1f4c1e-0000-4000-8000-000000000004'}]))
    await waitUntil('/apis/rbac.orch.io/v1/clusterroles', (items) => !items.some((i) => i.metadata.name === 'gc-absent-owner'), 'the role whose owner is absent collected')
    assert.equal((await api('GET', '/apis/rbac.orch.io/v1/clusterroles/gc-invalid-owner')).status, 200)
    await ok('DELETE', '/apis/rbac.orch.io/v1/clusterroles/gc-invalid-owner')
  })

  it('Events, which the collector does not watch (as kube-controller-manager), go at once whatever the propagation policy: no finalizer nothing would remove', TIMEOUT, async () => {
    const ns = await namespace('events')
    const event = {apiVersion: 'v1', kind: 'Event', metadata: {name: 'e'}, involvedObject: {kind: 'ConfigMap', name: 'x', namespace: ns}, reason: 'Test', message: 'm'}
    for (const propagationPolicy of ['Orphan', 'Foreground']) {
      await ok('POST', `/api/v1/namespaces/${ns}/events`, event)
      const deleted = await api('DELETE', `/api/v1/namespaces/${ns}/events/e`, {propagationPolicy})
      assert.equal(deleted.status, 200, deleted.text)
      assert.equal((await api('GET', `/api/v1/namespaces/${ns}/events/e`)).status, 404, propagationPolicy)
    }
  })

  it('a Node\'s Lease is collected when the Node is deleted', TIMEOUT, async () => {
    const agent = await startAgent({server})
    try {
      const leases = `/apis/coordination.orch.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`
      const node = await ok('GET', `/api/v1/nodes/${agent.nodeName}`)
      const items = await waitUntil(leases, (list) => list.some((l) => l.metadata.name === agent.nodeName && refsOf(l).length > 0), 'the Lease of the node, owned by it')
      const lease = items.find((l) => l.metadata.name === agent.nodeName)
      assert.deepEqual(refsOf(lease), [{apiVersion: 'v1', kind: 'Node', name: agent.nodeName, uid: node.metadata.uid}])
      // the node leaves the cluster: its agent stops, then the Node is deleted
      await agent.stop()
      await ok('DELETE', `/api/v1/nodes/${agent.nodeName}`)
      await waitUntil(leases, (list) => !list.some((l) => l.metadata.name === agent.nodeName), 'the Lease collected')
    } finally {
      await agent.cleanup()
    }
  })
})

describe('the garbage collector at start', () => {
  it('dependents of owners deleted while no collector ran are collected when it starts', TIMEOUT, async () => {
    const dataDir = tempDir()
    let server: OrchServer | undefined
    try {
      server = await startOrchServer(['--controllers='], {dataDir})
      const ns = 'restart'
      const ok = async (method: string, path: string, body?: unknown) => {
        const r = await call(server!.url, method, path, body)
        assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
        return r.json
      }
      await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}})
      const owner = await ok('POST', cmPath(ns), configMap('owner'))
      const orphaning = await ok('POST', cmPath(ns), configMap('orphaning'))
      await ok('POST', cmPath(ns), configMap('dependent', [refTo(owner)]))
      await ok('POST', cmPath(ns), configMap('kept', [refTo(orphaning)]))
      await ok('DELETE', `${cmPath(ns)}/owner`)
      const marked = await ok('DELETE', `${cmPath(ns)}/orphaning`, deleteOptions({propagationPolicy: 'Orphan'}))
      assert.deepEqual(marked.metadata.finalizers, ['orphan'], 'without a collector the finalizer stays')
      await server.cleanup()
      server = undefined

      server = await startOrchServer(['--controllers=garbagecollector'], {dataDir})
      const left = await waitForCollection(
        server.url,
        cmPath(ns),
        (items) => !items.some((i) => ['dependent', 'orphaning'].includes(i.metadata.name)) && items,
        'the dependent collected and the orphaning owner gone',
        60_000,
      )
      const kept = left.find((i: any) => i.metadata.name === 'kept')
      assert.ok(kept, 'the orphan stays')
      assert.deepEqual(refsOf(kept), [])
    } finally {
      await server?.cleanup()
      rmSync(dataDir, {recursive: true, force: true})
    }
  })
})
