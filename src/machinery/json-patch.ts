// RFC 6902 JSON patch as Kubernetes applies it (evanphx/json-patch v4): its semantics where they
// differ from the RFC (a `replace` of a missing object key adds it, negative array indices count from
// the end, a copy of a missing key copies null, a path without a leading `/` drops its first token)
// and its error texts (`error in remove for path: '/a/b': Unable to remove nonexistent key: b: missing
// value`), which clients match on. Values are plain JSON; any string is a key (see own-keys.ts).
import {ownValue, setOwn} from './own-keys.js'

type Container = Record<string, unknown> | unknown[]

/** The error kinds json-patch wraps (errors.Wrapf: `context: cause`). */
const MISSING = 'missing value'
const INVALID_INDEX = 'invalid index referenced'
const TEST_FAILED = 'test failed'

export class JsonPatchError extends Error {}

const fail = (message: string): never => {
  throw new JsonPatchError(message)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function decodeKey(token: string): string {
  return token.includes('~') ? token.replace(/~1/g, '/').replace(/~0/g, '~') : token
}

/** strconv.Atoi, with its error text */
function atoi(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) return fail(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`)
  const value = Number(text)
  if (!Number.isSafeInteger(value)) return fail(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`)
  return value
}

/** findObject: the container holding the path's last token, and that token; undefined when a step is
 *  missing, null or not a container (or the path has fewer than two `/`-separated parts). */
function findObject(document: Container, path: string): [Container, string] | undefined {
  const split = path.split('/')
  if (split.length < 2) return undefined
  let container: Container = document
  for (const part of split.slice(1, -1)) {
    const next = get(container, decodeKey(part), false)
    if (next === undefined || next === null || typeof next !== 'object') return undefined
    container = next as Container
  }
  return [container, decodeKey(split[split.length - 1])]
}

/** an array index as json-patch reads one (negative: from the end), checked against `length` */
function arrayIndex(key: string, length: number): number {
  const index = atoi(key)
  if (index >= length || index < -length) fail(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`)
  return index < 0 ? index + length : index
}

/** container.get: an object's key (undefined when absent); an array's element (errors when out of range) */
function get(container: Container, key: string, strict = true): unknown {
  if (!Array.isArray(container)) return ownValue(container, key)
  if (!strict && !/^[+-]?\d+$/.test(key)) return undefined
  try {
    return container[arrayIndex(key, container.length)]
  } catch (error) {
    if (strict) throw error
    return undefined
  }
}

function add(container: Container, key: string, value: unknown): void {
  if (!Array.isArray(container)) return setOwn(container, key, value)
  if (key === '-') {
    container.push(value)
    return
  }
  let index: number
  try {
    index = atoi(key)
  } catch (error) {
    return fail(`value was not a proper array index: '${key}': ${(error as Error).message}`)
  }
  const size = container.length + 1
  if (index >= size || index < -size) fail(`Unable to access invalid index: ${index}: ${INVALID_INDEX}`)
  container.splice(index < 0 ? index + size : index, 0, value)
}

function remove(container: Container, key: string): void {
  if (Array.isArray(container)) {
    container.splice(arrayIndex(key, container.length), 1)
    return
  }
  if (!Object.hasOwn(container, key)) fail(`Unable to remove nonexistent key: ${key}: ${MISSING}`)
  delete container[key]
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  }
  return false
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value)
}

export interface JsonPatchLimits {
  /** the most that copy operations may add, in bytes of JSON (AccumulatedCopySizeLimit) */
  maxCopiedBytes: number
}

/** Applies one patch's operations in order to a copy of `document`; throws JsonPatchError. */
export function applyJsonPatchOperations(document: unknown, operations: readonly unknown[], limits: JsonPatchLimits): unknown {
  let doc = clone(document) as Container
  let copied = 0
  const value = (op: Record<string, unknown>) => clone(op.value ?? null)
  for (const raw of operations) {
    const op = isObject(raw) ? raw : {}
    const kind = typeof op.op === 'string' ? op.op : 'unknown'
    const path = typeof op.path === 'string' ? op.path : undefined
    const from = typeof op.from === 'string' ? op.from : undefined
    switch (kind) {
      case 'add': {
        if (path === undefined) fail(`add operation failed to decode path: ${MISSING}`)
        const found = findObject(doc, path!) ?? fail(`add operation does not apply: doc is missing path: "${path}": ${MISSING}`)
        try {
          add(found[0], found[1], value(op))
        } catch (error) {
          fail(`error in add for path: '${path}': ${(error as Error).message}`)
        }
        break
      }
      case 'remove': {
        if (path === undefined) fail(`remove operation failed to decode path: operation missing path field: ${MISSING}`)
        const found = findObject(doc, path!) ?? fail(`remove operation does not apply: doc is missing path: "${path}": ${MISSING}`)
        try {
          remove(found[0], found[1])
        } catch (error) {
          fail(`error in remove for path: '${path}': ${(error as Error).message}`)
        }
        break
      }
      case 'replace': {
        if (path === undefined) fail(`replace operation failed to decode path: operation missing path field: ${MISSING}`)
        if (path === '') {
          // a value that is no object or array changes nothing: json-patch v4 wraps a nil error there
          const whole = value(op)
          if (typeof whole === 'object' && whole !== null) doc = whole as Container
          break
        }
        const found = findObject(doc, path!) ?? fail(`replace operation does not apply: doc is missing path: ${path}: ${MISSING}`)
        if (Array.isArray(found[0])) {
          try {
            found[0][arrayIndex(found[1], found[0].length)] = value(op)
          } catch {
            fail(`replace operation does not apply: doc is missing key: ${path}: ${MISSING}`)
          }
        } else {
          setOwn(found[0], found[1], value(op))
        }
        break
      }
      case 'move': {
        if (from === undefined) fail(`move operation failed to decode from: operation, missing from field: ${MISSING}`)
        const source = findObject(doc, from!) ?? fail(`move operation does not apply: doc is missing from path: ${from}: ${MISSING}`)
        let moved: unknown
        try {
          moved = get(source[0], source[1])
          remove(source[0], source[1])
        } catch (error) {
          fail(`error in move for path: '${source[1]}': ${(error as Error).message}`)
        }
        if (path === undefined) fail(`move operation failed to decode path: operation missing path field: ${MISSING}`)
        const target = findObject(doc, path!) ?? fail(`move operation does not apply: doc is missing destination path: ${path}: ${MISSING}`)
        try {
          add(target[0], target[1], moved ?? null)
        } catch (error) {
          fail(`error in move for path: '${path}': ${(error as Error).message}`)
        }
        break
      }
      case 'copy': {
        if (from === undefined) fail(`copy operation failed to decode from: operation, missing from field: ${MISSING}`)
        const source = findObject(doc, from!) ?? fail(`copy operation does not apply: doc is missing from path: ${from}: ${MISSING}`)
        let copy: unknown
        try {
          copy = clone(get(source[0], source[1]) ?? null)
        } catch (error) {
          fail(`error in copy for from: '${from}': ${(error as Error).message}`)
        }
        if (path === undefined) fail(`copy operation failed to decode path: ${MISSING}`)
        const target = findObject(doc, path!) ?? fail(`copy operation does not apply: doc is missing destination path: ${path}: ${MISSING}`)
        copied += copy === null ? 0 : Buffer.byteLength(JSON.stringify(copy))
        if (copied > limits.maxCopiedBytes) {
          fail(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${limits.maxCopiedBytes}`)
        }
        try {
          add(target[0], target[1], copy)
        } catch (error) {
          fail(`error while adding value during copy: ${(error as Error).message}`)
        }
        break
      }
      case 'test': {
        if (path === undefined) fail(`test operation failed to decode path: operation missing path field: ${MISSING}`)
        const expected = op.value ?? null
        if (path === '') {
          if (!deepEqual(doc, expected)) fail(`testing value ${path} failed: ${TEST_FAILED}`)
          break
        }
        const found = findObject(doc, path!) ?? fail(`test operation does not apply: is missing path: ${path}: ${MISSING}`)
        let actual: unknown
        try {
          actual = get(found[0], found[1]) ?? null
        } catch (error) {
          fail(`error in test for path: '${path}': ${(error as Error).message}`)
        }
        if (!deepEqual(actual, expected)) fail(`testing value ${path} failed: ${TEST_FAILED}`)
        break
      }
      default:
        fail(`Unexpected kind: ${kind}`)
    }
  }
  return doc
}
