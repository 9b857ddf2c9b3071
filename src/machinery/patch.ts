// JSON patch (RFC 6902) and JSON merge patch (RFC 7386) over plain objects.
import type {NumberLiteralAt} from './field-validation.js'
import {applyJsonPatchOperations, JsonPatchError} from './json-patch.js'
import {ownValue, setOwn} from './own-keys.js'
import {ApiError, errors} from './status.js'

type Json = null | boolean | number | string | Json[] | {[key: string]: Json}

function isPlainObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. Any key is a key
 *  (__proto__, constructor: see own-keys.ts). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch
  const result: Record<string, unknown> = isPlainObject(target) ? {...target} : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else setOwn(result, key, applyMergePatch(ownValue(result, key), value))
  }
  return result
}

/** Kubernetes' limit on the operations of one JSON patch (413 past it). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000

/** How much a JSON patch's copy operations may add in all: the request body's own limit (3 MiB). */
export const MAX_ACCUMULATED_COPY_SIZE = 3 * 1024 * 1024

/** RFC 6902 as Kubernetes' json-patch applies it (json-patch.ts). A body that is not a list of
 *  operation objects is 400; an operation that cannot apply (missing path, failed test) is 422. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  // encoding/json decodes null into an empty patch
  if (patch === null) return document
  if (!Array.isArray(patch)) throw errors.badRequest(`json: cannot unmarshal ${goJsonType(patch)} into Go value of type jsonpatch.Patch`)
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw errors.tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`)
  }
  const notAnOperation = patch.find((op) => op !== null && (typeof op !== 'object' || Array.isArray(op)))
  if (notAnOperation !== undefined) throw errors.badRequest(`json: cannot unmarshal ${goJsonType(notAnOperation)} into Go value of type jsonpatch.Operation`)
  try {
    return applyJsonPatchOperations(document, patch, {maxCopiedBytes: MAX_ACCUMULATED_COPY_SIZE})
  } catch (error) {
    if (!(error instanceof JsonPatchError)) throw error
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${error.message}`)
  }
}

/** how encoding/json names a JSON value's type in an unmarshal error */
function goJsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (value === null || typeof value === 'object') return 'object'
  return typeof value === 'boolean' ? 'bool' : typeof value
}

/** A JSON pointer's reference tokens. */
function pointerTokens(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** The text of a path's first `length` tokens, as a Set key. */
const prefixKey = (tokens: readonly (string | number)[], length: number) => JSON.stringify(tokens.slice(0, length).map(String))

/** Where the numbers of a JSON patch's `add` and `replace` values land in the patched document: the
 *  literal at [op index, "value", ...rest] goes to the op's path followed by rest. Left out, as their
 *  place is not known before applying: appends (`-`), and a value that a later operation replaces or
 *  removes (its path is the value's place or above it), shifts (an add or remove in an array above it)
 *  or may carry off (a move). One pass from the last operation back. */
export function jsonPatchNumbers(patch: unknown, literals: readonly NumberLiteralAt[]): NumberLiteralAt[] {
  if (!Array.isArray(patch) || literals.length === 0) return []
  const byOp = new Map<number, {rest: (string | number)[]; literal: string}[]>()
  for (const {segments, literal} of literals) {
    const [index, field, ...rest] = segments
    if (typeof index !== 'number' || field !== 'value') continue
    const list = byOp.get(index) ?? []
    list.push({rest, literal})
    byOp.set(index, list)
  }
  /** paths later operations write or remove at */
  const written = new Set<string>()
  /** arrays later operations insert into or remove from */
  const shifted = new Set<string>()
  let laterMove = false
  const out: NumberLiteralAt[] = []
  for (let index = patch.length - 1; index >= 0; index--) {
    const op = patch[index] as unknown
    const valid = isPlainObject(op) && typeof op.path === 'string' && op.path.startsWith('/')
    const own = byOp.get(index)
    if (own && valid && !laterMove && (op.op === 'add' || op.op === 'replace')) {
      const path = pointerTokens(op.path as string)
      for (const {rest, literal} of own) {
        const target = [...path, ...rest]
        if (target.includes('-')) continue
        let touched = false
        for (let length = 0; length <= target.length && !touched; length++) {
          const key = prefixKey(target, length)
          touched = written.has(key) || (length < target.length && shifted.has(key))
        }
        if (!touched) out.push({segments: target, literal})
      }
    }
    if (!valid) {
      laterMove = true
      continue
    }
    if (op.op === 'move') laterMove = true
    if (op.op === 'test') continue
    const tokens = pointerTokens(op.path as string)
    written.add(prefixKey(tokens, tokens.length))
    const last = tokens[tokens.length - 1]
    if ((op.op === 'add' || op.op === 'remove' || op.op === 'copy') && last !== undefined && /^(-|0|[1-9]\d*)$/.test(last)) shifted.add(prefixKey(tokens, tokens.length - 1))
  }
  return out.reverse()
}
