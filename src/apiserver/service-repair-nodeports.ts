// The node port repair loop (Kubernetes' pkg/registry/core/service/portallocator/controller/repair.go),
// run by ./service-repair.ts at start and every few minutes: the claims (/registry/ranges/
// servicenodeports/<port>) are brought in line with the node ports the stored Services hold.
//
// - A port a Service holds without a claim is claimed for it: Warning PortNotAllocated.
// - A port two Services hold: Warning PortAlreadyAllocated on the one that does not keep the claim.
// - A port outside --service-node-port-range: Warning PortOutOfRange (its claim, if any, is kept).
// - A claim no Service holds is a leak, freed only once it has been seen leaked on
//   numRepairsBeforeLeakCleanup (3) runs in a row and is older than the grace a create takes: a
//   create or update in flight claims before its Service is stored, and must not lose the port.
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {serviceName, type EventSink, type ServiceSource} from './service-repair-support.js'
import {allocatedNodePorts, formatPortRange, ownerOf, type Claim, type NodePortAllocator} from './service-nodeports.js'

/** How many runs in a row must see a claim leaked before it is freed (Kubernetes' value). */
export const NUM_REPAIRS_BEFORE_LEAK_CLEANUP = 3

const ACTION = 'PortAllocation'

export interface NodePortRepairOptions {
  allocator: NodePortAllocator
  services: ServiceSource
  events: EventSink
  logger: Logger
  now: () => Date
  /** a claim younger than this is never a leak (a create in flight) */
  graceMs: number
}

export class NodePortRepair {
  /** leaked claims: how many runs in a row saw each, at which modRevision */
  private readonly leaks = new Map<number, {count: number; modRevision: number}>()

  constructor(private readonly options: NodePortRepairOptions) {}

  /** One run. Store errors reject (the loop logs them and tries again next time). */
  async runOnce(): Promise<void> {
    const {allocator, logger} = this.options
    // claims first, then the Services at or after that revision: a Service stored before the claims
    // were read cannot be missing, so its claim cannot look leaked
    const {claims, revision} = await allocator.listClaims()
    const services = (await this.options.services.list(revision)).items
    const held = new Map<number, AnyObject>()
    const outOfRange = new Set<number>()
    for (const service of services) {
      for (const port of allocatedNodePorts(service)) {
        if (!allocator.contains(port)) {
          outOfRange.add(port)
          const range = formatPortRange(allocator.range)
          logger.warn(`the port ${port} for service ${serviceName(service)} is not within the port range ${range}; please recreate`)
          await this.event(service, 'PortOutOfRange', `Port ${port} is not within the port range ${range}; please recreate service`)
          continue
        }
        const other = held.get(port)
        if (!other) {
          held.set(port, service)
          continue
        }
        if (other.metadata?.uid === service.metadata?.uid) continue
        // the one the claim names keeps the port; the other is told to go
        const keeps = claims.get(port)?.claim?.uid === service.metadata?.uid ? service : other
        const loses = keeps === service ? other : service
        held.set(port, keeps)
        logger.warn(`the node port ${port} for service ${serviceName(loses)} was assigned to multiple services; please recreate`)
        await this.event(loses, 'PortAlreadyAllocated', `Port ${port} was assigned to multiple services; please recreate service`)
      }
    }
    for (const [port, service] of held) {
      this.leaks.delete(port)
      const existing = claims.get(port)
      if (existing?.claim?.uid === service.metadata?.uid) continue
      await this.claimFor(port, service, existing)
    }
    await this.freeLeaks(claims, (port) => held.has(port) || outOfRange.has(port))
  }

  /** A port the Service holds that is not claimed for it. */
  private async claimFor(port: number, service: AnyObject, existing: {claim: Claim | undefined; modRevision: number} | undefined): Promise<void> {
    const {allocator, logger} = this.options
    const owner = ownerOf(service)
    if (existing) {
      // claimed for a Service that does not hold it (or unreadable): it is this one's
      if (!(await allocator.reassign(port, owner, existing.modRevision))) return
      logger.warn('a node port claim named another Service: recorded for the Service that holds the port', {port, service: serviceName(service)})
      return
    }
    // read again before repairing: claimed meanwhile, or the Service gone or changed since the list
    if ((await allocator.holder(port)) !== undefined) return
    if (!(await this.stillHolds(service, port))) return
    if (!(await allocator.claim(port, owner))) return
    logger.warn(`the node port ${port} for service ${serviceName(service)} is not allocated; repairing`)
    await this.event(service, 'PortNotAllocated', `Port ${port} is not allocated; repairing`)
  }

  private async stillHolds(service: AnyObject, port: number): Promise<boolean> {
    const current = await this.options.services.get(service.metadata?.namespace ?? '', service.metadata?.name ?? '')
    return current !== undefined && current.metadata?.uid === service.metadata?.uid && allocatedNodePorts(current).includes(port)
  }

  /** Claims nobody holds: flagged on the first run that sees them, freed on the third in a row. */
  private async freeLeaks(claims: Map<number, {claim: Claim | undefined; modRevision: number}>, inUse: (port: number) => boolean): Promise<void> {
    const {allocator, logger} = this.options
    const now = this.options.now().getTime()
    const flagged = new Set<number>()
    for (const [port, {claim, modRevision}] of claims) {
      if (inUse(port)) continue
      const created = claim ? Date.parse(claim.created) : NaN
      // young: a create or update in flight has claimed it and not stored its Service yet
      if (Number.isFinite(created) && now - created < this.options.graceMs) continue
      flagged.add(port)
      const before = this.leaks.get(port)
      const count = before && before.modRevision === modRevision ? before.count + 1 : 1
      if (count < NUM_REPAIRS_BEFORE_LEAK_CLEANUP) {
        if (count === 1) logger.warn(`the node port ${port} may have leaked: flagging for later clean up`)
        this.leaks.set(port, {count, modRevision})
        continue
      }
      this.leaks.delete(port)
      if (await allocator.drop(port, modRevision)) logger.warn(`the node port ${port} appears to have leaked: cleaning up`)
    }
    // a leak is counted on runs in a row only
    for (const port of [...this.leaks.keys()]) if (!flagged.has(port)) this.leaks.delete(port)
  }

  private event(service: AnyObject, reason: string, note: string): Promise<void> {
    return this.options.events.warning(service, reason, ACTION, note)
  }
}
