// Event (core v1): Kubernetes' ValidateEventCreate / ValidateEventUpdate for a request to the core v1
// API, which is legacyValidateEvent alone on create and update (the stricter events.k8s.io rules are
// not applied to core v1 writes, for backwards compatibility).
//   - without eventTime (an old-style event), involvedObject.namespace equals the event's namespace,
//     or is empty when the event is in `default` (or in no namespace);
//   - with eventTime: an involved object without a namespace is only allowed for events in `default`
//     or the system namespace (Kubernetes' kube-system, orch's orch-system); reportingComponent
//     (reportingController in events.k8s.io, named as core v1 names it) is required and a qualified
//     name; reportingInstance, action and reason are required and at most 128 bytes; message is at
//     most 1024 bytes;
//   - the event's namespace is a DNS-1123 subdomain (reported at the path `namespace`).
import type {AnyObject, FieldError} from '../../api/types.js'
import {byteLength, invalid, required} from '../../machinery/field-errors.js'
import {isDNS1123Subdomain, isQualifiedName} from '../../machinery/validation.js'
import {isZeroTime, obj, str, type KindValidator} from './common.js'

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128
export const ACTION_LENGTH_LIMIT = 128
export const REASON_LENGTH_LIMIT = 128
export const NOTE_LENGTH_LIMIT = 1024

/** metav1.NamespaceDefault and metav1.NamespaceSystem, as orch names the system namespace. */
const NAMESPACE_DEFAULT = 'default'
const NAMESPACE_SYSTEM = 'orch-system'

const namespaceMismatch = 'does not match event.namespace'

function atMost(path: string, value: string, limit: number): FieldError[] {
  return byteLength(value) > limit ? [invalid(path, '', `can have at most ${limit} characters`)] : []
}

function requiredAndAtMost(path: string, value: string, limit: number): FieldError[] {
  return [...(value === '' ? [required(path)] : []), ...atMost(path, value, limit)]
}

/** legacyValidateEvent, for a request to the core v1 API. */
export function validateEvent(event: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const namespace = str(event.metadata?.namespace)
  const involvedNamespace = str(obj(event.involvedObject).namespace)
  if (isZeroTime(event.eventTime)) {
    const matches = involvedNamespace === '' ? namespace === '' || namespace === NAMESPACE_DEFAULT : namespace === involvedNamespace
    if (!matches) errs.push(invalid('involvedObject.namespace', involvedNamespace, namespaceMismatch))
  } else {
    if (involvedNamespace === '' && namespace !== NAMESPACE_DEFAULT && namespace !== NAMESPACE_SYSTEM) {
      errs.push(invalid('involvedObject.namespace', involvedNamespace, namespaceMismatch))
    }
    const reportingComponent = str(event.reportingComponent)
    if (reportingComponent === '') errs.push(required('reportingComponent'))
    for (const msg of isQualifiedName(reportingComponent)) errs.push(invalid('reportingComponent', reportingComponent, msg))
    errs.push(...requiredAndAtMost('reportingInstance', str(event.reportingInstance), REPORTING_INSTANCE_LENGTH_LIMIT))
    errs.push(...requiredAndAtMost('action', str(event.action), ACTION_LENGTH_LIMIT))
    errs.push(...requiredAndAtMost('reason', str(event.reason), REASON_LENGTH_LIMIT))
    errs.push(...atMost('message', str(event.message), NOTE_LENGTH_LIMIT))
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(invalid('namespace', namespace, msg))
  return errs
}

export const eventValidator: KindValidator = {
  create: (object) => validateEvent(object),
  update: (object) => validateEvent(object),
}
