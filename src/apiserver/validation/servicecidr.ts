// ServiceCIDR (networking.orch.io/v1): Kubernetes' ValidateServiceCIDR / ValidateServiceCIDRUpdate.
//   - spec.cidrs: at least one (`Required value: at least one CIDR required`), at most two
//     (`may only hold up to 2 values`), two only when one is IPv4 and the other IPv6, each a CIDR in
//     canonical form (IsValidCIDR);
//   - immutable, as document 2 says: `spec.cidrs: Invalid value: [...]: field is immutable` (current
//     Kubernetes lets a single-stack ServiceCIDR gain a second family; document 2 does not);
//   - /status: status.conditions have the shared Condition shape of document 1 (type, status,
//     lastTransitionTime and a non-empty reason required). Document 2 gives ServiceCIDR's conditions
//     that shape, not one of the per-resource variants with optional fields, so they are checked with
//     metav1validation.ValidateConditions (./conditions.ts) as Kubernetes checks other metav1.Condition
//     lists; Kubernetes' own ValidateServiceCIDRStatusUpdate checks only metadata.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {invalid, required} from '../../machinery/field-errors.js'
import {isValidCIDR, parseCIDR} from '../../machinery/validation.js'
import {immutable, list, obj, str, type KindValidator} from './common.js'
import {validateConditions} from './conditions.js'

export function validateServiceCIDR(object: AnyObject): FieldError[] {
  const path = 'spec.cidrs'
  const spec = obj(object.spec)
  const cidrs = list(spec.cidrs).map(str)
  if (cidrs.length === 0) return [required(path, 'at least one CIDR required')]
  if (cidrs.length > 2) return [invalid(path, spec, 'may only hold up to 2 values')]
  if (cidrs.length === 2) {
    const families = cidrs.map((c) => parseCIDR(c)?.family ?? null)
    if (families.includes(null) || families[0] === families[1]) {
      return [invalid(path, spec, 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64')]
    }
  }
  return cidrs.flatMap((cidr, i) => isValidCIDR(cidr).map((msg) => invalid(`${path}[${i}]`, cidr, msg)))
}

export function validateServiceCIDRUpdate(object: AnyObject, old: AnyObject): FieldError[] {
  return immutable(obj(object.spec).cidrs, obj(old.spec).cidrs, 'spec.cidrs')
}

export function validateServiceCIDRStatusUpdate(object: AnyObject): FieldError[] {
  return validateConditions(obj(object.status).conditions, 'status.conditions')
}

export const serviceCIDRValidator: KindValidator = {
  create: (object) => validateServiceCIDR(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    if (context.subresource === 'status') return validateServiceCIDRStatusUpdate(object)
    if (context.subresource) return []
    return validateServiceCIDRUpdate(object, old)
  },
}
