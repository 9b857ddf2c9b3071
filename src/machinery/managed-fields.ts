// metadata.managedFields as Kubernetes keeps them (k8s.io/apimachinery/pkg/util/managedfields): who
// owns which fields, recorded per (manager, operation, apiVersion, subresource), in the `fieldsV1`
// format, and brought up to date on every create, update and patch (operation Update). Server-side
// apply (operation Apply) is in apply.ts and builds on the pieces here.
//
// Not modelled: conversion between API versions (every entry is compared at the request's version),
// schema changes between atomic and granular. (An apply by `kubectl` keeps the client-side apply
// annotation in step: src/apiserver/last-applied.ts.)
import type {AnyObject, ObjectSchema} from '../api/types.js'
import {FieldSet, type FieldPath, compareStrings, fieldElement, goQuote} from './field-path.js'
import {type Comparison, compare, isPlainObject, objectSchema, withGoZeroValues} from './typed-value.js'

export interface ManagedFieldsEntry {
  manager?: string
  operation?: 'Apply' | 'Update' | string
  apiVersion?: string
  /** RFC 3339, seconds */
  time?: string
  fieldsType?: string
  fieldsV1?: Record<string, unknown>
  subresource?: string
}

export interface VersionedSet {
  set: FieldSet
  apiVersion: string
  applied: boolean
}

/** The decoded form: sets by manager identifier (the JSON of manager, operation, apiVersion for
 *  updaters, subresource), and the time of each manager's last change. */
export interface Managed {
  fields: Map<string, VersionedSet>
  times: Map<string, string | undefined>
}

export interface ManagerInfo {
  manager: string
  operation: 'Apply' | 'Update'
  apiVersion?: string
  subresource?: string
}

/** Paths of fields the request may not set (a strategy's reset fields): not tracked, never conflicting. */
export type IgnoredFields = readonly (readonly string[])[]

export const MAX_UPDATE_MANAGERS = 10

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export function formatTime(date: Date): string {
  // every write stamps a time, and most writes in a busy second share it
  const second = Math.floor(date.getTime() / 1000)
  if (second !== lastFormatted.second) {
    lastFormatted.second = second
    lastFormatted.text = date.toISOString().replace(/\.\d+Z$/, 'Z')
  }
  return lastFormatted.text
}
const lastFormatted = {second: NaN, text: ''}

/** metav1.MicroTime: RFC 3339 in UTC with microseconds (a JavaScript Date holds milliseconds). */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z')
}

/** BuildManagerIdentifier: appliers are identified without their apiVersion. */
export function managerIdentifier(info: ManagerInfo): string {
  const id: Record<string, string> = {manager: info.manager, operation: info.operation}
  if (info.operation !== 'Apply' && info.apiVersion) id.apiVersion = info.apiVersion
  if (info.subresource) id.subresource = info.subresource
  return JSON.stringify(id)
}

/** Identifiers parsed so far (a server sees few managers); callers copy what they keep. */
const parsedIdentifiers = new Map<string, Readonly<ManagedFieldsEntry>>()

function parseIdentifier(id: string): Readonly<ManagedFieldsEntry> {
  let parsed = parsedIdentifiers.get(id)
  if (!parsed) {
    if (parsedIdentifiers.size >= 1_000) parsedIdentifiers.clear()
    parsed = parseIdentifierText(id)
    parsedIdentifiers.set(id, parsed)
  }
  return parsed
}

function parseIdentifierText(id: string): ManagedFieldsEntry {
  try {
    const parsed: unknown = JSON.parse(id)
    if (isPlainObject(parsed)) return parsed as ManagedFieldsEntry
  } catch {
    // fall through
  }
  return {manager: id}
}

/** How conflict messages name a manager: `"kubectl" using apps/v1`, `"kubectl" with subresource "status"`. */
export function describeManager(id: string): string {
  const entry = parseIdentifier(id)
  let out = goQuote(entry.manager ?? '')
  if (entry.subresource) out += ` with subresource ${goQuote(entry.subresource)}`
  if (entry.operation === 'Update') out += ` using ${entry.apiVersion ?? ''}`
  return out
}

export function emptyManaged(): Managed {
  return {fields: new Map(), times: new Map()}
}

/** DecodeManagedFields; throws with Kubernetes' wording when an entry is malformed. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged()
  if (entries === undefined || entries === null) return managed
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list')
  for (const [i, raw] of entries.entries()) {
    const entry = (isPlainObject(raw) ? raw : {}) as ManagedFieldsEntry
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`')
    if (!entry.apiVersion) throw new Error('apiVersion must not be empty')
    if (entry.fieldsType === undefined || entry.fieldsType === '') throw new Error(`missing fieldsType in managed fields entry ${i}`)
    if (entry.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${goQuote(String(entry.fieldsType))} in managed fields entry ${i}`)
    const id = managerIdentifier({
      manager: entry.manager ?? '',
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      subresource: entry.subresource,
    })
    let set: FieldSet
    try {
      set = FieldSet.fromFieldsV1(entry.fieldsV1 ?? {})
    } catch (error) {
      throw new Error(`error decoding versioned set from ${JSON.stringify(raw)}: error decoding set: ${(error as Error).message}`)
    }
    managed.fields.set(id, {set, apiVersion: entry.apiVersion, applied: entry.operation === 'Apply'})
    managed.times.set(id, entry.time)
  }
  return managed
}

function seconds(time: string | undefined): number {
  if (!time) return 0
  const ms = Date.parse(time)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}

/** encodeManagedFields: one entry per manager, Apply before Update, then oldest first. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = []
  for (const [id, versioned] of managed.fields) {
    const info = parseIdentifier(id)
    const entry: ManagedFieldsEntry = {}
    if (info.manager) entry.manager = info.manager
    entry.operation = versioned.applied ? 'Apply' : (info.operation ?? 'Update')
    entry.apiVersion = versioned.apiVersion
    const time = managed.times.get(id)
    if (time) entry.time = time
    entry.fieldsType = 'FieldsV1'
    entry.fieldsV1 = versioned.set.toFieldsV1()
    if (info.subresource) entry.subresource = info.subresource
    entries.push(entry)
  }
  return entries.sort(
    (p, q) =>
      compareStrings(p.operation ?? '', q.operation ?? '') ||
      seconds(p.time) - seconds(q.time) ||
      compareStrings(p.manager ?? '', q.manager ?? '') ||
      compareStrings(p.apiVersion ?? '', q.apiVersion ?? '') ||
      compareStrings(p.subresource ?? '', q.subresource ?? ''),
  )
}

// ---------- the pieces of an update ----------

/** stripMetaManager: fields no manager ever owns. */
const stripSet = FieldSet.of(
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (name): FieldPath => [fieldElement('metadata'), fieldElement(name)],
  ),
)

export function stripMeta(managed: Managed, id: string): void {
  const versioned = managed.fields.get(id)
  if (!versioned) return
  const set = versioned.set.difference(stripSet)
  if (set.isEmpty()) managed.fields.delete(id)
  else managed.fields.set(id, {...versioned, set})
}

export function ignoredSet(ignored: IgnoredFields | undefined): FieldSet | undefined {
  if (!ignored || ignored.length === 0) return undefined
  return FieldSet.of(...ignored.map((path) => path.map(fieldElement)))
}

function filterComparison(comparison: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored) return comparison
  return {
    added: comparison.added.recursiveDifference(ignored),
    modified: comparison.modified.recursiveDifference(ignored),
    removed: comparison.removed.recursiveDifference(ignored),
  }
}

/** the object without metadata.managedFields */
export function withoutManagedFields(object: AnyObject | undefined): AnyObject {
  if (!object) return {}
  if (!isPlainObject(object.metadata) || !('managedFields' in object.metadata)) return object
  const metadata = {...object.metadata}
  delete metadata.managedFields
  return {...object, metadata}
}

export interface UpdateOutcome {
  comparison: Comparison
  /** per manager identifier: the fields it owns that this change modifies */
  conflicts: Map<string, FieldSet>
}

/**
 * Updater.update: compares live and next; every other manager loses the fields it owned that changed
 * (when forced; otherwise they are returned as conflicts and nothing changes) and the fields removed.
 * Managers left without fields are dropped.
 */
export function updateOwnership(
  live: unknown,
  next: unknown,
  schema: ObjectSchema,
  managed: Managed,
  workflow: string,
  force: boolean,
  ignored: FieldSet | undefined,
): UpdateOutcome {
  const comparison = filterComparison(compare(live, next, objectSchema(schema)), ignored)
  const changed = comparison.modified.union(comparison.added)
  const conflicts = new Map<string, FieldSet>()
  for (const [id, versioned] of managed.fields) {
    if (id === workflow) continue
    const conflict = versioned.set.intersection(changed)
    if (!conflict.isEmpty()) conflicts.set(id, conflict)
  }
  if (!force && conflicts.size > 0) return {comparison, conflicts}
  for (const [id, versioned] of managed.fields) {
    if (id === workflow) continue
    let set = versioned.set
    const conflict = conflicts.get(id)
    if (conflict) set = set.difference(conflict)
    if (!comparison.removed.isEmpty()) set = set.difference(comparison.removed)
    managed.fields.set(id, {...versioned, set})
  }
  for (const [id, versioned] of managed.fields) if (versioned.set.isEmpty()) managed.fields.delete(id)
  return {comparison, conflicts}
}

const CURRENT_OPERATION = 'current-operation'

/** The live and new objects as Kubernetes compares them: Go-encoded, managedFields left out. */
function comparable(object: AnyObject | undefined, schema: ObjectSchema): unknown {
  return withGoZeroValues(withoutManagedFields(object), objectSchema(schema))
}

/**
 * managedFieldsUpdater + stripMetaManager + structured Update: the manager gains every field the
 * change modified or added, keeps what it owned before, and is stamped with `now` when it changed
 * anything. Mutates managed.
 */
export function recordUpdate(
  live: AnyObject | undefined,
  next: AnyObject,
  schema: ObjectSchema,
  managed: Managed,
  info: ManagerInfo,
  now: Date,
  ignored: FieldSet | undefined,
): void {
  const {comparison} = updateOwnership(comparable(live, schema), comparable(next, schema), schema, managed, CURRENT_OPERATION, true, ignored)
  let set = comparison.modified.union(comparison.added)
  if (ignored) set = set.recursiveDifference(ignored)
  managed.fields.set(CURRENT_OPERATION, {set, apiVersion: info.apiVersion ?? '', applied: false})
  stripMeta(managed, CURRENT_OPERATION)
  const current = managed.fields.get(CURRENT_OPERATION)
  managed.fields.delete(CURRENT_OPERATION)
  if (!current || current.set.isEmpty()) return
  const id = managerIdentifier({...info, manager: info.manager || 'unknown'})
  const previous = managed.fields.get(id)
  managed.fields.set(id, {set: previous ? current.set.union(previous.set) : current.set, apiVersion: current.apiVersion, applied: false})
  managed.times.set(id, formatTime(now))
}

/** capManagersManager: past ten updaters, the oldest are merged into "ancient-changes" per apiVersion. */
export function capUpdateManagers(managed: Managed, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.fields].filter(([, v]) => !v.applied).map(([id]) => id)
  if (updaters.length <= max) return
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || compareStrings(a, b))
  const firstByVersion = new Map<string, string>()
  let length = updaters.length
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]
    const versioned = managed.fields.get(id)
    if (!versioned) continue
    const time = managed.times.get(id)
    const bucket = managerIdentifier({manager: 'ancient-changes', operation: 'Update', apiVersion: versioned.apiVersion})
    const first = firstByVersion.get(versioned.apiVersion)
    if (first === undefined) {
      firstByVersion.set(versioned.apiVersion, id)
      continue
    }
    if (!managed.fields.has(bucket)) {
      const firstSet = managed.fields.get(first)
      managed.fields.delete(first)
      if (firstSet) managed.fields.set(bucket, firstSet)
    }
    const existing = managed.fields.get(bucket)
    managed.fields.set(bucket, {set: existing ? versioned.set.union(existing.set) : versioned.set, apiVersion: versioned.apiVersion, applied: false})
    managed.fields.delete(id)
    length--
    managed.times.set(bucket, time)
  }
  for (const id of [...managed.times.keys()]) if (!managed.fields.has(id)) managed.times.delete(id)
}

function isReset(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false
  if (entries.length === 0) return true
  return entries.length === 1 && isPlainObject(entries[0]) && Object.keys(entries[0]).length === 0
}

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries)
  } catch {
    return emptyManaged()
  }
}

/** The object with these managedFields (none: the field is left out, as Kubernetes encodes nil). */
export function withManagedFields(object: AnyObject, entries: ManagedFieldsEntry[]): AnyObject {
  const metadata: Record<string, any> = {...(isPlainObject(object.metadata) ? object.metadata : {})}
  if (entries.length > 0) metadata.managedFields = entries
  else delete metadata.managedFields
  return {...object, metadata}
}

export interface UpdateManagedFieldsOptions {
  now: Date
  /** group/version the request was made at, e.g. apps/v1 */
  apiVersion: string
  subresource?: string
  /** only 'Update': server-side apply records its entries through apply() */
  operation?: 'Update'
  ignoredFields?: IgnoredFields
}

/**
 * FieldManager.UpdateNoErrors for create, update and non-apply patch: `updated` is the object about
 * to be stored (after defaulting), `old` the stored one (undefined on create). The managedFields the
 * request carries are honoured on the main resource (an empty list resets them); otherwise the stored
 * ones are the starting point. An existing object that has no managedFields keeps having none.
 * Returns the object with its new managedFields, and those entries.
 */
export function updateManagedFields(
  old: AnyObject | undefined,
  updated: AnyObject,
  schema: ObjectSchema,
  manager: string,
  options: UpdateManagedFieldsOptions,
): {object: AnyObject; managedFields: ManagedFieldsEntry[]} {
  const liveEntries = old?.metadata?.managedFields
  try {
    let managed: Managed
    const requested = updated.metadata?.managedFields
    if (options.subresource) managed = decodeOrEmpty(liveEntries)
    else if (isReset(requested)) managed = emptyManaged()
    else {
      managed = decodeOrEmpty(requested)
      if (managed.fields.size === 0) managed = decodeOrEmpty(liveEntries)
    }
    const next = withoutManagedFields(updated)
    if (managed.fields.size === 0 && old?.metadata?.uid) return {object: next, managedFields: []}
    const info: ManagerInfo = {manager: manager || 'unknown', operation: 'Update', apiVersion: options.apiVersion, subresource: options.subresource}
    recordUpdate(old, next, schema, managed, info, options.now, ignoredSet(options.ignoredFields))
    capUpdateManagers(managed)
    const entries = encodeManagedFields(managed)
    return {object: withManagedFields(next, entries), managedFields: entries}
  } catch {
    // UpdateNoErrors: keep the stored managedFields rather than fail the write
    const entries = Array.isArray(liveEntries) ? (liveEntries as ManagedFieldsEntry[]) : []
    return {object: withManagedFields(updated, entries), managedFields: entries}
  }
}

/** The usual reset fields: a kind with a status subresource ignores status on the main resource and
 *  spec on /status (Kubernetes' strategies may reset more, e.g. some metadata on /status). */
export function resetFields(declaration: {hasStatus?: boolean}, subresource?: string): IgnoredFields {
  if (!declaration.hasStatus) return []
  if (!subresource) return [['status']]
  if (subresource === 'status') return [['spec']]
  return []
}
