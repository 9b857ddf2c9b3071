// Unit tests of the garbage collector's dependency graph (src/controllers/garbagecollector/graph.ts):
// which informer events put which objects in the attemptToDelete and attemptToOrphan queues. The
// collector's decisions themselves (live GETs, deletes, patches) are tested against a real server in
// test/e2e/garbage-collector.test.ts.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {AbsentOwnerCache, DependencyGraph, type ObjectMeta, type ObjectReference, type OwnerReference} from '../../src/controllers/garbagecollector/graph.js'
import {silentLogger} from '../../src/machinery/log.js'

const CLUSTER_SCOPED = new Set(['Node', 'Namespace', 'ClusterRole'])

function setup() {
  const deletes: string[] = []
  const later: string[] = []
  const orphans: string[] = []
  const graph = new DependencyGraph(
    {
      attemptToDelete: (n) => deletes.push(n.identity.name),
      attemptToDeleteLater: (n) => later.push(n.identity.name),
      attemptToOrphan: (n) => orphans.push(n.identity.name),
    },
    silentLogger,
    (_apiVersion, kind) => !CLUSTER_SCOPED.has(kind),
  )
  const drain = (queue: string[]) => queue.splice(0).sort()
  return {graph, deletes, later, orphans, drain}
}

function cm(name: string, namespace = 'ns'): ObjectReference {
  return {apiVersion: 'v1', kind: 'ConfigMap', name, uid: `uid-${namespace}-${name}`, namespace}
}

function ref(owner: ObjectReference, extra: Partial<OwnerReference> = {}): OwnerReference {
  return {apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, ...extra}
}

function meta(identity: ObjectReference, extra: ObjectMeta = {}): ObjectMeta {
  return {uid: identity.uid, name: identity.name, namespace: identity.namespace || undefined, ...extra}
}

describe('garbage collector: dependency graph', () => {
  it('a dependent seen before its owner makes a virtual owner, queued for a check; seeing the owner makes it real', () => {
    const {graph, deletes, drain} = setup()
    const owner = cm('owner')
    const dependent = cm('dependent')
    graph.observe(dependent, meta(dependent, {ownerReferences: [ref(owner)]}), undefined)
    const virtual = graph.nodes.get(owner.uid)!
    assert.equal(virtual.virtual, true)
    assert.deepEqual(drain(deletes), ['owner'])
    graph.observe(owner, meta(owner), undefined)
    assert.equal(graph.nodes.get(owner.uid), virtual)
    assert.equal(virtual.virtual, false)
    assert.deepEqual([...virtual.dependents].map((d) => d.identity.name), ['dependent'])
    assert.deepEqual(drain(deletes), [], 'an owner seen where its dependent said it is needs no check')
  })

  it('an owner of a cluster-scoped kind is looked for without a namespace', () => {
    const {graph} = setup()
    const node: ObjectReference = {apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-node', namespace: ''}
    const lease: ObjectReference = {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', name: 'n1', uid: 'uid-lease', namespace: 'orch-node-lease'}
    graph.observe(lease, meta(lease, {ownerReferences: [ref(node)]}), undefined)
    assert.equal(graph.nodes.get(node.uid)!.identity.namespace, '')
  })

  it('an owner\'s deletion queues its dependents, remembers the owner as absent, and drops it from the graph', () => {
    const {graph, deletes, drain} = setup()
    const owner = cm('owner')
    graph.observe(owner, meta(owner), undefined)
    for (const name of ['a', 'b']) graph.observe(cm(name), meta(cm(name), {ownerReferences: [ref(owner)]}), undefined)
    drain(deletes)
    graph.remove(owner, false)
    assert.deepEqual(drain(deletes), ['a', 'b'])
    assert.equal(graph.nodes.has(owner.uid), false)
    assert.equal(graph.absentOwners.has(owner), true)
  })

  it('an owner starting deletion with the orphan finalizer is queued for orphaning once', () => {
    const {graph, orphans, drain} = setup()
    const owner = cm('owner')
    const live = meta(owner)
    graph.observe(owner, live, undefined)
    const deleting = meta(owner, {deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['orphan']})
    graph.observe(owner, deleting, live)
    assert.deepEqual(drain(orphans), ['owner'])
    graph.observe(owner, {...deleting, resourceVersion: '9'}, deleting)
    assert.deepEqual(drain(orphans), [], 'a later update of the same state is no news')
  })

  it('foreground: the owner and its dependents are queued; a blocking dependent that goes, or stops blocking, queues the owner again', () => {
    const {graph, deletes, drain} = setup()
    const owner = cm('owner')
    graph.observe(owner, meta(owner), undefined)
    const blocking = cm('blocking')
    const other = cm('other')
    const blockingMeta = meta(blocking, {ownerReferences: [ref(owner, {blockOwnerDeletion: true})]})
    graph.observe(blocking, blockingMeta, undefined)
    graph.observe(other, meta(other, {ownerReferences: [ref(owner, {blockOwnerDeletion: true})]}), undefined)
    graph.observe(owner, meta(owner, {deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion']}), meta(owner))
    const node = graph.nodes.get(owner.uid)!
    assert.equal(node.deletingDependents, true)
    assert.deepEqual(drain(deletes), ['blocking', 'other', 'owner'])
    assert.deepEqual(node.blockingDependents().map((d) => d.identity.name).sort(), ['blocking', 'other'])
    graph.remove(other, false)
    assert.deepEqual(drain(deletes), ['owner'])
    graph.observe(blocking, meta(blocking, {ownerReferences: [ref(owner, {blockOwnerDeletion: false})]}), blockingMeta)
    assert.deepEqual(drain(deletes), ['owner'])
    assert.deepEqual(node.blockingDependents(), [])
  })

  it('a namespaced owner named from another namespace makes the dependent suspect: it is queued for a check', () => {
    const {graph, deletes, drain} = setup()
    const owner = cm('owner', 'home')
    graph.observe(owner, meta(owner), undefined)
    const stray = cm('stray', 'elsewhere')
    graph.observe(stray, meta(stray, {ownerReferences: [ref(owner)]}), undefined)
    assert.deepEqual(drain(deletes), ['stray'])
  })

  it('a virtual owner found absent at the coordinates one dependent gives stays under those another dependent gives', () => {
    const {graph, deletes, later, drain} = setup()
    const uid = 'uid-shared'
    const first: OwnerReference = {apiVersion: 'v1', kind: 'ConfigMap', name: 'first-name', uid}
    const second: OwnerReference = {apiVersion: 'v1', kind: 'ConfigMap', name: 'second-name', uid}
    graph.observe(cm('a'), meta(cm('a'), {ownerReferences: [first]}), undefined)
    graph.observe(cm('b'), meta(cm('b'), {ownerReferences: [second]}), undefined)
    drain(deletes)
    const verified = {...first, namespace: 'ns'}
    graph.remove(verified, true)
    assert.deepEqual(drain(deletes), ['a'], 'only the dependent that named it so')
    const node = graph.nodes.get(uid)!
    assert.equal(node.identity.name, 'second-name')
    assert.deepEqual(drain(later), ['second-name'])
    assert.equal(graph.absentOwners.has(verified), true)
  })

  it('a relist that finds another object (another uid) under a name: the one held before is gone, its dependents are checked, an owner waiting on it is queued', () => {
    const {graph, deletes, drain} = setup()
    const owner = cm('owner')
    const first = cm('first')
    const firstMeta = meta(first, {ownerReferences: [ref(owner, {blockOwnerDeletion: true})], resourceVersion: '1'})
    graph.observe(owner, meta(owner), undefined)
    graph.observe(first, firstMeta, undefined)
    const child = cm('child')
    graph.observe(child, meta(child, {ownerReferences: [ref(first)]}), undefined)
    graph.observe(owner, meta(owner, {deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion']}), meta(owner))
    drain(deletes)
    // deleted and created again while the watch was down: the informer's relist reports an update
    const second: ObjectReference = {...first, uid: 'uid-ns-first-again'}
    graph.observe(second, meta(second, {resourceVersion: '7'}), firstMeta)
    assert.equal(graph.nodes.has(first.uid), false, 'the earlier object left the graph')
    assert.equal(graph.nodes.get(second.uid)?.virtual, false)
    assert.deepEqual(graph.nodes.get(owner.uid)!.blockingDependents(), [])
    assert.deepEqual(drain(deletes), ['child', 'owner'])
    assert.equal(graph.absentOwners.has(first), true)
  })

  it('a virtual owner whose identities are all found absent in turn: each identity the dependents give is tried, not two back and forth', () => {
    const {graph, deletes, later, drain} = setup()
    const uid = 'uid-shared'
    const named = (name: string): OwnerReference => ({apiVersion: 'v1', kind: 'ConfigMap', name, uid})
    for (const [dependent, owner] of [['a', 'name-1'], ['b', 'name-2'], ['c', 'name-3']]) {
      graph.observe(cm(dependent), meta(cm(dependent), {ownerReferences: [named(owner)]}), undefined)
    }
    drain(deletes)
    const tried: string[] = [graph.nodes.get(uid)!.identity.name]
    // the dependents stay (say, finalizers hold them): the node goes round their identities
    for (let i = 0; i < 3; i++) {
      graph.remove({...graph.nodes.get(uid)!.identity}, true)
      tried.push(graph.nodes.get(uid)!.identity.name)
    }
    assert.deepEqual(tried, ['name-1', 'name-2', 'name-3', 'name-1'])
    assert.deepEqual(drain(later), ['name-1', 'name-2', 'name-3'])
  })

  it('a virtual owner no dependent names any more is dropped; a real node or one still named is not', () => {
    const {graph} = setup()
    const owner = cm('owner')
    const dependent = cm('dependent')
    const named = meta(dependent, {ownerReferences: [ref(owner)], resourceVersion: '1'})
    graph.observe(dependent, named, undefined)
    const virtual = graph.nodes.get(owner.uid)!
    assert.equal(graph.removeUnreferencedVirtual(virtual), false, 'still named')
    graph.observe(dependent, meta(dependent, {resourceVersion: '2'}), named)
    assert.equal(graph.removeUnreferencedVirtual(virtual), true)
    assert.equal(graph.nodes.has(owner.uid), false)
    assert.equal(graph.removeUnreferencedVirtual(graph.nodes.get(dependent.uid)!), false, 'a real node stays')
  })

  it('the absent-owner cache forgets the least recently used identity beyond its capacity', () => {
    const cache = new AbsentOwnerCache(2)
    cache.add(cm('a'))
    cache.add(cm('b'))
    assert.equal(cache.has(cm('a')), true)
    cache.add(cm('c'))
    assert.equal(cache.has(cm('b')), false)
    assert.equal(cache.has(cm('a')), true)
    assert.equal(cache.has(cm('c')), true)
  })
})
