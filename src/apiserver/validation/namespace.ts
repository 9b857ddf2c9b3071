// Namespace (v1): Kubernetes' ValidateNamespace / ...FinalizeUpdate / ...StatusUpdate, document 2.
//   - spec.finalizers: qualified names; a name without a domain must be a standard one (`orch`,
//     `orphan`, `foregroundDeletion`). On create Kubernetes reports them at `spec.finalizers`, on
//     /finalize at `spec.finalizers[i]`;
//   - status.phase is `Active` or `Terminating` (on create, where Kubernetes would overwrite it);
//     on /status it must be `Active` without a deletionTimestamp and `Terminating` with one, reported
//     at Kubernetes' `status.Phase`.
// An update of the main resource cannot change spec or status (Kubernetes keeps the stored ones), so
// it has nothing to check here.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {invalid, notSupported} from '../../machinery/field-errors.js'
import {isQualifiedName} from '../../machinery/validation.js'
import {list, obj, str, type KindValidator} from './common.js'

export const NAMESPACE_PHASES = ['Active', 'Terminating'] as const
/** Finalizer names that need no domain (Kubernetes' `kubernetes`, `orphan`, `foregroundDeletion`). */
export const STANDARD_FINALIZERS = ['orch', 'orphan', 'foregroundDeletion'] as const

/** validateFinalizerName: a qualified name, and a standard one when it has no domain prefix. */
export function validateFinalizerName(name: string, path: string): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg))
  if (!name.includes('/') && !(STANDARD_FINALIZERS as readonly string[]).includes(name)) {
    errs.push(invalid(path, name, 'name is neither a standard finalizer name nor is it fully qualified'))
  }
  return errs
}

export function validateNamespace(ns: AnyObject): FieldError[] {
  const errs = list(obj(ns.spec).finalizers).flatMap((f) => validateFinalizerName(str(f), 'spec.finalizers'))
  const phase = obj(ns.status).phase
  if (phase != null && !(NAMESPACE_PHASES as readonly string[]).includes(str(phase))) {
    errs.push(notSupported('status.phase', phase, NAMESPACE_PHASES))
  }
  return errs
}

export function validateNamespaceFinalizeUpdate(ns: AnyObject): FieldError[] {
  return list(obj(ns.spec).finalizers).flatMap((f, i) => validateFinalizerName(str(f), `spec.finalizers[${i}]`))
}

export function validateNamespaceStatusUpdate(ns: AnyObject): FieldError[] {
  const phase = str(obj(ns.status).phase)
  if (!obj(ns.metadata).deletionTimestamp) {
    return phase === 'Active' ? [] : [invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")]
  }
  return phase === 'Terminating' ? [] : [invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
}

export const namespaceValidator: KindValidator = {
  create: (object) => validateNamespace(object),
  update(object: AnyObject, _old: AnyObject, context: RequestContext) {
    if (context.subresource === 'finalize') return validateNamespaceFinalizeUpdate(object)
    if (context.subresource === 'status') return validateNamespaceStatusUpdate(object)
    return []
  },
}
