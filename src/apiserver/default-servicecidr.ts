// The default ServiceCIDR `orch`, kept as kube-apiserver keeps `kubernetes`
// (pkg/controlplane/controller/defaultservicecidr): made from --service-cluster-ip-range before the
// first request (start-up waits for a first sync that works, trying again every 100 ms), then looked
// at every 10 s while the server runs. Absent (deleted for good, once the servicecidr controller let
// it go), it is created again with the configured CIDRs ("Creating default ServiceCIDR with CIDRs").
// Present, its spec is never changed (a range other than the configured one is logged once), and when
// it is not being deleted, has the configured CIDRs and no Ready condition (or Ready=Unknown), Ready is
// set True with an empty reason; Ready=False is left as it is (logged once) — the default range is
// never meant to be so, and overwriting another component's False would loop.
// Kubernetes also turns a single-stack default range into a dual-stack one when a second CIDR is
// configured; here a ServiceCIDR's spec.cidrs are immutable (document 2), so that is not done.
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import type {ResourceRegistry} from './registry.js'

/** Kubernetes' DefaultServiceCIDRName is `kubernetes` */
export const DEFAULT_SERVICE_CIDR = 'orch'
/** Kubernetes' interval: `10 * time.Second // same as DefaultEndpointReconcilerInterval` */
export const DEFAULT_SERVICE_CIDR_INTERVAL_MS = 10_000
/** how often the first sync is tried while start-up waits for it */
const FIRST_SYNC_RETRY_MS = 100
/** the field manager of its writes (Kubernetes' controllerName, renamed) */
const MANAGER = 'orch-service-cidr-controller'

export interface DefaultServiceCIDROptions {
  registry: ResourceRegistry
  /** --service-cluster-ip-range, in order (the first names the default IP family) */
  cidrs: string[]
  logger: Logger
  now: () => Date
  /** between syncs (default 10 s; tests shorten it) */
  intervalMs?: number
}

function sameCidrs(a: unknown, b: string[]): boolean {
  return Array.isArray(a) && a.length === b.length && a.every((c, i) => c === b[i])
}

export class DefaultServiceCIDRController {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  private reportedMismatchedCIDRs = false
  private reportedNotReadyCondition = false

  constructor(private readonly options: DefaultServiceCIDROptions) {}

  /** The first sync, tried until it works (kube-apiserver's start-up waits for it too). */
  async first(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.sync()
        return
      } catch (error) {
        if (this.stopped || attempt >= 50) throw error
        this.options.logger.v(2, 'error initializing the default ServiceCIDR', {error})
        await new Promise((resolve) => setTimeout(resolve, FIRST_SYNC_RETRY_MS))
      }
    }
  }

  /** From now on, every interval (wait.Until: the next run that long after the last one ended). */
  start(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.running = this.sync()
        .catch((error: unknown) => this.options.logger.info('error trying to sync the default ServiceCIDR', {error}))
        .finally(() => {
          this.running = undefined
          this.start()
        })
    }, this.options.intervalMs ?? DEFAULT_SERVICE_CIDR_INTERVAL_MS)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.running
  }

  async sync(): Promise<void> {
    const {registry, cidrs, logger, now} = this.options
    let current = await registry.getIfExists('', DEFAULT_SERVICE_CIDR)
    if (!current) {
      logger.info(`Creating default ServiceCIDR with CIDRs: [${cidrs.join(' ')}]`)
      const object = {apiVersion: 'networking.orch.io/v1', kind: 'ServiceCIDR', metadata: {name: DEFAULT_SERVICE_CIDR}, spec: {cidrs}}
      try {
        current = await registry.create('', object, {context: {now: now()}, fieldManager: MANAGER})
      } catch (error) {
        if ((error as {reason?: string}).reason !== 'AlreadyExists') throw error
        current = await registry.getIfExists('', DEFAULT_SERVICE_CIDR)
        if (!current) return
      }
    }
    await this.syncStatus(current)
  }

  private async syncStatus(serviceCIDR: AnyObject): Promise<void> {
    const {registry, cidrs, logger, now} = this.options
    // a range being deleted is the servicecidr controller's
    if (serviceCIDR.metadata?.deletionTimestamp) return
    if (!sameCidrs(serviceCIDR.spec?.cidrs, cidrs)) {
      if (!this.reportedMismatchedCIDRs) {
        logger.info(
          `Inconsistent ServiceCIDR status for ${DEFAULT_SERVICE_CIDR}, controller configuration: [${cidrs.join(' ')}], ServiceCIDR configuration: [${(serviceCIDR.spec?.cidrs ?? []).join(' ')}]. Configure the flags to match current ServiceCIDR or manually delete it.`,
        )
        this.reportedMismatchedCIDRs = true
      }
      return
    }
    const conditions: AnyObject[] = serviceCIDR.status?.conditions ?? []
    const ready = conditions.find((c) => c.type === 'Ready')
    if (ready?.status === 'False') {
      if (!this.reportedNotReadyCondition) {
        logger.info("Default ServiceCIDR condition Ready is False, but controller configuration matches. Please validate your cluster's network configuration.", {
          serviceCIDR: DEFAULT_SERVICE_CIDR,
          reason: ready.reason,
          message: ready.message,
        })
        this.reportedNotReadyCondition = true
      }
      return
    }
    if (ready?.status === 'True') return
    logger.info('Setting default ServiceCIDR condition Ready to True')
    const condition = {type: 'Ready', status: 'True', lastTransitionTime: formatTime(now()), reason: '', message: 'orch default Service CIDR is ready'}
    const body = {...serviceCIDR, status: {...serviceCIDR.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), condition]}}
    try {
      await registry.update('', DEFAULT_SERVICE_CIDR, body, {context: {now: now()}, fieldManager: MANAGER, subresource: 'status'})
    } catch (error) {
      // a conflict or a delete meanwhile: the next sync looks again
      logger.info('error updating default ServiceCIDR status', {error: (error as Error).message})
    }
  }
}
