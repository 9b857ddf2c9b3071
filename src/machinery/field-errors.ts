// Field-level validation errors, shaped like k8s.io/apimachinery/pkg/util/validation/field.
// A FieldError names the field (a path such as `metadata.labels` or `spec.ports[0].port`), its kind,
// the offending value and a detail message. formatFieldError renders it exactly as Kubernetes'
// field.Error.Error() does, e.g. `metadata.name: Invalid value: "Foo": a lowercase RFC 1123 ...`,
// because that text reaches kubectl users verbatim.
//
// This file also holds the few Go formatting helpers (%q quoting, json.Marshal-style rendering,
// byte-order string comparison) that the rest of the machinery layer needs to reproduce
// Kubernetes' messages and orderings.

import type {FieldError} from '../api/types.js'

// FieldError is declared once, in src/api (the lowest layer), so kind declarations can return it.
export type {FieldError}
export type FieldErrorType = FieldError['type']

/** The human-readable name Kubernetes gives each error type (field.ErrorType.String()). */
const typeText: Record<FieldErrorType, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooMany: 'Too many',
}

/** `field: Invalid value: "x": detail` and friends: the text of Kubernetes' field.Error.Error(). */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${formatFieldErrorBody(e)}`
}

/** The message without the field name (Kubernetes' ErrorBody()), as used in Status causes. */
export function formatFieldErrorBody(e: FieldError): string {
  let body = typeText[e.type]
  switch (e.type) {
    case 'FieldValueInvalid':
    case 'FieldValueNotSupported':
    case 'FieldValueDuplicate':
      body += `: ${formatBadValue(e.value)}`
      break
    case 'FieldValueTooMany':
      // a negative or unknown count is omitted, as Kubernetes' TooMany does
      if (typeof e.value === 'number' && e.value >= 0) body += `: ${formatBadValue(e.value)}`
      break
    default:
      break
  }
  if (e.message.length > 0) body += `: ${e.message}`
  return body
}

/** A bad value Kubernetes prints with Go's %#v because it is an internal type (rbac.RoleRef,
 *  a []string of an internal struct), rendered by the validator that reports it. */
export class GoSyntaxValue {
  constructor(readonly text: string) {}
}

/** Render a bad value the way field.Error does: strings %q-quoted, scalars bare, the rest as JSON. */
export function formatBadValue(value: unknown): string {
  if (value instanceof GoSyntaxValue) return value.text
  if (typeof value === 'string') return goQuote(value)
  if (typeof value === 'number' && !Number.isFinite(value) && !Number.isNaN(value)) return value > 0 ? '+Inf' : '-Inf'
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  return goJSON(value)
}

/** field.Invalid: a malformed value (failed regex, out of range, ...). */
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return {type: 'FieldValueInvalid', field, message: detail, value}
}

/** field.Required: a value that must be provided was not. */
export function required(field: string, detail = ''): FieldError {
  return {type: 'FieldValueRequired', field, message: detail}
}

/** field.NotSupported: a value outside an enumeration; lists the supported values when given. */
export function notSupported(field: string, value: unknown, valid: readonly string[]): FieldError {
  const detail = valid.length > 0 ? 'supported values: ' + valid.map((v) => goQuote(v)).join(', ') : ''
  return {type: 'FieldValueNotSupported', field, message: detail, value}
}

/** field.Forbidden: a well-formed value that is not allowed under the current conditions. */
export function forbidden(field: string, detail: string): FieldError {
  return {type: 'FieldValueForbidden', field, message: detail}
}

/**
 * field.TooLong: the value is longer than `max` bytes. The value itself is not repeated in the
 * message; a negative max gives the generic "value is too long".
 */
export function tooLong(field: string, _value: unknown, max: number): FieldError {
  const detail = max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long'
  return {type: 'FieldValueTooLong', field, message: detail}
}

/** field.Duplicate: a value that must be unique appears more than once. */
export function duplicate(field: string, value: unknown): FieldError {
  return {type: 'FieldValueDuplicate', field, message: '', value}
}

/**
 * field.TooMany: a list holds `actual` items where at most `max` are allowed. A negative actual is
 * left out of the message; a negative max gives the generic "has too many items".
 */
export function tooMany(field: string, actual: number, max: number): FieldError {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items'
  const e: FieldError = {type: 'FieldValueTooMany', field, message: detail}
  if (actual >= 0) e.value = actual
  return e
}

/**
 * Join field errors the way Kubernetes' utilerrors.NewAggregate(...).Error() does: one error alone
 * as itself, several as `[a, b]` with repeated messages dropped.
 */
export function aggregateFieldErrors(errors: readonly FieldError[]): string {
  const seen = new Set<string>()
  for (const e of errors) seen.add(formatFieldError(e))
  const messages = [...seen]
  return messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`
}

// ---- Go formatting helpers ----

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u

/** Go's strconv.Quote (the %q verb): double-quoted, printable Unicode kept, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"'
  for (const ch of s) {
    let cp = ch.codePointAt(0)!
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd // a lone surrogate is invalid UTF-8 to Go
    if (cp === 0x22 || cp === 0x5c) {
      out += '\\' + ch
      continue
    }
    const c = String.fromCodePoint(cp)
    if (printable.test(c)) {
      out += c
      continue
    }
    switch (cp) {
      case 0x07: out += '\\a'; break
      case 0x08: out += '\\b'; break
      case 0x0c: out += '\\f'; break
      case 0x0a: out += '\\n'; break
      case 0x0d: out += '\\r'; break
      case 0x09: out += '\\t'; break
      case 0x0b: out += '\\v'; break
      default:
        if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0')
        else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0')
        else out += '\\U' + cp.toString(16).padStart(8, '0')
    }
  }
  return out + '"'
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** Go's json.Marshal output for plain data: JSON with <, >, &, U+2028, U+2029 escaped; undefined is null. */
export function goJSON(value: unknown): string {
  // Go's decoder would have turned a lone surrogate into U+FFFD before it got here
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.replace(loneSurrogate, '\ufffd') : v)) ?? 'null'
  return text.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}

/** Compare strings as Go does (by UTF-8 bytes, i.e. by code point), for Kubernetes' sort orders. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // surrogates (astral code points) sort after every BMP code unit in UTF-8 order
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys) return xs ? 1 : -1
    return x < y ? -1 : 1
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

/** The length of a string in UTF-8 bytes, which is what Go's len() measures. */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8')
}
