// The filters: a node is a candidate for a pod only if every filter passes it. They run in this order
// and the first that rejects a node names the reasons (Kubernetes' filter plugins, plus NodeReady):
//
//   NodeReady          the Ready condition is True (unless the pod tolerates the not-ready /
//                      unreachable NoSchedule taint Kubernetes would put on such a node)
//   NodeUnschedulable  spec.unschedulable is not set (unless the pod tolerates node.orch.io/unschedulable)
//   TaintToleration    every NoSchedule / NoExecute taint is tolerated
//   NodeAffinity       nodeSelector and required node affinity match the node
//   NodePorts          no host port the pod asks for is taken
//   NodeResourcesFit   pods, cpu, memory, ephemeral storage and extended resources fit allocatable
//                      minus what the node's pods request
import type {AnyObject} from '../../api/types.js'
import {NOT_READY_TAINT, tolerates, UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT} from '../nodelifecycle.js'
import type {HostPort, NodeInfo, NodeSelectorTerm, PodInfo, Requirement} from './info.js'
import {reasons} from './messages.js'

export interface Filter {
  name: string
  /** the reasons the node is refused, or undefined when it passes */
  check(pod: PodInfo, node: NodeInfo): string[] | undefined
}

export interface Rejection {
  filter: string
  reasons: string[]
}

function toleratesTaint(tolerations: AnyObject[], taint: AnyObject): boolean {
  for (const toleration of tolerations) if (tolerates(toleration, taint)) return true
  return false
}

const nodeReady: Filter = {
  name: 'NodeReady',
  check(pod, node) {
    if (node.ready === 'True') return undefined
    const key = node.ready === 'Unknown' ? UNREACHABLE_TAINT : NOT_READY_TAINT
    return toleratesTaint(pod.tolerations, {key, effect: 'NoSchedule'}) ? undefined : [reasons.notReady]
  },
}

const nodeUnschedulable: Filter = {
  name: 'NodeUnschedulable',
  check(pod, node) {
    if (!node.unschedulable) return undefined
    return toleratesTaint(pod.tolerations, {key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule'}) ? undefined : [reasons.unschedulable]
  },
}

const taintToleration: Filter = {
  name: 'TaintToleration',
  check(pod, node) {
    for (const taint of node.taints) {
      if (!toleratesTaint(pod.tolerations, taint)) return [reasons.untoleratedTaint(String(taint.key ?? ''), String(taint.value ?? ''))]
    }
    return undefined
  },
}

function requirementMatches(requirement: Requirement, value: string | undefined): boolean {
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value)
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value)
    case 'Exists':
      return value !== undefined
    case 'DoesNotExist':
      return value === undefined
    case 'Gt':
    case 'Lt': {
      if (value === undefined || Number.isNaN(requirement.bound) || !/^[+-]?\d+$/.test(value)) return false
      const number = Number(value)
      return requirement.operator === 'Gt' ? number > requirement.bound : number < requirement.bound
    }
    default:
      return false
  }
}

/** A term matches when all its expressions and fields do; an empty term matches no node. */
export function termMatches(term: NodeSelectorTerm, node: NodeInfo): boolean {
  if (term.expressions.length === 0 && term.fields.length === 0) return false
  for (const r of term.expressions) if (!requirementMatches(r, Object.hasOwn(node.labels, r.key) ? node.labels[r.key] : undefined)) return false
  for (const r of term.fields) if (r.key !== 'metadata.name' || !requirementMatches(r, node.name)) return false
  return true
}

const nodeAffinity: Filter = {
  name: 'NodeAffinity',
  check(pod, node) {
    for (const [key, value] of pod.nodeSelector) if (!Object.hasOwn(node.labels, key) || node.labels[key] !== value) return [reasons.nodeAffinity]
    if (pod.requiredTerms && !pod.requiredTerms.some((term) => termMatches(term, node))) return [reasons.nodeAffinity]
    return undefined
  },
}

/** HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every address, any address with itself and 0.0.0.0. */
function portTaken(used: HostPort[], wanted: HostPort): boolean {
  for (const p of used) {
    if (p.port !== wanted.port || p.protocol !== wanted.protocol) continue
    if (wanted.ip === '0.0.0.0' || p.ip === '0.0.0.0' || p.ip === wanted.ip) return true
  }
  return false
}

const nodePorts: Filter = {
  name: 'NodePorts',
  check(pod, node) {
    for (const port of pod.hostPorts) if (portTaken(node.usedPorts, port)) return [reasons.hostPorts]
    return undefined
  },
}

const nodeResourcesFit: Filter = {
  name: 'NodeResourcesFit',
  check(pod, node) {
    const out: string[] = []
    if (node.pods.size + 1 > node.allowedPods) out.push(reasons.tooManyPods)
    const want = pod.requests
    const free = (allocatable: number, requested: number) => allocatable - requested
    if (want.milliCPU > 0 && want.milliCPU > free(node.allocatable.milliCPU, node.requested.milliCPU)) out.push(reasons.insufficient('cpu'))
    if (want.memory > 0 && want.memory > free(node.allocatable.memory, node.requested.memory)) out.push(reasons.insufficient('memory'))
    if (want.ephemeralStorage > 0 && want.ephemeralStorage > free(node.allocatable.ephemeralStorage, node.requested.ephemeralStorage)) {
      out.push(reasons.insufficient('ephemeral-storage'))
    }
    if (want.scalar.size > 0) {
      for (const name of [...want.scalar.keys()].sort()) {
        const amount = want.scalar.get(name)!
        if (amount > 0 && amount > free(node.allocatable.scalar.get(name) ?? 0, node.requested.scalar.get(name) ?? 0)) out.push(reasons.insufficient(name))
      }
    }
    return out.length > 0 ? out : undefined
  },
}

export const FILTERS: readonly Filter[] = [nodeReady, nodeUnschedulable, taintToleration, nodeAffinity, nodePorts, nodeResourcesFit]

/** The first filter that refuses the node, with its reasons; undefined when the node fits. */
export function runFilters(pod: PodInfo, node: NodeInfo): Rejection | undefined {
  for (const filter of FILTERS) {
    const refused = filter.check(pod, node)
    if (refused) return {filter: filter.name, reasons: refused}
  }
  return undefined
}
