// Server-side apply (application/apply-patch+yaml, +cbor): the applied configuration is merged into
// the live object with structured-merge semantics; field ownership is recorded in managedFields.
import type {AnyObject, RequestContext} from '../api/types.js'
import {apply, applyConflictError} from '../machinery/apply.js'
import {resetFields} from '../machinery/managed-fields.js'
import {errors} from '../machinery/status.js'
import {updateLastApplied} from './last-applied.js'
import {assertBodyObject, type ResourceRegistry} from './registry.js'
import {checkResourceVersion} from './registry-update.js'
import type {ResourceRequest} from './requestinfo.js'

export interface ApplyRequestOptions {
  dryRun: boolean
  context: RequestContext
  fieldManager: string
  force: boolean
  /** runs once the configuration is applied, before the result is validated and stored */
  afterApply?: () => void
}

/**
 * What any server-side apply is checked for before it is applied (the object's or its /scale): a field
 * manager (PatchOptions' 422), and a configuration naming the URL's object — the patcher's checkName,
 * which Kubernetes runs on every patch's result, apply's included. (A configuration of another kind, or
 * none, is FieldManager.Apply's versionCheck 400: `invalid object type`.)
 */
export function checkApplyRequest(applied: AnyObject, info: ResourceRequest, fieldManager: string): void {
  if (!fieldManager) {
    throw errors.invalid({group: 'meta.orch.io', kind: 'PatchOptions'}, '', [
      {type: 'FieldValueRequired', field: 'fieldManager', message: 'is required for apply patch'},
    ])
  }
  if (applied.metadata?.name !== undefined && applied.metadata.name !== info.name) {
    throw errors.badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${info.name})`)
  }
  const namespace = applied.metadata?.namespace
  if (info.namespace && namespace && namespace !== info.namespace) {
    throw errors.badRequest(`the namespace of the object (${namespace}) does not match the namespace on the request (${info.namespace})`)
  }
}

export async function applyPatch(
  registry: ResourceRegistry,
  info: ResourceRequest,
  body: unknown,
  options: ApplyRequestOptions,
): Promise<{object: AnyObject; created: boolean}> {
  const applied = assertBodyObject(body)
  checkApplyRequest(applied, info, options.fieldManager)
  if (applied.metadata?.managedFields !== undefined) {
    throw errors.badRequest('metadata.managedFields must be nil in an apply configuration')
  }
  const declaration = registry.declaration
  const applyOptions = {
    now: options.context.now,
    apiVersion: registry.apiVersion,
    kind: declaration.kind,
    force: options.force,
    subresource: info.subresource || undefined,
    ignoredFields: resetFields(declaration, info.subresource || undefined) as string[][],
  }
  const config = {...applied, metadata: {...(applied.metadata ?? {}), name: info.name}}
  for (;;) {
    try {
      const object = await registry.guaranteedUpdate(
        info.namespace,
        info.name,
        (current) => {
          const result = apply(current, config, declaration.schema, options.fieldManager, applyOptions)
          if (result.conflicts) throw applyConflictError(result.conflicts)
          updateLastApplied(result.object, applied, options.fieldManager)
          options.afterApply?.()
          // the applied object keeps the configuration's resourceVersion, which Store.Update then checks
          checkResourceVersion(registry.groupResource, info.name, applied.metadata?.resourceVersion, current)
          return registry.prepareUpdate(current, result.object, info.subresource, {
            dryRun: options.dryRun,
            context: options.context,
            managedFieldsDone: true,
          })
        },
        {dryRun: options.dryRun, admit: {context: options.context, subresource: info.subresource}},
      )
      return {object, created: false}
    } catch (error) {
      if ((error as {code?: number}).code !== 404 || info.subresource) throw error
    }
    // absent: apply creates it
    const result = apply(undefined, config, declaration.schema, options.fieldManager, applyOptions)
    if (result.conflicts) throw applyConflictError(result.conflicts)
    updateLastApplied(result.object, applied, options.fieldManager)
    options.afterApply?.()
    try {
      const object = await registry.create(info.namespace, result.object, {dryRun: options.dryRun, context: options.context, managedFieldsDone: true, createOnUpdate: true})
      return {object, created: true}
    } catch (error) {
      // created meanwhile: apply to it
      if ((error as {reason?: string}).reason !== 'AlreadyExists') throw error
    }
  }
}
