// Lease (coordination.orch.io/v1): Kubernetes' ValidateLeaseSpec, on create and update alike.
//   - leaseDurationSeconds, when set, is greater than 0; leaseTransitions is not negative;
//   - strategy is `OldestEmulationVersion` or a domain-qualified name; preferredHolder needs a strategy;
//   - holderIdentity is free-form (Kubernetes does not check it).
import type {AnyObject, FieldError} from '../../api/types.js'
import {forbidden, invalid, notSupported} from '../../machinery/field-errors.js'
import {isQualifiedName} from '../../machinery/validation.js'
import {obj, str, type KindValidator} from './common.js'

export const LEASE_STRATEGIES = ['OldestEmulationVersion'] as const

export function validateLease(lease: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = obj(lease.spec)
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    errs.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'))
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    errs.push(invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'))
  }
  if (spec.strategy != null) {
    const strategy = str(spec.strategy)
    if (!strategy.includes('/')) {
      if (!(LEASE_STRATEGIES as readonly string[]).includes(strategy)) errs.push(notSupported('spec.strategy', strategy, LEASE_STRATEGIES))
    } else {
      errs.push(...isQualifiedName(strategy).map((msg) => invalid('spec.strategy', strategy, msg)))
    }
  }
  if (str(spec.preferredHolder) !== '' && str(spec.strategy) === '') {
    errs.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'))
  }
  return errs
}

export const leaseValidator: KindValidator = {
  create: (object) => validateLease(object),
  update: (object) => validateLease(object),
}
