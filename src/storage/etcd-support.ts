// Helpers of the etcd backend shared by the store (etcd.ts) and its watches (etcd-watch.ts).
import {isRecoverableError, type IKeyValue, type IOptions} from 'etcd3'
import {StorageError, type KeyValue} from './store.js'

/** the smallest key; also, as a range end, "to the end of the keyspace" */
export const NUL = Buffer.from([0])

type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>

/** A pass-through policy: etcd3's default global policy retries every call, writes included. */
export function noRetryPolicy(): GlobalPolicy {
  const noEvent = () => ({dispose() {}})
  const policy = {
    onSuccess: noEvent,
    onFailure: noEvent,
    execute<T>(fn: (context: {signal: AbortSignal}) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
      return Promise.resolve().then(() => fn({signal: signal ?? new AbortController().signal}))
    },
  }
  return policy as unknown as GlobalPolicy
}

export function bytes(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

/** The exclusive end of the byte range of keys starting with prefix (NUL = no end). */
export function rangeEndOf(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1))
      end[i] += 1
      return end
    }
  }
  return NUL
}

/** [start, end) of the keys under a prefix, valid as an etcd range (whose key may not be empty). */
export function prefixRange(prefix: string): {start: Buffer; end: Buffer} {
  const start = bytes(prefix)
  return {start: start.length > 0 ? start : NUL, end: rangeEndOf(start)}
}

export function toKv(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value,
    modRevision: Number(kv.mod_revision),
    createRevision: Number(kv.create_revision),
  }
}

/** A read at a revision etcd has not reached yet. */
export class FutureRevisionError extends StorageError {}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** The part of an etcd3/grpc error message that says what happened, on one line. */
export function reasonOf(error: unknown): string {
  let message = oneLine(error instanceof Error ? error.message : String(error))
  message = message.replace(/^(GRPC\w*Error|EtcdError):\s*/, '').replace(/\s*Resolution note:.*$/, '')
  // "14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:2379."
  const lastError = /No connection established\. Last error: (?:Error: )?(.*?)\.?$/.exec(message)
  if (lastError) return lastError[1]
  return message.replace(/^\d+ ([A-Z_]+): /, (_, code: string) => `${code.toLowerCase().replace(/_/g, ' ')}: `) || 'unknown error'
}

export function isCompactedError(error: unknown): boolean {
  return error instanceof Error && /required revision has been compacted/.test(error.message)
}

export function isFutureRevisionError(error: unknown): boolean {
  return error instanceof Error && /required revision is a future revision/.test(error.message)
}

/** etcd3's per-endpoint circuit breaker is open: the call was not made. */
export function isBrokenCircuit(error: unknown): boolean {
  return error instanceof Error && (error as {isBrokenCircuitError?: boolean}).isBrokenCircuitError === true
}

export function isUnreachable(error: unknown): boolean {
  return error instanceof Error && (isRecoverableError(error) || isBrokenCircuit(error))
}

/** The request never reached a server (no connection, or the endpoint's breaker is open), so even
 *  a write can be sent again, to another endpoint. */
export function neverSent(error: unknown): boolean {
  if (isBrokenCircuit(error)) return true
  return isUnreachable(error) && /No connection established|Name resolution failed|ECONNREFUSED/.test((error as Error).message)
}


/** The error text etcd itself gave ("etcdserver: request is too large", "etcdserver: request timed
 *  out", "mvcc: ..."), as its Go client's EtcdError prints it; undefined when the error is not etcd's
 *  own (no connection, a client-side deadline). */
export function etcdServerMessage(error: unknown): string | undefined {
  const message = oneLine(error instanceof Error ? error.message : String(error))
  return /\b((?:etcdserver|mvcc|auth|lease): .*)$/.exec(message)?.[1]
}
