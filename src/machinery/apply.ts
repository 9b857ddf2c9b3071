// Server-side apply as Kubernetes does it (structured-merge-diff's Updater.Apply behind the managed
// fields machinery of k8s.io/apimachinery/pkg/util/managedfields): the applied configuration is merged
// into the live object, the applier comes to own exactly the fields it applied, fields it applied
// before and no longer applies are removed unless someone else owns them, and changing a field another
// manager owns is a conflict unless forced.
//
// The caller defaults the returned object (Kubernetes defaults it after the merge) and answers
// conflicts with applyConflictError (409).
import type {AnyObject, ObjectSchema} from '../api/types.js'
import {type FieldSet, pathString, valuesEqual} from './field-path.js'
import {
  type IgnoredFields,
  type Managed,
  type ManagedFieldsEntry,
  decodeManagedFields,
  describeManager,
  encodeManagedFields,
  formatTime,
  ignoredSet,
  managerIdentifier,
  recordUpdate,
  stripMeta,
  updateOwnership,
  withManagedFields,
  withoutManagedFields,
} from './managed-fields.js'
import {ApiError, errors} from './status.js'
import {dropNulls, ensureNamedFieldsAreMembers, isPlainObject, merge, objectSchema, removeItems, toFieldSet, validate} from './typed-value.js'

export interface ApplyOptions {
  /** take over conflicting fields (?force=true) */
  force?: boolean
  now: Date
  /** group/version of the endpoint, e.g. apps/v1 */
  apiVersion: string
  /** kind of the endpoint: the applied object must be of this kind and version */
  kind?: string
  subresource?: string
  /** the strategy's reset fields (see resetFields in managed-fields.ts) */
  ignoredFields?: IgnoredFields
}

export interface ApplyConflict {
  /** the other manager's name, operation, apiVersion (for updaters) and subresource */
  manager: string
  operation: 'Apply' | 'Update'
  apiVersion?: string
  subresource?: string
  /** `.spec.replicas`, `.spec.template.spec.containers[name="nginx"].image` */
  field: string
  /** `conflict with "kubectl" using apps/v1`: the message of the StatusCause */
  message: string
}

export type ApplyResult =
  | {
      conflicts?: undefined
      /** the merged object with its new managedFields (to be defaulted, validated and stored) */
      object: AnyObject
      managedFields: ManagedFieldsEntry[]
      /** false when the object itself is unchanged (managedFields may still have changed) */
      changed: boolean
    }
  | {conflicts: ApplyConflict[]}

function groupVersionKind(object: AnyObject): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : ''
  const slash = apiVersion.indexOf('/')
  const group = slash >= 0 ? apiVersion.slice(0, slash) : ''
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion
  return `${group}/${version}, Kind=${typeof object.kind === 'string' ? object.kind : ''}`
}

function describeObject(object: AnyObject): string {
  const metadata = isPlainObject(object.metadata) ? object.metadata : {}
  return `${metadata.namespace ?? ''}/${metadata.name ?? ''}; ${groupVersionKind(object)}`
}

/** A failure Kubernetes reports as a plain error: 500 with no reason, its message as is. */
function plainError(message: string): ApiError {
  return new ApiError(500, '', message)
}

/**
 * Updater.prune: removes what the applier applied last time and no longer applies, unless another
 * manager (or the new configuration) owns it; what was never the applier's stays.
 */
function prune(merged: unknown, schema: ObjectSchema, managed: Managed, lastSet: FieldSet | undefined): unknown {
  if (!lastSet || lastSet.isEmpty()) return merged
  const type = objectSchema(schema)
  const members = (set: FieldSet) => ensureNamedFieldsAreMembers(set, type)
  let pruned = removeItems(merged, members(lastSet), type)
  // addBackOwnedItems
  let owned: FieldSet | undefined
  for (const versioned of managed.fields.values()) owned = owned ? owned.union(versioned.set) : versioned.set
  const mergedSet = members(toFieldSet(merged, type))
  let keep = members(toFieldSet(pruned, type))
  if (owned) keep = keep.union(members(owned))
  pruned = removeItems(merged, mergedSet.difference(keep), type)
  // addBackDanglingItems
  const prunedSet = members(toFieldSet(pruned, type))
  return removeItems(merged, mergedSet.difference(prunedSet).intersection(members(lastSet)), type)
}

function conflictList(conflicts: Map<string, FieldSet>): ApplyConflict[] {
  const out: ApplyConflict[] = []
  for (const id of [...conflicts.keys()].sort()) {
    const info = JSON.parse(id) as {manager: string; operation: 'Apply' | 'Update'; apiVersion?: string; subresource?: string}
    const message = `conflict with ${describeManager(id)}`
    for (const path of conflicts.get(id)!.paths()) {
      const conflict: ApplyConflict = {manager: info.manager, operation: info.operation, field: pathString(path), message}
      if (info.apiVersion) conflict.apiVersion = info.apiVersion
      if (info.subresource) conflict.subresource = info.subresource
      out.push(conflict)
    }
  }
  return out
}

function conflictDescription(conflict: ApplyConflict): string {
  return describeManager(
    managerIdentifier({manager: conflict.manager, operation: conflict.operation, apiVersion: conflict.apiVersion, subresource: conflict.subresource}),
  )
}

/** The 409 Kubernetes answers: one cause per field and manager, the message grouped by manager. */
export function applyConflictError(conflicts: readonly ApplyConflict[]): ApiError {
  const causes = conflicts.map((c) => ({reason: 'FieldManagerConflict', message: c.message, field: c.field}))
  let message: string
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: ${conflicts[0].message}: ${conflicts[0].field}`
  } else {
    const byManager = new Map<string, string[]>()
    for (const c of conflicts) {
      const key = managerIdentifier({manager: c.manager, operation: c.operation, apiVersion: c.apiVersion, subresource: c.subresource})
      byManager.set(key, [...(byManager.get(key) ?? []), c.field])
    }
    const lines: string[] = []
    for (const key of [...byManager.keys()].sort()) {
      const first = conflicts.find((c) => managerIdentifier({manager: c.manager, operation: c.operation, apiVersion: c.apiVersion, subresource: c.subresource}) === key)!
      lines.push(`conflicts with ${conflictDescription(first)}:`)
      for (const field of byManager.get(key)!) lines.push(`- ${field}`)
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`
  }
  return new ApiError(409, 'Conflict', message, {causes})
}

/**
 * FieldManager.Apply. `live` is the stored object (undefined: the object is created by this apply),
 * `applied` the configuration as sent (YAML or JSON decoded). Throws 400 for a configuration of the
 * wrong kind or carrying managedFields, 500 (as Kubernetes) for one that does not fit the schema
 * (unknown field, duplicate or missing list keys) or unreadable stored managedFields.
 */
export function apply(live: AnyObject | undefined, applied: AnyObject, schema: ObjectSchema, manager: string, options: ApplyOptions): ApplyResult {
  if (!isPlainObject(applied)) throw errors.badRequest('error decoding patch: the applied configuration must be an object')
  const appliedVersion = typeof applied.apiVersion === 'string' ? applied.apiVersion : ''
  if (options.kind !== undefined && (appliedVersion !== options.apiVersion || applied.kind !== options.kind)) {
    throw errors.badRequest(`invalid object type: ${groupVersionKind(applied)}`)
  }
  if (appliedVersion !== options.apiVersion) {
    throw errors.badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${appliedVersion}, expected: ${options.apiVersion}`,
    )
  }
  if (isPlainObject(applied.metadata) && applied.metadata.managedFields != null) {
    throw errors.badRequest('metadata.managedFields must be nil')
  }

  let managed: Managed
  try {
    managed = decodeManagedFields(live?.metadata?.managedFields)
  } catch (error) {
    throw plainError(`failed to decode managed fields: ${(error as Error).message}`)
  }
  const ignored = ignoredSet(options.ignoredFields)
  const liveObject = withoutManagedFields(live)

  // skipNonAppliedManager: an object nobody manages yet is first recorded as "before-first-apply"'s
  if (managed.fields.size === 0) {
    recordUpdate(
      {},
      liveObject,
      schema,
      managed,
      {manager: 'before-first-apply', operation: 'Update', apiVersion: options.apiVersion, subresource: options.subresource},
      options.now,
      ignored,
    )
  }

  const type = objectSchema(schema)
  const invalid = validate(applied, type)
  if (invalid.length > 0) {
    const detail = invalid.length === 1 ? invalid[0] : ['errors:', ...invalid.map((e) => `  ${e}`)].join('\n')
    // Kubernetes answers this one 500 (a plain error), though the fault is the client's; orch answers
    // 400 with the same text, as kubernetes/kubernetes#139253 asks: bad input is never a 500 here
    throw errors.badRequest(`failed to create typed patch object (${describeObject(applied)}): ${detail}`)
  }

  const id = managerIdentifier({manager: manager || 'unknown', operation: 'Apply', subresource: options.subresource})
  let merged: unknown
  try {
    merged = merge(liveObject, applied, type) ?? {}
  } catch (error) {
    throw plainError(`failed to merge config: ${(error as Error).message}`)
  }
  const lastSet = managed.fields.get(id)?.set
  let set = toFieldSet(applied, type)
  if (ignored) set = set.recursiveDifference(ignored)
  managed.fields.set(id, {set, apiVersion: options.apiVersion, applied: true})
  const next = prune(merged, schema, managed, lastSet)

  let outcome
  try {
    outcome = updateOwnership(liveObject, next, schema, managed, id, options.force === true, ignored)
  } catch (error) {
    throw plainError(`failed to compare objects: ${(error as Error).message}`)
  }
  if (options.force !== true && outcome.conflicts.size > 0) return {conflicts: conflictList(outcome.conflicts)}
  stripMeta(managed, id)

  const result = dropNulls(isPlainObject(next) ? next : {}, type) as AnyObject
  const changed = !valuesEqual(dropNulls(liveObject, type), result)
  // managedFieldsUpdater stamps an applier that keeps an entry, whether or not the object changed;
  // IgnoreManagedFieldsTimestampsTransformer then keeps the stored entries when nothing but their
  // times would change, so that a repeated apply writes nothing
  if (managed.fields.has(id)) managed.times.set(id, formatTime(options.now))
  let managedFields = encodeManagedFields(managed)
  const liveEntries = live?.metadata?.managedFields
  if (!changed && Array.isArray(liveEntries) && sameEntriesButTimes(liveEntries as ManagedFieldsEntry[], managedFields)) {
    managedFields = liveEntries as ManagedFieldsEntry[]
  }
  return {object: withManagedFields(changed ? result : liveObject, managedFields), managedFields, changed}
}

/** the same entries (in any order), times aside */
function sameEntriesButTimes(stored: readonly ManagedFieldsEntry[], next: readonly ManagedFieldsEntry[]): boolean {
  if (stored.length !== next.length) return false
  const withoutTime = (entry: ManagedFieldsEntry) => JSON.stringify({...entry, time: undefined})
  const remaining = new Set(stored.map(withoutTime))
  return remaining.size === stored.length && next.every((entry) => remaining.has(withoutTime(entry)))
}

