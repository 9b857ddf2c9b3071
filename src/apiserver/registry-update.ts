// The update half of the generic registry that needs no store: the object an update builds from the
// stored one and the request body, and Kubernetes' BeforeUpdate steps once admission has run.
import type {AnyObject, KindDeclaration, RequestContext} from '../api/types.js'
import {apiVersionOf} from '../api/types.js'
import {errors, type GroupResource} from '../machinery/status.js'
import {clone, ensureTopLevelStructs, sameJson, type WriteOptions} from './registry-support.js'

/**
 * The object an update of `subresource` stores, built from the stored one and the request body: what
 * the subresource may change (only status through /status, only spec.finalizers through /finalize,
 * a custom subresource through the kind's prepareSubresourceUpdate), the fields the server owns as
 * stored, the decoder's defaults. A uid that differs from the stored one is validation's 422 (field is
 * immutable) unless the caller checked it as a precondition first (a PUT: checkUidPrecondition). The
 * strategy's PrepareForUpdate and the generation come later (beforeUpdate).
 */
export function updatedObject(declaration: KindDeclaration, old: AnyObject, body: AnyObject, subresource: string, options: WriteOptions): AnyObject {
  let object: AnyObject
  const bodyCopy = clone(body)
  if (subresource === 'status') {
    // only status changes through /status; metadata and spec stay as stored — except the
    // managedFields a server-side apply to /status worked out (they record its manager's entry)
    object = {...clone(old), status: bodyCopy.status}
    if (options.managedFieldsDone) {
      if (bodyCopy.metadata?.managedFields) object.metadata!.managedFields = bodyCopy.metadata.managedFields
      else delete object.metadata!.managedFields
    }
  } else if (subresource === 'finalize') {
    object = clone(old)
    object.spec = {...(object.spec ?? {}), finalizers: bodyCopy.spec?.finalizers ?? []}
  } else if (subresource) {
    const sub = declaration.subresources?.find((s) => s.name === subresource)
    if (!sub || !declaration.prepareSubresourceUpdate) throw errors.methodNotAllowed()
    object = declaration.prepareSubresourceUpdate(subresource, bodyCopy, clone(old), options.context)
  } else {
    object = bodyCopy
    if (declaration.hasStatus) {
      if (old.status === undefined) delete object.status
      else object.status = clone(old.status)
    }
  }
  object.apiVersion = apiVersionOf(declaration)
  object.kind = declaration.kind
  const meta = (object.metadata ??= {})
  const oldMeta = old.metadata!
  // fields the server owns
  meta.name = oldMeta.name
  if (declaration.namespaced) meta.namespace = oldMeta.namespace
  else delete meta.namespace
  // BeforeUpdate: the stored uid when none is given; a changed one is validation's (field is immutable)
  if (!meta.uid) meta.uid = oldMeta.uid
  delete meta.selfLink
  keepStoredLifecycle(meta, oldMeta)
  meta.resourceVersion = oldMeta.resourceVersion
  ensureTopLevelStructs(object, declaration)
  declaration.defaults?.(object)
  return object
}

/**
 * The uid precondition of a PUT (of the object or any subresource): the storage's Preconditions.Check,
 * which runs before anything else looks at the body, in its words — a StorageError the registry
 * answers as 409 Conflict. `stored` is undefined when the object is absent (a create through PUT).
 */
export function checkUidPrecondition(groupResource: GroupResource, key: string, name: string, uid: unknown, stored: AnyObject | undefined): void {
  if (!uid || uid === stored?.metadata?.uid) return
  const storedUid = stored?.metadata?.uid ?? ''
  throw errors.conflict(
    groupResource,
    name,
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${storedUid}`,
  )
}

/**
 * Store.Update's optimistic lock: a resourceVersion the written object carries (a PUT's body, a patch's
 * or an apply's result, a Scale's) must be the stored one, else 409; without one the update is unconditional.
 */
export function checkResourceVersion(groupResource: GroupResource, name: string, resourceVersion: unknown, stored: AnyObject): void {
  if (resourceVersion && String(resourceVersion) !== stored.metadata?.resourceVersion) throw errors.staleResourceVersion(groupResource, name)
}

/**
 * The uid a Scale written through /scale names (scaleUpdatedObjectInfo: after the Scale validates, and
 * answered on `<resource>/scale` with no StorageError — a patch or an apply has no storage precondition).
 */
export function checkScaleUid(groupResource: GroupResource, name: string, uid: unknown, stored: AnyObject): void {
  if (!uid || uid === stored.metadata?.uid) return
  throw errors.conflict(
    {group: groupResource.group, resource: `${groupResource.resource}/scale`},
    name,
    `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${stored.metadata?.uid ?? ''}`,
  )
}

/** creationTimestamp and the deletion fields as stored: an update never sets or changes them. */
function keepStoredLifecycle(meta: AnyObject, oldMeta: AnyObject): void {
  meta.creationTimestamp = oldMeta.creationTimestamp
  if (oldMeta.deletionTimestamp) {
    meta.deletionTimestamp = oldMeta.deletionTimestamp
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds
    else delete meta.deletionGracePeriodSeconds
  } else {
    delete meta.deletionTimestamp
    delete meta.deletionGracePeriodSeconds
  }
}

/**
 * Kubernetes' BeforeUpdate up to validation, after mutating admission and the beginUpdate hook:
 * what the server owns is as stored whatever admission did (creationTimestamp, the deletion
 * fields, a uid left out), the strategy's PrepareForUpdate runs, and generation goes up when the
 * fields it counts changed — also when it was admission that changed them.
 */
export function beforeUpdate(declaration: KindDeclaration, object: AnyObject, old: AnyObject, subresource: string, context: RequestContext): void {
  const meta = (object.metadata ??= {})
  const oldMeta = old.metadata!
  if (!meta.uid) meta.uid = oldMeta.uid
  keepStoredLifecycle(meta, oldMeta)
  // the main resource and /status (whose strategy may keep parts of the stored status, e.g. CSR approvals)
  if (!subresource || subresource === 'status') declaration.prepareForUpdate?.(object, old, {...context, subresource: subresource || undefined})
  const generationFields = declaration.generationFields ?? ['spec']
  if (generationFields.length > 0) {
    const changed = generationFields.some((f) => !sameJson(object[f], old[f]))
    meta.generation = (oldMeta.generation ?? 1) + (changed ? 1 : 0)
  } else if (oldMeta.generation !== undefined) {
    meta.generation = oldMeta.generation
  } else {
    delete meta.generation
  }
}
