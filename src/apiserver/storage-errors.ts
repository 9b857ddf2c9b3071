// Storage failures as Kubernetes' apiserver answers them over etcd. Its registries pass an etcd error
// they do not interpret (request too large, request timed out, no leader) through unchanged, and the
// handler turns it into a 500 Status with no reason whose message is the etcd client's error text
// (responsewriters.ErrorToAPIStatus: `{"status":"Failure","message":"etcdserver: request is too
// large","code":500}`). A call that cannot reach etcd waits for the request's deadline there and is
// answered 504 Timeout. Our own messages name endpoints and keys: they go to the log, never out.
import {ApiError, errors} from '../machinery/status.js'
import {StorageError, StoreUnavailableError} from '../storage/index.js'

/** Kubernetes' finisher / timeout filter answer to a request whose storage call ran out of time */
export const STORAGE_TIMEOUT_MESSAGE = 'request did not complete within requested timeout - context deadline exceeded'

/** The Status for a storage error no registry interpreted; undefined for other errors. */
export function storageErrorStatus(error: unknown): ApiError | undefined {
  if (!(error instanceof StorageError)) return undefined
  if (error.serverMessage) return new ApiError(500, '', error.serverMessage)
  if (error instanceof StoreUnavailableError) return errors.timeout(`Timeout: ${STORAGE_TIMEOUT_MESSAGE}`)
  return errors.internal()
}
