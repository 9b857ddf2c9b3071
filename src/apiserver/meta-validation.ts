// Generic ObjectMeta validation every kind gets (ValidateObjectMeta / ValidateObjectMetaUpdate).
import type {AnyObject, FieldError, KindDeclaration, Schema} from '../api/types.js'
import {listItemElement, listRelationship, structFields} from '../machinery/typed-value.js'
import {FOREGROUND_FINALIZER, ORPHAN_FINALIZER} from '../machinery/deletion-propagation.js'
import {
  isQualifiedName,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateLabels,
  validateNameFields,
  type ValidateNameFunc,
} from '../machinery/validation.js'

function pathSegmentName(name: string, prefix = false): string[] {
  if (prefix) return []
  if (name === '.' || name === '..') return [`may not be '${name}'`]
  const bad = ['/', '%'].filter((c) => name.includes(c))
  return bad.map((c) => `may not contain '${c}'`)
}

const nameRules: Record<NonNullable<KindDeclaration['nameRule']>, ValidateNameFunc> = {
  subdomain: nameIsDNSSubdomain,
  label: nameIsDNSLabel,
  'path-segment': pathSegmentName,
}

export function validateObjectMeta(
  object: AnyObject,
  declaration: KindDeclaration,
  options: {creating: boolean; old?: AnyObject},
): FieldError[] {
  const meta = object.metadata ?? {}
  const errs: FieldError[] = []
  if (options.creating) {
    errs.push(...validateNameFields(meta, nameRules[declaration.nameRule ?? 'subdomain']))
  }
  if (declaration.namespaced && !meta.namespace) {
    errs.push({type: 'FieldValueRequired', field: 'metadata.namespace', message: ''})
  }
  errs.push(...(validateLabels(meta.labels, 'metadata.labels') as FieldError[]))
  errs.push(...(validateAnnotations(meta.annotations, 'metadata.annotations') as FieldError[]))
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push({type: 'FieldValueInvalid', field: 'metadata.generation', value: meta.generation, message: 'must be greater than or equal to 0'})
  }
  if (Array.isArray(meta.ownerReferences)) errs.push(...validateOwnerReferences(meta.ownerReferences))
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) {
    errs.push({type: 'FieldValueInvalid', field: 'metadata.finalizers', value: meta.finalizers, message: 'must be a list of strings'})
  } else if (Array.isArray(meta.finalizers)) {
    // ValidateFinalizerName: each a qualified name
    for (const finalizer of meta.finalizers as unknown[]) {
      for (const message of isQualifiedName(String(finalizer))) errs.push({type: 'FieldValueInvalid', field: 'metadata.finalizers', value: finalizer, message})
    }
  }
  if (Array.isArray(meta.finalizers) && meta.finalizers.includes(ORPHAN_FINALIZER) && meta.finalizers.includes(FOREGROUND_FINALIZER)) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'metadata.finalizers',
      value: meta.finalizers,
      message: `finalizer ${ORPHAN_FINALIZER} and ${FOREGROUND_FINALIZER} cannot be both set`,
    })
  }
  // ValidateObjectMetaUpdate: a uid may not change (a PUT's is a precondition, checked before)
  if (options.old && meta.uid !== options.old.metadata?.uid) {
    errs.push({type: 'FieldValueInvalid', field: 'metadata.uid', value: meta.uid, message: 'field is immutable'})
  }
  if (options.old && options.old.metadata?.deletionTimestamp) {
    // no new finalizers once deletion started
    const before = new Set<string>(options.old.metadata.finalizers ?? [])
    for (const f of Array.isArray(meta.finalizers) ? meta.finalizers : []) {
      if (!before.has(f)) {
        errs.push({type: 'FieldValueForbidden', field: 'metadata.finalizers', message: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${JSON.stringify(f)}}`})
      }
    }
  }
  return errs
}

/** Kubernetes' ValidateOwnerReferences: apiVersion (with a version), kind, name and uid set, an Event
 *  never an owner, at most one controller. Errors name metadata.ownerReferences, not the element. */
function validateOwnerReferences(references: unknown[]): FieldError[] {
  const field = 'metadata.ownerReferences'
  const errs: FieldError[] = []
  let firstController = ''
  for (const item of references) {
    const ref = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : ''
    const kind = typeof ref.kind === 'string' ? ref.kind : ''
    const name = typeof ref.name === 'string' ? ref.name : ''
    const uid = typeof ref.uid === 'string' ? ref.uid : ''
    // schema.FromAPIVersionAndKind: "v1" is the core group's, "g/v" a group's; more slashes parse to nothing
    const slashes = apiVersion.split('/').length - 1
    const [group, version] = apiVersion === '' || apiVersion === '/' || slashes > 1 ? ['', ''] : slashes === 0 ? ['', apiVersion] : apiVersion.split('/')
    if (!version) errs.push({type: 'FieldValueInvalid', field: `${field}.apiVersion`, value: apiVersion, message: 'version must not be empty'})
    if (!kind) errs.push({type: 'FieldValueInvalid', field: `${field}.kind`, value: kind, message: 'must not be empty'})
    if (!name) errs.push({type: 'FieldValueInvalid', field: `${field}.name`, value: name, message: 'must not be empty'})
    if (!uid) errs.push({type: 'FieldValueInvalid', field: `${field}.uid`, value: uid, message: 'must not be empty'})
    if (group === '' && version === 'v1' && kind === 'Event') {
      errs.push({type: 'FieldValueInvalid', field, value: ref, message: '/v1, Kind=Event is disallowed from being an owner'})
    }
    if (ref.controller === true) {
      const current = `${kind}/${name}`
      if (firstController) {
        errs.push({type: 'FieldValueInvalid', field, value: references, message: `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`})
      } else firstController = current
    }
  }
  return errs
}

const keyedListWithin = new WeakMap<Schema, boolean>()

/** Whether a value of this schema can hold a list with keys (remembered per schema; the walk below
 *  skips the rest, e.g. a ConfigMap's data, on every write). */
function holdsKeyedList(schema: Schema): boolean {
  let known = keyedListWithin.get(schema)
  if (known !== undefined) return known
  keyedListWithin.set(schema, false) // a schema that refers back to itself adds nothing new
  if (schema.type === 'object') known = [...structFields(schema).values()].some(holdsKeyedList)
  else if (schema.type === 'map') known = holdsKeyedList(schema.values)
  else if (schema.type === 'array') {
    const relationship = listRelationship(schema)
    known = (!relationship.atomic && (relationship.keys?.length ?? 0) > 0) || holdsKeyedList(schema.items)
  } else known = false
  keyedListWithin.set(schema, known)
  return known
}

/**
 * Items of the associative lists (list-map keys, or merge keys) that name none of their key fields:
 * server-side apply cannot tell them apart (structured-merge-diff: "associative list with keys has an
 * element that omits all key fields"), so once stored, every later apply to the object would fail.
 * Refused when written: `status.conditions[1].type: Required value`. Lists a kind's own validation
 * already reports on are left to it.
 */
export function validateListMapKeys(object: AnyObject, declaration: KindDeclaration, reported: readonly FieldError[] = []): FieldError[] {
  const errs: FieldError[] = []
  // the kind's validation said something about this list already (`spec.containers[0].name`)
  const reportedUnder = (path: string) => reported.some((e) => e.field === path || e.field.startsWith(`${path}.`) || e.field.startsWith(`${path}[`))
  const walk = (value: unknown, schema: Schema | undefined, path: string): void => {
    if (value === null || typeof value !== 'object' || !schema || !holdsKeyedList(schema)) return
    if (schema.type === 'object' && !Array.isArray(value)) {
      const fields = structFields(schema)
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) walk(child, fields.get(key), path ? `${path}.${key}` : key)
    } else if (schema.type === 'map' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) walk(child, schema.values, `${path}[${key}]`)
    } else if (schema.type === 'array' && Array.isArray(value)) {
      const relationship = listRelationship(schema)
      const atom = {kind: 'list' as const, elem: schema.items, ...relationship}
      value.forEach((item, i) => {
        const itemPath = `${path}[${i}]`
        if (!relationship.atomic && relationship.keys && relationship.keys.length > 0 && typeof listItemElement(atom, item) === 'string') {
          if (!reportedUnder(path)) errs.push({type: 'FieldValueRequired', field: `${itemPath}.${relationship.keys[0]}`, message: ''})
          return
        }
        walk(item, schema.items, itemPath)
      })
    }
  }
  walk(object, declaration.schema, '')
  return errs
}
