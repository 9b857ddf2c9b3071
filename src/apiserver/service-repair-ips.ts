// The cluster IP repair loop of the MultiCIDRServiceAllocator (Kubernetes' pkg/registry/core/service/
// ipallocator/controller/repairip.go), run by ./service-repair.ts at start and every few minutes. A
// Service's cluster IP and its IPAddress point at each other (Service.spec.clusterIPs holds the
// IPAddress's name, IPAddress.spec.parentRef names the Service); every Service is checked first, then
// every IPAddress the allocator manages:
//
// - a Service IP that is not an IP: Warning ClusterIPNotValid;
// - outside every ServiceCIDR: Warning ClusterIPOutOfRange;
// - with no IPAddress: Warning ClusterIPNotAllocated, and the IPAddress is created;
// - whose IPAddress names something else than a Service, or a Service that does not exist: Warning
//   ClusterIPNotAllocated ("has a wrong reference; repairing"), and it is made again for this one;
// - whose IPAddress names another Service that holds the IP too: Warning ClusterIPAlreadyAllocated;
// - an IPAddress with wrong labels is made again;
// - an IPAddress naming no Service: Warning IPAddressNotAllocated on it, and it is deleted;
// - an IPAddress whose Service does not exist (a leak): Warning IPAddressNotAllocated, deleted once it
//   is older than the grace a create takes (60 s, the request timeout); the next run comes then;
// - an IPAddress whose Service holds other IPs: Warning IPAddressWrongReference, deleted — here too
//   only once it is older than the grace, as an update in flight (ExternalName to ClusterIP) creates
//   the IPAddress before it stores the Service (Kubernetes deletes it at once).
import type {AnyObject} from '../api/types.js'
import {canonicalIp, cidrContains, parseCidr, type Cidr} from '../machinery/ipnet.js'
import type {Logger} from '../machinery/log.js'
import type {ResourceRegistry} from './registry.js'
import {listAtLeast, serviceName, type RepairEvents, type ServiceSource} from './service-repair-support.js'
import {IP_FAMILY_LABEL, ipAddressFor, ipFamilyLabel, MANAGED_BY, MANAGED_BY_LABEL} from './service-ips.js'

const SERVICE_ACTION = 'ClusterIPAllocation'
const IP_ACTION = 'IPAddressAllocation'
/** the next run after a young leak waits this much past its grace (creationTimestamp is in seconds) */
const RECHECK_MARGIN_MS = 1_000

export interface ClusterIPRepairOptions {
  services: ServiceSource
  ipAddresses: ResourceRegistry
  serviceCIDRs: ResourceRegistry
  events: RepairEvents
  logger: Logger
  now: () => Date
  /** an IPAddress younger than this is not freed (a create in flight) */
  graceMs: number
  /** how long to wait for a watch cache to catch up before reading storage (see listAtLeast) */
  cacheWaitMs: number
}

/** What one run looks at: the IPAddresses, then the Services and ServiceCIDRs at or after them. */
interface Snapshot {
  addresses: Map<string, AnyObject>
  services: Map<string, AnyObject>
  ranges: Cidr[]
}

function clusterIPs(service: AnyObject): string[] {
  const ips = service.spec?.clusterIPs
  return Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string') : []
}

/** helper.IsServiceIPSet */
function isServiceIPSet(service: AnyObject): boolean {
  const ip = service.spec?.clusterIP
  return typeof ip === 'string' && ip !== '' && ip !== 'None'
}

function refersToService(ref: AnyObject | undefined): boolean {
  return (ref?.group ?? '') === '' && ref?.resource === 'services'
}

/** Go's %v of a *ParentReference */
function formatRef(ref: AnyObject | undefined): string {
  if (!ref) return '<nil>'
  return `&{${ref.group ?? ''} ${ref.resource ?? ''} ${ref.namespace ?? ''} ${ref.name ?? ''}}`
}

function labelsValid(address: AnyObject): boolean {
  const labels = address.metadata?.labels ?? {}
  return labels[MANAGED_BY_LABEL] === MANAGED_BY && labels[IP_FAMILY_LABEL] === ipFamilyLabel(address.metadata?.name ?? '')
}

export class ClusterIPRepair {
  constructor(private readonly options: ClusterIPRepairOptions) {}

  /** One run; resolves to how long until a young leak it saw is old enough to free (undefined: none). */
  async runOnce(): Promise<number | undefined> {
    const {services, ipAddresses, serviceCIDRs, cacheWaitMs} = this.options
    // IPAddresses first, then the Services at or after their revision: a Service stored before that
    // cannot be missing, so its IPAddress cannot look leaked
    const addresses = await listAtLeast(ipAddresses, 0)
    const stored = await services.list(addresses.revision)
    const cidrs = await listAtLeast(serviceCIDRs, stored.revision, cacheWaitMs)
    const snapshot: Snapshot = {
      addresses: new Map(addresses.items.map((a) => [a.metadata?.name ?? '', a])),
      services: new Map(stored.items.map((s) => [serviceName(s), s])),
      ranges: cidrs.items.flatMap((c) => (Array.isArray(c.spec?.cidrs) ? c.spec.cidrs : [])).map((text: string) => parseCidr(text)).filter((c): c is Cidr => c !== null),
    }
    for (const service of stored.items) {
      await this.guard(`Service ${serviceName(service)}`, () => this.syncService(service, snapshot))
    }
    let recheck: number | undefined
    for (const address of addresses.items) {
      const wait = await this.guard(`IPAddress ${address.metadata?.name}`, () => this.syncIPAddress(address, snapshot))
      if (wait !== undefined) recheck = Math.min(recheck ?? wait, wait)
    }
    return recheck
  }

  /** One object's failure is logged; the run goes on. */
  private async guard<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work()
    } catch (error) {
      this.options.logger.warn('cluster IP repair failed', {object: what, error})
      return undefined
    }
  }

  private async syncService(service: AnyObject, snapshot: Snapshot): Promise<void> {
    if (!isServiceIPSet(service)) return
    const name = serviceName(service)
    for (const clusterIP of clusterIPs(service)) {
      const ip = canonicalIp(clusterIP)
      if (!ip) {
        this.options.logger.warn(`the ClusterIP ${clusterIP} for Service ${name} is not a valid IP; please recreate Service`)
        await this.event(service, 'ClusterIPNotValid', 'ClusterIPValidation', `Cluster IP ${clusterIP} is not a valid IP; please recreate Service`)
        continue
      }
      const fam = ipFamilyLabel(ip)
      if (!snapshot.ranges.some((range) => cidrContains(range, ip))) {
        this.options.logger.warn(`the ClusterIP [${fam}]: ${ip} for Service ${name} is not within any service CIDR; please recreate`)
        await this.event(service, 'ClusterIPOutOfRange', SERVICE_ACTION, `Cluster IP [${fam}]: ${ip} is not within any configured Service CIDR; please recreate service`)
        continue
      }
      const address = snapshot.addresses.get(ip)
      if (!address) {
        await this.allocateMissing(service, ip)
        continue
      }
      const ref = address.spec?.parentRef
      const wrongReference = `the ClusterIP [${fam}]: ${ip} for Service ${name} has a wrong reference; repairing`
      if (!refersToService(ref)) {
        await this.event(service, 'ClusterIPNotAllocated', SERVICE_ACTION, wrongReference)
        await this.recreate(address, service)
        continue
      }
      if (ref.namespace !== service.metadata?.namespace || ref.name !== service.metadata?.name) {
        const referenced = snapshot.services.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`)
        if (!referenced) {
          // a young one may belong to a create in flight: it is looked at again on a later run
          if (this.age(address) <= this.options.graceMs) continue
          await this.event(service, 'ClusterIPNotAllocated', SERVICE_ACTION, wrongReference)
          await this.recreate(address, service)
          continue
        }
        if (clusterIPs(referenced).includes(ip)) {
          this.options.logger.warn(`the cluster IP [${fam}]:${ip} for service ${name} was assigned to other services ${serviceName(referenced)}; please recreate`)
          await this.event(service, 'ClusterIPAlreadyAllocated', SERVICE_ACTION, `Cluster IP [${fam}]:${ip} was assigned to multiple services; please recreate service`)
        }
      }
      if (!labelsValid(address)) await this.recreate(address, service)
    }
  }

  /** A Service IP with no IPAddress: created, once a fresh read confirms both still stand. */
  private async allocateMissing(service: AnyObject, ip: string): Promise<void> {
    const {ipAddresses, services, logger} = this.options
    if ((await ipAddresses.getIfExists('', ip)) !== undefined) return
    const current = await services.get(service.metadata?.namespace ?? '', service.metadata?.name ?? '')
    if (!current || current.metadata?.uid !== service.metadata?.uid || !clusterIPs(current).includes(ip)) return
    const fam = ipFamilyLabel(ip)
    logger.warn(`the ClusterIP [${fam}]: ${ip} for Service ${serviceName(service)} is not allocated; repairing`)
    await this.event(service, 'ClusterIPNotAllocated', SERVICE_ACTION, `Cluster IP [${fam}]: ${ip} is not allocated; repairing`)
    await this.create(ip, service)
  }

  private async syncIPAddress(address: AnyObject, snapshot: Snapshot): Promise<number | undefined> {
    if (address.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return undefined
    const {logger, graceMs} = this.options
    const ip: string = address.metadata?.name ?? ''
    const ref = address.spec?.parentRef
    if (!refersToService(ref)) {
      const text = `IPAddress ${ip} appears to have been modified, not referencing a Service ${formatRef(ref)}: cleaning up`
      logger.warn(text)
      if (await this.remove(address)) await this.event(address, 'IPAddressNotAllocated', IP_ACTION, text)
      return undefined
    }
    const service = snapshot.services.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`)
    if (service && clusterIPs(service).includes(ip)) return undefined
    const age = this.age(address)
    // young: a create or update in flight has made it and not stored its Service yet
    if (age <= graceMs) return graceMs - age + RECHECK_MARGIN_MS
    if (!service) {
      if (await this.remove(address)) {
        logger.warn(`IPAddress ${ip} appears to have leaked: cleaning up`)
        await this.event(address, 'IPAddressNotAllocated', IP_ACTION, `IPAddress: ${ip} for Service ${ref.namespace ?? ''}/${ref.name ?? ''} appears to have leaked: cleaning up`)
      }
      return undefined
    }
    if (await this.remove(address)) {
      logger.warn(`the IPAddress: ${ip} for Service ${serviceName(service)} has a wrong reference ${formatRef(ref)}; cleaning up`)
      await this.event(address, 'IPAddressWrongReference', IP_ACTION, `IPAddress: ${ip} for Service ${serviceName(service)} has a wrong reference; cleaning up`)
    }
    return undefined
  }

  /** ms since the IPAddress was created (Infinity when it has no valid creationTimestamp) */
  private age(address: AnyObject): number {
    const created = Date.parse(address.metadata?.creationTimestamp ?? '')
    return Number.isFinite(created) ? this.options.now().getTime() - created : Infinity
  }

  /** Deletes the IPAddress as it was seen (uid and resourceVersion preconditions); false when it is
   *  gone or changed meanwhile. */
  private async remove(address: AnyObject): Promise<boolean> {
    try {
      await this.options.ipAddresses.delete('', address.metadata?.name ?? '', {
        preconditions: {uid: address.metadata?.uid, resourceVersion: address.metadata?.resourceVersion},
        context: {now: this.options.now()},
      })
      return true
    } catch (error) {
      const code = (error as {code?: number}).code
      if (code === 404 || code === 409) return false
      throw error
    }
  }

  /** recreateIPAddress: the IPAddress made again for this Service. */
  private async recreate(address: AnyObject, service: AnyObject): Promise<void> {
    if (await this.remove(address)) await this.create(address.metadata?.name ?? '', service)
  }

  private async create(ip: string, service: AnyObject): Promise<void> {
    try {
      await this.options.ipAddresses.create('', ipAddressFor(ip, service), {context: {now: this.options.now()}})
    } catch (error) {
      // taken meanwhile: the next run looks at it again
      if ((error as {reason?: string}).reason !== 'AlreadyExists') throw error
    }
  }

  private event(object: AnyObject, reason: string, action: string, note: string): Promise<void> {
    return this.options.events.warning(object, reason, action, note)
  }
}
