// Kubernetes' admission.NewForbidden: a 403 naming the resource (group-qualified, without its
// subresource) and the object, the name taken as extractResourceName takes it.
import {errors, type ApiError} from '../machinery/status.js'
import type {AdmissionAttributes} from './types.js'

/** extractResourceName: the request's name, the object's, its generateName (names are not generated
 *  yet at admission), else "Unknown" (a deletecollection). */
export function extractResourceName(attributes: AdmissionAttributes): string {
  const object = attributes.object?.metadata
  return attributes.name || object?.name || object?.generateName || 'Unknown'
}

export function admissionForbidden(attributes: AdmissionAttributes, message: string): ApiError {
  const {group, resource} = attributes.resource
  return errors.forbidden({group, resource}, extractResourceName(attributes), message)
}
