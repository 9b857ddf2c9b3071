// Errors the process runtime answers CRI calls with: a gRPC status code and a readable message.
import {status} from '@grpc/grpc-js'

export class RuntimeError extends Error {
  override readonly name = 'RuntimeError'
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message)
  }
}

export const notFound = (message: string): RuntimeError => new RuntimeError(status.NOT_FOUND, message)
export const invalidArgument = (message: string): RuntimeError => new RuntimeError(status.INVALID_ARGUMENT, message)
export const failedPrecondition = (message: string): RuntimeError => new RuntimeError(status.FAILED_PRECONDITION, message)
export const deadlineExceeded = (message: string): RuntimeError => new RuntimeError(status.DEADLINE_EXCEEDED, message)
export const resourceExhausted = (message: string): RuntimeError => new RuntimeError(status.RESOURCE_EXHAUSTED, message)
export const alreadyExists = (message: string): RuntimeError => new RuntimeError(status.ALREADY_EXISTS, message)
export const internal = (message: string): RuntimeError => new RuntimeError(status.INTERNAL, message)

/** The errno code of a Node system error (`ENOENT`, ...), or undefined. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as {code?: unknown}).code === 'string'
    ? (error as {code: string}).code
    : undefined
}
