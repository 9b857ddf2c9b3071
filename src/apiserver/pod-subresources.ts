// The pod subresources that are operations rather than parts of the pod: binding (the scheduler's
// placement) and eviction (a delete that disruption budgets may refuse).
import {bindingRejection, podEviction, validateBinding} from '../api/core/pod.js'
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
  // create's EnsureObjectNamespaceMatchesRequestNamespace, then the binding's own name check
  const namespace = binding.metadata?.namespace
  if (namespace && namespace !== info.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request')
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

/** The group versions an Eviction is accepted in (EvictionREST.AcceptsGroupVersion). */
const EVICTION_VERSIONS = new Set(['policy/v1', 'policy/v1beta1'])

/**
 * POST pods/{name}/eviction (Kubernetes' EvictionREST.Create): the Eviction names the pod; the pod is
 * deleted with the Eviction's deleteOptions (graceful deletion as a DELETE, preconditions included),
 * in Kubernetes' order: the body's type, its namespace, its name, the dry-run of the request against
 * the body's, then the pod (404), the delete options (422 on DeleteOptions, as store.Delete's
 * BeforeDelete) and the preconditions (409, BeforeDelete's message). orch serves no
 * PodDisruptionBudgets, so no budget ever refuses an eviction (no 429).
 */
export async function evictPod(registry: ResourceRegistry, info: ResourceRequest, eviction: AnyObject, options: {dryRun: boolean; context: RequestContext}): Promise<void> {
  const kind = eviction.kind || 'Eviction'
  const apiVersion = eviction.apiVersion || 'policy/v1'
  if (kind !== 'Eviction' || !EVICTION_VERSIONS.has(apiVersion)) {
    const version = String(apiVersion).slice(String(apiVersion).indexOf('/') + 1)
    throw errors.badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a Eviction: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`)
  }
  // EnsureObjectNamespaceMatchesRequestNamespace, before the REST Create
  const namespace = eviction.metadata?.namespace
  if (namespace && namespace !== info.namespace) {
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  // admission sees a CREATE of pods/eviction with the Eviction (mutating, then validating, as the create
  // handler and EvictionREST's createValidation run it); the pod's delete runs none of its own
  if (registry.admission) {
    const attributes = {
      ...registry.admissionAttributes('CREATE', eviction, null, info.name, 'eviction', options.context, options.dryRun),
      kind: {group: podEviction.group, version: podEviction.version, kind: podEviction.kind},
      declaration: {...podEviction, namespaced: true},
    }
    if (registry.admission.mutates) eviction = (await registry.admission.admit(attributes)) ?? eviction
    await registry.admission.validate({...attributes, object: eviction})
  }
  if ((eviction.metadata?.name ?? '') !== info.name) throw errors.badRequest('name in URL does not match name in Eviction object')
  const deleteOptions: Record<string, any> = eviction.deleteOptions ?? {}
  // propagateDryRun: the request's dryRun and the body's must agree when both are given (Kubernetes
  // answers a plain error, a 500; bad input is a 400 here)
  const bodyDryRun: unknown[] = Array.isArray(deleteOptions.dryRun) ? deleteOptions.dryRun : []
  if (options.dryRun && bodyDryRun.length > 0 && !(bodyDryRun.length === 1 && bodyDryRun[0] === 'All')) {
    throw errors.badRequest(`Non-matching dry-run options in request and content: [All] and [${bodyDryRun.join(' ')}]`)
  }
  // the pod's 404 comes before the options' 422, the preconditions' 409 after (the registry's delete)
  await registry.get(info.namespace, info.name)
  validateDeleteOptions(deleteOptions)
  await registry.delete(info.namespace, info.name, {
    dryRun: options.dryRun || bodyDryRun.length > 0,
    context: options.context,
    preconditions: deleteOptions.preconditions,
    gracePeriodSeconds: deleteOptions.gracePeriodSeconds,
    propagationPolicy: deleteOptions.propagationPolicy,
    orphanDependents: deleteOptions.orphanDependents,
    admitted: true,
  })
}
