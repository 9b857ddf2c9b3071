// Request bodies in CBOR are refused where Kubernetes' decoder (apimachinery cbor/internal/modes
// Decode, fxamacker/cbor v2.7) refuses them, in fxamacker's words.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {CborError, decodeCborRequest as decodeCbor, decodeCbor as decodeResponse, encodeCbor} from '../../src/machinery/cbor.js'

/** the head of a data item of major type `type` with argument `value` */
function head(type: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(type << 5) | value])
  if (value < 0x100) return Buffer.from([(type << 5) | 24, value])
  if (value < 0x10000) return Buffer.from([(type << 5) | 25, value >> 8, value & 0xff])
  const out = Buffer.alloc(5)
  out[0] = (type << 5) | 26
  out.writeUInt32BE(value, 1)
  return out
}
const text = (value: string | Buffer) => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value
  return Buffer.concat([head(3, bytes.length), bytes])
}
const map = (...pairs: Buffer[][]) => Buffer.concat([head(5, pairs.length), ...pairs.flat()])
const array = (...items: Buffer[]) => Buffer.concat([head(4, items.length), ...items])
const selfDescribed = (item: Buffer) => Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), item])
const configMap = (...extra: Buffer[][]) => selfDescribed(map([text('apiVersion'), text('v1')], [text('kind'), text('ConfigMap')], ...extra))

/** the CborError decoding `bytes` throws */
function refusal(bytes: Buffer): CborError {
  try {
    decodeCbor(bytes)
  } catch (error) {
    assert.ok(error instanceof CborError, String(error))
    return error
  }
  assert.fail('decoded')
}

describe('CBOR request decoding (Kubernetes modes.Decode)', () => {
  it('a valid body decodes as before: self-described or not, byte strings as strings, indefinite lengths allowed', () => {
    const value = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'c', labels: {'a.b/c': 'd'}}, data: {k: 'välue', long: 'y'.repeat(100)}, n: [1, -2, 1.5, true, false, null]}
    assert.deepEqual(decodeCbor(encodeCbor(value)), value)
    assert.deepEqual(decodeCbor(encodeCbor(value).subarray(3)), value)
    const bytes = Buffer.concat([head(2, 3), Buffer.from('abc')])
    assert.deepEqual(decodeCbor(map([text('b'), bytes])), {b: 'abc'})
    // an indefinite-length map holding an indefinite-length text string and array
    const indefinite = Buffer.concat([Buffer.from([0xbf]), text('a'), Buffer.from([0x7f]), text('x'), text('y'), Buffer.from([0xff]), text('b'), Buffer.from([0x9f, 0x01, 0xff, 0xff])])
    assert.deepEqual(decodeCbor(indefinite), {a: 'xy', b: [1]})
  })

  it('DupMapKeyEnforcedAPF: a map with a key twice is refused ("found duplicate map key")', () => {
    const error = refusal(configMap([text('kind'), text('Secret')]))
    assert.equal(error.message, 'cbor: found duplicate map key "kind" at map element index 2')
    // Interpret (decoding into TypeMeta) fails: apiVersion and kind are not known
    assert.equal(error.typeMeta, undefined)
    const nested = refusal(configMap([text('data'), map([text('a'), text('1')], [text('b'), text('2')], [text('a'), text('3')])]))
    assert.equal(nested.message, 'cbor: found duplicate map key "a" at map element index 2')
    assert.deepEqual(nested.typeMeta, {apiVersion: 'v1', kind: 'ConfigMap'})
  })

  it('UTF8RejectInvalid: a text string that is not valid UTF-8 is refused ("invalid UTF-8 string"), in a key or a value, short or long', () => {
    for (const bad of [Buffer.from([0x61, 0xff]), Buffer.concat([Buffer.from('x'.repeat(40)), Buffer.from([0xc3])])]) {
      assert.equal(refusal(configMap([text('data'), map([text('a'), text(bad)])])).message, 'cbor: invalid UTF-8 string')
      assert.equal(refusal(configMap([text('data'), map([text(bad), text('a')])])).message, 'cbor: invalid UTF-8 string')
    }
    // U+FFFD written in the body is valid
    assert.deepEqual(decodeCbor(map([text('a'), text('\ufffd'.repeat(20))])), {a: '\ufffd'.repeat(20)})
  })

  it('MaxMapPairs 1024 and MaxArrayElements 1024: "exceeded max number of key-value pairs 1024 for CBOR map", "... of elements 1024 for CBOR array"', () => {
    const pairs = (count: number) => Array.from({length: count}, (_, i) => [text(`k${i}`), text('v')])
    assert.equal(Object.keys(decodeCbor(configMap([text('data'), map(...pairs(1024))])) as any).length, 3)
    assert.equal(refusal(configMap([text('data'), map(...pairs(1025))])).message, 'cbor: exceeded max number of key-value pairs 1024 for CBOR map')
    const items = (count: number) => Array.from({length: count}, () => Buffer.from([0x01]))
    assert.equal((decodeCbor(map([text('a'), array(...items(1024))])) as any).a.length, 1024)
    assert.equal(refusal(map([text('a'), array(...items(1025))])).message, 'cbor: exceeded max number of elements 1024 for CBOR array')
    // counted as they come in an indefinite-length array
    const indefinite = Buffer.concat([Buffer.from([0xa1]), text('a'), Buffer.from([0x9f]), ...items(1025), Buffer.from([0xff])])
    assert.equal(refusal(indefinite).message, 'cbor: exceeded max number of elements 1024 for CBOR array')
    // a response (a list of more than 1024 items) is not held to them
    assert.equal((decodeResponse(map([text('a'), array(...items(1025))])) as any).a.length, 1025)
  })

  it('MaxNestedLevels 64: a 65th level of maps or arrays is refused ("exceeded max nested level 64"), never a stack overflow', () => {
    const nested = (levels: number) => {
      let item = text('x')
      for (let i = 0; i < levels; i++) item = map([text('a'), item])
      return selfDescribed(item)
    }
    assert.doesNotThrow(() => decodeCbor(nested(64)))
    assert.equal(refusal(nested(65)).message, 'cbor: exceeded max nested level 64')
    const deep = Buffer.concat([Buffer.alloc(100_000, 0x81), Buffer.from([0x01])])
    assert.equal(refusal(deep).message, 'cbor: exceeded max nested level 64')
  })

  it('NaNDecodeForbidden and InfDecodeForbidden: "floating-point NaN" / "floating-point infinity" in every width', () => {
    for (const [hex, what] of [['f97e00', 'NaN'], ['fa7fc00000', 'NaN'], ['fb7ff8000000000000', 'NaN'], ['f97c00', 'infinity'], ['faff800000', 'infinity'], ['fb7ff0000000000000', 'infinity']]) {
      assert.equal(refusal(map([text('a'), Buffer.from(hex, 'hex')])).message, `cbor: data item of cbor type primitives is not accepted by protocol: floating-point ${what}`, hex)
    }
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('f93e00', 'hex')])), {a: 1.5})
  })

  it('simple values other than false, true and null are refused ("simple value N is not recognized"); 24-31 are not well-formed', () => {
    assert.equal(refusal(map([text('a'), Buffer.from([0xf7])])).message, 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized')
    assert.equal(refusal(map([text('a'), Buffer.from([0xe0])])).message, 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 0 is not recognized')
    assert.equal(refusal(map([text('a'), Buffer.from([0xf8, 0xff])])).message, 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 255 is not recognized')
    assert.equal(refusal(map([text('a'), Buffer.from([0xf8, 0x18])])).message, 'cbor: invalid simple value 24 for type primitives')
  })

  it('IntDecConvertSignedOrFail: integers past int64 are refused ("overflows Go\'s int64"); BignumTagForbidden refuses tags 2 and 3', () => {
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('1b7fffffffffffffff', 'hex')])), {a: 2 ** 63 - 1})
    assert.equal(refusal(map([text('a'), Buffer.from('1b8000000000000000', 'hex')])).message, "cbor: cannot unmarshal positive integer into Go value of type int64 (9223372036854775808 overflows Go's int64)")
    assert.equal(refusal(map([text('a'), Buffer.from('3b8000000000000000', 'hex')])).message, "cbor: cannot unmarshal negative integer into Go value of type int64 (-9223372036854775809 overflows Go's int64)")
    assert.equal(refusal(map([text('a'), Buffer.from('c241ff', 'hex')])).message, 'cbor: data item of cbor type tag is not accepted by protocol: bignum')
  })

  it('other tags read as their content; expected-later-encoding tags 21-23 turn byte strings into base64url, base64 and hex text', () => {
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('d8204468747470', 'hex')])), {a: 'http'})
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('d74203ff', 'hex')])), {a: '03ff'})
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('d6420fff', 'hex')])), {a: 'D/8='})
    assert.deepEqual(decodeCbor(map([text('a'), Buffer.from('c11a5f5e1000', 'hex')])), {a: '2020-09-13T12:26:40Z'})
  })

  it('what is not one well-formed item is refused in fxamacker\'s words: truncated, trailing bytes, a non-text key', () => {
    assert.equal(refusal(Buffer.from([0xd9, 0xd9, 0xf7, 0xbf, 0x61])).message, 'unexpected EOF')
    assert.equal(refusal(Buffer.concat([encodeCbor({}), Buffer.from([0x01, 0x02])])).message, 'cbor: 2 bytes of extraneous data starting at index 4')
    assert.equal(refusal(map([Buffer.from([0x01]), text('a')])).message, 'cbor: cannot unmarshal positive integer into Go value of type string')
  })
})

describe('CBOR encoding', () => {
  it('"undefined members are left out, as JSON leaves them out": a Status with an unset field decodes with Kubernetes\' rules', () => {
    const status = {kind: 'Status', details: {name: 'x', group: undefined, causes: [undefined, {field: 'a'}]}}
    const decoded = decodeResponse(encodeCbor(status)) as any
    assert.deepEqual(decoded, {kind: 'Status', details: {name: 'x', causes: [null, {field: 'a'}]}})
    const plain = {a: {b: [1, 2]}}
    assert.deepEqual(decodeResponse(encodeCbor(plain)), plain)
  })
})
