// The scheduler's cache: every node with the pods accounted on it, kept current from the informers'
// events so that nothing is ever re-listed or re-summed. A pod is accounted on a node when it is seen
// bound there, or as soon as the scheduler picks the node ("assumed"), so the next pod already sees
// its requests while the binding is still in flight; a failed binding forgets it again.
import type {AnyObject} from '../../api/types.js'
import {emptyNodeInfo, setNode, schedulingView, type NodeInfo, type PodInfo} from './info.js'
import {addResources, subtract} from './resources.js'

interface Accounted {
  node: string
  info: PodInfo
  assumed: boolean
}

export class SchedulerCache {
  private readonly infos = new Map<string, NodeInfo>()
  private readonly accounted = new Map<string, Accounted>()
  private readonly views = new Map<string, string>()
  private candidates: NodeInfo[] | undefined

  /** Adds or replaces a node; true when what the scheduler reads of it changed (pending pods may fit now). */
  setNode(node: AnyObject): boolean {
    const name: string = node.metadata?.name ?? ''
    let info = this.infos.get(name)
    if (!info) {
      info = emptyNodeInfo(name)
      this.infos.set(name, info)
    }
    if (!info.node) this.candidates = undefined
    setNode(info, node)
    const view = schedulingView(node)
    const changed = this.views.get(name) !== view
    this.views.set(name, view)
    return changed
  }

  removeNode(name: string): void {
    const info = this.infos.get(name)
    if (!info) return
    this.views.delete(name)
    this.candidates = undefined
    // pods bound to a node that is gone keep their info until they go too
    if (info.pods.size > 0) setNode(info, undefined)
    else this.infos.delete(name)
  }

  /** The nodes pods may be placed on, in a stable order. */
  nodes(): NodeInfo[] {
    this.candidates ??= [...this.infos.values()].filter((info) => info.node !== undefined)
    return this.candidates
  }

  node(name: string): NodeInfo | undefined {
    return this.infos.get(name)
  }

  /** A pod seen bound to a node (confirms an assumed pod; moves it when it is bound elsewhere). */
  addPod(info: PodInfo, nodeName: string): void {
    this.removePod(info.key)
    this.account(info, nodeName, false)
  }

  /** The scheduler picked this node: account the pod there until the binding is confirmed or fails. */
  assume(info: PodInfo, nodeName: string): void {
    this.removePod(info.key)
    this.account(info, nodeName, true)
  }

  /** The binding failed: the assumed pod is no longer on the node. A confirmed pod stays. */
  forget(key: string): void {
    if (this.accounted.get(key)?.assumed) this.removePod(key)
  }

  isAssumed(key: string): boolean {
    return this.accounted.get(key)?.assumed === true
  }

  /** Where the pod is accounted, if anywhere. */
  nodeOf(key: string): string | undefined {
    return this.accounted.get(key)?.node
  }

  removePod(key: string): boolean {
    const entry = this.accounted.get(key)
    if (!entry) return false
    this.accounted.delete(key)
    const node = this.infos.get(entry.node)
    if (!node) return true
    const pod = entry.info
    node.pods.delete(key)
    subtract(node.requested, pod.requests)
    node.nonZeroRequested.milliCPU -= pod.nonZero.milliCPU
    node.nonZeroRequested.memory -= pod.nonZero.memory
    for (const port of pod.hostPorts) {
      const at = node.usedPorts.findIndex((p) => p.port === port.port && p.protocol === port.protocol && p.ip === port.ip)
      if (at >= 0) node.usedPorts.splice(at, 1)
    }
    if (pod.spreadKey !== undefined) {
      const left = (node.spreadCounts.get(pod.spreadKey) ?? 1) - 1
      if (left > 0) node.spreadCounts.set(pod.spreadKey, left)
      else node.spreadCounts.delete(pod.spreadKey)
    }
    if (!node.node && node.pods.size === 0) this.infos.delete(node.name)
    return true
  }

  private account(pod: PodInfo, nodeName: string, assumed: boolean): void {
    let node = this.infos.get(nodeName)
    if (!node) {
      // bound to a node not (yet) known: keep the pods so the node starts with them
      node = emptyNodeInfo(nodeName)
      this.infos.set(nodeName, node)
    }
    this.accounted.set(pod.key, {node: nodeName, info: pod, assumed})
    node.pods.set(pod.key, pod)
    addResources(node.requested, pod.requests)
    node.nonZeroRequested.milliCPU += pod.nonZero.milliCPU
    node.nonZeroRequested.memory += pod.nonZero.memory
    for (const port of pod.hostPorts) node.usedPorts.push(port)
    if (pod.spreadKey !== undefined) node.spreadCounts.set(pod.spreadKey, (node.spreadCounts.get(pod.spreadKey) ?? 0) + 1)
  }
}
