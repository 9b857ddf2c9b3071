// NodeRestriction, as Kubernetes' plugin: what the Node authorizer cannot see in a request (the
// body), checked here for requests from node agents (`system:node:<name>` in `system:nodes`):
//   - a node creates only mirror pods (annotation orch.io/config.mirror) bound to itself, and
//     deletes only pods bound to itself;
//   - a node creates and updates only its own Node, and does not change its taints after creation;
//   - a node writes only its own Lease in orch-node-lease.
import type {AnyObject} from '../api/types.js'
import {podConfigMapNames} from '../api/core/pod-references.js'
import {ApiError} from '../machinery/status.js'
import {admissionForbidden as forbidden} from './forbidden.js'
import type {AdmissionAttributes, ValidatingPlugin} from './types.js'

export const MIRROR_POD_ANNOTATION = 'orch.io/config.mirror'
const NODES_GROUP = 'system:nodes'
const NODE_USER_PREFIX = 'system:node:'

function nodeNameOf(attributes: AdmissionAttributes): string | undefined {
  const user = attributes.userInfo
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined
  return user.username.slice(NODE_USER_PREFIX.length)
}

function sameTaints(a: AnyObject | null, b: AnyObject | null): boolean {
  return JSON.stringify(a?.spec?.taints ?? []) === JSON.stringify(b?.spec?.taints ?? [])
}

/** The node a pod is bound to ('' when unbound), undefined when there is no such pod. */
export type PodNodeOf = (namespace: string, name: string) => string | undefined

export class NodeRestriction implements ValidatingPlugin {
  readonly name = 'NodeRestriction'

  /** `podNodeOf` finds the pod an eviction names (Kubernetes' podsGetter) */
  constructor(private readonly podNodeOf?: PodNodeOf) {}

  handles(attributes: AdmissionAttributes): boolean {
    return nodeNameOf(attributes) !== undefined
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(attributes)
    if (node === undefined) return
    const {group, resource} = attributes.resource
    if (group === '' && resource === 'pods' && !attributes.subresource) return this.pods(node, attributes)
    if (group === '' && resource === 'pods' && attributes.subresource === 'status') return this.podStatus(node, attributes)
    if (group === '' && resource === 'pods' && attributes.subresource === 'eviction') return this.podEviction(node, attributes)
    if (group === '' && resource === 'nodes') return this.nodes(node, attributes)
    if (group === 'coordination.orch.io' && resource === 'leases') {
      // Kubernetes' admitLease: the namespace first, then the name (the body's on create)
      if (attributes.namespace !== 'orch-node-lease') throw forbidden(attributes, 'can only access leases in the "orch-node-lease" system namespace')
      const name = attributes.operation === 'CREATE' ? attributes.object?.metadata?.name : attributes.name
      if (name !== node) throw forbidden(attributes, 'can only access node lease with the same name as the requesting node')
    }
  }

  private pods(node: string, attributes: AdmissionAttributes): void {
    if (attributes.operation === 'CREATE') {
      const pod = attributes.object ?? {}
      if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] === undefined) {
        throw forbidden(attributes, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`)
      }
      if (pod.spec?.nodeName !== node) throw forbidden(attributes, `node "${node}" can only create pods with spec.nodeName set to itself`)
      // a mirror pod references no other API object: the Node authorizer would let its node read them
      const refused = referencedObjects(pod)
      if (refused) throw forbidden(attributes, `node "${node}" can not create pods that ${refused}`)
    }
    if (attributes.operation === 'DELETE' && attributes.oldObject?.spec?.nodeName !== node) {
      throw forbidden(attributes, `node "${node}" can only delete pods with spec.nodeName set to itself`)
    }
  }

  /** Kubernetes' admitPodStatus: only the status of a pod bound to this node, labels unchanged. */
  private podStatus(node: string, attributes: AdmissionAttributes): void {
    if (attributes.operation !== 'UPDATE') throw forbidden(attributes, `unexpected operation "${attributes.operation}"`)
    if (attributes.oldObject?.spec?.nodeName !== node) {
      throw forbidden(attributes, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`)
    }
    if (JSON.stringify(attributes.oldObject?.metadata?.labels ?? {}) !== JSON.stringify(attributes.object?.metadata?.labels ?? {})) {
      throw forbidden(attributes, `node "${node}" cannot update labels through pod status`)
    }
  }

  /** Kubernetes' admitPodEviction: only a pod bound to this node; a pod that is not there is the
   *  eviction's own 404. */
  private podEviction(node: string, attributes: AdmissionAttributes): void {
    const podName = attributes.name || attributes.object?.metadata?.name
    if (!podName) throw new ApiError(400, 'BadRequest', 'could not determine pod from request data')
    const bound = this.podNodeOf?.(attributes.namespace, podName)
    if (bound !== undefined && bound !== node) throw forbidden(attributes, `node ${node} can only evict pods with spec.nodeName set to itself`)
  }

  private nodes(node: string, attributes: AdmissionAttributes): void {
    const name = attributes.object?.metadata?.name ?? attributes.name
    if (name !== node) throw forbidden(attributes, `node "${node}" is not allowed to modify node "${name}"`)
    // labels that would let a node steer restricted workloads to itself (admitNode)
    if (attributes.operation === 'CREATE') {
      const refused = forbiddenLabels(Object.keys(attributes.object?.metadata?.labels ?? {}))
      if (refused.length > 0) throw forbidden(attributes, `node "${node}" is not allowed to set the following labels: ${refused.join(', ')}`)
    }
    if (attributes.operation === 'UPDATE') {
      const refused = forbiddenLabels(modifiedLabels(attributes.object?.metadata?.labels ?? {}, attributes.oldObject?.metadata?.labels ?? {}))
      if (refused.length > 0) throw forbidden(attributes, `is not allowed to modify labels: ${refused.join(', ')}`)
    }
    if (attributes.operation === 'UPDATE' && !attributes.subresource && !sameTaints(attributes.object, attributes.oldObject)) {
      throw forbidden(attributes, `node "${node}" is not allowed to modify taints`)
    }
  }
}

/** What admitPodCreate refuses in a node's mirror pod: references to other API objects. */
function referencedObjects(pod: AnyObject): string | undefined {
  const spec = pod.spec ?? {}
  if (spec.serviceAccountName) return 'reference a service account'
  if (podConfigMapNames(pod).length > 0) return 'reference configmaps'
  const volumes: AnyObject[] = spec.volumes ?? []
  if (volumes.some((v) => v?.persistentVolumeClaim)) return 'reference persistentvolumeclaims'
  if (volumes.some((v) => v?.ephemeral)) return 'use generic ephemeral volumes'
  if ((spec.resourceClaims ?? []).length > 0) return 'reference resourceclaims'
  return undefined
}

/** The labels a kubelet sets itself (kubeletapis' kubeletLabels and label namespaces), renamed. */
const AGENT_LABELS = new Set([
  'orch.io/hostname',
  'topology.orch.io/zone',
  'topology.orch.io/region',
  'failure-domain.beta.orch.io/zone',
  'failure-domain.beta.orch.io/region',
  'beta.orch.io/instance-type',
  'node.orch.io/instance-type',
  'orch.io/os',
  'orch.io/arch',
  'beta.orch.io/os',
  'beta.orch.io/arch',
])
const AGENT_LABEL_NAMESPACES = ['kubelet.orch.io', 'node.orch.io']
const NODE_RESTRICTION_NAMESPACE = 'node-restriction.orch.io'

function labelNamespace(label: string): string {
  const slash = label.indexOf('/')
  return slash < 0 ? '' : label.slice(0, slash)
}

function inNamespace(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`)
}

/** getForbiddenLabels: node-restriction labels, and orch.io labels that are not the agent's own; sorted. */
export function forbiddenLabels(labels: Iterable<string>): string[] {
  const refused = new Set<string>()
  for (const label of labels) {
    const namespace = labelNamespace(label)
    if (inNamespace(namespace, NODE_RESTRICTION_NAMESPACE)) refused.add(label)
    const agentLabel = AGENT_LABELS.has(label) || AGENT_LABEL_NAMESPACES.some((allowed) => inNamespace(namespace, allowed))
    if (inNamespace(namespace, 'orch.io') && !agentLabel) refused.add(label)
  }
  return [...refused].sort()
}

/** Labels added, removed or changed between two label maps. */
function modifiedLabels(labels: Record<string, string>, old: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(labels), ...Object.keys(old)])
  return [...keys].filter((key) => labels[key] !== old[key])
}
