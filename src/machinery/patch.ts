// JSON patch (RFC 6902) and JSON merge patch (RFC 7386) over plain objects.
import jsonpatch from 'fast-json-patch'
import type {NumberLiteralAt} from './field-validation.js'
import {ApiError, errors} from './status.js'

type Json = null | boolean | number | string | Json[] | {[key: string]: Json}

function isPlainObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch
  const result: Record<string, unknown> = isPlainObject(target) ? {...target} : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = applyMergePatch(result[key], value)
  }
  return result
}

/** RFC 6902. A malformed patch is 400; an operation that cannot apply (missing path, failed test) is 422. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
  for (const [index, op] of patch.entries()) {
    if (!isPlainObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw errors.badRequest(`invalid JSON patch operation at index ${index}: each operation needs "op" and "path"`)
    }
    if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op.op)) {
      throw errors.badRequest(`Unexpected kind: ${op.op}`)
    }
    // a value cannot move into itself (RFC 6902 4.4: from may not be a proper prefix of path); unchecked,
    // the document would contain itself
    if (op.op === 'move' && typeof op.from === 'string' && op.path.startsWith(`${op.from}/`)) {
      throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: move operation does not apply: from ${JSON.stringify(op.from)} is a prefix of path ${JSON.stringify(op.path)}`)
    }
  }
  try {
    const copy = structuredClone(document)
    const result = jsonpatch.applyPatch(copy, patch as jsonpatch.Operation[], true, true)
    return result.newDocument
  } catch (error) {
    if (error instanceof ApiError) throw error
    const e = error as {name?: string; message?: string; operation?: {op: string; path: string}}
    const message =
      e.name === 'TEST_OPERATION_FAILED'
        ? `testing value ${e.operation?.path ?? ''} failed: test operation failed`
        : (e.message ?? String(error)).split('\n')[0]
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`)
  }
}

/** A JSON pointer's reference tokens. */
function pointerTokens(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function startsWith(tokens: readonly (string | number)[], prefix: readonly string[]): boolean {
  return prefix.length <= tokens.length && prefix.every((token, i) => String(tokens[i]) === token)
}

/** Where the numbers of a JSON patch's `add` and `replace` values land in the patched document: the
 *  literal at [op index, "value", ...rest] goes to the op's path followed by rest. Left out, as their
 *  place is not known before applying: appends (`-`), and a value that a later operation may have
 *  moved, replaced or shifted (one whose path's parent is a prefix of the value's place). */
export function jsonPatchNumbers(patch: unknown, literals: readonly NumberLiteralAt[]): NumberLiteralAt[] {
  if (!Array.isArray(patch)) return []
  const parents = patch.map((op) => (isPlainObject(op) && typeof op.path === 'string' && op.path.startsWith('/') ? pointerTokens(op.path).slice(0, -1) : []))
  const out: NumberLiteralAt[] = []
  for (const {segments, literal} of literals) {
    const [index, field, ...rest] = segments
    if (typeof index !== 'number' || field !== 'value') continue
    const op = patch[index] as unknown
    if (!isPlainObject(op) || (op.op !== 'add' && op.op !== 'replace') || typeof op.path !== 'string' || !op.path.startsWith('/')) continue
    const target = [...pointerTokens(op.path), ...rest]
    if (target.includes('-')) continue
    const later = patch.slice(index + 1)
    if (later.some((other, i) => !isPlainObject(other) || other.op === 'move' || other.op === 'copy' || startsWith(target, parents[index + 1 + i]!))) continue
    out.push({segments: target, literal})
  }
  return out
}
