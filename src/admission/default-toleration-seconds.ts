// DefaultTolerationSeconds, as Kubernetes' admission plugin: a pod created or updated without a
// toleration of the node taints not-ready and unreachable (NoExecute) gets one for each, for 300
// seconds, so that a node that stops answering for a moment does not have its pods evicted at once.
import type {AnyObject} from '../api/types.js'
import {NOT_READY_TAINT, UNREACHABLE_TAINT} from '../controllers/nodelifecycle.js'
import type {AdmissionAttributes, MutatingPlugin} from './types.js'

export const DEFAULT_TOLERATION_SECONDS = 300

interface Toleration {
  key?: string
  operator?: string
  effect?: string
  tolerationSeconds?: number
}

/** a toleration covers the taint's NoExecute effect: same key or any key, NoExecute or any effect */
function covers(toleration: Toleration, key: string): boolean {
  return (toleration.key === key || !toleration.key) && (toleration.effect === 'NoExecute' || !toleration.effect)
}

export class DefaultTolerationSeconds implements MutatingPlugin {
  readonly name = 'DefaultTolerationSeconds'

  constructor(
    private readonly notReadySeconds = DEFAULT_TOLERATION_SECONDS,
    private readonly unreachableSeconds = DEFAULT_TOLERATION_SECONDS,
  ) {}

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.resource.group !== '' || attributes.resource.resource !== 'pods' || attributes.subresource) return
    if (attributes.operation !== 'CREATE' && attributes.operation !== 'UPDATE') return
    const pod: AnyObject | null = attributes.object
    if (!pod) return
    pod.spec ??= {}
    const tolerations: Toleration[] = Array.isArray(pod.spec.tolerations) ? pod.spec.tolerations : []
    const added: Toleration[] = []
    if (!tolerations.some((t) => covers(t, NOT_READY_TAINT))) {
      added.push({key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.notReadySeconds})
    }
    if (!tolerations.some((t) => covers(t, UNREACHABLE_TAINT))) {
      added.push({key: UNREACHABLE_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.unreachableSeconds})
    }
    if (added.length > 0) pod.spec.tolerations = [...tolerations, ...added]
  }
}
