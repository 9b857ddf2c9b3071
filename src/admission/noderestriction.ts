// NodeRestriction, as Kubernetes' plugin: what the Node authorizer cannot see in a request (the
// body), checked here for requests from node agents (`system:node:<name>` in `system:nodes`):
//   - a node creates only mirror pods (annotation orch.io/config.mirror) bound to itself, and
//     deletes only pods bound to itself;
//   - a node creates and updates only its own Node, and does not change its taints after creation;
//   - a node writes only its own Lease in orch-node-lease.
import type {AnyObject} from '../api/types.js'
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

export class NodeRestriction implements ValidatingPlugin {
  readonly name = 'NodeRestriction'

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(attributes)
    if (node === undefined) return
    const {group, resource} = attributes.resource
    if (group === '' && resource === 'pods' && !attributes.subresource) return this.pods(node, attributes)
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
    }
    if (attributes.operation === 'DELETE' && attributes.oldObject?.spec?.nodeName !== node) {
      throw forbidden(attributes, `node "${node}" can only delete pods with spec.nodeName set to itself`)
    }
  }

  private nodes(node: string, attributes: AdmissionAttributes): void {
    const name = attributes.object?.metadata?.name ?? attributes.name
    if (name !== node) throw forbidden(attributes, `node "${node}" is not allowed to modify node "${name}"`)
    if (attributes.operation === 'UPDATE' && !attributes.subresource && !sameTaints(attributes.object, attributes.oldObject)) {
      throw forbidden(attributes, `node "${node}" is not allowed to modify taints`)
    }
  }
}
