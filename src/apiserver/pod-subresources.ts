// The pod subresources that are operations rather than parts of the pod: binding (the scheduler's
// placement) and eviction (a delete that disruption budgets may refuse).
import {bindingRejection, validateBinding} from '../api/core/pod.js'
import type {AnyObject, RequestContext} from '../api/types.js'
import {errors} from '../machinery/status.js'
import {validateDeleteOptions} from './delete-options.js'
import type {ResourceRegistry} from './registry.js'
import type {ResourceRequest} from './requestinfo.js'

/**
 * POST pods/{name}/binding (Kubernetes' BindingREST): the Binding names the pod and a target node;
 * the pod gets spec.nodeName, the binding's annotations and PodScheduled=True, unless it is bound
 * already, being deleted or gated (409), or is not the pod the binding's uid / resourceVersion name.
 */
export async function bindPod(registry: ResourceRegistry, info: ResourceRequest, binding: AnyObject, options: {dryRun: boolean; context: RequestContext}): Promise<void> {
  if ((binding.metadata?.name ?? '') !== info.name) throw errors.badRequest('name in URL does not match name in Binding object')
  const causes = validateBinding(binding)
  if (causes.length > 0) throw errors.invalid({group: '', kind: 'Binding'}, info.name, causes)
  const {uid, resourceVersion} = binding.metadata ?? {}
  const bindingResource = {group: '', resource: 'pods/binding'}
  await registry.guaranteedUpdate(
    info.namespace,
    info.name,
    (current) => {
      if (uid && uid !== current.metadata?.uid) {
        throw errors.conflict(registry.groupResource, info.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata?.uid}`)
      }
      const rejection = bindingRejection(current)
      if (rejection) throw errors.conflict(bindingResource, info.name, rejection)
      // the binding is not the client's edit of the pod: no managedFields entry, as in Kubernetes
      return registry.prepareUpdate(current, binding, 'binding', options)
    },
    {dryRun: options.dryRun, precondition: resourceVersion || undefined},
  )
}


/**
 * POST pods/{name}/eviction (Kubernetes' EvictionREST): the Eviction names the pod; the pod is
 * deleted with the Eviction's deleteOptions (graceful deletion as a DELETE, preconditions included).
 * orch serves no PodDisruptionBudgets, so no budget ever refuses an eviction (no 429).
 */
export async function evictPod(registry: ResourceRegistry, info: ResourceRequest, eviction: AnyObject, options: {dryRun: boolean; context: RequestContext}): Promise<void> {
  if ((eviction.metadata?.name ?? '') !== info.name) throw errors.badRequest('name in URL does not match name in Eviction object')
  const namespace = eviction.metadata?.namespace
  if (namespace && namespace !== info.namespace) {
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  const deleteOptions: Record<string, any> = eviction.deleteOptions ?? {}
  validateDeleteOptions(deleteOptions, {group: 'policy', kind: 'Eviction'}, info.name)
  await registry.delete(info.namespace, info.name, {
    dryRun: options.dryRun || (Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.length > 0),
    context: options.context,
    preconditions: deleteOptions.preconditions,
    gracePeriodSeconds: deleteOptions.gracePeriodSeconds,
    propagationPolicy: deleteOptions.propagationPolicy,
    orphanDependents: deleteOptions.orphanDependents,
  })
}
