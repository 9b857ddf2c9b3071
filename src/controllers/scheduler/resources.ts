// What a pod asks for and what a node offers, counted as Kubernetes' scheduler counts them: cpu in
// millicores, memory and ephemeral storage in bytes, every other resource (extended resources,
// hugepages) by its value. A pod's request is the sum of its containers, or the largest init
// container if that is more (sidecars, init containers with restartPolicy Always, keep running and
// add to both), plus the pod overhead: Kubernetes' resourcehelper.PodRequests.
import type {AnyObject} from '../../api/types.js'
import {parseQuantity, quantityValue} from '../../machinery/quantity.js'

export interface Resources {
  milliCPU: number
  memory: number
  ephemeralStorage: number
  /** extended resources and hugepages, by name */
  scalar: Map<string, number>
}

/** schedutil.DefaultMilliCPURequest: what a container without a cpu request counts as when scoring */
export const DEFAULT_MILLI_CPU_REQUEST = 100
/** schedutil.DefaultMemoryRequest: 200 MiB */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

export function emptyResources(): Resources {
  return {milliCPU: 0, memory: 0, ephemeralStorage: 0, scalar: new Map()}
}

const parsed = new Map<string, {milli: number; value: number}>()

/** A quantity's milli value and value as numbers; a malformed one (validation refuses those) is 0. */
function quantity(raw: unknown): {milli: number; value: number} {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw : ''
  let known = parsed.get(text)
  if (!known) {
    try {
      const q = parseQuantity(text)
      known = {milli: Number(q.milli), value: Number(quantityValue(q))}
    } catch {
      known = {milli: 0, value: 0}
    }
    // the same few texts ("100m", "1Gi") recur across thousands of pods; bound the memo all the same
    if (parsed.size > 10_000) parsed.clear()
    parsed.set(text, known)
  }
  return known
}

/** A resource list (`{cpu: "500m", memory: "1Gi"}`) as Resources. */
export function resourcesOf(list: unknown): Resources {
  const out = emptyResources()
  if (!list || typeof list !== 'object') return out
  for (const [name, raw] of Object.entries(list as Record<string, unknown>)) {
    const q = quantity(raw)
    if (name === 'cpu') out.milliCPU = q.milli
    else if (name === 'memory') out.memory = q.value
    else if (name === 'ephemeral-storage') out.ephemeralStorage = q.value
    else if (name !== 'pods') out.scalar.set(name, q.value)
  }
  return out
}

function add(into: Resources, more: Resources): void {
  into.milliCPU += more.milliCPU
  into.memory += more.memory
  into.ephemeralStorage += more.ephemeralStorage
  for (const [name, value] of more.scalar) into.scalar.set(name, (into.scalar.get(name) ?? 0) + value)
}

function copy(r: Resources): Resources {
  return {milliCPU: r.milliCPU, memory: r.memory, ephemeralStorage: r.ephemeralStorage, scalar: new Map(r.scalar)}
}

/** Raises each resource of `into` to at least its value in `other`. */
function max(into: Resources, other: Resources): void {
  into.milliCPU = Math.max(into.milliCPU, other.milliCPU)
  into.memory = Math.max(into.memory, other.memory)
  into.ephemeralStorage = Math.max(into.ephemeralStorage, other.ephemeralStorage)
  for (const [name, value] of other.scalar) into.scalar.set(name, Math.max(into.scalar.get(name) ?? 0, value))
}

export function subtract(into: Resources, less: Resources): void {
  into.milliCPU -= less.milliCPU
  into.memory -= less.memory
  into.ephemeralStorage -= less.ephemeralStorage
  for (const [name, value] of less.scalar) {
    const left = (into.scalar.get(name) ?? 0) - value
    if (left === 0) into.scalar.delete(name)
    else into.scalar.set(name, left)
  }
}

export {add as addResources}

/** A container's requests; with `nonZero`, a missing cpu or memory request counts as the scoring default. */
function containerRequests(container: AnyObject, nonZero: boolean): Resources {
  const requests = container?.resources?.requests
  const r = resourcesOf(requests)
  if (nonZero) {
    const has = (name: string) => requests && typeof requests === 'object' && Object.hasOwn(requests, name)
    if (!has('cpu')) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST
    if (!has('memory')) r.memory = DEFAULT_MEMORY_REQUEST
  }
  return r
}

const list = (value: unknown): AnyObject[] => (Array.isArray(value) ? value : [])

/**
 * The pod's request (resourcehelper.PodRequests): the containers' sum; each init container in
 * turn, with the sidecars started before it, may need more; sidecars also run beside the
 * containers; then the overhead. `nonZero` counts missing cpu/memory requests as the defaults
 * (what the scores use, so that pods without requests still spread).
 */
export function podRequests(spec: AnyObject | undefined, nonZero = false): Resources {
  const total = emptyResources()
  for (const c of list(spec?.containers)) add(total, containerRequests(c, nonZero))
  const sidecars = emptyResources()
  const initPeak = emptyResources()
  for (const c of list(spec?.initContainers)) {
    const own = containerRequests(c, nonZero)
    if (c?.restartPolicy === 'Always') {
      add(total, own)
      add(sidecars, own)
      max(initPeak, sidecars)
    } else {
      const during = copy(own)
      add(during, sidecars)
      max(initPeak, during)
    }
  }
  max(total, initPeak)
  if (spec?.overhead) add(total, resourcesOf(spec.overhead))
  return total
}

/** What a node offers: status.allocatable (a node without it offers nothing), and how many pods. */
export function nodeAllocatable(node: AnyObject | undefined): {resources: Resources; pods: number} {
  const allocatable = node?.status?.allocatable
  const pods = allocatable && typeof allocatable === 'object' && allocatable.pods !== undefined ? quantity(allocatable.pods).value : 0
  return {resources: resourcesOf(allocatable), pods}
}
