// Node lifecycle: a node that stops renewing its Lease and posting status for the grace period
// turns Ready=Unknown and is tainted unreachable; Ready=False past the grace period is tainted
// not-ready; a healthy node loses both taints. Pods on a NoExecute-tainted node that do not
// tolerate the taint are evicted (deleted) after their tolerationSeconds.
import {NODE_LEASE_NAMESPACE} from '../api/coordination/lease.js'
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'

export const UNREACHABLE_TAINT = 'node.orch.io/unreachable'
export const NOT_READY_TAINT = 'node.orch.io/not-ready'
export {NODE_LEASE_NAMESPACE}
const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure']

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period (default 50 s) */
  gracePeriodMs?: number
  /** how often nodes are checked (default min(5 s, grace / 5)) */
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
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private readonly grace: number
  private readonly now: () => number

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: NodeLifecycleOptions = {},
  ) {
    this.grace = options.gracePeriodMs ?? 50_000
    this.now = options.now ?? Date.now
    this.monitorPeriod = options.monitorPeriodMs ?? Math.max(100, Math.min(5_000, this.grace / 5))
    this.nodes = new Informer(client, {group: '', version: 'v1', resource: 'nodes'})
    this.leases = new Informer(client, {group: 'coordination.orch.io', version: 'v1', resource: 'leases', namespace: NODE_LEASE_NAMESPACE})
    this.pods = new Informer(client, {group: '', version: 'v1', resource: 'pods'}, {onUpdate: () => this.kick(), onAdd: () => this.kick()})
  }

  private readonly monitorPeriod: number

  async start(): Promise<void> {
    for (const informer of [this.nodes, this.leases, this.pods]) informer.start()
    await Promise.all([this.nodes.waitForSync(), this.leases.waitForSync(), this.pods.waitForSync()])
    this.timer = setInterval(() => this.kick(), this.monitorPeriod)
    this.timer.unref()
    this.kick()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.running
    await Promise.all([this.nodes.stop(), this.leases.stop(), this.pods.stop()])
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
    const seen = this.observed.get(name)
    if (!seen || seen.heartbeat !== heartbeat) this.observed.set(name, {heartbeat, seenAt: now})
    const silentFor = now - (this.observed.get(name)?.seenAt ?? now)
    const conditions: AnyObject[] = node.status?.conditions ?? []
    const ready = conditions.find((c) => c.type === 'Ready')

    if (ready && ready.status !== 'Unknown' && silentFor >= this.grace) {
      await this.markUnknown(node, now)
      return
    }
    const status = ready?.status ?? 'Unknown'
    const wanted = new Set<string>()
    if (status === 'Unknown' && ready) wanted.add(UNREACHABLE_TAINT)
    if (status === 'False') {
      const since = Date.parse(ready?.lastTransitionTime ?? '')
      if (Number.isNaN(since) || now - since >= this.grace) wanted.add(NOT_READY_TAINT)
    }
    await this.reconcileTaints(node, wanted, now)
    await this.evictPods(node, now)
  }

  private async markUnknown(node: AnyObject, now: number): Promise<void> {
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
    await this.client.update({group: '', version: 'v1', resource: 'nodes', name: node.metadata!.name, subresource: 'status'}, {
      ...node,
      status: {...node.status, conditions},
    })
    this.logger.info('node not responding', {node: node.metadata!.name})
  }

  private async reconcileTaints(node: AnyObject, wanted: Set<string>, now: number): Promise<void> {
    const managed = [UNREACHABLE_TAINT, NOT_READY_TAINT]
    const taints: AnyObject[] = node.spec?.taints ?? []
    const kept = taints.filter((t) => !managed.includes(t.key) || (wanted.has(t.key) && t.effect === 'NoExecute'))
    for (const key of wanted) {
      if (!kept.some((t) => t.key === key && t.effect === 'NoExecute')) kept.push({key, effect: 'NoExecute', timeAdded: formatTime(new Date(now))})
    }
    const same = kept.length === taints.length && kept.every((t) => taints.includes(t))
    if (same) return
    await this.client.update({group: '', version: 'v1', resource: 'nodes', name: node.metadata!.name}, {
      ...node,
      spec: {...node.spec, taints: kept.length > 0 ? kept : undefined},
    })
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
