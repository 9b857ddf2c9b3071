// Pod garbage collection, as Kubernetes' podgc controller does it for pods that no agent will ever
// finish: a pod bound to a node that does not exist (for longer than a quarantine, 40 s, so that a
// node being re-registered is not raced) is deleted with grace 0, and so is a pod marked for
// deletion that was never bound to a node. Checked every 20 s.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'

export interface PodGCOptions {
  /** how long a node must be missing before its pods go (default 40 s) */
  quarantineMs?: number
  /** how often pods are checked (default 20 s) */
  checkPeriodMs?: number
  now?: () => number
}

const PODS = {group: '', version: 'v1', resource: 'pods'}

export class PodGCController {
  private readonly nodes: Informer<AnyObject>
  private readonly pods: Informer<AnyObject>
  /** node name -> when (our clock) it was first seen missing */
  private readonly missingSince = new Map<string, number>()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private readonly quarantine: number
  private readonly period: number
  private readonly now: () => number

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: PodGCOptions = {},
  ) {
    this.quarantine = options.quarantineMs ?? 40_000
    this.period = options.checkPeriodMs ?? 20_000
    this.now = options.now ?? Date.now
    this.nodes = new Informer(client, {group: '', version: 'v1', resource: 'nodes'})
    this.pods = new Informer(client, PODS)
  }

  async start(): Promise<void> {
    this.nodes.start()
    this.pods.start()
    await Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()])
    this.timer = setInterval(() => this.kick(), this.period)
    this.timer.unref()
    this.kick()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.running
    await Promise.all([this.nodes.stop(), this.pods.stop()])
  }

  private kick(): void {
    this.running ??= this.collect()
      .catch((error) => this.logger.warn('pod garbage collection failed', {error: (error as Error).message}))
      .finally(() => (this.running = undefined))
  }

  /** One pass: orphaned pods and terminating unscheduled pods are deleted with grace 0. */
  async collect(): Promise<void> {
    const now = this.now()
    const existing = new Set(this.nodes.list().map((node) => node.metadata!.name as string))
    for (const name of [...this.missingSince.keys()]) if (existing.has(name)) this.missingSince.delete(name)
    for (const pod of this.pods.list()) {
      const nodeName: string | undefined = pod.spec?.nodeName || undefined
      let reason: string | undefined
      if (nodeName && !existing.has(nodeName)) {
        const since = this.missingSince.get(nodeName) ?? now
        this.missingSince.set(nodeName, since)
        if (now - since >= this.quarantine) reason = `its node ${nodeName} does not exist`
      } else if (!nodeName && pod.metadata?.deletionTimestamp) {
        reason = 'it is terminating and was never scheduled'
      }
      if (!reason) continue
      try {
        await this.client.delete({...PODS, namespace: pod.metadata!.namespace, name: pod.metadata!.name}, {gracePeriodSeconds: 0, preconditions: {uid: pod.metadata!.uid}})
        this.logger.info('deleted pod', {pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, reason})
      } catch (error) {
        if (error instanceof ApiStatusError && (error.code === 404 || error.code === 409)) continue
        throw error
      }
    }
  }
}
