// The repair loops kube-apiserver runs for what Services hold from pools (its post-start hook
// start-service-ip-repair-controllers, pkg/registry/core/rest/storage_core.go): node port claims
// (./service-repair-nodeports.ts) and cluster IPs' IPAddress objects (./service-repair-ips.ts) are
// reconciled with the stored Services once at start, before the first request, and then every
// repairLoopInterval (3 minutes) while the server runs, a run starting that long after the last one
// ended (wait.Until). An IPAddress that looked leaked but was still young is looked at again once its
// grace is over, as Kubernetes' controller requeues it. Every server replica runs them; their deletes
// compare revisions, so two replicas never free what the other has just changed.
import type {Logger} from '../machinery/log.js'
import type {ResourceRegistry} from './registry.js'
import {ClusterIPRepair} from './service-repair-ips.js'
import {NodePortRepair} from './service-repair-nodeports.js'
import {RepairEvents, serviceSource} from './service-repair-support.js'
import type {NodePortAllocator} from './service-nodeports.js'

/** Kubernetes' repairLoopInterval (pkg/controlplane/instance.go), for both loops */
export const REPAIR_INTERVAL_MS = 3 * 60_000
/** How long a create may hold an allocation before storing its Service: kube-apiserver's 60 s request
 *  timeout, the grace of the IP repair's leak check (and of young node port claims). */
export const ALLOCATION_GRACE_MS = 60_000

export interface ServiceRepairOptions {
  services: ResourceRegistry
  ipAddresses: ResourceRegistry
  serviceCIDRs: ResourceRegistry
  events: ResourceRegistry
  nodePorts: NodePortAllocator
  logger: Logger
  now: () => Date
  /** between runs (default REPAIR_INTERVAL_MS; tests shorten it) */
  intervalMs?: number
  /** allocations younger than this are never leaks (default ALLOCATION_GRACE_MS; tests shorten it) */
  graceMs?: number
  /** how long a run waits for a watch cache to catch up before it reads storage (see listAtLeast) */
  cacheWaitMs?: number
}

/** One periodic repair: run(), then again intervalMs after it ended (sooner when run asks). */
class RepairLoop {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  /** what the last run asked for: the next one this many ms after it */
  private sooner: number | undefined

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<number | undefined>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** The run at start: its failure is the caller's. */
  async first(): Promise<void> {
    this.sooner = await this.run()
  }

  start(): void {
    this.schedule()
  }

  private schedule(): void {
    if (this.stopped) return
    const delay = Math.max(0, Math.min(this.intervalMs, this.sooner ?? Infinity))
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.running = this.tick().finally(() => (this.running = undefined))
    }, delay)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    this.sooner = undefined
    try {
      this.sooner = await this.run()
    } catch (error) {
      this.logger.warn(`${this.name} failed; trying again later`, {error})
    }
    this.schedule()
  }

  /** No run starts any more; resolves once the one under way (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.running
  }
}

export class ServiceRepair {
  private readonly loops: RepairLoop[]

  constructor(options: ServiceRepairOptions) {
    const {logger, now} = options
    const intervalMs = options.intervalMs ?? REPAIR_INTERVAL_MS
    const graceMs = options.graceMs ?? ALLOCATION_GRACE_MS
    const cacheWaitMs = options.cacheWaitMs ?? 0
    const services = serviceSource(options.services, cacheWaitMs)
    const ports = new NodePortRepair({
      allocator: options.nodePorts,
      services,
      events: new RepairEvents(options.events, 'portallocator-repair-controller', logger, now),
      logger,
      now,
      graceMs,
    })
    const ips = new ClusterIPRepair({
      services,
      ipAddresses: options.ipAddresses,
      serviceCIDRs: options.serviceCIDRs,
      events: new RepairEvents(options.events, 'ipallocator-repair-controller', logger, now),
      logger,
      now,
      graceMs,
      cacheWaitMs,
    })
    this.loops = [
      new RepairLoop('node port repair', async () => void (await ports.runOnce()), intervalMs, logger),
      new RepairLoop('cluster IP repair', () => ips.runOnce(), intervalMs, logger),
    ]
  }

  /** Both repairs once (at start, before the first request); rejects when one cannot run. */
  async runOnce(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.first()))
  }

  /** From now on, periodically. */
  start(): void {
    for (const loop of this.loops) loop.start()
  }

  /** Stops both; resolves once no run is under way (no timer is left behind). */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()))
  }
}
