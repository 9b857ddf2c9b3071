// One scheduling decision, with no I/O: filter the cached nodes, score the feasible ones, pick one.
// As kube-scheduler, a large cluster is not searched whole: filtering stops once enough feasible
// nodes are found (numFeasibleNodesToFind: all nodes up to 100, else 50% minus 1% per 125 nodes, at
// least 5% and 100 nodes), and the next pod starts where this one stopped, so every node gets its turn.
import type {SchedulerCache} from './cache.js'
import {runFilters} from './filters.js'
import type {NodeInfo, PodInfo} from './info.js'
import {fitErrorMessage, NO_NODES_AVAILABLE} from './messages.js'
import {scoreNodes, selectHost} from './scores.js'

const MIN_FEASIBLE_NODES_TO_FIND = 100
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

export interface PlacementOptions {
  /** share of the nodes to find feasible before scoring; 0 (default) = Kubernetes' adaptive share */
  percentageOfNodesToScore?: number
  random?: () => number
}

export type Placement =
  | {node: string}
  | {
      /** the FailedScheduling message */
      message: string
      /** how many nodes each filter refused (for logs: the filters by name) */
      byFilter: Map<string, number>
    }

export function numFeasibleNodesToFind(numAllNodes: number, percentageOfNodesToScore = 0): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes
  let percentage = percentageOfNodesToScore
  if (percentage <= 0) percentage = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.floor(numAllNodes / 125))
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.floor((numAllNodes * percentage) / 100))
}

export class Placer {
  private nextStart = 0

  constructor(
    private readonly cache: SchedulerCache,
    private readonly options: PlacementOptions = {},
  ) {}

  place(pod: PodInfo): Placement {
    const nodes = this.cache.nodes()
    const total = nodes.length
    if (total === 0) return {message: NO_NODES_AVAILABLE, byFilter: new Map()}
    const wanted = numFeasibleNodesToFind(total, this.options.percentageOfNodesToScore)
    const feasible: NodeInfo[] = []
    const histogram = new Map<string, number>()
    const byFilter = new Map<string, number>()
    const start = this.nextStart % total
    let processed = 0
    for (; processed < total && feasible.length < wanted; processed++) {
      const node = nodes[(start + processed) % total]!
      const rejection = runFilters(pod, node)
      if (!rejection) {
        feasible.push(node)
        continue
      }
      byFilter.set(rejection.filter, (byFilter.get(rejection.filter) ?? 0) + 1)
      for (const reason of rejection.reasons) histogram.set(reason, (histogram.get(reason) ?? 0) + 1)
    }
    this.nextStart = (start + processed) % total
    if (feasible.length === 0) return {message: fitErrorMessage(total, histogram), byFilter}
    if (feasible.length === 1) return {node: feasible[0]!.name}
    return {node: feasible[selectHost(scoreNodes(pod, feasible), this.options.random)]!.name}
  }
}
