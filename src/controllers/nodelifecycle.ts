// Node lifecycle, as Kubernetes' node lifecycle controller:
// - monitor pass (every monitor period): a node that stops renewing its Lease and posting status for
//   the grace period turns Ready=Unknown and is tainted unreachable:NoExecute. A node that never
//   posted a Ready condition (nor renewed a Lease) for the startup grace period after its creation
//   gets Ready, MemoryPressure, DiskPressure and PIDPressure Unknown (NodeStatusNeverUpdated) and is
//   tainted unreachable:NoExecute in the same pass. Then, as processTaintBaseEviction: Ready=False is
//   tainted not-ready:NoExecute once False has lasted the grace period, as the spec asks (Kubernetes
//   1.32 taints at once; unreachable:NoExecute removed), Ready=Unknown
//   unreachable:NoExecute (not-ready:NoExecute removed), Ready=True loses both; a node without a Ready
//   condition keeps its taints. When the controller turns
//   Ready from True to Unknown it marks the node's pods Ready=False (MarkPodsNotReady: pods/status,
//   only the Ready condition's status and lastTransitionTime change), retried on the next pass when
//   that fails. Pods on a NoExecute-tainted node that do not tolerate the taint are evicted (deleted)
//   after their tolerationSeconds.
// - NoSchedule pass (on every node add and update, TaintNodesByCondition): the node's conditions map
//   to NoSchedule taints (Ready False not-ready, Ready Unknown unreachable, Memory/Disk/PIDPressure
//   True memory-/disk-/pid-pressure, NetworkUnavailable True network-unavailable), and
//   spec.unschedulable to node.orch.io/unschedulable; missing ones are added (with timeAdded) and
//   stale ones removed in one update. No other taint is touched.
// - pod pass (a pod added with, or changed to, a spec.nodeName): a pod bound to a node whose Ready is
//   not True is marked Ready=False.
import {NODE_LEASE_NAMESPACE} from '../api/coordination/lease.js'
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, objectKey, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import {Controller} from './controller.js'
import {EventRecorder} from './statefulset/events.js'

export const UNREACHABLE_TAINT = 'node.orch.io/unreachable'
export const NOT_READY_TAINT = 'node.orch.io/not-ready'
export const UNSCHEDULABLE_TAINT = 'node.orch.io/unschedulable'
export const MEMORY_PRESSURE_TAINT = 'node.orch.io/memory-pressure'
export const DISK_PRESSURE_TAINT = 'node.orch.io/disk-pressure'
export const PID_PRESSURE_TAINT = 'node.orch.io/pid-pressure'
export const NETWORK_UNAVAILABLE_TAINT = 'node.orch.io/network-unavailable'
export {NODE_LEASE_NAMESPACE}
const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure']
/** Kubernetes' component name for the node lifecycle controller's events */
const EVENT_COMPONENT = 'node-controller'

/** condition type -> condition status -> the NoSchedule taint key it calls for (nodeConditionToTaintKeyStatusMap) */
const CONDITION_TAINTS = new Map<string, Map<string, string>>([
  ['Ready', new Map([['False', NOT_READY_TAINT], ['Unknown', UNREACHABLE_TAINT]])],
  ['MemoryPressure', new Map([['True', MEMORY_PRESSURE_TAINT]])],
  ['DiskPressure', new Map([['True', DISK_PRESSURE_TAINT]])],
  ['NetworkUnavailable', new Map([['True', NETWORK_UNAVAILABLE_TAINT]])],
  ['PIDPressure', new Map([['True', PID_PRESSURE_TAINT]])],
])
/** the keys whose NoSchedule taints the NoSchedule pass owns */
const NO_SCHEDULE_KEYS = new Set<string>([UNSCHEDULABLE_TAINT, ...[...CONDITION_TAINTS.values()].flatMap((m) => [...m.values()])])

/**
 * The node's taints with the NoSchedule taints its conditions and spec.unschedulable call for
 * (Kubernetes' doNoScheduleTaintingPass): missing ones appended, in the order of the conditions and
 * then unschedulable, each with timeAdded; managed ones no longer called for removed; every other
 * taint (another effect, another key) kept where it is. undefined when nothing changes.
 */
export function withNoScheduleTaints(node: AnyObject, timeAdded: string): AnyObject[] | undefined {
  const wanted: string[] = []
  for (const condition of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS.get(condition?.type)?.get(condition?.status)
    if (key && !wanted.includes(key)) wanted.push(key)
  }
  if (node.spec?.unschedulable) wanted.push(UNSCHEDULABLE_TAINT)
  const taints: AnyObject[] = node.spec?.taints ?? []
  const managed = (t: AnyObject) => t.effect === 'NoSchedule' && NO_SCHEDULE_KEYS.has(t.key)
  const kept = taints.filter((t) => !managed(t) || wanted.includes(t.key))
  const added = wanted.filter((key) => !taints.some((t) => managed(t) && t.key === key)).map((key) => ({key, effect: 'NoSchedule', timeAdded}))
  if (added.length === 0 && kept.length === taints.length) return undefined
  return [...kept, ...added]
}

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period (default 50 s) */
  gracePeriodMs?: number
  /** --node-startup-grace-period (default 60 s): how long a new node may go without posting Ready */
  startupGracePeriodMs?: number
  /** how often nodes are checked (default min(5 s, the shorter grace / 5)) */
  monitorPeriodMs?: number
  now?: () => number
}

/** Does the toleration tolerate the taint (Kubernetes' ToleratesTaint)? */
export function tolerates(toleration: AnyObject, taint: AnyObject): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false
  if (toleration.key && toleration.key !== taint.key) return false
  const operator = toleration.operator ?? 'Equal'
  if (operator === 'Exists') return true
  if (!toleration.key) return false
  return (toleration.value ?? '') === (taint.value ?? '')
}

interface Observed {
  /** the heartbeat we last saw (lease renewTime or Ready lastHeartbeatTime) */
  heartbeat: string
  /** when (our clock) that heartbeat changed */
  seenAt: number
}

export class NodeLifecycleController {
  private readonly nodes: Informer<AnyObject>
  private readonly leases: Informer<AnyObject>
  private readonly pods: Informer<AnyObject>
  private readonly observed = new Map<string, Observed>()
  /** nodes whose pods could not all be marked not ready: tried again on the next pass (nodesToRetry) */
  private readonly markPodsRetry = new Set<string>()
  /** the NoSchedule pass, by node name */
  private readonly noSchedule: Controller
  /** pods newly bound to a node, by namespace/name */
  private readonly boundPods: Controller
  private readonly events: EventRecorder
  private readonly recording = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private readonly grace: number
  private readonly startupGrace: number
  private readonly now: () => number

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: NodeLifecycleOptions = {},
  ) {
    this.grace = options.gracePeriodMs ?? 50_000
    this.startupGrace = options.startupGracePeriodMs ?? 60_000
    this.now = options.now ?? Date.now
    this.monitorPeriod = options.monitorPeriodMs ?? Math.max(100, Math.min(5_000, Math.min(this.grace, this.startupGrace) / 5))
    this.events = new EventRecorder(client, EVENT_COMPONENT, logger, this.now)
    this.noSchedule = new Controller({name: 'nodelifecycle-noschedule', logger, workers: 4, reconcile: (name) => this.noScheduleTaintingPass(name)})
    this.boundPods = new Controller({name: 'nodelifecycle-pods', logger, workers: 4, reconcile: (key) => this.processBoundPod(key)})
    this.nodes = new Informer(client, {group: '', version: 'v1', resource: 'nodes'}, {
      onAdd: (node) => this.noSchedule.enqueue(node.metadata!.name),
      onUpdate: (_old, node) => this.noSchedule.enqueue(node.metadata!.name),
      onDelete: (node) => {
        this.observed.delete(node.metadata!.name)
        this.markPodsRetry.delete(node.metadata!.name)
      },
    })
    this.leases = new Informer(client, {group: 'coordination.orch.io', version: 'v1', resource: 'leases', namespace: NODE_LEASE_NAMESPACE})
    this.pods = new Informer(client, {group: '', version: 'v1', resource: 'pods'}, {
      onAdd: (pod) => {
        if (pod.spec?.nodeName) this.boundPods.enqueue(objectKey(pod))
        this.kick()
      },
      onUpdate: (old, pod) => {
        if (pod.spec?.nodeName && pod.spec.nodeName !== old.spec?.nodeName) this.boundPods.enqueue(objectKey(pod))
        this.kick()
      },
    })
  }

  private readonly monitorPeriod: number

  async start(): Promise<void> {
    for (const informer of [this.nodes, this.leases, this.pods]) informer.start()
    await Promise.all([this.nodes.waitForSync(), this.leases.waitForSync(), this.pods.waitForSync()])
    this.noSchedule.start()
    this.boundPods.start()
    this.timer = setInterval(() => this.kick(), this.monitorPeriod)
    this.timer.unref()
    this.kick()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await Promise.all([this.noSchedule.stop(), this.boundPods.stop()])
    await this.running
    await Promise.all([this.nodes.stop(), this.leases.stop(), this.pods.stop()])
    await Promise.all(this.recording)
  }

  /** Records an event without waiting for it (a failed write is logged and dropped). */
  private record(object: AnyObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const writing = this.events.event(object, type, reason, message).finally(() => this.recording.delete(writing))
    this.recording.add(writing)
  }

  private kick(): void {
    this.running ??= this.monitor()
      .catch((error) => this.logger.warn('node monitor failed', {error: (error as Error).message}))
      .finally(() => (this.running = undefined))
  }

  /** One pass over every node. */
  async monitor(): Promise<void> {
    for (const node of this.nodes.list()) {
      try {
        await this.checkNode(node)
      } catch (error) {
        if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) continue
        this.logger.warn('node check failed', {node: node.metadata?.name, error: (error as Error).message})
      }
    }
  }

  private heartbeatOf(node: AnyObject): string {
    const name = node.metadata!.name
    const lease = this.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`)
    const ready = (node.status?.conditions ?? []).find((c: AnyObject) => c.type === 'Ready')
    return `${lease?.spec?.renewTime ?? ''}|${ready?.lastHeartbeatTime ?? ''}|${ready?.status ?? ''}`
  }

  private async checkNode(node: AnyObject): Promise<void> {
    const name: string = node.metadata!.name
    const now = this.now()
    const heartbeat = this.heartbeatOf(node)
    const conditions: AnyObject[] = node.status?.conditions ?? []
    const ready = conditions.find((c) => c.type === 'Ready')
    const seen = this.observed.get(name)
    if (!seen || seen.heartbeat !== heartbeat) {
      // Kubernetes' tryUpdateNodeHealth: a node first seen without a Ready condition (and without a
      // Lease) has been silent since its creation; otherwise since now
      const created = Date.parse(node.metadata?.creationTimestamp ?? '')
      const neverHeard = !seen && !ready && !this.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`) && !Number.isNaN(created)
      this.observed.set(name, {heartbeat, seenAt: neverHeard ? Math.min(created, now) : now})
    }
    const silentFor = now - (this.observed.get(name)?.seenAt ?? now)

    if (!ready) {
      // never posted: after the startup grace period (nodeStartupGracePeriod) all Unknown, and the
      // node is tainted as an unreachable one (processTaintBaseEviction sees Ready Unknown)
      if (silentFor < this.startupGrace) return
      // (no NodeNotReady event and no pods marked: Ready was never True)
      const updated = await this.markUnknown(node, now)
      await this.reconcileTaints(updated, new Set([UNREACHABLE_TAINT]), now)
      return
    }
    if (ready.status !== 'Unknown' && silentFor >= this.grace) {
      await this.markUnknown(node, now)
      if (ready.status === 'True') {
        // Ready went from True to not True under our hands: the node's pods are not ready either
        this.record({kind: 'Node', apiVersion: 'v1', metadata: {name, uid: node.metadata?.uid}}, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`)
        await this.markPodsNotReadyOnNode(name)
      }
      return
    }
    if (this.markPodsRetry.has(name)) {
      if (ready?.status !== 'True') await this.markPodsNotReadyOnNode(name)
      else this.markPodsRetry.delete(name)
    }
    // processTaintBaseEviction: the NoExecute taint of the Ready status; the other one goes. The spec
    // (States and transitions) asks for not-ready only "once False persists longer than the grace
    // period", where Kubernetes 1.32 taints at once: the spec is followed
    const wanted = new Set<string>()
    if (ready.status === 'Unknown') wanted.add(UNREACHABLE_TAINT)
    else if (ready.status === 'False') {
      const since = Date.parse(ready.lastTransitionTime ?? '')
      if (Number.isNaN(since) || now - since >= this.grace) wanted.add(NOT_READY_TAINT)
    }
    await this.reconcileTaints(node, wanted, now)
    await this.evictPods(node, now)
  }

  /** Writes Ready and the pressure conditions Unknown (tryUpdateNodeHealth); returns the node written. */
  private async markUnknown(node: AnyObject, now: number): Promise<AnyObject> {
    const at = formatTime(new Date(now))
    const conditions: AnyObject[] = (node.status?.conditions ?? []).map((c: AnyObject) => {
      if (c.type !== 'Ready' && !PRESSURE_CONDITIONS.includes(c.type)) return c
      if (c.status === 'Unknown') return c
      return {
        ...c,
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Agent stopped posting node status.',
        lastTransitionTime: at,
      }
    })
    for (const type of ['Ready', ...PRESSURE_CONDITIONS]) {
      if (!conditions.some((c) => c.type === type)) {
        // Kubernetes' tryUpdateNodeHealth: a condition the agent never posted gets the node's
        // creationTimestamp as its last heartbeat
        conditions.push({
          type,
          status: 'Unknown',
          reason: 'NodeStatusNeverUpdated',
          message: 'Agent never posted node status.',
          lastHeartbeatTime: node.metadata?.creationTimestamp,
          lastTransitionTime: at,
        })
      }
    }
    const updated = await this.client.update<AnyObject>({group: '', version: 'v1', resource: 'nodes', name: node.metadata!.name, subresource: 'status'}, {
      ...node,
      status: {...node.status, conditions},
    })
    this.logger.info('node not responding', {node: node.metadata!.name})
    return updated
  }

  /** The unreachable / not-ready NoExecute taints: the wanted ones added, the others removed (other effects untouched). */
  private async reconcileTaints(node: AnyObject, wanted: Set<string>, now: number): Promise<void> {
    const managed = [UNREACHABLE_TAINT, NOT_READY_TAINT]
    await this.updateTaints(node, (current) => {
      const taints: AnyObject[] = current.spec?.taints ?? []
      const kept = taints.filter((t) => t.effect !== 'NoExecute' || !managed.includes(t.key) || wanted.has(t.key))
      for (const key of wanted) {
        if (!kept.some((t) => t.key === key && t.effect === 'NoExecute')) kept.push({key, effect: 'NoExecute', timeAdded: formatTime(new Date(now))})
      }
      const same = kept.length === taints.length && kept.every((t) => taints.includes(t))
      return same ? undefined : kept
    })
  }

  /**
   * Writes the taints change(node) gives (undefined: nothing to change). On a conflict it reads the
   * node again and recomputes, a few times, as Kubernetes' taint helpers retry on conflict.
   */
  private async updateTaints(node: AnyObject, change: (node: AnyObject) => AnyObject[] | undefined): Promise<void> {
    const locator = {group: '', version: 'v1', resource: 'nodes', name: node.metadata!.name as string}
    let current = node
    for (let attempt = 1; ; attempt++) {
      const taints = change(current)
      if (!taints) return
      try {
        await this.client.update(locator, {...current, spec: {...current.spec, taints: taints.length > 0 ? taints : undefined}})
        return
      } catch (error) {
        if (!(error instanceof ApiStatusError && error.code === 409) || attempt >= 5) throw error
        current = await this.client.get(locator)
      }
    }
  }

  /** The NoSchedule pass of one node (doNoScheduleTaintingPass). */
  private async noScheduleTaintingPass(name: string): Promise<void> {
    const node = this.nodes.get(name)
    if (!node) return
    try {
      await this.updateTaints(node, (current) => withNoScheduleTaints(current, formatTime(new Date(this.now()))))
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) return
      throw error
    }
  }

  /** A pod newly bound to a node whose Ready condition is not True is marked not ready (processPod). */
  private async processBoundPod(key: string): Promise<void> {
    const pod = this.pods.get(key)
    const nodeName: string | undefined = pod?.spec?.nodeName
    if (!pod || !nodeName) return
    const node = this.nodes.get(nodeName)
    const ready = (node?.status?.conditions ?? []).find((c: AnyObject) => c.type === 'Ready')
    // no node (yet) or no Ready condition: the next node update takes care of the pod
    if (!ready || ready.status === 'True') return
    await this.markPodsNotReady([pod], nodeName)
  }

  /** MarkPodsNotReady for every pod on the node; on failure the next pass tries again. */
  private async markPodsNotReadyOnNode(nodeName: string): Promise<void> {
    const pods = this.pods.list().filter((pod) => pod.spec?.nodeName === nodeName)
    try {
      await this.markPodsNotReady(pods, nodeName)
      this.markPodsRetry.delete(nodeName)
    } catch (error) {
      this.markPodsRetry.add(nodeName)
      this.logger.warn('could not mark all pods not ready; will retry', {node: nodeName, error: (error as Error).message})
    }
  }

  /**
   * Kubernetes' MarkPodsNotReady: each pod's Ready condition (only that one, and only when the pod has
   * one) gets status False, through pods/status; its lastTransitionTime is now when the status changes,
   * its reason and message stay. A pod already not ready is left alone; a pod gone is skipped. Each pod
   * written gets a Warning NodeNotReady event. Throws (after trying every pod) when a write failed.
   */
  private async markPodsNotReady(pods: AnyObject[], nodeName: string): Promise<void> {
    const failures: string[] = []
    for (const pod of pods) {
      if (pod.spec?.nodeName !== nodeName) continue
      const conditions: AnyObject[] = pod.status?.conditions ?? []
      const ready = conditions.find((c) => c.type === 'Ready')
      if (!ready || ready.status === 'False') continue
      const changed = {...ready, status: 'False', lastTransitionTime: formatTime(new Date(this.now()))}
      const body = {...pod, status: {...pod.status, conditions: conditions.map((c) => (c === ready ? changed : c))}}
      const locator = {group: '', version: 'v1', resource: 'pods', namespace: pod.metadata!.namespace, name: pod.metadata!.name, subresource: 'status'}
      try {
        await this.client.update(locator, body)
        this.logger.info('marked pod not ready', {pod: objectKey(pod), node: nodeName})
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) continue
        failures.push(`${objectKey(pod)}: ${(error as Error).message}`)
        continue
      }
      this.record({kind: 'Pod', apiVersion: 'v1', ...pod}, 'Warning', 'NodeNotReady', 'Node is not ready')
    }
    if (failures.length > 0) throw new Error(`could not mark pods not ready: ${failures.join('; ')}`)
  }

  /** Deletes pods on the node that do not tolerate its NoExecute taints, after their tolerationSeconds. */
  private async evictPods(node: AnyObject, now: number): Promise<void> {
    const noExecute: AnyObject[] = (node.spec?.taints ?? []).filter((t: AnyObject) => t.effect === 'NoExecute')
    if (noExecute.length === 0) return
    for (const pod of this.pods.list()) {
      if (pod.spec?.nodeName !== node.metadata!.name || pod.metadata?.deletionTimestamp) continue
      // the pod must go when the first of its tolerations runs out; untolerated = at once
      let deadline = Infinity
      for (const taint of noExecute) {
        const toleration = (pod.spec?.tolerations ?? []).find((t: AnyObject) => tolerates(t, taint))
        if (!toleration) {
          deadline = now
          break
        }
        if (toleration.tolerationSeconds !== undefined && toleration.tolerationSeconds !== null) {
          const added = Date.parse(taint.timeAdded ?? '') || now
          deadline = Math.min(deadline, added + Math.max(0, toleration.tolerationSeconds) * 1000)
        }
      }
      if (deadline > now) continue
      try {
        await this.client.delete({group: '', version: 'v1', resource: 'pods', namespace: pod.metadata!.namespace, name: pod.metadata!.name})
        this.logger.info('evicted pod from tainted node', {pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, node: node.metadata!.name})
      } catch (error) {
        if (!(error instanceof ApiStatusError && error.code === 404)) throw error
      }
    }
  }
}
