// ServiceCIDR (networking.orch.io/v1): Kubernetes' ValidateServiceCIDR / ValidateServiceCIDRUpdate.
//   - spec.cidrs: at least one (`Required value: at least one CIDR required`), at most two
//     (`may only hold up to 2 values`), two only when one is IPv4 and the other IPv6, each a CIDR in
//     canonical form (IsValidCIDR);
//   - immutable, as document 2 says: `spec.cidrs: Invalid value: [...]: field is immutable` (current
//     Kubernetes lets a single-stack ServiceCIDR gain a second family; document 2 does not);
//   - /status: Kubernetes' ValidateServiceCIDRStatusUpdate (1.32) checks only the metadata (done for
//     every kind), not status.conditions: a condition of any shape is stored (the controllers write
//     Ready with an empty reason).
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {invalid, required} from '../../machinery/field-errors.js'
import {isValidCIDR, parseCIDR} from '../../machinery/validation.js'
import {immutable, list, obj, str, type KindValidator} from './common.js'

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

export function validateServiceCIDRStatusUpdate(): FieldError[] {
  return []
}

export const serviceCIDRValidator: KindValidator = {
  create: (object) => validateServiceCIDR(object),
  update(object: AnyObject, old: AnyObject, context: RequestContext) {
    if (context.subresource === 'status') return validateServiceCIDRStatusUpdate()
    if (context.subresource) return []
    return validateServiceCIDRUpdate(object, old)
  },
}
