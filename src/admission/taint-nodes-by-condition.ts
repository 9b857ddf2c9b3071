// TaintNodesByCondition, as Kubernetes' admission plugin (plugin/pkg/admission/nodetaint): every Node
// created gets the node.orch.io/not-ready:NoSchedule taint unless it already has one of that key and
// effect, so that no pod is scheduled to it before its agent has reported it Ready (the node lifecycle
// controller's NoSchedule pass then keeps the taint in line with the node's conditions). Only CREATE of
// the nodes resource itself, never a subresource; no timeAdded, as Kubernetes writes it.
import type {AnyObject} from '../api/types.js'
import {NOT_READY_TAINT} from '../controllers/nodelifecycle.js'
import type {AdmissionAttributes, MutatingPlugin} from './types.js'

export class TaintNodesByCondition implements MutatingPlugin {
  readonly name = 'TaintNodesByCondition'

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.operation !== 'CREATE') return
    if (attributes.resource.group !== '' || attributes.resource.resource !== 'nodes' || attributes.subresource) return
    const node: AnyObject | null = attributes.object
    if (!node) return
    node.spec ??= {}
    const taints: AnyObject[] = Array.isArray(node.spec.taints) ? node.spec.taints : []
    // Kubernetes' MatchTaint: same key and effect (value and timeAdded aside)
    if (taints.some((t) => t?.key === NOT_READY_TAINT && t?.effect === 'NoSchedule')) return
    node.spec.taints = [...taints, {key: NOT_READY_TAINT, effect: 'NoSchedule'}]
  }
}
