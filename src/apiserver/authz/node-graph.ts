// What the Node authorizer knows of which objects belong to which node: Kubernetes' node authorizer
// graph (plugin/pkg/auth/authorizer/node/graph_populator.go), cut down to the edges orch has:
//   pod -> node                        (spec.nodeName)
//   configmap -> pod -> node           (volumes, projected sources, env and envFrom of every container)
//   persistentvolumeclaim -> pod -> node (persistentVolumeClaim volumes, ephemeral volumes' claims)
// It is an index over the pods watch cache, updated with each pod event, so a check is a map look-up:
// authorization runs on every request.
import type {AnyObject} from '../../api/types.js'
import {MIRROR_POD_ANNOTATION} from '../../admission/noderestriction.js'
import {podClaimNames, podConfigMapNames} from '../../api/core/pod-references.js'
import type {CacheIndex} from '../../storage/watch-cache.js'
import type {ResourceRegistry} from '../registry.js'

/** The objects a node may read because a pod bound to it uses them. */
export type RelatedResource = 'configmaps' | 'persistentvolumeclaims'

export interface NodeGraph {
  /** the node a pod is bound to (spec.nodeName), or undefined when the pod is unknown or unbound */
  podNode(namespace: string, name: string): string | undefined
  /** whether a pod bound to nodeName uses this object */
  hasPathFrom(nodeName: string, resource: RelatedResource, namespace: string, name: string): boolean
}

interface PodEdges {
  node: string
  /** `<resource>/<namespace>/<name>` of each object the pod uses */
  uses: string[]
}

function edgesOf(pod: AnyObject | undefined): PodEdges | undefined {
  const node = pod?.spec?.nodeName
  if (typeof node !== 'string' || !node) return undefined
  // a mirror pod gives its node nothing more: a node creates those itself (as Kubernetes' AddPod)
  if (pod!.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return {node, uses: []}
  const namespace = pod!.metadata?.namespace ?? ''
  return {
    node,
    uses: [
      ...podConfigMapNames(pod!).map((name) => `configmaps/${namespace}/${name}`),
      ...podClaimNames(pod!).map((name) => `persistentvolumeclaims/${namespace}/${name}`),
    ],
  }
}

/** The graph as an index of pods: kept up to date by the pods watch cache (`attach`) or fed by hand. */
export class PodNodeGraph implements NodeGraph, CacheIndex<AnyObject> {
  /** `<namespace>/<name>` of a bound pod: its edges */
  private readonly pods = new Map<string, PodEdges>()
  /** `<resource>/<namespace>/<name>`: how many pods on each node use it */
  private readonly usedBy = new Map<string, Map<string, number>>()

  /** A graph following the pods registry's watch cache. */
  static attach(pods: Pick<ResourceRegistry, 'cache'>): PodNodeGraph {
    const graph = new PodNodeGraph()
    pods.cache.addIndex(graph)
    return graph
  }

  /** A graph of these pods (tests). */
  static of(pods: AnyObject[]): PodNodeGraph {
    const graph = new PodNodeGraph()
    for (const pod of pods) graph.update('', pod, undefined)
    return graph
  }

  reset(): void {
    this.pods.clear()
    this.usedBy.clear()
  }

  update(_key: string, object: AnyObject | undefined, previous: AnyObject | undefined): void {
    // as graph_populator's updatePod: with the node and the uid unchanged the pod's references are
    // taken as they were (a pod's volumes and env are immutable; an annotation or an ephemeral
    // container added later grants its node nothing more)
    if (object && previous && object.spec?.nodeName === previous.spec?.nodeName && object.metadata?.uid === previous.metadata?.uid) return
    const pod = object ?? previous
    const podKey = `${pod?.metadata?.namespace ?? ''}/${pod?.metadata?.name ?? ''}`
    const old = this.pods.get(podKey)
    if (old) {
      this.pods.delete(podKey)
      for (const used of old.uses) this.count(used, old.node, -1)
    }
    const edges = object ? edgesOf(object) : undefined
    if (!edges) return
    this.pods.set(podKey, edges)
    for (const used of edges.uses) this.count(used, edges.node, 1)
  }

  private count(used: string, node: string, delta: number): void {
    let nodes = this.usedBy.get(used)
    if (!nodes) this.usedBy.set(used, (nodes = new Map()))
    const next = (nodes.get(node) ?? 0) + delta
    if (next > 0) nodes.set(node, next)
    else nodes.delete(node)
    if (nodes.size === 0) this.usedBy.delete(used)
  }

  podNode(namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node
  }

  hasPathFrom(nodeName: string, resource: RelatedResource, namespace: string, name: string): boolean {
    return (this.usedBy.get(`${resource}/${namespace}/${name}`)?.get(nodeName) ?? 0) > 0
  }
}
