// Generic ObjectMeta validation every kind gets (ValidateObjectMeta / ValidateObjectMetaUpdate).
import type {AnyObject, FieldError, KindDeclaration} from '../api/types.js'
import {FOREGROUND_FINALIZER, ORPHAN_FINALIZER} from '../machinery/deletion-propagation.js'
import {
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
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) {
    errs.push({type: 'FieldValueInvalid', field: 'metadata.finalizers', value: meta.finalizers, message: 'must be a list of strings'})
  } else if (meta.finalizers?.includes(ORPHAN_FINALIZER) && meta.finalizers.includes(FOREGROUND_FINALIZER)) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'metadata.finalizers',
      value: meta.finalizers,
      message: `finalizer ${ORPHAN_FINALIZER} and ${FOREGROUND_FINALIZER} cannot be both set`,
    })
  }
  if (options.old && options.old.metadata?.deletionTimestamp) {
    // no new finalizers once deletion started
    const before = new Set<string>(options.old.metadata.finalizers ?? [])
    for (const f of meta.finalizers ?? []) {
      if (!before.has(f)) {
        errs.push({type: 'FieldValueForbidden', field: 'metadata.finalizers', message: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${JSON.stringify(f)}}`})
      }
    }
  }
  return errs
}
