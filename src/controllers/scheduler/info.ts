// The scheduler's view of a pod and of a node, computed once per object version so that the filters
// and scores, run for every pod against hundreds of nodes, only compare numbers and short lists.
import type {AnyObject} from '../../api/types.js'
import {emptyResources, nodeAllocatable, podRequests, type Resources} from './resources.js'

export interface HostPort {
  /** '0.0.0.0' when the port listens on every address */
  ip: string
  protocol: string
  port: number
}

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt'

export interface Requirement {
  key: string
  operator: SelectorOperator
  values: string[]
  /** Gt / Lt: the one value as an integer (NaN when it is none: nothing matches) */
  bound: number
}

export interface NodeSelectorTerm {
  expressions: Requirement[]
  /** matchFields; only metadata.name exists */
  fields: Requirement[]
}

export interface PodInfo {
  /** namespace/name */
  key: string
  uid: string
  namespace: string
  name: string
  pod: AnyObject
  /** spec.priority (0 when unset): higher is scheduled first */
  priority: number
  requests: Resources
  /** requests with missing cpu / memory counted as the scoring defaults */
  nonZero: {milliCPU: number; memory: number}
  hostPorts: HostPort[]
  tolerations: AnyObject[]
  nodeSelector: [string, string][]
  /** required node affinity terms (any one must match); undefined when the pod has none */
  requiredTerms: NodeSelectorTerm[] | undefined
  /** pods with the same key are spread over nodes (same controller, else same labels) */
  spreadKey: string | undefined
}

export interface NodeInfo {
  name: string
  /** undefined for a node that is gone while pods bound to it are still known */
  node: AnyObject | undefined
  labels: Record<string, string>
  /** Ready condition: 'True', 'False', 'Unknown', or '' when the node has no status */
  ready: string
  unschedulable: boolean
  /** the NoSchedule and NoExecute taints */
  taints: AnyObject[]
  allocatable: Resources
  allowedPods: number
  requested: Resources
  nonZeroRequested: {milliCPU: number; memory: number}
  /** pods accounted on the node (bound, or assumed while their binding is in flight) */
  pods: Map<string, PodInfo>
  usedPorts: HostPort[]
  /** how many of the node's pods carry each spread key */
  spreadCounts: Map<string, number>
}

const list = (value: unknown): AnyObject[] => (Array.isArray(value) ? value : [])

function hostPortsOf(spec: AnyObject | undefined): HostPort[] {
  const out: HostPort[] = []
  const containers = [...list(spec?.containers), ...list(spec?.initContainers).filter((c) => c?.restartPolicy === 'Always')]
  for (const container of containers) {
    for (const port of list(container?.ports)) {
      const number = typeof port?.hostPort === 'number' ? port.hostPort : 0
      if (number <= 0) continue
      out.push({ip: port.hostIP || '0.0.0.0', protocol: port.protocol || 'TCP', port: number})
    }
  }
  return out
}

const INTEGER = /^[+-]?\d+$/

function requirementOf(raw: AnyObject): Requirement {
  const values = list(raw?.values).map(String)
  const operator = String(raw?.operator ?? '') as SelectorOperator
  const bound = (operator === 'Gt' || operator === 'Lt') && values.length === 1 && INTEGER.test(values[0]!) ? Number(values[0]) : NaN
  return {key: String(raw?.key ?? ''), operator, values, bound}
}

function requiredTermsOf(spec: AnyObject | undefined): NodeSelectorTerm[] | undefined {
  const required = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
  if (!required || typeof required !== 'object') return undefined
  return list(required.nodeSelectorTerms).map((term) => ({
    expressions: list(term?.matchExpressions).map(requirementOf),
    fields: list(term?.matchFields).map(requirementOf),
  }))
}

/** The controller owner reference's uid, else the pod's labels: pods sharing it are spread. */
function spreadKeyOf(pod: AnyObject): string | undefined {
  const namespace = pod.metadata?.namespace ?? ''
  const owner = list(pod.metadata?.ownerReferences).find((r) => r?.controller === true)
  if (owner?.uid) return `${namespace}/owner/${owner.uid}`
  const labels = pod.metadata?.labels
  if (!labels || typeof labels !== 'object' || Object.keys(labels).length === 0) return undefined
  const text = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',')
  return `${namespace}/labels/${text}`
}

export function podInfoOf(pod: AnyObject): PodInfo {
  const meta = pod.metadata ?? {}
  const spec = pod.spec ?? {}
  const nonZero = podRequests(spec, true)
  const selector = spec.nodeSelector && typeof spec.nodeSelector === 'object' ? Object.entries(spec.nodeSelector as Record<string, unknown>) : []
  return {
    key: `${meta.namespace ?? ''}/${meta.name ?? ''}`,
    uid: meta.uid ?? '',
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    pod,
    priority: typeof spec.priority === 'number' ? spec.priority : 0,
    requests: podRequests(spec),
    nonZero: {milliCPU: nonZero.milliCPU, memory: nonZero.memory},
    hostPorts: hostPortsOf(spec),
    tolerations: list(spec.tolerations),
    nodeSelector: selector.map(([k, v]) => [k, String(v)]),
    requiredTerms: requiredTermsOf(spec),
    spreadKey: spreadKeyOf(pod),
  }
}

function readyOf(node: AnyObject): string {
  const ready = list(node.status?.conditions).find((c) => c?.type === 'Ready')
  return typeof ready?.status === 'string' ? ready.status : ''
}

/** A node's info with no pods accounted yet. */
export function emptyNodeInfo(name: string): NodeInfo {
  return {
    name,
    node: undefined,
    labels: {},
    ready: '',
    unschedulable: false,
    taints: [],
    allocatable: emptyResources(),
    allowedPods: 0,
    requested: emptyResources(),
    nonZeroRequested: {milliCPU: 0, memory: 0},
    pods: new Map(),
    usedPorts: [],
    spreadCounts: new Map(),
  }
}

/** Sets (or clears, for undefined) the node object of an info, keeping the pods accounted. */
export function setNode(info: NodeInfo, node: AnyObject | undefined): void {
  info.node = node
  if (!node) return
  const labels = node.metadata?.labels
  info.labels = labels && typeof labels === 'object' ? labels : {}
  info.ready = readyOf(node)
  info.unschedulable = node.spec?.unschedulable === true
  info.taints = list(node.spec?.taints).filter((t) => t?.effect === 'NoSchedule' || t?.effect === 'NoExecute')
  const {resources, pods} = nodeAllocatable(node)
  info.allocatable = resources
  info.allowedPods = pods
}

/** What of a node the scheduler reads: an update that changes none of it is no news for pending pods. */
export function schedulingView(node: AnyObject): string {
  return JSON.stringify([node.metadata?.labels ?? {}, node.spec?.unschedulable === true, node.spec?.taints ?? [], node.status?.allocatable ?? {}, readyOf(node)])
}
