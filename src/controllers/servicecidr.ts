// ServiceCIDR status and deletion, as Kubernetes' servicecidrs controller: a range is Ready (status
// True, reason "" — Kubernetes sets none — message "orch Service CIDR is ready"); a range being
// deleted keeps its finalizer while IPAddresses inside it are not covered by another range (Ready
// False, reason Terminating), and once none is, until deletionGracePeriod (10 s) has passed since its
// deletionTimestamp — so allocators that still saw it as usable have stopped allocating from it —
// and is looked at again when the rest of that time is over; then the finalizer goes.
import {SERVICE_CIDR_FINALIZER} from '../api/networking/servicecidr.js'
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type RestClient} from '../client/index.js'
import {cidrContains, parseCidr, type Cidr} from '../machinery/ipnet.js'
import type {Logger} from '../machinery/log.js'
import {Controller, type ReconcileResult} from './controller.js'

const GROUP = 'networking.orch.io'
/** Kubernetes' deletionGracePeriod = 10 * time.Second */
export const DELETION_GRACE_PERIOD_MS = 10_000
const READY_MESSAGE = 'orch Service CIDR is ready'

function parsedCidrs(serviceCIDR: AnyObject): Cidr[] {
  return ((serviceCIDR.spec?.cidrs ?? []) as string[]).map(parseCidr).filter((c): c is Cidr => c !== null)
}

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
}

export class ServiceCIDRController {
  private readonly controller: Controller
  private readonly now: () => Date
  private readonly cidrs: Informer<AnyObject>
  private readonly addresses: Informer<AnyObject>
  private readonly deletionGracePeriodMs: number

  constructor(
    private readonly client: RestClient,
    logger: Logger,
    options: {deletionGracePeriodMs?: number; now?: () => Date} = {},
  ) {
    this.deletionGracePeriodMs = options.deletionGracePeriodMs ?? DELETION_GRACE_PERIOD_MS
    this.now = options.now ?? (() => new Date())
    this.controller = new Controller({name: 'servicecidr', logger, reconcile: (key) => this.reconcile(key)})
    const enqueue = (o: AnyObject) => this.controller.enqueue(o.metadata!.name)
    this.cidrs = new Informer(client, {group: GROUP, version: 'v1', resource: 'servicecidrs'}, {onAdd: enqueue, onUpdate: (_o, n) => enqueue(n)})
    // a released address may let a terminating range go
    const wakeTerminating = () => {
      for (const c of this.cidrs.list()) if (c.metadata?.deletionTimestamp) enqueue(c)
    }
    this.addresses = new Informer(client, {group: GROUP, version: 'v1', resource: 'ipaddresses'}, {onDelete: wakeTerminating})
  }

  async start(): Promise<void> {
    this.cidrs.start()
    this.addresses.start()
    await Promise.all([this.cidrs.waitForSync(), this.addresses.waitForSync()])
    this.controller.start()
  }

  async stop(): Promise<void> {
    await this.controller.stop()
    await Promise.all([this.cidrs.stop(), this.addresses.stop()])
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const cidr = this.cidrs.get(name)
    if (!cidr) return
    if (!cidr.metadata?.deletionTimestamp) {
      await this.setReady(cidr, 'True', '', READY_MESSAGE)
      return
    }
    const others = this.cidrs
      .list()
      .filter((c) => c.metadata!.name !== name && !c.metadata?.deletionTimestamp)
      .flatMap((c) => parsedCidrs(c))
    const mine = parsedCidrs(cidr)
    const orphaned = this.addresses.list().filter((address) => {
      const ip: string = address.metadata!.name
      return mine.some((c) => cidrContains(c, ip)) && !others.some((c) => cidrContains(c, ip))
    })
    if (orphaned.length > 0) {
      await this.setReady(
        cidr,
        'False',
        'Terminating',
        'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR',
      )
      return
    }
    // no IP needs it: still wait out the grace period since the delete
    const remaining = Date.parse(cidr.metadata.deletionTimestamp) + this.deletionGracePeriodMs - this.now().getTime()
    if (remaining > 0) return {requeueAfterMs: remaining}
    const finalizers: string[] = cidr.metadata?.finalizers ?? []
    if (!finalizers.includes(SERVICE_CIDR_FINALIZER)) return
    try {
      await this.client.update(
        {group: GROUP, version: 'v1', resource: 'servicecidrs', name},
        {...cidr, metadata: {...cidr.metadata, finalizers: finalizers.filter((f) => f !== SERVICE_CIDR_FINALIZER)}},
      )
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) return
      throw error
    }
  }

  private async setReady(cidr: AnyObject, status: 'True' | 'False', reason: string, message: string): Promise<void> {
    const conditions: AnyObject[] = cidr.status?.conditions ?? []
    const current = conditions.find((c) => c.type === 'Ready')
    if (current && current.status === status && (current.reason ?? '') === reason && current.message === message) return
    const ready = {type: 'Ready', status, lastTransitionTime: timestamp(), reason, message}
    try {
      await this.client.update(
        {group: GROUP, version: 'v1', resource: 'servicecidrs', name: cidr.metadata!.name, subresource: 'status'},
        {...cidr, status: {...cidr.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), ready]}},
      )
    } catch (error) {
      if (error instanceof ApiStatusError && (error.code === 404 || error.code === 409)) {
        // the informer brings the newer object and the key comes round again
        if (error.code === 409) this.controller.enqueue(cidr.metadata!.name)
        return
      }
      throw error
    }
  }
}
