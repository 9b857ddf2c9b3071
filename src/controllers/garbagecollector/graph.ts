// The garbage collector's dependency graph (Kubernetes' GraphBuilder, graph_builder.go): one node per
// object uid, linked to its owners and dependents, kept current by the informers' events (applied here
// at once: the event loop already runs them one at a time, so no queue of graph changes is needed).
// An owner that a dependent names before any informer has shown it is a "virtual" node: the collector
// asks the server whether it exists (a live GET), and reports it gone with a virtual delete event.
// What a change means for collection is put in one of two work queues: attemptToDelete (an object
// whose owners may be gone, or an owner deleting its dependents in the foreground) and attemptToOrphan
// (an owner whose dependents are to lose their reference to it).
import {FOREGROUND_FINALIZER, ORPHAN_FINALIZER} from '../../machinery/deletion-propagation.js'
import type {Logger} from '../../machinery/log.js'
import type {OwnerReference} from '../../api/types.js'

export type {OwnerReference}

/** Where an object is: its coordinates and uid. `namespace` is '' for cluster-scoped objects (for a
 *  virtual owner of a namespaced kind: the namespace of the dependent that named it). */
export interface ObjectReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  namespace: string
}

/** The metadata the graph reads (an object's, or a PartialObjectMetadata's). */
export interface ObjectMeta {
  uid?: string
  name?: string
  namespace?: string
  deletionTimestamp?: string
  finalizers?: string[]
  ownerReferences?: OwnerReference[]
  resourceVersion?: string
}

export function describe(identity: ObjectReference): string {
  const where = identity.namespace ? `${identity.namespace}/` : ''
  return `${identity.kind}.${identity.apiVersion} ${where}${identity.name} (uid ${identity.uid})`
}

export function sameIdentity(a: ObjectReference, b: ObjectReference): boolean {
  return a.uid === b.uid && a.name === b.name && a.kind === b.kind && a.apiVersion === b.apiVersion && a.namespace === b.namespace
}

function refMatchesCoordinates(ref: OwnerReference, identity: ObjectReference): boolean {
  return ref.uid === identity.uid && ref.name === identity.name && ref.kind === identity.kind && ref.apiVersion === identity.apiVersion
}

export function ownerRefsOf(meta: ObjectMeta | undefined): OwnerReference[] {
  return Array.isArray(meta?.ownerReferences) ? meta.ownerReferences : []
}

export function isBeingDeleted(meta: ObjectMeta | undefined): boolean {
  return Boolean(meta?.deletionTimestamp)
}

export function hasFinalizer(meta: ObjectMeta | undefined, finalizer: string): boolean {
  return Array.isArray(meta?.finalizers) && meta.finalizers.includes(finalizer)
}

/** The object is being deleted with this finalizer, and was not so before (old undefined: newly seen). */
function startsWaitingFor(finalizer: string, old: ObjectMeta | undefined, meta: ObjectMeta): boolean {
  if (!isBeingDeleted(meta) || !hasFinalizer(meta, finalizer)) return false
  return !old || !isBeingDeleted(old) || !hasFinalizer(old, finalizer)
}

export class GraphNode {
  owners: OwnerReference[] = []
  readonly dependents = new Set<GraphNode>()
  beingDeleted = false
  /** being deleted with the foregroundDeletion finalizer: its dependents go first */
  deletingDependents = false

  constructor(
    public identity: ObjectReference,
    /** named as an owner but not (yet) seen by an informer */
    public virtual: boolean,
  ) {}

  get uid(): string {
    return this.identity.uid
  }

  /** Dependents whose reference to this node has blockOwnerDeletion. */
  blockingDependents(): GraphNode[] {
    return [...this.dependents].filter((d) => d.owners.some((r) => r.uid === this.uid && r.blockOwnerDeletion === true))
  }
}

/** A bounded set of owner identities known to be absent (Kubernetes' absentOwnerCache, an LRU). */
export class AbsentOwnerCache {
  private readonly keys = new Map<string, true>()

  constructor(private readonly capacity = 1000) {}

  private static key(identity: ObjectReference): string {
    return [identity.apiVersion, identity.kind, identity.namespace, identity.name, identity.uid].join('|')
  }

  add(identity: ObjectReference): void {
    const key = AbsentOwnerCache.key(identity)
    this.keys.delete(key)
    this.keys.set(key, true)
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.keys().next().value!)
  }

  has(identity: ObjectReference): boolean {
    const key = AbsentOwnerCache.key(identity)
    if (!this.keys.has(key)) return false
    this.keys.delete(key)
    this.keys.set(key, true)
    return true
  }
}

export interface GraphQueues {
  attemptToDelete(node: GraphNode): void
  /** the same after the key's back-off */
  attemptToDeleteLater(node: GraphNode): void
  attemptToOrphan(node: GraphNode): void
}

/** The dependents that name this identity exactly, and those that name its uid with other coordinates. */
function partitionDependents(dependents: Iterable<GraphNode>, identity: ObjectReference): [GraphNode[], GraphNode[]] {
  const matching: GraphNode[] = []
  const nonmatching: GraphNode[] = []
  const ownerIsNamespaced = identity.namespace !== ''
  for (const dependent of dependents) {
    let match = false
    let mismatch = false
    if (ownerIsNamespaced && identity.namespace !== dependent.identity.namespace) mismatch = true
    else {
      for (const ref of dependent.owners) {
        if (ref.uid !== identity.uid) continue
        if (refMatchesCoordinates(ref, identity)) match = true
        else mismatch = true
      }
    }
    if (match) matching.push(dependent)
    if (mismatch) nonmatching.push(dependent)
  }
  return [matching, nonmatching]
}

/** kind, apiVersion, namespace, name: the order alternate identities are tried in */
function identityOrder(a: ObjectReference, b: ObjectReference): number {
  for (const field of ['kind', 'apiVersion', 'namespace', 'name', 'uid'] as const) {
    if (a[field] !== b[field]) return a[field] < b[field] ? -1 : 1
  }
  return 0
}

/**
 * Another identity the dependents give an owner whose identity `absent` was verified absent: the
 * first that follows `absent` in identityOrder, else the first, so that successive checks go round
 * every identity the dependents give (not back and forth between two while a third is never tried).
 */
function alternateOwnerIdentity(dependents: GraphNode[], absent: ObjectReference): ObjectReference | undefined {
  const clusterScoped = absent.namespace === ''
  const candidates: ObjectReference[] = []
  for (const dependent of dependents) {
    for (const ref of dependent.owners) {
      if (ref.uid !== absent.uid) continue
      if (refMatchesCoordinates(ref, absent) && (clusterScoped || absent.namespace === dependent.identity.namespace)) continue
      const candidate: ObjectReference = {apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: dependent.identity.namespace}
      // that apiVersion/kind is known to be cluster-scoped
      if (clusterScoped && candidate.apiVersion === absent.apiVersion && candidate.kind === absent.kind) candidate.namespace = ''
      if (!sameIdentity(candidate, absent)) candidates.push(candidate)
    }
  }
  candidates.sort(identityOrder)
  return candidates.find((c) => identityOrder(absent, c) < 0) ?? candidates[0]
}

function referenceDiffs(old: OwnerReference[], next: OwnerReference[]) {
  const oldByUid = new Map(old.map((r) => [r.uid, r]))
  const nextByUid = new Map(next.map((r) => [r.uid, r]))
  const added = next.filter((r) => !oldByUid.has(r.uid))
  const removed = old.filter((r) => !nextByUid.has(r.uid))
  const changed: {old: OwnerReference; next: OwnerReference}[] = []
  for (const r of next) {
    const before = oldByUid.get(r.uid)
    if (before && JSON.stringify(before) !== JSON.stringify(r)) changed.push({old: before, next: r})
  }
  return {added, removed, changed}
}

export class DependencyGraph {
  readonly nodes = new Map<string, GraphNode>()
  readonly absentOwners = new AbsentOwnerCache()

  constructor(
    private readonly queues: GraphQueues,
    private readonly logger: Logger,
    /** whether an owner reference's kind is namespaced (undefined: a kind the server does not serve) */
    private readonly isNamespaced: (apiVersion: string, kind: string) => boolean | undefined,
  ) {}

  /** An informer's add or update: `old` is the previous metadata (undefined when first seen). */
  observe(identity: ObjectReference, meta: ObjectMeta, old: ObjectMeta | undefined): void {
    if (old?.uid && old.uid !== identity.uid) {
      // an informer's relist found another object under that name (the one it held was deleted and
      // this one created while its watch was down): the one it held is gone, and this one is new
      this.remove({...identity, uid: old.uid}, false)
      old = undefined
    }
    let node = this.nodes.get(identity.uid)
    if (node?.virtual) {
      // the first sight of an owner that dependents named before
      if (!sameIdentity(node.identity, identity)) {
        // dependents that named it otherwise may hold a reference that points nowhere: check them
        const [, suspicious] = partitionDependents(node.dependents, identity)
        for (const dependent of suspicious) {
          if (identity.namespace !== '' && dependent.identity.namespace !== identity.namespace) {
            this.logger.v(2, 'an owner reference names an owner in another namespace', {item: describe(dependent.identity), owner: describe(identity)})
          }
          this.queues.attemptToDelete(dependent)
        }
        node.identity = identity
      }
      node.virtual = false
    }
    const refs = ownerRefsOf(meta)
    if (!node) {
      node = new GraphNode(identity, false)
      node.owners = refs
      node.beingDeleted = isBeingDeleted(meta)
      node.deletingDependents = node.beingDeleted && hasFinalizer(meta, FOREGROUND_FINALIZER)
      this.nodes.set(identity.uid, node)
      this.addDependentToOwners(node, refs)
    } else {
      const {added, removed, changed} = referenceDiffs(node.owners, refs)
      if (added.length > 0 || removed.length > 0 || changed.length > 0) {
        this.addUnblockedOwnersToDeleteQueue(removed, changed)
        node.owners = refs
        this.addDependentToOwners(node, added)
        this.removeDependentFromOwners(node, removed)
      }
      if (isBeingDeleted(meta)) node.beingDeleted = true
      node.deletingDependents = node.beingDeleted && hasFinalizer(meta, FOREGROUND_FINALIZER)
    }
    this.processTransitions(old, meta, node)
  }

  /** An informer's delete (virtual false), or the collector's finding that the object is not there. */
  remove(identity: ObjectReference, virtual: boolean): void {
    const node = this.nodes.get(identity.uid)
    if (!node) return
    if (virtual) {
      if (node.virtual) {
        // dependents may disagree about where this owner is: only those that named it as verified go on
        const [matching, nonmatching] = partitionDependents(node.dependents, identity)
        if (nonmatching.length > 0) {
          if (matching.length > 0) {
            this.absentOwners.add(identity)
            for (const dependent of matching) this.queues.attemptToDelete(dependent)
          }
          if (sameIdentity(node.identity, identity)) {
            const replacement = alternateOwnerIdentity(nonmatching, identity)
            if (replacement) {
              node.identity = replacement
              this.queues.attemptToDeleteLater(node)
            }
          }
          return
        }
      } else if (!sameIdentity(node.identity, identity)) {
        // a real node stays whatever a GET at other coordinates said
        const [matching] = partitionDependents(node.dependents, identity)
        if (matching.length > 0) {
          this.absentOwners.add(identity)
          for (const dependent of matching) this.queues.attemptToDelete(dependent)
        }
        return
      }
    }
    this.nodes.delete(node.uid)
    this.removeDependentFromOwners(node, node.owners)
    if (node.dependents.size > 0) this.absentOwners.add(identity)
    for (const dependent of node.dependents) this.queues.attemptToDelete(dependent)
    // an owner deleting its dependents in the foreground may now be free to go
    for (const ref of node.owners) {
      const owner = this.nodes.get(ref.uid)
      if (owner?.deletingDependents) this.queues.attemptToDelete(owner)
    }
  }

  /**
   * Drops a virtual node that no dependent names any more: nothing waits on its check, and one for an
   * owner that exists but no informer shows (a kind that is not watched) would be looked at forever.
   * A dependent that names it later makes a new one. True when dropped.
   */
  removeUnreferencedVirtual(node: GraphNode): boolean {
    if (!node.virtual || node.dependents.size > 0 || this.nodes.get(node.uid) !== node) return false
    this.nodes.delete(node.uid)
    return true
  }

  private addDependentToOwners(node: GraphNode, refs: OwnerReference[]): void {
    let suspicious = false
    for (const ref of refs) {
      let owner = this.nodes.get(ref.uid)
      if (!owner) {
        // not seen yet: a virtual node, whose existence the collector checks with the server
        const namespaced = this.isNamespaced(ref.apiVersion, ref.kind)
        owner = new GraphNode({apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: namespaced === false ? '' : node.identity.namespace}, true)
        this.nodes.set(ref.uid, owner)
        owner.dependents.add(node)
        this.queues.attemptToDelete(owner)
        continue
      }
      owner.dependents.add(node)
      if (suspicious) continue
      const ownerNamespace = owner.identity.namespace
      if (ownerNamespace !== '' && ownerNamespace !== node.identity.namespace) {
        // a namespaced owner is only ever in its dependent's namespace
        if (!owner.virtual) this.logger.v(2, 'an owner reference names an owner in another namespace', {item: describe(node.identity), owner: describe(owner.identity)})
        suspicious = true
      } else if (!refMatchesCoordinates(ref, owner.identity)) {
        suspicious = true
      } else if (ownerNamespace === '' && node.identity.namespace !== '' && owner.virtual && this.isNamespaced(ref.apiVersion, ref.kind) !== false) {
        suspicious = true
      }
    }
    // the collector checks whether such references point anywhere
    if (suspicious) this.queues.attemptToDelete(node)
  }

  private removeDependentFromOwners(node: GraphNode, refs: OwnerReference[]): void {
    for (const ref of refs) this.nodes.get(ref.uid)?.dependents.delete(node)
  }

  /** Owners waiting in the foreground that a dependent stopped blocking. */
  private addUnblockedOwnersToDeleteQueue(removed: OwnerReference[], changed: {old: OwnerReference; next: OwnerReference}[]): void {
    for (const ref of removed) {
      if (ref.blockOwnerDeletion !== true) continue
      const owner = this.nodes.get(ref.uid)
      if (owner) this.queues.attemptToDelete(owner)
    }
    for (const {old, next} of changed) {
      if (old.blockOwnerDeletion !== true || next.blockOwnerDeletion === true) continue
      const owner = this.nodes.get(next.uid)
      if (owner) this.queues.attemptToDelete(owner)
    }
  }

  private processTransitions(old: ObjectMeta | undefined, meta: ObjectMeta, node: GraphNode): void {
    if (startsWaitingFor(ORPHAN_FINALIZER, old, meta)) {
      this.logger.v(4, 'owner to orphan its dependents', {item: describe(node.identity)})
      this.queues.attemptToOrphan(node)
      return
    }
    if (startsWaitingFor(FOREGROUND_FINALIZER, old, meta)) {
      this.logger.v(4, 'owner waits for its dependents to be deleted', {item: describe(node.identity)})
      node.deletingDependents = true
      for (const dependent of node.dependents) this.queues.attemptToDelete(dependent)
      this.queues.attemptToDelete(node)
    }
  }
}
