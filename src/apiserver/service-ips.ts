// What a Service holds from pools: its cluster IPs and its node ports, allocated on create, on update
// (a type change, a port added) and released on delete or when an update leaves them behind, as
// Kubernetes' service REST storage does (pkg/registry/core/service/storage/storage.go beginCreate /
// beginUpdate and alloc.go): after mutating admission and before validation, so that validation and
// validating admission see the allocated values; the write's finish keeps them (and frees what an
// update left behind) once the Service is stored, or gives them back when anything refused it.
//
// Cluster IPs come from the ServiceCIDRs as Kubernetes' MultiCIDRServiceAllocator hands them out:
// every allocated address is an IPAddress object named by the address, so the store's create-if-absent
// makes double allocation impossible, across server replicas too. Node ports: ./service-nodeports.ts.
// ./service-repair.ts reconciles both with the stored Services, at start and every few minutes.
import {isDeepStrictEqual} from 'node:util'
import type {AnyObject} from '../api/types.js'
import {canonicalIp, cidrContains, parseCidr, randomAddress, type Cidr} from '../machinery/ipnet.js'
import {errors} from '../machinery/status.js'
import type {FinishWrite, RegistryHooks, ResourceRegistry} from './registry.js'
import {validateClusterIPsRelatedFields} from './validation/service.js'
import {
  allocatedNodePorts,
  allocHealthCheckNodePort,
  initNodePorts,
  needsHealthCheck,
  needsNodePort,
  ownerOf,
  serviceNodePorts,
  updateHealthCheckNodePort,
  updateNodePorts,
  type NodePortAllocator,
} from './service-nodeports.js'

export const MANAGED_BY_LABEL = 'ipaddress.orch.io/managed-by'
export const MANAGED_BY = 'ipallocator.orch.io'
export const IP_FAMILY_LABEL = 'ipaddress.orch.io/ip-family'

const ATTEMPTS = 32

/** The `ipaddress.kubernetes.io/ip-family` label value of a (canonical) IP. */
export function ipFamilyLabel(ip: string): 'IPv4' | 'IPv6' {
  return ip.includes(':') ? 'IPv6' : 'IPv4'
}

/** The IPAddress that allocates ip to the Service (Kubernetes' newIPAddress of the ipallocator). */
export function ipAddressFor(ip: string, service: AnyObject): AnyObject {
  return {
    apiVersion: 'networking.orch.io/v1',
    kind: 'IPAddress',
    metadata: {name: ip, labels: {[MANAGED_BY_LABEL]: MANAGED_BY, [IP_FAMILY_LABEL]: ipFamilyLabel(ip)}},
    spec: {parentRef: {group: '', resource: 'services', namespace: service.metadata?.namespace, name: service.metadata?.name}},
  }
}

/** What a write took (given back by revert) and leaves behind (freed by commit once it is stored). */
interface Transaction {
  commit(): Promise<void>
  revert(): Promise<void>
}

export class ServiceAllocator {
  constructor(
    private readonly serviceCIDRs: ResourceRegistry,
    private readonly ipAddresses: ResourceRegistry,
    readonly nodePorts: NodePortAllocator,
    private readonly now: () => Date,
  ) {}

  /** The registry hooks for services: allocate when a create or an update begins, release on delete. */
  hooks(): RegistryHooks {
    return {
      beginCreate: (service, options) => this.beginCreate(service, options.dryRun ?? false),
      beginUpdate: (service, old, options) => this.beginUpdate(service, old, options.dryRun ?? false),
      afterDelete: (service) => this.release(service),
    }
  }

  /** Kubernetes' beginCreate: clusterIPs from clusterIP, then allocateCreate. */
  private async beginCreate(service: AnyObject, dryRun: boolean): Promise<FinishWrite> {
    normalizeClusterIPs(service, undefined)
    return finishOf(await this.allocateCreate(service, dryRun))
  }

  /** Kubernetes' beginUpdate: what the update left out of what the server allocated is kept, clusterIPs
   *  follow clusterIP, then allocateUpdate — unless the spec is as stored (a write of the status,
   *  metadata or finalizers), which allocates nothing, as Kubernetes' status subresource does not. */
  private async beginUpdate(service: AnyObject, old: AnyObject, dryRun: boolean): Promise<FinishWrite | undefined> {
    patchAllocatedValues(service, old)
    normalizeClusterIPs(service, old)
    if (isDeepStrictEqual(service.spec, old.spec)) return undefined
    return finishOf(await this.allocateUpdate(service, old, dryRun))
  }

  /** allocateCreate: the cluster IP fields checked, cluster IPs, then node ports and the health check
   *  node port. A failure gives back what was taken before it. */
  private async allocateCreate(service: AnyObject, dryRun: boolean): Promise<Transaction> {
    checkClusterIPFields(service)
    const undoIPs = await this.allocate(service, dryRun)
    const ports = this.nodePorts.operation(ownerOf(service), dryRun)
    try {
      if (needsNodePort(service)) await initNodePorts(service, ports)
      if (needsHealthCheck(service)) await allocHealthCheckNodePort(service, ports)
    } catch (error) {
      await ports.revert()
      await undoIPs()
      throw error
    }
    return {
      commit: () => ports.commit(),
      revert: async () => {
        await ports.revert()
        await undoIPs()
      },
    }
  }

  /**
   * allocateUpdate: a Service leaving ExternalName gets cluster IPs, one becoming ExternalName gives
   * them back; node ports are allocated for ports without one (NodePort, LoadBalancer) and released
   * when the type no longer uses them or the port is gone; the health check node port follows
   * type LoadBalancer with externalTrafficPolicy Local. Releases happen in commit(), after the write.
   */
  async allocateUpdate(service: AnyObject, old: AnyObject, dryRun: boolean): Promise<Transaction> {
    checkClusterIPFields(service)
    const type = service.spec?.type
    const oldType = old.spec?.type
    let undoIPs: (() => Promise<void>) | undefined
    const releaseIPs: string[] = []
    if (oldType === 'ExternalName' && type !== 'ExternalName') {
      undoIPs = await this.allocate(service, dryRun)
    } else if (oldType !== 'ExternalName' && type === 'ExternalName' && old.spec?.clusterIPs?.[0] !== 'None') {
      for (const ip of old.spec?.clusterIPs ?? []) if (ip && ip !== 'None') releaseIPs.push(ip)
    }
    const ports = this.nodePorts.operation(ownerOf(old), dryRun)
    try {
      if (needsNodePort(old) && (type === 'ClusterIP' || type === 'ExternalName')) {
        for (const port of serviceNodePorts(old)) ports.releaseDeferred(port)
      }
      if (needsNodePort(service)) await updateNodePorts(service, old, ports)
      await updateHealthCheckNodePort(service, old, ports)
    } catch (error) {
      await ports.revert()
      await undoIPs?.()
      throw error
    }
    return {
      commit: async () => {
        await ports.commit()
        if (!dryRun) for (const ip of releaseIPs) await this.free(ip)
      },
      revert: async () => {
        await ports.revert()
        await undoIPs?.()
      },
    }
  }

  /** Usable ranges: ServiceCIDRs that are not being deleted. */
  private async ranges(): Promise<{text: string; cidr: Cidr}[]> {
    const list = await this.serviceCIDRs.list('', {})
    const out: {text: string; cidr: Cidr}[] = []
    for (const item of list.items) {
      if (item.metadata?.deletionTimestamp) continue
      for (const text of item.spec?.cidrs ?? []) {
        const cidr = parseCidr(text)
        if (cidr) out.push({text, cidr})
      }
    }
    return out
  }

  private async allocate(service: AnyObject, dryRun: boolean): Promise<() => Promise<void>> {
    const spec = (service.spec ??= {})
    if (spec.type === 'ExternalName') return async () => {}
    if (spec.clusterIP === 'None') {
      spec.clusterIPs = ['None']
      return async () => {}
    }
    const ranges = await this.ranges()
    const requested: string | undefined = spec.clusterIP || spec.clusterIPs?.[0]
    const family = requested ? (requested.includes(':') ? 6 : 4) : (spec.ipFamilies?.[0] === 'IPv6' ? 6 : 4)
    const candidates = ranges.filter((r) => r.cidr.family === family)
    const invalid = (ip: string, why: string) =>
      errors.invalid({group: '', kind: 'Service'}, service.metadata?.name ?? '', [
        {type: 'FieldValueInvalid', field: 'spec.clusterIPs', value: [ip], message: `failed to allocate IP ${ip}: ${why}`},
      ])
    if (candidates.length === 0) {
      throw errors.invalid({group: '', kind: 'Service'}, service.metadata?.name ?? '', [
        {type: 'FieldValueInvalid', field: 'spec.ipFamilies', value: [family === 4 ? 'IPv4' : 'IPv6'], message: 'no ServiceCIDR serves this IP family'},
      ])
    }
    let chosen: string | undefined
    if (requested) {
      const ip = canonicalIp(requested)
      if (!ip) throw invalid(requested, 'not a valid IP address')
      if (!candidates.some((r) => cidrContains(r.cidr, ip))) {
        throw invalid(ip, `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${candidates.map((r) => r.text).join(',')}`)
      }
      if (!dryRun && !(await this.claim(ip, service))) throw invalid(ip, 'provided IP is already allocated')
      chosen = ip
    } else {
      for (let attempt = 0; attempt < ATTEMPTS && !chosen; attempt++) {
        const range = candidates[attempt % candidates.length]
        const ip = randomAddress(range.cidr)
        if (dryRun || (await this.claim(ip, service))) chosen = ip
      }
      if (!chosen) {
        throw errors.internal(`failed to allocate a serviceIP: range is full (${candidates.map((r) => r.text).join(',')})`)
      }
    }
    spec.clusterIP = chosen
    spec.clusterIPs = [chosen]
    spec.ipFamilies = [family === 4 ? 'IPv4' : 'IPv6']
    spec.ipFamilyPolicy ??= 'SingleStack'
    const ip = chosen
    return async () => {
      if (!dryRun) await this.free(ip)
    }
  }

  /** Creates the IPAddress object; false when another owner has it. */
  private async claim(ip: string, service: AnyObject): Promise<boolean> {
    try {
      await this.ipAddresses.create('', ipAddressFor(ip, service), {context: {now: this.now()}})
      return true
    } catch (error) {
      if ((error as {reason?: string}).reason === 'AlreadyExists') return false
      throw error
    }
  }

  private async free(ip: string): Promise<void> {
    try {
      await this.ipAddresses.delete('', ip, {context: {now: this.now()}})
    } catch (error) {
      if ((error as {code?: number}).code !== 404) throw error
    }
  }

  /** releaseAllocatedResources: everything a deleted Service held. */
  private async release(service: AnyObject): Promise<void> {
    for (const ip of service.spec?.clusterIPs ?? []) {
      if (ip && ip !== 'None') await this.free(ip)
    }
    const owner = ownerOf(service)
    for (const port of allocatedNodePorts(service)) await this.nodePorts.release(port, owner)
  }
}

function finishOf(transaction: Transaction): FinishWrite {
  return (success) => (success ? transaction.commit() : transaction.revert())
}

/** The loose pre-validation Kubernetes' allocator runs first (initIPFamilyFields): a malformed cluster
 *  IP is the validation's 422, not an allocation failure. */
function checkClusterIPFields(service: AnyObject): void {
  const causes = validateClusterIPsRelatedFields(service)
  if (causes.length > 0) throw errors.invalid({group: '', kind: 'Service'}, service.metadata?.name ?? '', causes)
}

/**
 * normalizeClusterIPs: clusterIPs follow clusterIP where the client set only the singular field. On
 * create, clusterIP alone gives clusterIPs [clusterIP]; on update, clusterIPs left out while clusterIP
 * is as stored keep the stored ones, clusterIP cleared with clusterIPs as stored clears them, and
 * clusterIP changed with clusterIPs as stored makes them [clusterIP] (validation then refuses it).
 */
function normalizeClusterIPs(service: AnyObject, old: AnyObject | undefined): void {
  const spec = (service.spec ??= {})
  const ip = (s: AnyObject | undefined) => s?.clusterIP ?? ''
  const ips = (s: AnyObject | undefined): string[] => (Array.isArray(s?.clusterIPs) ? s.clusterIPs : [])
  if (!old) {
    if (ip(spec) !== '' && ips(spec).length === 0) spec.clusterIPs = [spec.clusterIP]
    return
  }
  const before = old.spec ?? {}
  if (ips(before).length > 0 && ips(spec).length === 0 && ip(before) === ip(spec)) spec.clusterIPs = before.clusterIPs
  if (ip(before) === ip(spec) || !isDeepStrictEqual(ips(before), ips(spec))) return
  if (ip(before) !== '' && ip(spec) === '') delete spec.clusterIPs
  else spec.clusterIPs = [spec.clusterIP]
}

/** Services that need a cluster IP: all but ExternalName. */
function needsClusterIP(service: AnyObject): boolean {
  return service.spec?.type !== 'ExternalName'
}

/**
 * patchAllocatedValues: an update that leaves out what the server allocated keeps it, as long as the
 * type still uses it — spec.clusterIP(s), node ports (matched by port name, unless another port now
 * has that node port) and the health check node port. A set cluster IP may not change (unless the type
 * changes to or from ExternalName).
 */
function patchAllocatedValues(service: AnyObject, old: AnyObject): void {
  const spec = (service.spec ??= {})
  const before = old.spec ?? {}
  if (needsClusterIP(old) && needsClusterIP(service) && before.clusterIP) {
    if (!spec.clusterIP) spec.clusterIP = before.clusterIP
    if (!spec.clusterIPs?.length) spec.clusterIPs = before.clusterIPs
    if (spec.clusterIP !== before.clusterIP) {
      throw errors.invalid({group: '', kind: 'Service'}, old.metadata?.name ?? '', [
        {type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: spec.clusterIP, message: 'may not change once set'},
      ])
    }
  }
  if (needsNodePort(old) && needsNodePort(service) && Array.isArray(spec.ports)) {
    const next = new Set(serviceNodePorts(service))
    const used = new Set(serviceNodePorts(old).filter((p) => next.has(p)))
    const byName = new Map<string, number>()
    for (const port of before.ports ?? []) if (port && typeof port === 'object') byName.set(port.name ?? '', port.nodePort ?? 0)
    for (const port of spec.ports) {
      if (!port || typeof port !== 'object' || port.nodePort) continue
      const value = byName.get(port.name ?? '') ?? 0
      if (value && !used.has(value)) port.nodePort = value
    }
  }
  if (needsHealthCheck(old) && needsHealthCheck(service) && !spec.healthCheckNodePort && before.healthCheckNodePort) {
    spec.healthCheckNodePort = before.healthCheckNodePort
  }
}
