import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {
  aggregateFieldErrors,
  compareGoStrings,
  duplicate,
  forbidden,
  formatFieldError,
  formatFieldErrorBody,
  goJSON,
  goQuote,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
} from '../../src/machinery/field-errors.js'

describe('field error constructors and formatFieldError', () => {
  it('invalid renders "field: Invalid value: "v": detail" with the value %q-quoted', () => {
    const e = invalid('metadata.name', 'Foo', 'a lowercase RFC 1123 subdomain must ...')
    assert.deepEqual(e, {type: 'FieldValueInvalid', field: 'metadata.name', message: 'a lowercase RFC 1123 subdomain must ...', value: 'Foo'})
    assert.equal(formatFieldError(e), 'metadata.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain must ...')
  })

  it('invalid renders numbers and booleans bare and other values as JSON', () => {
    assert.equal(formatFieldError(invalid('spec.replicas', -1, 'must be greater than or equal to 0')), 'spec.replicas: Invalid value: -1: must be greater than or equal to 0')
    assert.equal(formatFieldError(invalid('x', true, 'd')), 'x: Invalid value: true: d')
    assert.equal(formatFieldError(invalid('x', ['a', 'b'], 'd')), 'x: Invalid value: ["a","b"]: d')
    assert.equal(formatFieldError(invalid('x', {k: 1}, 'd')), 'x: Invalid value: {"k":1}: d')
    assert.equal(formatFieldError(invalid('x', null, 'd')), 'x: Invalid value: null: d')
    assert.equal(formatFieldError(invalid('x', Infinity, 'd')), 'x: Invalid value: +Inf: d')
    assert.equal(formatFieldError(invalid('x', 1.5, 'd')), 'x: Invalid value: 1.5: d')
  })

  it('invalid without a detail ends after the value', () => {
    assert.equal(formatFieldError(invalid('x', 'v', '')), 'x: Invalid value: "v"')
  })

  it('required renders "Required value" and the detail if any', () => {
    assert.equal(formatFieldError(required('metadata.name')), 'metadata.name: Required value')
    assert.equal(formatFieldError(required('metadata.name', 'name or generateName is required')), 'metadata.name: Required value: name or generateName is required')
  })

  it('notSupported lists the supported values quoted', () => {
    const e = notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never'])
    assert.equal(formatFieldError(e), 'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"')
    assert.equal(formatFieldError(notSupported('f', 'x', [])), 'f: Unsupported value: "x"')
  })

  it('forbidden renders "Forbidden: detail" without the value', () => {
    assert.equal(formatFieldError(forbidden('spec.x', 'may not be set')), 'spec.x: Forbidden: may not be set')
  })

  it('tooLong gives the limit in bytes and omits the value', () => {
    assert.equal(formatFieldError(tooLong('metadata.annotations', 'xxx', 262144)), 'metadata.annotations: Too long: may not be more than 262144 bytes')
    assert.equal(formatFieldError(tooLong('f', 'xx', 1)), 'f: Too long: may not be more than 1 byte')
    assert.equal(formatFieldError(tooLong('f', 'xx', -1)), 'f: Too long: value is too long')
  })

  it('duplicate renders the value with no detail', () => {
    assert.equal(formatFieldError(duplicate('spec.ports[1].name', 'http')), 'spec.ports[1].name: Duplicate value: "http"')
  })

  it('tooMany renders the count and the limit, and omits a negative count', () => {
    assert.equal(formatFieldError(tooMany('spec.items', 5, 3)), 'spec.items: Too many: 5: must have at most 3 items')
    assert.equal(formatFieldError(tooMany('spec.items', 2, 1)), 'spec.items: Too many: 2: must have at most 1 item')
    assert.equal(formatFieldError(tooMany('spec.items', -1, 3)), 'spec.items: Too many: must have at most 3 items')
    assert.equal(formatFieldError(tooMany('spec.items', 4, -1)), 'spec.items: Too many: 4: has too many items')
  })

  it('message keeps only the detail and formatFieldErrorBody drops the field', () => {
    const e = invalid('a.b', 'v', 'detail')
    assert.equal(e.message, 'detail')
    assert.equal(formatFieldErrorBody(e), 'Invalid value: "v": detail')
  })

  it('an error on the whole object has an empty field before the colon', () => {
    assert.equal(formatFieldError(forbidden('', 'no')), ': Forbidden: no')
  })

  it('aggregateFieldErrors shows one error bare and several in brackets, without repeats', () => {
    const a = required('a')
    const b = forbidden('b', 'no')
    assert.equal(aggregateFieldErrors([a]), 'a: Required value')
    assert.equal(aggregateFieldErrors([a, b, a]), '[a: Required value, b: Forbidden: no]')
    assert.equal(aggregateFieldErrors([a, a]), 'a: Required value')
  })
})

describe('Go formatting helpers', () => {
  it('goQuote escapes quotes, backslashes and control characters as Go\'s %q does', () => {
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"')
    assert.equal(goQuote('\n\t\r\x07\x08\x0c\x0b'), '"\\n\\t\\r\\a\\b\\f\\v"')
    assert.equal(goQuote('\x00\x1f\x7f'), '"\\x00\\x1f\\x7f"')
  })

  it('goQuote keeps printable Unicode and escapes non-printable code points', () => {
    assert.equal(goQuote('héllo 日本 😀'), '"héllo 日本 😀"')
    assert.equal(goQuote('\u00a0\u200b'), '"\\u00a0\\u200b"')
    assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"')
    assert.equal(goQuote('\ud800'), '"\ufffd"')
  })

  it('goJSON escapes <, > and & the way Go\'s encoder does', () => {
    assert.equal(goJSON(['<a&b>']), '["\\u003ca\\u0026b\\u003e"]')
    assert.equal(goJSON(undefined), 'null')
    assert.equal(goJSON(['\\ud800']), '["\\\\ud800"]')
    assert.equal(goJSON(['\ud800']), '["\ufffd"]')
  })

  it('compareGoStrings orders by UTF-8 bytes, putting astral characters after U+FFFF', () => {
    assert.ok(compareGoStrings('a', 'b') < 0)
    assert.ok(compareGoStrings('ab', 'a') > 0)
    assert.equal(compareGoStrings('x', 'x'), 0)
    assert.ok(compareGoStrings('\uffff', '😀') < 0)
    assert.ok(compareGoStrings('B', 'a') < 0)
  })
})
