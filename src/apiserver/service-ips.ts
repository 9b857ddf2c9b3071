// Cluster IPs for Services, allocated from the ServiceCIDRs as Kubernetes' MultiCIDRServiceAllocator
// does: every allocated address is an IPAddress object named by the address, so the store's
// create-if-absent makes double allocation impossible, across server replicas too.
import type {AnyObject} from '../api/types.js'
import {canonicalIp, cidrContains, parseCidr, randomAddress, type Cidr} from '../machinery/ipnet.js'
import {errors} from '../machinery/status.js'
import type {RegistryHooks, ResourceRegistry} from './registry.js'

export const MANAGED_BY_LABEL = 'ipaddress.orch.io/managed-by'
export const MANAGED_BY = 'ipallocator.orch.io'
export const IP_FAMILY_LABEL = 'ipaddress.orch.io/ip-family'

const ATTEMPTS = 32

export class ServiceIPAllocator {
  constructor(
    private readonly serviceCIDRs: ResourceRegistry,
    private readonly ipAddresses: ResourceRegistry,
    private readonly now: () => Date,
  ) {}

  /** The registry hooks for services: allocate on create, keep on update, release on delete. */
  hooks(): RegistryHooks {
    return {
      beforeCreate: (service, options) => this.allocate(service, options.dryRun ?? false),
      beforeUpdate: (service, old) => keepClusterIPs(service, old),
      afterDelete: (service) => this.release(service),
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
      await this.ipAddresses.create(
        '',
        {
          apiVersion: 'networking.orch.io/v1',
          kind: 'IPAddress',
          metadata: {name: ip, labels: {[MANAGED_BY_LABEL]: MANAGED_BY, [IP_FAMILY_LABEL]: ip.includes(':') ? 'IPv6' : 'IPv4'}},
          spec: {parentRef: {group: '', resource: 'services', namespace: service.metadata?.namespace, name: service.metadata?.name}},
        },
        {context: {now: this.now()}},
      )
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

  private async release(service: AnyObject): Promise<void> {
    for (const ip of service.spec?.clusterIPs ?? []) {
      if (ip && ip !== 'None') await this.free(ip)
    }
  }
}

/** spec.clusterIP(s) may not change once set; an update that leaves them out keeps them. */
function keepClusterIPs(service: AnyObject, old: AnyObject): void {
  const spec = (service.spec ??= {})
  const before = old.spec ?? {}
  if (!before.clusterIP) return
  if (!spec.clusterIP) spec.clusterIP = before.clusterIP
  if (!spec.clusterIPs) spec.clusterIPs = before.clusterIPs
  if (spec.clusterIP !== before.clusterIP) {
    throw errors.invalid({group: '', kind: 'Service'}, old.metadata?.name ?? '', [
      {type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: spec.clusterIP, message: 'may not change once set'},
    ])
  }
}
