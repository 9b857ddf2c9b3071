// Kubernetes' admission.NewForbidden: a 403 naming the resource (group-qualified) and the object,
// the name taken from the request or, on a create, from the object (its generateName, else "Unknown").
import {ApiError} from '../machinery/status.js'
import type {AdmissionAttributes} from './types.js'

export function admissionForbidden(attributes: AdmissionAttributes, message: string): ApiError {
  const {group, resource} = attributes.resource
  const qualified = group ? `${resource}.${group}` : resource
  // extractResourceName: the request's name, the object's, its generateName, else "Unknown"
  const name = attributes.name || attributes.object?.metadata?.name || attributes.object?.metadata?.generateName || 'Unknown'
  return new ApiError(403, 'Forbidden', `${qualified} "${name}" is forbidden: ${message}`, {
    name,
    group: group || undefined,
    kind: resource,
  })
}
