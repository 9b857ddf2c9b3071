// Kubernetes' admission.NewForbidden: a 403 naming the resource (group-qualified) and the object,
// the name taken from the request or, on a create, from the object.
import {ApiError} from '../machinery/status.js'
import type {AdmissionAttributes} from './types.js'

export function admissionForbidden(attributes: AdmissionAttributes, message: string): ApiError {
  const {group, resource} = attributes.resource
  const qualified = group ? `${resource}.${group}` : resource
  const name = attributes.name || attributes.object?.metadata?.name || ''
  return new ApiError(403, 'Forbidden', `${qualified}${name ? ` "${name}"` : ''} is forbidden: ${message}`, {
    name: name || undefined,
    group: group || undefined,
    kind: resource,
  })
}
