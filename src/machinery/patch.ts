// JSON patch (RFC 6902) and JSON merge patch (RFC 7386) over plain objects.
import jsonpatch from 'fast-json-patch'
import type {NumberLiteralAt} from './field-validation.js'
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

/** The JSON size of what a copy from `from` adds (0 when there is nothing there: the copy fails) */
function copiedSize(document: unknown, from: string): number {
  try {
    return JSON.stringify(jsonpatch.getValueByPointer(document, from) ?? null).length
  } catch {
    return 0
  }
}

/** RFC 6902. A malformed patch is 400; an operation that cannot apply (missing path, failed test) is 422. */
/**
 * Kubernetes' json-patch (evanphx v4) replaces a missing key of an existing object by adding it: its
 * replace only fails when the parent is missing or an array index is out of range. fast-json-patch
 * refuses the missing key, so such a replace is applied as an add.
 */
function upsertingReplace(doc: unknown, operation: Record<string, unknown>): Record<string, unknown> {
  if (operation.op !== 'replace' || typeof operation.path !== 'string') return operation
  const slash = operation.path.lastIndexOf('/')
  if (slash < 0) return operation
  let parent: unknown
  try {
    parent = jsonpatch.getValueByPointer(doc, operation.path.slice(0, slash))
  } catch {
    return operation
  }
  const key = operation.path.slice(slash + 1).replace(/~1/g, '/').replace(/~0/g, '~')
  if (!isPlainObject(parent) || Object.prototype.hasOwnProperty.call(parent, key)) return operation
  return {...operation, op: 'add'}
}

export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw errors.tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`)
  }
  for (const [index, op] of patch.entries()) {
    if (!isPlainObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw errors.badRequest(`invalid JSON patch operation at index ${index}: each operation needs "op" and "path"`)
    }
    if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op.op)) {
      // json-patch's Apply fails on it, which the patcher answers 422
      throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: Unexpected kind: ${op.op}`)
    }
    // a value cannot move into itself (RFC 6902 4.4: from may not be a proper prefix of path); unchecked,
    // the document would contain itself
    if (op.op === 'move' && typeof op.from === 'string' && op.path.startsWith(`${op.from}/`)) {
      throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: move operation does not apply: from ${JSON.stringify(op.from)} is a prefix of path ${JSON.stringify(op.path)}`)
    }
  }
  try {
    // fast-json-patch reads and writes `obj[key]`: it takes Object.prototype's members for keys that
    // are there and refuses __proto__, so such keys are renamed while it works (see escapeKey)
    const escapes = {any: false}
    const copy = escapedCopy(document, escapes)
    const operations = patch.map((op: Record<string, Json>) => escapedOperation(op, escapes))
    // one operation at a time, as applyPatch does, counting what copies add: each copies its value
    // whole, so a few dozen copies of a copy would otherwise fill the memory
    let doc: unknown = copy
    let copied = 0
    operations.forEach((operation, index) => {
      if (operation.op === 'copy' && typeof operation.from === 'string') {
        copied += copiedSize(doc, operation.from)
        if (copied > MAX_ACCUMULATED_COPY_SIZE) {
          throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_ACCUMULATED_COPY_SIZE}`)
        }
      }
      doc = jsonpatch.applyOperation(doc, upsertingReplace(doc, operation) as unknown as jsonpatch.Operation, true, true, true, index).newDocument
    })
    return escapes.any ? unescapedCopy(doc) : doc
  } catch (error) {
    if (error instanceof ApiError) throw error
    const e = error as {name?: string; message?: string; index?: number; operation?: {op: string; path: string}}
    const op = typeof e.index === 'number' && isPlainObject(patch[e.index]) ? (patch[e.index] as {path?: unknown}) : undefined
    const path = typeof op?.path === 'string' ? op.path : (e.operation?.path ?? '')
    const message =
      e.name === 'TEST_OPERATION_FAILED'
        ? `testing value ${path} failed: test operation failed`
        : (e.message ?? String(error)).split('\n')[0]
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`)
  }
}

// ---------- keys fast-json-patch cannot hold ----------

/** Keys fast-json-patch would take for present (Object.prototype's members) or refuse (__proto__). */
const inheritedNames = new Set(Object.getOwnPropertyNames(Object.prototype))
/** Prefix of a renamed key. A key that begins with it is renamed too, so that renaming is one to one. */
const ESCAPE = '\u0000'

function needsEscape(key: string): boolean {
  return inheritedNames.has(key) || key.startsWith(ESCAPE)
}

/** A key as fast-json-patch sees it. */
function escapeKey(key: string, escapes: {any: boolean}): string {
  if (!needsEscape(key)) return key
  escapes.any = true
  return ESCAPE + key
}

/** A copy of a JSON value with its keys escaped. */
function escapedCopy(value: unknown, escapes: {any: boolean}): unknown {
  if (Array.isArray(value)) return value.map((item) => escapedCopy(item, escapes))
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[escapeKey(key, escapes)] = escapedCopy(value[key], escapes)
  return out
}

/** A copy of a JSON value with escaped keys named back. */
function unescapedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapedCopy)
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) setOwn(out, key.startsWith(ESCAPE) ? key.slice(1) : key, unescapedCopy(value[key]))
  return out
}

/** A JSON pointer with its reference tokens escaped (an invalid pointer is left for the patcher to refuse). */
function escapedPointer(pointer: Json | undefined, escapes: {any: boolean}): Json | undefined {
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return pointer
  const tokens = pointer.slice(1).split('/')
  let changed = false
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i].includes('~') ? tokens[i].replace(/~1/g, '/').replace(/~0/g, '~') : tokens[i]
    if (!needsEscape(token)) continue
    tokens[i] = escapeKey(token, escapes).replace(/~/g, '~0').replace(/\//g, '~1')
    changed = true
  }
  return changed ? `/${tokens.join('/')}` : pointer
}

function escapedOperation(op: Record<string, Json>, escapes: {any: boolean}): Record<string, unknown> {
  const out: Record<string, unknown> = {...op, path: escapedPointer(op.path, escapes)}
  if ('from' in op) out.from = escapedPointer(op.from, escapes)
  if ('value' in op) out.value = escapedCopy(op.value, escapes)
  return out
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
