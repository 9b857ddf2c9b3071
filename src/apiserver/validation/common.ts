// Helpers shared by the kind validators of this directory: Kubernetes' small generic checks
// (ValidateNonnegativeField, ValidateImmutableField, Semantic.DeepEqual) and safe readers for the
// loosely typed objects a request body decodes to.
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {invalid} from '../../machinery/field-errors.js'
import {setOwn} from '../../machinery/own-keys.js'
import {formatQuantity, parseQuantity, QuantityParseError} from '../../machinery/quantity.js'

/** A kind's extra validation, run by the registry after the declaration's own. */
export interface KindValidator {
  create?(object: AnyObject, context: RequestContext): FieldError[]
  update?(object: AnyObject, old: AnyObject, context: RequestContext): FieldError[]
}

/** apimachinery's IsNegativeErrorMsg. */
export const isNegativeErrorMsg = 'must be greater than or equal to 0'
/** apimachinery's FieldImmutableErrorMsg. */
export const fieldImmutableErrorMsg = 'field is immutable'

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The value when it is a plain object, else an empty one. */
export function obj(value: unknown): Record<string, any> {
  return isObject(value) ? value : {}
}

/** The value when it is an array, else an empty one. */
export function list(value: unknown): any[] {
  return Array.isArray(value) ? value : []
}

const ZERO_TIME = Date.parse('0001-01-01T00:00:00Z')

/** metav1.Time.IsZero (and MicroTime's) for a decoded value: absent, null, empty, or Go's zero time. */
export function isZeroTime(value: unknown): boolean {
  if (typeof value !== 'string' || value === '') return true
  return Date.parse(value) === ZERO_TIME
}

/** The value when it is a string, else ''. */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

/** The string-valued map at `value` (labels, selectors), skipping anything that is not a string. */
export function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(obj(value))) if (typeof v === 'string') setOwn(out, k, v)
  return out
}

/** ValidateNonnegativeField: `<path>: Invalid value: -1: must be greater than or equal to 0`. */
export function nonNegative(value: unknown, path: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, isNegativeErrorMsg)] : []
}

/**
 * Drops what Kubernetes' Semantic.DeepEqual cannot see: absent and null fields, and empty lists
 * and maps (equal to nil ones in Go), recursively.
 */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize)
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    const v = normalize(value[key])
    if (v === undefined || v === null) continue
    if (Array.isArray(v) && v.length === 0) continue
    if (isObject(v) && Object.keys(v).length === 0) continue
    setOwn(out, key, v)
  }
  return out
}

/** Semantic.DeepEqual for decoded JSON: key order, absent vs null and empty vs nil do not count. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return canonicalJSON(a) === canonicalJSON(b)
}

function canonicalJSON(value: unknown): string {
  const n = normalize(value)
  if (n === undefined || n === null) return 'null'
  if ((Array.isArray(n) && n.length === 0) || (isObject(n) && Object.keys(n).length === 0)) return 'null'
  return JSON.stringify(n)
}

/** ValidateImmutableField: `<path>: Invalid value: <new>: field is immutable` when the value changed. */
export function immutable(next: unknown, old: unknown, path: string): FieldError[] {
  return semanticEqual(next, old) ? [] : [invalid(path, next ?? null, fieldImmutableErrorMsg)]
}

/** Resources counted in whole units (helper.IsIntegerResourceName): pods and extended resources. */
function isIntegerResourceName(name: string): boolean {
  if (name === 'pods') return true
  const slash = name.indexOf('/')
  if (slash < 0 || name.startsWith('requests.')) return false
  const domain = name.slice(0, slash)
  return !(domain === 'orch.io' || domain.endsWith('.orch.io'))
}

/**
 * ValidateResourceQuantityValue for one entry of a resource list: the text parses as a Quantity
 * (Kubernetes' decoder would refuse it otherwise), is not negative, and is whole for integer resources.
 */
export function validateResourceQuantity(name: string, value: unknown, path: string): FieldError[] {
  const text = typeof value === 'number' ? String(value) : str(value)
  try {
    const q = parseQuantity(text)
    const errs: FieldError[] = []
    if (q.nanos < 0n) errs.push(invalid(path, formatQuantity(q), isNegativeErrorMsg))
    if (isIntegerResourceName(name) && q.milli % 1000n !== 0n) errs.push(invalid(path, formatQuantity(q), 'must be an integer'))
    return errs
  } catch (e) {
    if (e instanceof QuantityParseError) return [invalid(path, text, e.message)]
    throw e
  }
}
