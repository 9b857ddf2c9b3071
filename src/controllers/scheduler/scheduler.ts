// The scheduler (kube-scheduler's default profile, renamed orch-scheduler): pods with no
// spec.nodeName whose spec.schedulerName is ours are placed on a node that passes every filter
// (filters.ts) and scores best (scores.ts), and bound to it through pods/{name}/binding.
//
// Two informers feed it: nodes, and pods that are not Succeeded or Failed (bound ones are accounted
// on their node in the cache, pending ones go to the scheduling queue). One loop takes pods off the
// queue and decides synchronously against the cache, so each decision sees the ones before it; the
// pod is then "assumed" on its node and the binding is written in the background while the loop goes
// on (it waits while parallelWrites bindings and status writes are in flight). A pod that fits nowhere
// gets a FailedScheduling event and the condition PodScheduled=False/Unschedulable, and waits until a
// node is added or changes or a pod goes away; a failed binding is retried after a back-off. Nothing
// here throws into the server: every failure is logged and retried.
import type {AnyObject} from '../../api/types.js'
import {Informer, isApiStatusError, type ResourceLocator, type RestClient} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import {SchedulerCache} from './cache.js'
import {EventRecorder} from './events.js'
import {podInfoOf, type PodInfo} from './info.js'
import {bindingRejectedMessage, SCHEDULER_NAME, scheduledMessage} from './messages.js'
import {Placer, type Placement, type PlacementOptions} from './placement.js'
import {SchedulingQueue, type QueueOptions, type QueuedPod} from './queue.js'

const PODS: ResourceLocator = {group: '', version: 'v1', resource: 'pods'}
const NODES: ResourceLocator = {group: '', version: 'v1', resource: 'nodes'}
/** the scheduler's pod informer leaves finished pods out, as kube-scheduler's does */
const NOT_FINISHED = 'status.phase!=Succeeded,status.phase!=Failed'
/** how often parked pods are checked for having waited too long (flushUnschedulablePodsLeftover) */
const LEFTOVER_FLUSH_MS = 30_000
/** the loop gives the event loop a turn at least this often (informer events, HTTP answers) */
const YIELD_EVERY_MS = 10

export interface SchedulerOptions extends PlacementOptions, QueueOptions {
  /** the spec.schedulerName this scheduler serves (default orch-scheduler) */
  schedulerName?: string
  /** bindings and pod status writes in flight at most before the loop waits (default 64) */
  parallelWrites?: number
}

export interface SchedulerStats {
  /** pods bound */
  scheduled: number
  /** attempts that found no node */
  unschedulable: number
  /** bindings the server refused or that failed */
  bindFailures: number
}

const keyOf = (pod: AnyObject) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}

export class Scheduler {
  readonly cache = new SchedulerCache()
  readonly stats: SchedulerStats = {scheduled: 0, unschedulable: 0, bindFailures: 0}
  private readonly queue: SchedulingQueue
  private readonly placer: Placer
  private readonly events: EventRecorder
  private readonly nodes: Informer
  private readonly pods: Informer
  private readonly name: string
  private readonly parallelWrites: number
  private readonly now: () => number
  private loop: Promise<void> | undefined
  private flushTimer: NodeJS.Timeout | undefined
  private writesInFlight = 0
  private slotWaiters: (() => void)[] = []
  /** the last write about each pod: writes about one pod happen in order */
  private readonly writes = new Map<string, Promise<unknown>>()

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: SchedulerOptions = {},
  ) {
    this.name = options.schedulerName ?? SCHEDULER_NAME
    this.parallelWrites = options.parallelWrites ?? 64
    this.now = options.now ?? Date.now
    this.queue = new SchedulingQueue(options)
    this.placer = new Placer(this.cache, options)
    this.events = new EventRecorder(client, logger, {component: this.name, now: this.now})
    const onError = (error: Error) => logger.v(2, 'informer error', {error: error.message})
    this.nodes = new Informer(
      client,
      NODES,
      {
        onAdd: (node) => this.onNode(node),
        onUpdate: (_old, node) => this.onNode(node),
        onDelete: (node) => this.cache.removeNode(node.metadata?.name ?? ''),
      },
      {onError},
    )
    this.pods = new Informer(
      client,
      PODS,
      {
        onAdd: (pod) => this.onPod(undefined, pod),
        onUpdate: (old, pod) => this.onPod(old, pod),
        onDelete: (pod) => this.onPodGone(pod),
      },
      {fieldSelector: NOT_FINISHED, onError},
    )
  }

  async start(): Promise<void> {
    this.nodes.start()
    this.pods.start()
    await Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()])
    this.loop = this.run()
    this.flushTimer = setInterval(() => this.queue.flushLeftover(), LEFTOVER_FLUSH_MS)
    this.flushTimer.unref()
  }

  async stop(): Promise<void> {
    this.queue.close()
    if (this.flushTimer) clearInterval(this.flushTimer)
    for (const wake of this.slotWaiters.splice(0)) wake()
    await this.loop
    await Promise.allSettled([...this.writes.values()])
    await this.events.shutdown()
    await Promise.all([this.nodes.stop(), this.pods.stop()])
  }

  /** Events dropped because too many were waiting to be written (a burst of pods). */
  eventsDropped(): number {
    return this.events.dropped
  }

  /** Pods waiting in each part of the queue. */
  pending(): ReturnType<SchedulingQueue['counts']> {
    return this.queue.counts()
  }

  // ---------- informer events ----------

  private onNode(node: AnyObject): void {
    // a new node, or one whose labels, taints, allocatable or readiness changed, may fit parked pods
    if (this.cache.setNode(node)) this.queue.moveAllToActiveOrBackoff()
  }

  private isOurs(pod: AnyObject): boolean {
    const spec = pod.spec ?? {}
    return (spec.schedulerName || SCHEDULER_NAME) === this.name && !pod.metadata?.deletionTimestamp && !(spec.schedulingGates?.length > 0)
  }

  private onPod(old: AnyObject | undefined, pod: AnyObject): void {
    const key = keyOf(pod)
    const nodeName: string | undefined = pod.spec?.nodeName || undefined
    if (nodeName) {
      this.queue.remove(key)
      const unchanged =
        old?.spec?.nodeName === nodeName &&
        this.cache.nodeOf(key) === nodeName &&
        !this.cache.isAssumed(key) &&
        sameJson(old.metadata?.labels, pod.metadata?.labels) &&
        sameJson(old.metadata?.ownerReferences, pod.metadata?.ownerReferences)
      if (!unchanged) this.cache.addPod(podInfoOf(pod), nodeName)
      return
    }
    if (this.isOurs(pod)) this.queue.upsert(podInfoOf(pod))
    else this.queue.remove(key)
  }

  private onPodGone(pod: AnyObject): void {
    const key = keyOf(pod)
    this.queue.remove(key)
    // its requests and ports are free again: parked pods may fit now
    if (this.cache.removePod(key)) this.queue.moveAllToActiveOrBackoff()
  }

  // ---------- the scheduling loop ----------

  private async run(): Promise<void> {
    let lastYield = performance.now()
    for (;;) {
      const queued = await this.queue.pop()
      if (!queued) return
      try {
        this.scheduleOne(queued)
      } catch (error) {
        this.logger.warn('scheduling attempt failed', {pod: queued.info.key, error: (error as Error).message})
        this.queue.backoff(queued.info.key)
      }
      while (this.writesInFlight >= this.parallelWrites) await new Promise<void>((resolve) => this.slotWaiters.push(resolve))
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve))
        lastYield = performance.now()
      }
    }
  }

  private scheduleOne(queued: QueuedPod): void {
    const {info} = queued
    const current = this.pods.get(info.key)
    if (!current || current.metadata?.uid !== info.uid || current.spec?.nodeName || !this.isOurs(current)) {
      this.queue.remove(info.key)
      return
    }
    const placement = this.placer.place(info)
    if ('node' in placement) {
      this.cache.assume(info, placement.node)
      this.bind(info, placement.node)
      return
    }
    this.queue.unschedulable(info.key)
    this.reportUnschedulable(current, placement)
  }

  private reportUnschedulable(pod: AnyObject, placement: Exclude<Placement, {node: string}>): void {
    this.stats.unschedulable++
    const key = keyOf(pod)
    const filters = [...placement.byFilter].map(([filter, count]) => `${filter}:${count}`).join(',')
    this.logger.v(2, 'unable to schedule pod; no fit; waiting', {pod: key, filters, message: placement.message})
    this.events.record(pod, 'Warning', 'FailedScheduling', 'Scheduling', placement.message)
    this.background(this.counted(this.serial(key, () => this.setNotScheduled(key, 'Unschedulable', placement.message))))
  }

  private bind(info: PodInfo, node: string): void {
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: {name: info.name, namespace: info.namespace, uid: info.uid},
      target: {apiVersion: 'v1', kind: 'Node', name: node},
    }
    const locator = {...PODS, namespace: info.namespace, name: info.name, subresource: 'binding'}
    const written = this.serial(info.key, () => this.client.create(locator, binding))
      .then(
        () => {
          this.stats.scheduled++
          this.queue.done(info.key)
          this.events.record(info.pod, 'Normal', 'Scheduled', 'Binding', scheduledMessage(info.namespace, info.name, node))
        },
        (error) => this.bindFailed(info, node, error),
      )
    this.background(this.counted(written))
  }

  /** Counts a write in flight until it settles; the loop waits while too many are. */
  private counted<T>(work: Promise<T>): Promise<T> {
    this.writesInFlight++
    return work.finally(() => {
      this.writesInFlight--
      this.slotWaiters.shift()?.()
    })
  }

  /** A write nobody waits for: whatever goes wrong is logged, never an unhandled rejection. */
  private background(work: Promise<unknown>): void {
    work.catch((error) => this.logger.warn('scheduler write failed', {error: (error as Error).message}))
  }

  private bindFailed(info: PodInfo, node: string, error: unknown): void {
    this.cache.forget(info.key)
    if (isApiStatusError(error) && error.code === 404) {
      this.queue.remove(info.key)
      return
    }
    this.stats.bindFailures++
    const text = (error as Error).message
    this.logger.warn('binding failed; retrying after back-off', {pod: info.key, node, error: text})
    this.queue.backoff(info.key)
    const message = bindingRejectedMessage(text)
    this.events.record(info.pod, 'Warning', 'FailedScheduling', 'Scheduling', message)
    this.background(this.serial(info.key, () => this.setNotScheduled(info.key, 'SchedulerError', message)))
    // what the pod was assumed to take is free again
    this.queue.moveAllToActiveOrBackoff()
  }

  /** PodScheduled=False with the reason and message, through pods/status, unless it says so already. */
  private async setNotScheduled(key: string, reason: string, message: string): Promise<void> {
    const pod = this.pods.get(key)
    if (!pod || pod.spec?.nodeName) return
    const existing = (pod.status?.conditions ?? []).find((c: AnyObject) => c?.type === 'PodScheduled')
    if (existing?.status === 'False' && existing.reason === reason && existing.message === message) return
    const transition = existing?.status === 'False' && existing.lastTransitionTime ? existing.lastTransitionTime : new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')
    const condition = {type: 'PodScheduled', status: 'False', reason, message, lastTransitionTime: transition}
    try {
      await this.client.patch({...PODS, namespace: pod.metadata?.namespace, name: pod.metadata?.name, subresource: 'status'}, 'strategic', {
        status: {conditions: [condition]},
      })
    } catch (error) {
      if (isApiStatusError(error) && error.code === 404) return
      this.logger.v(1, 'pod condition not written', {pod: key, error: (error as Error).message})
    }
  }

  /** Runs fn after the previous write about the same pod has finished. */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.writes.get(key)
    const next = previous ? previous.then(fn) : fn()
    const settled = next.catch(() => undefined)
    this.writes.set(key, settled)
    void settled.then(() => {
      if (this.writes.get(key) === settled) this.writes.delete(key)
    })
    return next
  }
}
