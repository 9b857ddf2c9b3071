// Continue tokens: an opaque, base64 JSON {v, rv, start, t}. rv pins the snapshot, start is the
// last key returned (relative to the list prefix), t is when the first page was served.
import {errors} from '../machinery/status.js'

interface Token {
  v: string
  rv: number
  start: string
  t: number
}

/** A token's revision -1: go on at the latest state (what a 410 for a compacted token offers; 0 would
 *  not tell it from a token without one), as Kubernetes' handleCompactedErrorForPaging encodes it. */
export const LATEST = -1

export function encodeContinue(revision: number, lastKey: string, prefix: string, now: Date): string {
  const token: Token = {v: 'meta.orch.io/v1', rv: revision, start: lastKey.slice(prefix.length), t: now.getTime()}
  return Buffer.from(JSON.stringify(token)).toString('base64url')
}

/** Decodes a token for this list prefix; 400 when forged or malformed, 410 Expired when too old. */
export function decodeContinue(
  text: string,
  prefix: string,
  now: Date,
  ttlMs = 5 * 60_000,
): {revision: number; startAfter: string} {
  let token: Token
  try {
    token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Token
  } catch {
    throw errors.badRequest('continue key is not valid: the token is malformed')
  }
  if (
    typeof token !== 'object' ||
    token === null ||
    token.v !== 'meta.orch.io/v1' ||
    !Number.isInteger(token.rv) ||
    (token.rv <= 0 && token.rv !== LATEST) ||
    typeof token.start !== 'string' ||
    typeof token.t !== 'number'
  ) {
    throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)')
  }
  if (token.start.includes('..') || token.start.startsWith('/')) {
    throw errors.badRequest('continue key is not valid: the start key is outside this list')
  }
  // a token this server issued is never from the future (beyond another server's clock skew, which
  // the time to live bounds); a forged one would never expire
  if (token.t - now.getTime() > ttlMs) {
    throw errors.badRequest('continue key is not valid: the token was issued in the future')
  }
  if (now.getTime() - token.t > ttlMs) {
    throw errors.expired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    )
  }
  return {revision: token.rv, startAfter: prefix + token.start}
}
