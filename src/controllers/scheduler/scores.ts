// The scores: every node that passed the filters gets 0..100 from each score, weighted and summed;
// the highest total wins and ties are broken at random (Kubernetes' selectHost, reservoir sampling).
//
//   NodeResourcesLeastAllocated  the more of cpu and memory left free after the pod, the better
//                                (requests as counted for scoring: a container without a cpu or
//                                memory request counts 100m / 200Mi)
//   SelectorSpread               the fewer pods of the same set (same controller, else same labels)
//                                already on the node, the better
import type {NodeInfo, PodInfo} from './info.js'

export const MAX_NODE_SCORE = 100

export const SCORE_WEIGHTS = {NodeResourcesLeastAllocated: 1, SelectorSpread: 1} as const

/** leastRequestedScore: the free share of a resource after the pod, 0..100. */
function leastRequested(requested: number, capacity: number): number {
  if (requested > capacity) return 0
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity)
}

/** cpu and memory, weight 1 each; a resource the node does not offer is left out. */
export function leastAllocatedScore(pod: PodInfo, node: NodeInfo): number {
  let sum = 0
  let weights = 0
  const cpu = node.allocatable.milliCPU
  if (cpu > 0) {
    sum += leastRequested(node.nonZeroRequested.milliCPU + pod.nonZero.milliCPU, cpu)
    weights++
  }
  const memory = node.allocatable.memory
  if (memory > 0) {
    sum += leastRequested(node.nonZeroRequested.memory + pod.nonZero.memory, memory)
    weights++
  }
  return weights === 0 ? 0 : Math.floor(sum / weights)
}

/** How many pods of the pod's set each node already has, normalised: none = 100, the most = 0. */
export function spreadScores(pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
  const key = pod.spreadKey
  if (key === undefined) return nodes.map(() => 0)
  const most = mostOf(key, nodes)
  return nodes.map((node) => spreadScore(node.spreadCounts.get(key) ?? 0, most))
}

function mostOf(key: string, nodes: readonly NodeInfo[]): number {
  let most = 0
  for (const node of nodes) {
    const count = node.spreadCounts.get(key) ?? 0
    if (count > most) most = count
  }
  return most
}

function spreadScore(count: number, most: number): number {
  return most === 0 ? MAX_NODE_SCORE : Math.floor((MAX_NODE_SCORE * (most - count)) / most)
}

/** Each node's weighted total (one pass per score, no intermediate lists: this runs for every pod). */
export function scoreNodes(pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
  const key = pod.spreadKey
  const most = key === undefined ? 0 : mostOf(key, nodes)
  const totals = new Array<number>(nodes.length)
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!
    const spread = key === undefined ? 0 : spreadScore(node.spreadCounts.get(key) ?? 0, most)
    totals[i] = leastAllocatedScore(pod, node) * SCORE_WEIGHTS.NodeResourcesLeastAllocated + spread * SCORE_WEIGHTS.SelectorSpread
  }
  return totals
}

/** The index of the best total; among equal bests each is equally likely. */
export function selectHost(totals: readonly number[], random: () => number = Math.random): number {
  let best = 0
  let ties = 1
  for (let i = 1; i < totals.length; i++) {
    if (totals[i]! > totals[best]!) {
      best = i
      ties = 1
    } else if (totals[i] === totals[best]) {
      ties++
      if (Math.floor(random() * ties) === 0) best = i
    }
  }
  return best
}
