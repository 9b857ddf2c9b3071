// What the kubelet reads from a pod to decide its containers' swap: the QoS class (Kubernetes'
// GetPodQOS: status.qosClass when set, else computed from the spec as the API server does) and
// whether the pod is critical (static, mirror, or of a system-critical priority).
import type {AnyObject} from '../../api/types.js'
import {quantityValue} from '../../api/core/pod.js'
import {CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION} from '../static-pods.js'

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort'

/** The kubelet's SystemCriticalPriority (2 × 10⁹): pods at or above it are critical. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

/** Only these resources decide the QoS class. */
const QOS_RESOURCES = ['cpu', 'memory']

/** A quantity as a number; absent or unparseable is 0 (resource.Quantity's zero value). */
export function quantityOrZero(quantity: unknown): number {
  if (quantity === undefined || quantity === null) return 0
  const value = quantityValue(quantity)
  return Number.isFinite(value) ? value : 0
}

function addPositive(into: Map<string, number>, list: AnyObject | undefined, found?: Set<string>): void {
  for (const [name, quantity] of Object.entries<unknown>(list ?? {})) {
    if (!QOS_RESOURCES.includes(name)) continue
    const value = quantityOrZero(quantity)
    if (value <= 0) continue
    found?.add(name)
    into.set(name, (into.get(name) ?? 0) + value)
  }
}

/** Kubernetes' ComputePodQOS: pod-level resources when the pod has them, else its app and init containers. */
export function computePodQOS(pod: AnyObject): QOSClass {
  const spec = pod.spec ?? {}
  const requests = new Map<string, number>()
  const limits = new Map<string, number>()
  let guaranteed = true
  if (spec.resources && typeof spec.resources === 'object') {
    addPositive(requests, spec.resources.requests)
    if (spec.resources.limits && Object.keys(spec.resources.limits).length > 0) {
      const found = new Set<string>()
      addPositive(limits, spec.resources.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    }
  } else {
    // ephemeral containers cannot have resources: not counted
    for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])] as AnyObject[]) {
      addPositive(requests, container?.resources?.requests)
      const found = new Set<string>()
      addPositive(limits, container?.resources?.limits, found)
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort'
  if (guaranteed) {
    for (const [name, request] of requests) {
      if (limits.get(name) !== request) {
        guaranteed = false
        break
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable'
}

/** Kubernetes' GetPodQOS: the class the API server recorded in the status, else computed. */
export function podQOS(pod: AnyObject): QOSClass {
  const recorded = pod.status?.qosClass
  return recorded === 'Guaranteed' || recorded === 'Burstable' || recorded === 'BestEffort' ? recorded : computePodQOS(pod)
}

/** The kubelet's IsCriticalPod: a static pod (a config source other than the API), a mirror pod, or system-critical priority. */
export function isCriticalPod(pod: AnyObject): boolean {
  const annotations = pod.metadata?.annotations ?? {}
  const source = annotations[CONFIG_SOURCE_ANNOTATION]
  if (typeof source === 'string' && source !== 'api') return true
  if (annotations[CONFIG_MIRROR_ANNOTATION] !== undefined) return true
  const priority = pod.spec?.priority
  return typeof priority === 'number' && priority >= SYSTEM_CRITICAL_PRIORITY
}
