// The words the scheduler uses: each filter's reasons and the FailedScheduling summary, as
// kube-scheduler writes them ("0/3 nodes are available: 1 node(s) had untolerated taint {k: v},
// 2 Insufficient cpu." — reasons counted over the nodes, "<count> <reason>" sorted as strings).

export const SCHEDULER_NAME = 'orch-scheduler'

export const reasons = {
  notReady: 'node(s) were not ready',
  unschedulable: 'node(s) were unschedulable',
  untoleratedTaint: (key: string, value: string) => `node(s) had untolerated taint {${key}: ${value}}`,
  nodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  hostPorts: "node(s) didn't have free ports for the requested pod ports",
  tooManyPods: 'Too many pods',
  insufficient: (resource: string) => `Insufficient ${resource}`,
} as const

/** ErrNoNodesAvailable: the message when the cluster has no node at all. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods'

/** FitError.Error(): "0/N nodes are available: <sorted histogram>." */
export function fitErrorMessage(numAllNodes: number, histogram: ReadonlyMap<string, number>): string {
  let message = `0/${numAllNodes} nodes are available:`
  const counted = [...histogram].map(([reason, count]) => `${count} ${reason}`).sort()
  if (counted.length > 0) message += ` ${counted.join(', ')}.`
  return message
}

/** The Scheduled event's message. */
export function scheduledMessage(namespace: string, name: string, node: string): string {
  return `Successfully assigned ${namespace}/${name} to ${node}`
}

/** The FailedScheduling message after a binding the server refused. */
export function bindingRejectedMessage(error: string): string {
  return `binding rejected: ${error}`
}
