import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {duplicateJsonFields, MAX_NUMBER_LITERALS, scanJsonText} from '../../src/machinery/field-validation.js'
import {jsonPatchNumbers} from '../../src/machinery/patch.js'

describe('duplicateJsonFields (fieldValidation Warn/Strict: "duplicate field")', () => {
  it('names each key that appears twice in one object, with its path', () => {
    assert.deepEqual(duplicateJsonFields('{"a":1,"b":{"c":1,"c":2},"a":3}'), ['b.c', 'a'])
    assert.deepEqual(duplicateJsonFields('{"metadata":{"name":"x","labels":{"k":"1"},"name":"y"}}'), ['metadata.name'])
  })

  it('paths through lists carry the index; a key repeated in different objects is no duplicate', () => {
    assert.deepEqual(duplicateJsonFields('{"spec":{"containers":[{"name":"a"},{"name":"b","image":"i","image":"j"}]}}'), ['spec.containers[1].image'])
    assert.deepEqual(duplicateJsonFields('[{"k":1},{"k":2,"k":3}]'), ['[1].k'])
    assert.deepEqual(duplicateJsonFields('{"a":{"x":1},"b":{"x":1}}'), [])
  })

  it('escaped quotes and backslashes in keys and values do not end a string early', () => {
    assert.deepEqual(duplicateJsonFields('{"v":"say \\"hi\\", \\"v\\":1","v":2}'), ['v'])
    assert.deepEqual(duplicateJsonFields('{"back\\\\":"ends with \\\\","back\\\\":1}'), ['back\\'])
    assert.deepEqual(duplicateJsonFields('{"a\\"b":1,"a\\u0022b":2}'), ['a"b'])
  })

  it('white space, empty containers and scalars of every type are read through', () => {
    const text = ' {\n  "a" : [ ] ,\t"b" : { } , "c" : null , "d" : true , "e" : -1.5e3 , "a" : "again"\r\n} '
    assert.deepEqual(duplicateJsonFields(text), ['a'])
    assert.deepEqual(duplicateJsonFields('{}'), [])
    assert.deepEqual(duplicateJsonFields('"just a string"'), [])
  })

  it('malformed JSON reports what it read before the fault and never throws', () => {
    assert.deepEqual(duplicateJsonFields('{"a":1,"a":2,"b":"unterminated'), ['a'])
    assert.deepEqual(duplicateJsonFields('{"a":'), [])
  })
})

describe('scanJsonText: numbers as they were written', () => {
  it('finds each number written with a fraction or an exponent, with the keys and indexes leading to it; not true, false, strings or whole numbers', () => {
    const scan = scanJsonText('{"spec":{"replicas":1.0,"ports":[{"p":80},{"p":8e1}],"t":true,"f":false,"s":"1.0","n":-2.50E+1,"i":-3}}')
    assert.deepEqual(scan.numberLiterals, [
      {segments: ['spec', 'replicas'], literal: '1.0'},
      {segments: ['spec', 'ports', 1, 'p'], literal: '8e1'},
      {segments: ['spec', 'n'], literal: '-2.50E+1'},
    ])
    assert.deepEqual(scan.duplicates, [])
    assert.deepEqual(scanJsonText('[1.5, {"a": [2.0 ]}]').numberLiterals, [
      {segments: [0], literal: '1.5'},
      {segments: [1, 'a', 0], literal: '2.0'},
    ])
  })
})

describe('jsonPatchNumbers: where a JSON patch value\'s number lands', () => {
  const numbersOf = (patch: string) => jsonPatchNumbers(JSON.parse(patch), scanJsonText(patch).numberLiterals)

  it('an add or replace value lands at the op\'s path (pointer escapes undone), followed by its own keys', () => {
    assert.deepEqual(numbersOf('[{"op":"replace","path":"/spec/replicas","value":3.0},{"op":"add","path":"/metadata/a~1b","value":{"n":[1e0]}}]'), [
      {segments: ['spec', 'replicas'], literal: '3.0'},
      {segments: ['metadata', 'a/b', 'n', 0], literal: '1e0'},
    ])
  })

  it('not when a later operation may have replaced, moved or shifted it, nor for appends or test values', () => {
    assert.deepEqual(numbersOf('[{"op":"replace","path":"/spec/replicas","value":3.0},{"op":"replace","path":"/spec/replicas","value":3}]'), [])
    assert.deepEqual(numbersOf('[{"op":"replace","path":"/spec/replicas","value":3.0},{"op":"remove","path":"/spec"}]'), [])
    assert.deepEqual(numbersOf('[{"op":"add","path":"/spec/ports/1","value":{"port":8.0}},{"op":"remove","path":"/spec/ports/0"}]'), [])
    assert.deepEqual(numbersOf('[{"op":"add","path":"/spec/ports/1","value":{"port":8.0}},{"op":"add","path":"/spec/ports/-","value":{}}]'), [])
    assert.deepEqual(numbersOf('[{"op":"replace","path":"/a","value":1.0},{"op":"move","from":"/b","path":"/c"}]'), [])
    assert.deepEqual(numbersOf('[{"op":"add","path":"/spec/ports/-","value":{"port":8.0}}]'), [])
    assert.deepEqual(numbersOf('[{"op":"test","path":"/spec/replicas","value":3.0}]'), [])
  })

  it('a later operation beside it (a sibling field, another array) leaves it where it landed; many operations take one pass', () => {
    assert.deepEqual(numbersOf('[{"op":"replace","path":"/spec/replicas","value":3.0},{"op":"replace","path":"/spec/paused","value":false},{"op":"add","path":"/spec/other/0","value":1}]'), [
      {segments: ['spec', 'replicas'], literal: '3.0'},
    ])
    const ops = Array.from({length: 10_000}, (_, i) => `{"op":"add","path":"/k${i}/x","value":1.5}`)
    const started = process.hrtime.bigint()
    assert.equal(numbersOf(`[${ops.join(',')}]`).length, 10_000)
    assert.ok(process.hrtime.bigint() - started < 5_000_000_000n, 'linear, not quadratic, in the operations')
  })
})

describe('scanJsonText: long numbers and the cap', () => {
  it('records numbers of more than 15 characters (JSON.parse may round them), and at most MAX_NUMBER_LITERALS', () => {
    assert.deepEqual(scanJsonText('{"a":123456789012345,"b":1234567890123456}').numberLiterals, [{segments: ['b'], literal: '1234567890123456'}])
    const many = `[${Array.from({length: MAX_NUMBER_LITERALS + 5}, () => '0.5').join(',')}]`
    assert.equal(scanJsonText(many).numberLiterals.length, MAX_NUMBER_LITERALS)
    const deep = `${'{"a":'.repeat(1_000)}[${Array.from({length: 1_000}, () => '0.5').join(',')}]${'}'.repeat(1_000)}`
    assert.equal(scanJsonText(deep).numberLiterals.length, 199, 'paths of 1,001 segments: at most 200,000 segments recorded in all')
  })
})
