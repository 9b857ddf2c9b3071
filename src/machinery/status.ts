// Errors as Kubernetes answers them: every failure is a metav1.Status with code, reason and message.
import type {FieldError} from '../api/types.js'
import {formatFieldError, formatFieldErrorBody} from './field-errors.js'

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable'
  | ''

export interface StatusCause {
  reason?: string
  message?: string
  field?: string
}

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

export interface Status {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, unknown>
  status: 'Success' | 'Failure'
  message?: string
  reason?: StatusReason
  details?: StatusDetails
  code: number
}

/** Who a message is about: the resource (plural) and group, as Kubernetes' qualifiedResource prints. */
export interface GroupResource {
  group: string
  resource: string
}

/** `configmaps`, `statefulsets.apps`: how Kubernetes prints a group resource */
export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message)
    this.name = 'ApiError'
  }

  /** the Status's ListMeta.continue: where a list whose token expired may go on from (latest state) */
  continueToken?: string

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken ? {continue: this.continueToken} : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    }
    // Go's omitempty: a Status without a reason (a webhook's denial may give none) has no field
    if (!this.reason) delete (status as Partial<Status>).reason
    if (this.details) status.details = this.details
    return status
  }
}

/** A success Status. Kubernetes leaves `code` out of the ones its registries return for deletes. */
export function successStatus(details?: StatusDetails, code?: number): Omit<Status, 'code'> & {code?: number} {
  const status: Omit<Status, 'code'> & {code?: number} = {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success'}
  if (details) status.details = details
  if (code !== undefined) status.code = code
  return status
}

export const errors = {
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  unauthorized: (message = 'Unauthorized') => new ApiError(401, 'Unauthorized', message),
  forbidden: (gr: GroupResource, name: string, reason: string) =>
    new ApiError(
      403,
      'Forbidden',
      name ? `${qualified(gr)} "${name}" is forbidden: ${reason}` : `${qualified(gr)} is forbidden: ${reason}`,
      {name: name || undefined, group: gr.group || undefined, kind: gr.resource},
    ),
  notFound: (gr: GroupResource, name: string) =>
    new ApiError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, {
      name,
      group: gr.group || undefined,
      kind: gr.resource,
    }),
  pathNotFound: (path: string) =>
    new ApiError(404, 'NotFound', `the server could not find the requested resource (path ${path})`, {}),
  alreadyExists: (gr: GroupResource, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
      name,
      group: gr.group || undefined,
      kind: gr.resource,
    }),
  conflict: (gr: GroupResource, name: string, reason: string) =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${reason}`, {
      name,
      group: gr.group || undefined,
      kind: gr.resource,
    }),
  staleResourceVersion: (gr: GroupResource, name: string) =>
    errors.conflict(gr, name, 'the object has been modified; please apply your changes to the latest version and try again'),
  gone: (message: string) => new ApiError(410, 'Gone', message),
  expired: (message: string) => new ApiError(410, 'Expired', message),
  invalid: (kind: {group: string; kind: string}, name: string, causes: FieldError[]) => {
    const rendered = causes.map(formatFieldError)
    const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`
    // the kind qualified by its group (schema.GroupKind.String()): `StatefulSet.apps "web" is invalid`
    const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind
    return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, {
      name,
      group: kind.group || undefined,
      kind: kind.kind,
      causes: causes.map((c) => ({reason: c.type, message: causeMessage(c), field: c.field})),
    })
  },
  methodNotAllowed: (message = 'the server does not allow this method on the requested resource') =>
    new ApiError(405, 'MethodNotAllowed', message),
  notAcceptable: (accepted: string[]) =>
    new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),
  /** negotiation's UnsupportedMediaTypeError, which does not name the type it was given */
  unsupportedMediaType: (_contentType: string, accepted: string[]) =>
    new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),
  tooLarge: (message = 'the request is too large') => new ApiError(413, 'RequestEntityTooLarge', message),
  internal: (message = 'an error on the server has prevented the request from succeeding') =>
    new ApiError(500, 'InternalError', `Internal error occurred: ${message}`),
  timeout: (message: string) => new ApiError(504, 'Timeout', message),
  /** a read at a resourceVersion the server has not reached (Kubernetes' NewTooLargeResourceVersionError:
   *  client-go recognises it by the cause and relists from the latest version) */
  tooLargeResourceVersion: (requested: number, current: number) =>
    new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      causes: [{reason: 'ResourceVersionTooLarge', message: 'Too large resource version'}],
      retryAfterSeconds: 1,
    }),
  unavailable: (message: string) => new ApiError(503, 'ServiceUnavailable', message),
}

/** "Invalid value: "x": detail" — the cause message Kubernetes puts in Status.details.causes. */
export const causeMessage = formatFieldErrorBody
export {formatFieldError}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError
}
