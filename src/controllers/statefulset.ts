// The StatefulSet controller (Kubernetes' pkg/controller/statefulset): informers on StatefulSets and
// pods put the owning set's namespace/name in the work queue; reconcile reads the set, its revisions,
// the namespace's claims and pods from the API server (so a sync always sees its own earlier writes),
// adopts orphans that match the selector, releases pods that no longer match, and hands over to
// StatefulSetControl (statefulset/control.ts).
//
// There is no PersistentVolumeClaim informer; Kubernetes' controller has no claim event handlers either
// (it only lists claims). Every in-process controller shares one RestClient whose pool has 10
// connections, and each informer's watch holds one for good: the other controllers' seven watches plus
// three here left none for requests. Claims are listed by each sync instead.
//
// Deletion propagation is the garbage collector's (src/controllers/garbagecollector), as in Kubernetes:
// a set deleted with propagationPolicy Orphan or Foreground carries the orphan or foregroundDeletion
// finalizer, and the collector orphans or deletes its dependents before removing it. A set being
// deleted is left alone here: no adoption, no new revisions or pods.
//
// Besides, once a set is gone this controller still deletes what it owned (its pods, ControllerRevisions,
// and the claims it owns with whenDeleted: Delete), in the sync of the set's key once the set is gone
// (or is a new set of the same name), so a server run with `--controllers=statefulset` alone keeps its
// behaviour; with the garbage collector running both make the same deletes, each with a uid
// precondition. A claim owned by one of its pods (whenScaled: Delete) goes, as the collector decides,
// only once that pod object is gone, not while it terminates; the pod's removal syncs the set's key.
// Dependents of sets deleted while no controller ran are found at start.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type ResourceLocator, type RestClient} from '../client/index.js'
import {labelSelectorFromObject, type LabelSelector} from '../machinery/labels.js'
import type {Logger} from '../machinery/log.js'
import {Controller, type ReconcileResult} from './controller.js'
import {isNotFound, StatefulSetControl} from './statefulset/control.js'
import {EventRecorder} from './statefulset/events.js'
import {
  controllerOf,
  isMemberOf,
  isPodRef,
  isSetRef,
  ownerRefs,
  parentAndOrdinal,
  withOwnerRefs,
  withoutOwner,
  setControllerRef,
  SET_API_VERSION,
  SET_KIND,
  type ApiObject,
  type Claim,
  type OwnerReference,
  type Pod,
  type Revision,
  type StatefulSet,
} from './statefulset/utils.js'

export const STATEFULSET_CONTROLLER_COMPONENT = 'statefulset-controller'

const SETS: ResourceLocator = {group: 'apps', version: 'v1', resource: 'statefulsets'}
const PODS: ResourceLocator = {group: '', version: 'v1', resource: 'pods'}
const CLAIMS: ResourceLocator = {group: '', version: 'v1', resource: 'persistentvolumeclaims'}
const REVISIONS: ResourceLocator = {group: 'apps', version: 'v1', resource: 'controllerrevisions'}

export interface StatefulSetControllerOptions {
  /** concurrent syncs (default 5, as kube-controller-manager's --concurrent-statefulset-syncs) */
  workers?: number
  now?: () => number
  /** the MaxUnavailableStatefulSet gate (default on: beta); off, rollingUpdate.maxUnavailable is ignored */
  maxUnavailableStatefulSet?: boolean
}

function namespaceOf(object: AnyObject): string {
  return object.metadata?.namespace ?? ''
}

function selectorOf(set: StatefulSet): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(set.spec?.selector)
  } catch {
    return undefined
  }
}

export class StatefulSetController {
  private readonly controller: Controller
  private readonly sets: Informer<StatefulSet>
  private readonly pods: Informer<Pod>
  private readonly control: StatefulSetControl
  private sweeping: Promise<void> | undefined

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: StatefulSetControllerOptions = {},
  ) {
    const now = options.now ?? Date.now
    const recorder = new EventRecorder(client, STATEFULSET_CONTROLLER_COMPONENT, logger, now)
    this.control = new StatefulSetControl({client, recorder, logger, now, maxUnavailableStatefulSet: options.maxUnavailableStatefulSet})
    this.controller = new Controller({name: 'statefulset', logger, workers: options.workers ?? 5, reconcile: (key) => this.reconcile(key)})
    const onError = (error: Error) => logger.v(2, 'informer error', {error: error.message})
    this.sets = new Informer<StatefulSet>(
      client,
      SETS,
      {
        onAdd: (set) => this.enqueue(set),
        onUpdate: (_old, set) => this.enqueue(set),
        // the sync of a set that is gone deletes what it owned
        onDelete: (set) => this.enqueue(set),
      },
      {onError},
    )
    this.pods = new Informer<Pod>(
      client,
      PODS,
      {
        onAdd: (pod) => this.onPod(pod),
        onUpdate: (old, pod) => {
          if (controllerOf(old)?.uid !== controllerOf(pod)?.uid || JSON.stringify(old.metadata?.labels ?? {}) !== JSON.stringify(pod.metadata?.labels ?? {})) {
            this.onPod(old)
          }
          this.onPod(pod)
        },
        onDelete: (pod) => this.onPod(pod),
      },
      {onError},
    )
  }

  async start(): Promise<void> {
    for (const informer of [this.sets, this.pods]) informer.start()
    await Promise.all([this.sets.waitForSync(), this.pods.waitForSync()])
    this.controller.start()
    this.sweeping = this.sweep().catch((error) => this.logger.warn('statefulset dependents sweep failed', {error: (error as Error).message}))
  }

  async stop(): Promise<void> {
    await this.controller.stop()
    await this.sweeping
    await Promise.all([this.sets.stop(), this.pods.stop()])
  }

  // ---------- event handlers ----------

  private enqueue(set: StatefulSet): void {
    this.controller.enqueue(`${namespaceOf(set)}/${set.metadata?.name}`)
  }

  private setsIn(namespace: string): StatefulSet[] {
    return this.sets.list().filter((s) => namespaceOf(s) === namespace)
  }

  /**
   * The set that controls the pod (by name: if that set is gone, or is another one now, its sync
   * deletes the pod); for an orphan, every set whose selector matches it (it may be adopted).
   */
  private onPod(pod: Pod): void {
    const ref = controllerOf(pod)
    const namespace = namespaceOf(pod)
    if (ref) {
      if (isSetRef(ref)) this.controller.enqueue(`${namespace}/${ref.name}`)
      return
    }
    for (const set of this.setsIn(namespace)) {
      if (isMemberOf(set, pod) && selectorOf(set)?.matches(pod.metadata?.labels ?? {})) this.enqueue(set)
    }
  }

  // ---------- reconcile ----------

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const slash = key.indexOf('/')
    const namespace = key.slice(0, slash)
    const name = key.slice(slash + 1)
    let set: StatefulSet
    try {
      set = await this.client.get<StatefulSet>({...SETS, namespace, name})
    } catch (error) {
      if (!isNotFound(error)) throw error
      await this.collectByName(namespace, name)
      return
    }
    set.apiVersion ??= SET_API_VERSION
    set.kind ??= SET_KIND
    // being deleted: its dependents are the garbage collector's (orphaned, or deleted first in the
    // foreground); nothing is adopted or created for it any more
    if (set.metadata.deletionTimestamp) return
    const selector = selectorOf(set)
    if (!selector) {
      this.logger.warn('statefulset has an invalid selector', {statefulset: key})
      return
    }
    const revisions = await this.revisionsFor(set, selector)
    // claims before pods: an owner pod missing from the later pod list is really gone
    let claimList = await this.client.list<Claim>({...CLAIMS, namespace})
    let allPods = (await this.client.list<Pod>({...PODS, namespace})).items
    // what an earlier set of this name owned goes first (its pods hold this set's pod names)
    const stale = this.staleOwners(set, [...allPods, ...claimList.items])
    if (stale.size > 0) {
      for (const uid of stale) await this.collectDependents(namespace, name, uid)
      claimList = await this.client.list<Claim>({...CLAIMS, namespace})
      allPods = (await this.client.list<Pod>({...PODS, namespace})).items
    }
    const pods = await this.podsFor(set, selector, allPods)
    const claims = new Map<string, Claim>(claimList.items.map((c) => [c.metadata!.name, c]))
    const result = await this.control.sync({set, pods, allPods, claims, revisions})
    if (result.status) {
      this.logger.v(4, 'statefulset synced', {
        statefulset: key,
        replicas: result.status.replicas,
        ready: result.status.readyReplicas,
        current: result.status.currentReplicas,
        updated: result.status.updatedReplicas,
      })
    }
    if (result.requeueAfterMs !== undefined) return {requeueAfterMs: result.requeueAfterMs}
  }

  /** ClaimPods: the pods the set controls, adopting matching orphans and releasing pods that stopped matching. */
  private async podsFor(set: StatefulSet, selector: LabelSelector, allPods: Pod[]): Promise<Pod[]> {
    const claimed: Pod[] = []
    for (const pod of allPods) {
      const match = selector.matches(pod.metadata?.labels ?? {}) && isMemberOf(set, pod)
      const adopted = await this.claim(set, pod, match, {...PODS, namespace: namespaceOf(pod), name: pod.metadata?.name})
      if (adopted) claimed.push(adopted)
    }
    return claimed
  }

  /** ListRevisions + AdoptOrphanRevisions: the revisions the set controls (matching orphans adopted). */
  private async revisionsFor(set: StatefulSet, selector: LabelSelector): Promise<Revision[]> {
    if (selector.matchesNothing()) return []
    const list = await this.client.list<Revision>({...REVISIONS, namespace: namespaceOf(set)}, {labelSelector: selector.toString() || undefined})
    const owned: Revision[] = []
    for (const revision of list.items) {
      const adopted = await this.claim(set, revision, true, {...REVISIONS, namespace: namespaceOf(revision), name: revision.metadata?.name})
      if (adopted) owned.push(adopted)
    }
    return owned
  }

  /**
   * The ControllerRefManager's rule for one object: ours and matching → keep; ours and no longer
   * matching → release; an orphan that matches (and is not being deleted) → adopt; others → not ours.
   */
  private async claim(set: StatefulSet, object: ApiObject, matches: boolean, locator: ResourceLocator): Promise<ApiObject | undefined> {
    const ref = controllerOf(object)
    const deleting = Boolean(set.metadata.deletionTimestamp)
    if (ref) {
      if (ref.uid !== set.metadata.uid) return undefined
      if (matches) return object
      if (deleting) return undefined
      await this.writeIgnoringGone(locator, withoutOwner(object, set.metadata.uid))
      return undefined
    }
    if (deleting || !matches || object.metadata?.deletionTimestamp) return undefined
    const metadata = {...object.metadata, ownerReferences: [...ownerRefs(object), setControllerRef(set)]}
    return this.writeIgnoringGone(locator, {...object, metadata})
  }

  private async writeIgnoringGone(locator: ResourceLocator, object: ApiObject): Promise<ApiObject | undefined> {
    try {
      return await this.client.update<ApiObject>(locator, object)
    } catch (error) {
      if (isNotFound(error)) return undefined
      throw error
    }
  }

  // ---------- dependents of deleted sets (also the garbage collector's work) ----------

  /** The uids of earlier sets of this set's name that objects still name as owner. */
  private staleOwners(set: StatefulSet, objects: AnyObject[]): Set<string> {
    const uids = new Set<string>()
    for (const object of objects) {
      for (const ref of ownerRefs(object)) if (isSetRef(ref) && ref.name === set.metadata.name && ref.uid !== set.metadata.uid) uids.add(ref.uid)
    }
    return uids
  }

  /** The set `name` is gone: delete what any set of that name owned. */
  private async collectByName(namespace: string, name: string): Promise<void> {
    const uids = new Set<string>()
    const note = (object: AnyObject) => {
      for (const ref of ownerRefs(object)) if (isSetRef(ref) && ref.name === name) uids.add(ref.uid)
    }
    const claims = (await this.client.list<Claim>({...CLAIMS, namespace})).items
    const pods = (await this.client.list<Pod>({...PODS, namespace})).items
    const podUids = new Set(pods.map((p) => p.metadata?.uid))
    for (const pod of pods) note(pod)
    for (const claim of claims) {
      note(claim)
      // a claim handed to one of the set's pods (whenScaled: Delete) whose pod is now gone
      const refs = ownerRefs(claim)
      if (refs.length > 0 && refs.every((r) => isPodRef(r) && parentAndOrdinal(r.name).parent === name && !podUids.has(r.uid))) {
        await this.deleteQuietly({...CLAIMS, namespace, name: claim.metadata!.name}, claim.metadata?.uid)
      }
    }
    for (const revision of (await this.client.list<Revision>({...REVISIONS, namespace})).items) note(revision)
    for (const uid of uids) await this.collectDependents(namespace, name, uid)
  }

  /** Deletes what a deleted set (by uid) owned: its pods, its revisions, and the claims owned by it (or by those pods) alone. */
  private async collectDependents(namespace: string, name: string, uid: string): Promise<void> {
    const owns = (object: AnyObject) => ownerRefs(object).some((r) => r.uid === uid)
    const pods = (await this.client.list<Pod>({...PODS, namespace})).items.filter((p) => controllerOf(p)?.uid === uid)
    const podUids = new Set(pods.map((p) => p.metadata?.uid))
    for (const pod of pods) await this.deleteQuietly({...PODS, namespace, name: pod.metadata!.name}, pod.metadata?.uid)
    // claims before pods: an owner pod missing from the later pod list is really gone; a pod deleted
    // gracefully is still there, terminating, and the claims it owns stay until it is gone
    const claims = (await this.client.list<Claim>({...CLAIMS, namespace})).items
    const present = new Set((await this.client.list<Pod>({...PODS, namespace})).items.map((p) => p.metadata?.uid))
    const gone = (r: OwnerReference) => r.uid === uid || (isPodRef(r) && !present.has(r.uid))
    for (const claim of claims) {
      const refs = ownerRefs(claim)
      if (!refs.some((r) => r.uid === uid || (isPodRef(r) && podUids.has(r.uid)))) continue
      const others = refs.filter((r) => !gone(r))
      if (others.length === 0) {
        await this.deleteQuietly({...CLAIMS, namespace, name: claim.metadata!.name}, claim.metadata?.uid)
      } else if (others.length < refs.length) {
        // other owners remain: only the references to what is gone are dropped
        await this.writeIgnoringGone({...CLAIMS, namespace, name: claim.metadata!.name}, withOwnerRefs(claim, others)).catch(() => undefined)
      }
    }
    for (const revision of (await this.client.list<Revision>({...REVISIONS, namespace})).items) {
      if (controllerOf(revision)?.uid === uid || (owns(revision) && ownerRefs(revision).length === 1)) {
        await this.deleteQuietly({...REVISIONS, namespace, name: revision.metadata!.name}, revision.metadata?.uid)
      }
    }
    this.logger.v(2, 'deleted the dependents of a statefulset', {statefulset: `${namespace}/${name}`, pods: pods.length})
  }

  private async deleteQuietly(locator: ResourceLocator, uid: string | undefined): Promise<void> {
    try {
      await this.client.delete(locator, uid ? {preconditions: {uid}} : {})
    } catch (error) {
      // gone already, or replaced by a new object of that name (the uid precondition failed)
      if (!isNotFound(error) && !(error instanceof ApiStatusError && error.code === 409)) throw error
    }
  }

  /**
   * At start: claims and revisions whose StatefulSet (by uid) is not there any more, deleted while no
   * controller ran, have their set's key synced, which deletes them (pods do so through their informer).
   */
  private async sweep(): Promise<void> {
    const known = new Set(this.sets.list().map((s) => s.metadata?.uid))
    const note = (object: AnyObject) => {
      for (const ref of ownerRefs(object)) {
        if (isSetRef(ref) && !known.has(ref.uid)) this.controller.enqueue(`${namespaceOf(object)}/${ref.name}`)
      }
    }
    for (const claim of (await this.client.list<Claim>(CLAIMS)).items) note(claim)
    for (const revision of (await this.client.list<Revision>(REVISIONS)).items) note(revision)
  }
}
