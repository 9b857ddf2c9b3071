// Node ports of NodePort and LoadBalancer Services, handed out as Kubernetes' portallocator does: one
// range (--service-node-port-range, default 30000-32767) shared by every protocol, a requested port
// kept when it is in range and free, a free one picked otherwise — at random, from the range above its
// lowest band first (the band is left for requested ports, KEP-3668). A port is taken by storing a key
// named by it (create-if-absent), so two Services can never get the same port, across server replicas
// on etcd too, and the allocations outlive a restart. Releasing deletes the key, but only while it still
// names the Service that releases it. ./service-repair-nodeports.ts reconciles the keys with the
// stored Services, at start and every few minutes.
import type {AnyObject} from '../api/types.js'
import {errors} from '../machinery/status.js'
import {ConflictError, KeyExistsError, KeyNotFoundError, type Store} from '../storage/index.js'

export interface PortRange {
  base: number
  size: number
}

/** kube-apiserver's default --service-node-port-range */
export const DEFAULT_NODE_PORT_RANGE: PortRange = {base: 30000, size: 2768}

/** Where each taken node port is recorded (Kubernetes keeps its bitmap under /registry/ranges too). */
export const NODE_PORT_PREFIX = '/registry/ranges/servicenodeports/'

/** k8s.io/apimachinery's PortRange.Set: `30000-32767`, `30000+2767` or a single port. */
export function parsePortRange(text: string): PortRange {
  const value = text.trim()
  const number = (s: string): number => {
    if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`)
    return Number(s)
  }
  const hyphen = value.indexOf('-')
  const plus = value.indexOf('+')
  let low: number
  let high: number
  if (hyphen < 0 && plus < 0) {
    low = high = number(value)
  } else if (hyphen >= 0 && plus < 0) {
    low = number(value.slice(0, hyphen))
    high = number(value.slice(hyphen + 1))
  } else if (plus >= 0 && hyphen < 0) {
    low = number(value.slice(0, plus))
    high = low + number(value.slice(plus + 1))
  } else {
    throw new Error(`unable to parse port range: ${value}`)
  }
  if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${value}`)
  if (high < low) throw new Error(`end port cannot be less than start port: ${value}`)
  if (low < 1) throw new Error(`the port range must start at 1 or above: ${value}`)
  return {base: low, size: 1 + high - low}
}

export function formatPortRange(range: PortRange): string {
  return `${range.base}-${range.base + range.size - 1}`
}

/** The band at the bottom of the range that automatic allocation uses last: min(max(16, size/32), 128). */
function staticBand(size: number): number {
  if (size <= 16) return 0
  return Math.min(Math.max(16, Math.floor(size / 32)), 128)
}

/** The Service a node port belongs to. */
export interface PortOwner {
  namespace: string
  name: string
  uid: string
}

export interface Claim extends PortOwner {
  /** when it was taken (ISO 8601) */
  created: string
}

export function ownerOf(service: AnyObject): PortOwner {
  return {namespace: service.metadata?.namespace ?? '', name: service.metadata?.name ?? '', uid: service.metadata?.uid ?? ''}
}

/** The reasons Kubernetes' port allocator gives, which reach the user in a field error. */
export class PortAllocationError extends Error {}

export class NodePortAllocator {
  constructor(
    private readonly store: Store,
    readonly range: PortRange,
    private readonly now: () => Date,
  ) {}

  private key(port: number): string {
    return `${NODE_PORT_PREFIX}${port}`
  }

  contains(port: number): boolean {
    return Number.isInteger(port) && port >= this.range.base && port < this.range.base + this.range.size
  }

  private encode(owner: PortOwner): Uint8Array {
    const claim: Claim = {...owner, created: this.now().toISOString()}
    return new TextEncoder().encode(JSON.stringify(claim))
  }

  private decode(value: Uint8Array): Claim | undefined {
    try {
      return JSON.parse(new TextDecoder().decode(value)) as Claim
    } catch {
      return undefined
    }
  }

  /** The ports taken now, with their owners. */
  async claims(): Promise<Map<number, {claim: Claim | undefined; modRevision: number}>> {
    return (await this.listClaims()).claims
  }

  /** The ports taken, with their owners, and the store revision they were read at. */
  async listClaims(): Promise<{claims: Map<number, {claim: Claim | undefined; modRevision: number}>; revision: number}> {
    const claims = new Map<number, {claim: Claim | undefined; modRevision: number}>()
    const listed = await this.store.list(NODE_PORT_PREFIX)
    for (const kv of listed.items) {
      const port = Number(kv.key.slice(NODE_PORT_PREFIX.length))
      if (Number.isInteger(port)) claims.set(port, {claim: this.decode(kv.value), modRevision: kv.modRevision})
    }
    return {claims, revision: listed.revision}
  }

  /** Who holds the port (undefined when nobody). */
  async holder(port: number): Promise<Claim | undefined> {
    const kv = await this.store.get(this.key(port))
    return kv ? (this.decode(kv.value) ?? {namespace: '', name: '', uid: '', created: ''}) : undefined
  }

  /** Takes the port for owner; false when it is taken already. */
  async claim(port: number, owner: PortOwner): Promise<boolean> {
    try {
      await this.store.create(this.key(port), this.encode(owner))
      return true
    } catch (error) {
      if (!(error instanceof KeyExistsError)) throw error
      return false
    }
  }

  /** Frees the port if owner (by uid) still holds it. */
  async release(port: number, owner: PortOwner): Promise<void> {
    const kv = await this.store.get(this.key(port))
    if (!kv) return
    const claim = this.decode(kv.value)
    if (claim && claim.uid !== owner.uid) return
    try {
      await this.store.delete(this.key(port), kv.modRevision)
    } catch {
      // gone or taken over meanwhile: not ours to free any more
    }
  }

  /** A set of allocations and deferred releases for one write (Kubernetes' PortAllocationOperation). */
  operation(owner: PortOwner, dryRun: boolean): NodePortOperation {
    return new NodePortOperation(this, owner, dryRun)
  }

  /** Re-records a claim for another owner (compare-and-swap on modRevision); false when it changed
   *  or went meanwhile. */
  async reassign(port: number, owner: PortOwner, modRevision: number): Promise<boolean> {
    try {
      await this.store.update(this.key(port), this.encode(owner), modRevision)
      return true
    } catch (error) {
      if (error instanceof ConflictError || error instanceof KeyNotFoundError) return false
      throw error
    }
  }

  /** Drops a claim whoever holds it, unless it changed since modRevision; false when it changed or
   *  went meanwhile. */
  async drop(port: number, modRevision: number): Promise<boolean> {
    try {
      await this.store.delete(this.key(port), modRevision)
      return true
    } catch (error) {
      if (error instanceof ConflictError || error instanceof KeyNotFoundError) return false
      throw error
    }
  }
}

/** Allocations of one write: undone by revert() when the write fails, releases made by commit()
 *  once it succeeded. A dry run takes nothing: it only checks. */
export class NodePortOperation {
  private readonly taken: number[] = []
  /** ports this operation handed out (a dry run must not hand the same one out twice) */
  private readonly handedOut = new Set<number>()
  private readonly releases: number[] = []
  private finished = false

  constructor(
    private readonly allocator: NodePortAllocator,
    private readonly owner: PortOwner,
    private readonly dryRun: boolean,
  ) {}

  /** Takes a requested port: PortAllocationError when it is out of range or held. */
  async allocate(port: number): Promise<void> {
    const range = this.allocator.range
    if (!this.allocator.contains(port)) {
      throw new PortAllocationError(`provided port is not in the valid range. The range of valid ports is ${formatPortRange(range)}`)
    }
    // held is held, whoever holds it (as in Kubernetes' bitmap): a port this Service already has is
    // not asked for again by the callers
    const held = this.handedOut.has(port) || (this.dryRun ? (await this.allocator.holder(port)) !== undefined : !(await this.allocator.claim(port, this.owner)))
    if (held) throw new PortAllocationError('provided port is already allocated')
    if (!this.dryRun) this.taken.push(port)
    this.handedOut.add(port)
  }

  /** Takes a free port: random in the upper part of the range, then the static band at its bottom. */
  async allocateNext(): Promise<number> {
    const {base, size} = this.allocator.range
    const band = staticBand(size)
    const held = new Set((await this.allocator.claims()).keys())
    for (const port of this.handedOut) held.add(port)
    const scan = async (from: number, count: number): Promise<number | undefined> => {
      if (count <= 0) return undefined
      const start = Math.floor(Math.random() * count)
      for (let i = 0; i < count; i++) {
        const port = base + from + ((start + i) % count)
        if (held.has(port)) continue
        if (this.dryRun) return port
        if (await this.allocator.claim(port, this.owner)) {
          this.taken.push(port)
          return port
        }
        held.add(port)
      }
      return undefined
    }
    const port = (await scan(band, size - band)) ?? (await scan(0, band))
    if (port === undefined) throw new PortAllocationError('range is full')
    this.handedOut.add(port)
    return port
  }

  /** Frees the port once the write has succeeded. */
  releaseDeferred(port: number): void {
    if (port) this.releases.push(port)
  }

  /** The write succeeded: free what it no longer holds. */
  async commit(): Promise<void> {
    if (this.finished) return
    this.finished = true
    if (this.dryRun) return
    for (const port of this.releases) await this.allocator.release(port, this.owner)
  }

  /** The write failed: free what this operation took. */
  async revert(): Promise<void> {
    if (this.finished) return
    this.finished = true
    if (this.dryRun) return
    for (const port of this.taken) await this.allocator.release(port, this.owner)
  }
}

// ---------- the Service side (Kubernetes' pkg/registry/core/service/storage/alloc.go) ----------

function spec(service: AnyObject): AnyObject {
  return service.spec ?? {}
}

function ports(service: AnyObject): AnyObject[] {
  const list = spec(service).ports
  return Array.isArray(list) ? list.filter((p) => p && typeof p === 'object') : []
}

export function needsNodePort(service: AnyObject): boolean {
  const type = spec(service).type
  return type === 'NodePort' || type === 'LoadBalancer'
}

/** apiservice.NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local. */
export function needsHealthCheck(service: AnyObject): boolean {
  return spec(service).type === 'LoadBalancer' && spec(service).externalTrafficPolicy === 'Local'
}

function shouldAllocateNodePorts(service: AnyObject): boolean {
  const s = spec(service)
  if (s.type === 'NodePort') return true
  if (s.type === 'LoadBalancer') return s.allocateLoadBalancerNodePorts !== false
  return false
}

function nodePortOf(port: AnyObject): number {
  return typeof port.nodePort === 'number' ? port.nodePort : 0
}

/** The node ports set on the Service's ports (collectServiceNodePorts). */
export function serviceNodePorts(service: AnyObject): number[] {
  return ports(service).map(nodePortOf).filter((p) => p !== 0)
}

/** Every node port the Service holds: its ports' and, when it needs one, its health check port. */
export function allocatedNodePorts(service: AnyObject): number[] {
  const out = serviceNodePorts(service)
  const health = spec(service).healthCheckNodePort
  if (needsHealthCheck(service) && typeof health === 'number' && health > 0) out.push(health)
  return [...new Set(out)]
}

function portError(service: AnyObject, index: number, value: number, error: unknown): Error {
  if (!(error instanceof PortAllocationError)) return error as Error
  return errors.invalid({group: '', kind: 'Service'}, service.metadata?.name ?? '', [
    {type: 'FieldValueInvalid', field: `spec.ports[${index}].nodePort`, value, message: error.message},
  ])
}

function nextError(error: unknown): Error {
  if (!(error instanceof PortAllocationError)) return error as Error
  return errors.internal(`failed to allocate a nodePort: ${error.message}`)
}

/** initNodePorts: a new NodePort/LoadBalancer Service's ports. Ports with the same port number share
 *  one node port (a port served over TCP and UDP). */
export async function initNodePorts(service: AnyObject, op: NodePortOperation): Promise<void> {
  const all = ports(service)
  const byServicePort = new Map<number, number>()
  for (const [i, port] of all.entries()) {
    const nodePort = nodePortOf(port)
    if (nodePort === 0 && !shouldAllocateNodePorts(service)) continue
    const shared = byServicePort.get(port.port) ?? 0
    if (shared === 0) {
      // a node port requested on this or a later entry with the same port number
      const requested = all.slice(i).find((p) => p.port === port.port && nodePortOf(p) !== 0)
      if (requested) {
        const value = nodePortOf(requested)
        await op.allocate(value).catch((error) => Promise.reject(portError(service, i, value, error)))
        port.nodePort = value
        byServicePort.set(port.port, value)
      } else {
        const value = await op.allocateNext().catch((error) => Promise.reject(nextError(error)))
        port.nodePort = value
        byServicePort.set(port.port, value)
      }
    } else if (nodePort !== shared) {
      if (nodePort === 0) port.nodePort = shared
      else await op.allocate(nodePort).catch((error) => Promise.reject(portError(service, i, nodePort, error)))
    }
  }
}

/** updateNodePorts: the ports of a Service that is (still or now) NodePort/LoadBalancer. Node ports
 *  it held before are kept without a new claim; those it no longer has are released after the write. */
export async function updateNodePorts(service: AnyObject, old: AnyObject, op: NodePortOperation): Promise<void> {
  const before = serviceNodePorts(old)
  const claimed = new Set<number>()
  const seen = new Set<string>()
  for (const [i, port] of ports(service).entries()) {
    const nodePort = nodePortOf(port)
    if (nodePort === 0 && !shouldAllocateNodePorts(service)) continue
    let value = nodePort
    if (value !== 0) {
      if (!before.includes(value) && !claimed.has(value)) {
        await op.allocate(value).catch((error) => Promise.reject(portError(service, i, value, error)))
        claimed.add(value)
      }
    } else {
      value = await op.allocateNext().catch((error) => Promise.reject(nextError(error)))
      port.nodePort = value
    }
    const key = `${port.protocol ?? 'TCP'}/${value}`
    if (seen.has(key)) throw errors.internal(`duplicate nodePort: {${port.protocol ?? 'TCP'} ${value}}`)
    seen.add(key)
  }
  const after = serviceNodePorts(service)
  for (const port of before) if (!after.includes(port)) op.releaseDeferred(port)
}

/** allocHealthCheckNodePort: the requested health check node port, or any free one. Failures are
 *  internal errors, as in Kubernetes. */
export async function allocHealthCheckNodePort(service: AnyObject, op: NodePortOperation): Promise<void> {
  const s = (service.spec ??= {})
  const requested = typeof s.healthCheckNodePort === 'number' ? s.healthCheckNodePort : 0
  if (requested !== 0) {
    try {
      await op.allocate(requested)
    } catch (error) {
      if (!(error instanceof PortAllocationError)) throw error
      throw errors.internal(`failed to allocate requested HealthCheck NodePort ${requested}: ${error.message}`)
    }
    return
  }
  try {
    s.healthCheckNodePort = await op.allocateNext()
  } catch (error) {
    if (!(error instanceof PortAllocationError)) throw error
    throw errors.internal(`failed to allocate a HealthCheck NodePort 0: ${error.message}`)
  }
}

/** updateHealthCheckNodePort: allocated when the Service comes to need one, released when it stops. */
export async function updateHealthCheckNodePort(service: AnyObject, old: AnyObject, op: NodePortOperation): Promise<void> {
  const needed = needsHealthCheck(old)
  const needs = needsHealthCheck(service)
  if (!needed && needs) await allocHealthCheckNodePort(service, op)
  else if (needed && !needs) op.releaseDeferred(typeof spec(old).healthCheckNodePort === 'number' ? spec(old).healthCheckNodePort : 0)
}
