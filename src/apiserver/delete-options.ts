// DeleteOptions, as a DELETE or an eviction carries them: their kind, dryRun values, the propagation
// policy (Kubernetes' ValidateDeleteOptions), and where each is read from (body or query).
import type {AnyObject, FieldError, RequestContext} from '../api/types.js'
import {deleteOptions as deleteOptionsSchema} from '../api/meta.js'
import {assertDecodes} from '../machinery/go-json.js'
import {errors} from '../machinery/status.js'
import {writtenNumbers} from './codec.js'
import type {DeleteOptions} from './registry.js'

/** A delete's body is DeleteOptions (its kind may be left out): any other kind is 400, as Kubernetes'
 *  decoder refuses a kind its DeleteOptions scheme does not know. */
export function checkDeleteOptionsType(body: AnyObject): void {
  // any apiVersion: Kubernetes registers DeleteOptions in every group version (client-go's typed
  // clients send the resource's, e.g. apps/v1)
  const kind = body.kind ?? 'DeleteOptions'
  if (kind !== 'DeleteOptions') {
    throw errors.badRequest(`no kind ${JSON.stringify(String(kind))} is registered for version ${JSON.stringify(String(body.apiVersion ?? ''))}: the body of a delete is DeleteOptions`)
  }
}

/** Kubernetes' ValidateDeleteOptions, in its order: a propagation policy is one of the three and not
 *  given together with orphanDependents; dryRun holds only "All". Invalid is 422 on DeleteOptions
 *  (meta group, no name), whether the options came with a DELETE or in an Eviction. */
export function validateDeleteOptions(options: {dryRun?: unknown; propagationPolicy?: unknown; orphanDependents?: unknown}): void {
  const causes: FieldError[] = []
  const policy = options.propagationPolicy
  if (policy !== undefined && policy !== null) {
    if (options.orphanDependents !== undefined && options.orphanDependents !== null) {
      causes.push({type: 'FieldValueInvalid', field: 'propagationPolicy', value: policy, message: 'orphanDependents and deletionPropagation cannot be both set'})
    }
    if (policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
      causes.push({type: 'FieldValueNotSupported', field: 'propagationPolicy', value: policy, message: 'supported values: "Foreground", "Background", "Orphan", "nil"'})
    }
  }
  if (Array.isArray(options.dryRun) && !options.dryRun.every((v: unknown) => v === 'All')) {
    causes.push({type: 'FieldValueNotSupported', field: 'dryRun', value: options.dryRun, message: 'supported values: "All"'})
  }
  if (causes.length > 0) throw errors.invalid({group: 'meta.orch.io', kind: 'DeleteOptions'}, '', causes)
}

/** What the query of a DELETE says, read only where the body does not. */
export interface QueryDeleteOptions {
  /** the query's dryRun values */
  dryRun: string[]
  gracePeriodSeconds?: number
  propagationPolicy?: string
  orphanDependents?: boolean
}

/**
 * The registry's DeleteOptions from a DELETE's body (possibly empty: raw has no bytes) and query: the
 * body is DeleteOptions, decoded as Go decodes it (400), and the options as read are validated once
 * (ValidateDeleteOptions: one 422 naming every problem).
 */
export function readDeleteOptions(body: AnyObject, raw: Buffer, contentType: string | undefined, query: QueryDeleteOptions, context: RequestContext): DeleteOptions {
  checkDeleteOptionsType(body)
  if (raw.length > 0) assertDecodes(body, deleteOptionsSchema, {group: '', version: 'v1', kind: 'DeleteOptions'}, raw, writtenNumbers(raw, contentType))
  // the body's dryRun, else the query's (as for the other options, the query is read where the body is
  // silent; an empty list says nothing, as Go cannot tell it from an absent one)
  const bodySays = Array.isArray(body.dryRun) && body.dryRun.length > 0
  const dryRun = bodySays || query.dryRun.length === 0 ? body.dryRun : query.dryRun
  const options: DeleteOptions = {
    dryRun: Array.isArray(dryRun) && dryRun.length > 0,
    context,
    preconditions: body.preconditions,
    gracePeriodSeconds: query.gracePeriodSeconds ?? body.gracePeriodSeconds,
    // where the body says how dependents go, the query's say is not read (Kubernetes reads the body
    // alone when there is one; orch's client sends preconditions in the body, the rest as query)
    ...(body.propagationPolicy !== undefined || body.orphanDependents !== undefined
      ? {propagationPolicy: body.propagationPolicy, orphanDependents: body.orphanDependents}
      : {propagationPolicy: query.propagationPolicy, orphanDependents: query.orphanDependents}),
  }
  validateDeleteOptions({dryRun, propagationPolicy: options.propagationPolicy, orphanDependents: options.orphanDependents})
  context.requestOptions = definedOnly({
    gracePeriodSeconds: options.gracePeriodSeconds,
    preconditions: options.preconditions,
    orphanDependents: options.orphanDependents,
    propagationPolicy: options.propagationPolicy,
    dryRun: Array.isArray(dryRun) && dryRun.length > 0 ? dryRun : undefined,
  })
  return options
}

function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null))
}
