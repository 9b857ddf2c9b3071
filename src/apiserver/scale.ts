// The scale subresource (autoscaling/v1 Scale) of kinds with spec.replicas, spec.selector and
// status.replicas, as Kubernetes serves it for StatefulSets.
import {ageColumn} from '../api/columns.js'
import type {AnyObject} from '../api/types.js'
import {FieldSet, fieldElement} from '../machinery/field-path.js'
import {labelSelectorFromObject} from '../machinery/labels.js'
import {decodeManagedFields, emptyManaged, encodeManagedFields, type ManagedFieldsEntry} from '../machinery/managed-fields.js'
import {errors} from '../machinery/status.js'
import type {TableShape} from './views.js'

export const SCALE_API_VERSION = 'autoscaling/v1'
export const SCALE_KIND = {group: 'autoscaling', version: 'v1', kind: 'Scale'}

/** kubectl's scaleColumnDefinitions and printScale: NAME (not marked as the name column), DESIRED, AVAILABLE, AGE. */
export const scaleTable: TableShape = {
  nameColumn: {position: 'first', priority: 0, format: ''},
  columns: [
    {name: 'Desired', type: 'integer', description: 'replicas is the desired number of instances for the scaled object.', priority: 0, cell: (scale) => scale.spec?.replicas ?? 0},
    {name: 'Available', type: 'integer', description: 'replicas is the actual number of observed instances of the scaled object.', priority: 0, cell: (scale) => scale.status?.replicas ?? 0},
    ageColumn,
  ],
}

export function toScale(object: AnyObject): AnyObject {
  const meta = object.metadata ?? {}
  let selector = ''
  try {
    selector = labelSelectorFromObject(object.spec?.selector).toString()
  } catch {
    selector = ''
  }
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: {replicas: object.spec?.replicas ?? 0},
    status: {replicas: object.status?.replicas ?? 0, selector},
  }
}

/** Checks a Scale body and returns the replicas it asks for. */
export function replicasFromScale(scale: AnyObject, name: string): number {
  if (scale.kind !== undefined && scale.kind !== 'Scale') {
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`)
  }
  if (scale.apiVersion !== undefined && scale.apiVersion !== SCALE_API_VERSION) {
    throw errors.badRequest(`the API version in the data (${scale.apiVersion}) does not match the expected API version (${SCALE_API_VERSION})`)
  }
  if (scale.metadata?.name !== undefined && scale.metadata.name !== name) {
    throw errors.badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${name})`)
  }
  const replicas = scale.spec?.replicas ?? 0
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid({group: 'autoscaling', kind: 'Scale'}, name, [
      {type: 'FieldValueInvalid', field: 'spec.replicas', value: replicas, message: 'must be greater than or equal to 0'},
    ])
  }
  return replicas
}

/** `.spec.replicas`: the same path in the parent (a StatefulSet) and in its Scale */
const REPLICAS_PATH = [fieldElement('spec'), fieldElement('replicas')]
/** a set of its own each time: sets are not shared between entries */
const replicasSet = (): FieldSet => FieldSet.of(REPLICAS_PATH)

/**
 * Kubernetes' ScaleHandler.ToSubresource: the parent's managers that own `.spec.replicas`, each
 * owning only that in the Scale, at autoscaling/v1 — what a write to /scale is field-managed against.
 */
export function scaleManagedFields(parentEntries: unknown): ManagedFieldsEntry[] {
  const parent = decodeManagedFields(parentEntries)
  const scale = emptyManaged()
  for (const [id, versioned] of parent.fields) {
    if (!versioned.set.has(REPLICAS_PATH)) continue
    scale.fields.set(id, {set: replicasSet(), apiVersion: SCALE_API_VERSION, applied: versioned.applied})
    scale.times.set(id, parent.times.get(id))
  }
  return encodeManagedFields(scale)
}

/**
 * ScaleHandler.ToParent: the Scale's managers after a write, folded back into the parent's entries.
 * A parent manager that owned `.spec.replicas` and no longer does in the Scale loses it (its entry
 * goes when nothing is left); a manager new to it gets an entry for `.spec.replicas` at the parent's
 * version (its manager identifier keeps the `scale` subresource).
 */
export function parentManagedFields(parentEntries: unknown, scaleEntries: unknown, parentApiVersion: string): ManagedFieldsEntry[] {
  const parent = decodeManagedFields(parentEntries)
  const scale = decodeManagedFields(scaleEntries)
  const replicas = REPLICAS_PATH
  const out = emptyManaged()
  for (const [id, versioned] of parent.fields) {
    const keep = !versioned.set.has(replicas) || scale.fields.has(id)
    if (keep) {
      out.fields.set(id, versioned)
      out.times.set(id, parent.times.get(id))
      if (versioned.set.has(replicas)) scale.fields.delete(id)
      continue
    }
    const rest = versioned.set.difference(replicasSet())
    if (rest.isEmpty()) continue
    out.fields.set(id, {...versioned, set: rest})
    out.times.set(id, parent.times.get(id))
  }
  for (const [id, versioned] of scale.fields) {
    if (!versioned.set.has(replicas)) continue
    out.fields.set(id, {set: replicasSet(), apiVersion: parentApiVersion, applied: versioned.applied})
    out.times.set(id, scale.times.get(id))
  }
  return encodeManagedFields(out)
}
