// The garbage collector (Kubernetes' pkg/controller/garbagecollector): metadata-only informers on every
// resource that can be listed, watched and deleted feed a graph of owners and dependents (graph.ts);
// workers act on what the graph puts in two queues:
//
// - attemptToDelete: an object whose owners may be gone. Each owner reference is resolved in the
//   dependent's namespace (cluster-scoped dependents may only have cluster-scoped owners) and checked
//   with a live GET: 404, or another uid, means absent — never the informers' caches alone. All owners
//   absent: the object is deleted (uid and resourceVersion preconditions; Background unless it carries
//   its own orphan or foregroundDeletion finalizer). Some owners still there: the dangling references
//   (and those to owners deleting their dependents in the foreground) are patched away and it stays.
//   A dependent of an owner deleting in the foreground goes too — in the foreground when it has
//   dependents of its own. An owner deleting in the foreground (foregroundDeletion finalizer) loses the
//   finalizer once no dependent that blocks it (blockOwnerDeletion) is left.
// - attemptToOrphan: an owner being deleted with the orphan finalizer: each dependent loses its
//   reference to it, then the finalizer goes (and the owner with it).
//
// A failure goes back to its queue after an exponential back-off (5 ms doubling up to 30 s); conflicts
// are retried the same way, and a finalizer removal retries a few conflicts at once. Workers start only
// once every informer has listed, so the graph holds every dependent before anything is decided.
import type {AnyObject} from '../../api/types.js'
import {Informer, type RestClient} from '../../client/index.js'
import {FOREGROUND_FINALIZER, ORPHAN_FINALIZER} from '../../machinery/deletion-propagation.js'
import type {Logger} from '../../machinery/log.js'
import {WorkQueue} from '../queue.js'
import {DependencyGraph, describe, hasFinalizer, isBeingDeleted, ownerRefsOf, type GraphNode, type ObjectMeta, type ObjectReference, type OwnerReference} from './graph.js'
import {METADATA_ACCEPT, METADATA_LIST_ACCEPT, ObjectOperations, RestMappingError, type Propagation} from './operations.js'
import {apiVersionOfResource, ResourceMapper, type ApiResource} from './resources.js'

export interface GarbageCollectorOptions {
  /** concurrent attemptToDelete workers (default 10; kube-controller-manager's --concurrent-gc-syncs is 20) */
  workers?: number
  /** concurrent attemptToOrphan workers (default 2) */
  orphanWorkers?: number
}

/** What a worker does with a key once processed: look again after its back-off, forget its back-off,
 *  or nothing (it is already back in the queue). */
type Outcome = 'requeue' | 'forget' | 'keep'

/** A cluster-scoped object names a namespaced owner: never valid, so neither collected nor retried. */
class NamespacedOwnerOfClusterScopedObject extends Error {}

/** discovery retries: 200 ms doubling up to 5 s, until it works or the collector stops */
const DISCOVERY_RETRY_MS = {initial: 200, max: 5_000}

function identityOf(resource: ApiResource, meta: ObjectMeta | undefined): ObjectReference {
  return {
    apiVersion: apiVersionOfResource(resource),
    kind: resource.kind,
    name: meta?.name ?? '',
    uid: meta?.uid ?? '',
    namespace: resource.namespaced ? (meta?.namespace ?? '') : '',
  }
}

export class GarbageCollector {
  private readonly deleteQueue = new WorkQueue()
  private readonly orphanQueue = new WorkQueue()
  private readonly informers: Informer<AnyObject>[] = []
  private readonly workers: Promise<void>[] = []
  private graph?: DependencyGraph
  private operations?: ObjectOperations
  private stopped = false
  private wake?: () => void

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    private readonly options: GarbageCollectorOptions = {},
  ) {}

  /** Discovers the resources, lists and watches them all, then starts the workers. */
  async start(): Promise<void> {
    const mapper = await this.discover()
    if (!mapper || this.stopped) return
    this.operations = new ObjectOperations(this.client, mapper)
    const graph = new DependencyGraph(
      {
        attemptToDelete: (node) => this.deleteQueue.add(node.uid),
        attemptToDeleteLater: (node) => this.deleteQueue.addRateLimited(node.uid),
        attemptToOrphan: (node) => this.orphanQueue.add(node.uid),
      },
      this.logger,
      (apiVersion, kind) => mapper.forKind(apiVersion, kind)?.namespaced,
    )
    this.graph = graph
    for (const resource of mapper.deletable) {
      const locator = {group: resource.group, version: resource.version, resource: resource.resource}
      const informer = new Informer<AnyObject>(
        this.client,
        locator,
        {
          onAdd: (object) => graph.observe(identityOf(resource, object.metadata), object.metadata ?? {}, undefined),
          onUpdate: (old, object) => graph.observe(identityOf(resource, object.metadata), object.metadata ?? {}, old.metadata ?? {}),
          onDelete: (object) => graph.remove(identityOf(resource, object.metadata), false),
        },
        {
          accept: {list: METADATA_LIST_ACCEPT, watch: METADATA_ACCEPT},
          onError: (error) => this.logger.v(2, 'informer error', {resource: resource.resource, group: resource.group, error: error.message}),
        },
      )
      this.informers.push(informer)
      informer.start()
    }
    try {
      await Promise.all(this.informers.map((i) => i.waitForSync()))
    } catch (error) {
      if (this.stopped) return
      throw error
    }
    if (this.stopped) return
    for (let i = 0; i < (this.options.workers ?? 10); i++) this.workers.push(this.work(this.deleteQueue, (uid) => this.attemptToDeleteWorker(uid)))
    for (let i = 0; i < (this.options.orphanWorkers ?? 2); i++) this.workers.push(this.work(this.orphanQueue, (uid) => this.attemptToOrphanWorker(uid)))
    this.logger.v(1, 'garbage collector synced', {resources: mapper.deletable.length, objects: graph.nodes.size})
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wake?.()
    this.deleteQueue.shutdown()
    this.orphanQueue.shutdown()
    await Promise.allSettled(this.workers)
    await Promise.allSettled(this.informers.map((i) => i.stop()))
  }

  /** The server's resources; retried until it answers (undefined when stopped first). */
  private async discover(): Promise<ResourceMapper | undefined> {
    let delay = DISCOVERY_RETRY_MS.initial
    while (!this.stopped) {
      try {
        return await ResourceMapper.discover(this.client)
      } catch (error) {
        if (this.stopped) break
        this.logger.warn('garbage collector: discovery failed, retrying', {error: (error as Error).message, retryInMs: delay})
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay)
          this.wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        this.wake = undefined
        delay = Math.min(delay * 2, DISCOVERY_RETRY_MS.max)
      }
    }
    return undefined
  }

  /** One worker: process says whether to look at the key again after its back-off, to forget its
   *  back-off, or to leave it as it is (the key was already put back, after its back-off). */
  private async work(queue: WorkQueue, process: (uid: string) => Promise<Outcome>): Promise<void> {
    for (;;) {
      const uid = await queue.get()
      if (uid === undefined) return
      try {
        if (this.stopped) continue
        const outcome = await process(uid)
        if (outcome === 'requeue') queue.addRateLimited(uid)
        else if (outcome === 'forget') queue.forget(uid)
      } catch (error) {
        if (!this.stopped) {
          const node = this.graph?.nodes.get(uid)
          const fields = {item: node ? describe(node.identity) : uid, error: (error as Error).message}
          // an owner of a kind the server does not serve may be one it will serve: quietly retried
          if (error instanceof RestMappingError) this.logger.v(2, 'garbage collector: cannot resolve an owner reference', fields)
          else this.logger.warn('garbage collector: processing failed, will retry', fields)
        }
        queue.addRateLimited(uid)
      } finally {
        queue.done(uid)
      }
    }
  }

  // ---------- attemptToDelete ----------

  private async attemptToDeleteWorker(uid: string): Promise<Outcome> {
    const graph = this.graph!
    const node = graph.nodes.get(uid)
    if (!node) return 'forget'
    // an owner no dependent names any more (they went, or dropped the reference) is nothing to check
    if (graph.removeUnreferencedVirtual(node)) return 'forget'
    try {
      if ((await this.attemptToDeleteItem(node)) === 'gone') {
        // found absent at the coordinates one dependent gives, the node stays under those another gives
        // and is back in the queue after its back-off: that back-off must keep growing, not start over
        return graph.nodes.get(uid) === node ? 'keep' : 'forget'
      }
    } catch (error) {
      if (error instanceof NamespacedOwnerOfClusterScopedObject) {
        this.logger.warn('garbage collector: a cluster-scoped object names a namespaced owner; it is never collected', {item: describe(node.identity), error: error.message})
        return 'forget'
      }
      throw error
    }
    // an owner named by a dependent, found by a GET but not yet seen by an informer: look again until
    // it is (an object created and deleted while a watch was down would otherwise stay in the graph)
    return node.virtual && graph.nodes.get(uid) === node ? 'requeue' : 'forget'
  }

  private async attemptToDeleteItem(node: GraphNode): Promise<'gone' | 'done'> {
    // being deleted (not waiting for dependents): its deletion event will bring its dependents here
    if (node.beingDeleted && !node.deletingDependents) return 'done'
    const operations = this.operations!
    const latest = await operations.get(node.identity)
    if (!latest || latest.uid !== node.uid) {
      // not there (a virtual owner that does not exist, or a deletion the watch has not shown yet)
      this.graph!.remove(node.identity, true)
      return 'gone'
    }
    if (node.deletingDependents) {
      await this.processDeletingDependents(node)
      return 'done'
    }
    const refs = ownerRefsOf(latest)
    if (refs.length === 0) return 'done'
    const {solid, dangling, waiting} = await this.classifyReferences(node, refs)
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return 'done'
      // an owner is still there: only the references to owners that are gone (or that wait for their
      // dependents, which would otherwise wait for this one forever) go
      await operations.removeOwnerReferences(node.identity, [...dangling, ...waiting].map((r) => r.uid))
      this.logger.v(2, 'garbage collector: removed owner references', {item: describe(node.identity), owners: [...dangling, ...waiting].map((r) => r.uid).join(',')})
      return 'done'
    }
    if (waiting.length > 0 && node.dependents.size > 0) {
      // an owner waits for this one, which has dependents itself: delete it in the foreground too; a
      // dependent of it that also waits would make a cycle, so its references stop blocking first
      if ([...node.dependents].some((d) => d.deletingDependents)) await operations.unblockOwnerReferences(node.identity, refs)
      await this.deleteItem(node, 'Foreground', latest, refs)
      return 'done'
    }
    const policy: Propagation = hasFinalizer(latest, ORPHAN_FINALIZER) ? 'Orphan' : hasFinalizer(latest, FOREGROUND_FINALIZER) ? 'Foreground' : 'Background'
    await this.deleteItem(node, policy, latest, refs)
    return 'done'
  }

  private async deleteItem(node: GraphNode, policy: Propagation, latest: ObjectMeta, refs: OwnerReference[]): Promise<void> {
    this.logger.v(2, 'garbage collector: deleting an object whose owners are gone or being deleted', {item: describe(node.identity), propagationPolicy: policy})
    await this.operations!.delete(node.identity, policy, latest.resourceVersion, refs)
  }

  /** An owner deleting in the foreground: done once no blocking dependent is left; else those go first. */
  private async processDeletingDependents(node: GraphNode): Promise<void> {
    const blocking = node.blockingDependents()
    if (blocking.length === 0) {
      await this.operations!.removeFinalizer(node.identity, FOREGROUND_FINALIZER)
      this.logger.v(2, 'garbage collector: dependents gone, foreground deletion finishes', {item: describe(node.identity)})
      return
    }
    for (const dependent of blocking) if (!dependent.deletingDependents) this.deleteQueue.add(dependent.uid)
  }

  private async classifyReferences(node: GraphNode, refs: OwnerReference[]) {
    const solid: OwnerReference[] = []
    const dangling: OwnerReference[] = []
    const waiting: OwnerReference[] = []
    for (const ref of refs) {
      const owner = await this.liveOwner(node, ref)
      if (!owner) dangling.push(ref)
      else if (isBeingDeleted(owner) && hasFinalizer(owner, FOREGROUND_FINALIZER)) waiting.push(ref)
      else solid.push(ref)
    }
    return {solid, dangling, waiting}
  }

  /** The owner a reference names, by a live GET in the dependent's namespace; undefined when absent. */
  private async liveOwner(node: GraphNode, ref: OwnerReference): Promise<ObjectMeta | undefined> {
    const resource = this.operations!.resourceOf(ref)
    if (resource.namespaced && node.identity.namespace === '') {
      throw new NamespacedOwnerOfClusterScopedObject(`owner ${ref.kind} ${ref.name} is namespaced`)
    }
    const identity: ObjectReference = {apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: resource.namespaced ? node.identity.namespace : ''}
    if (this.graph!.absentOwners.has(identity)) return undefined
    const owner = await this.operations!.get(identity)
    if (!owner || owner.uid !== ref.uid) {
      this.graph!.absentOwners.add(identity)
      return undefined
    }
    return owner
  }

  // ---------- attemptToOrphan ----------

  private async attemptToOrphanWorker(uid: string): Promise<Outcome> {
    const node = this.graph!.nodes.get(uid)
    if (!node) return 'forget'
    const operations = this.operations!
    const latest = await operations.get(node.identity)
    // not (or no longer) orphaning: gone, replaced, or a later DELETE chose another propagation
    if (!latest || latest.uid !== uid || !isBeingDeleted(latest) || !hasFinalizer(latest, ORPHAN_FINALIZER)) return 'forget'
    const failures: string[] = []
    const dependents = [...node.dependents]
    for (const dependent of dependents) {
      try {
        await operations.removeOwnerReferences(dependent.identity, [uid])
      } catch (error) {
        failures.push(`${describe(dependent.identity)}: ${(error as Error).message}`)
      }
    }
    if (failures.length > 0) throw new Error(`orphaning the dependents failed: ${failures.join('; ')}`)
    await operations.removeFinalizer(node.identity, ORPHAN_FINALIZER)
    this.logger.v(2, 'garbage collector: dependents orphaned', {item: describe(node.identity), dependents: dependents.length})
    return 'forget'
  }
}
