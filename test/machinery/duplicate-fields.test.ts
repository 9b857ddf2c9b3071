import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {duplicateJsonFields, scanJsonText} from '../../src/machinery/field-validation.js'

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
    assert.deepEqual(scan.fractionalNumbers, [
      {segments: ['spec', 'replicas'], literal: '1.0'},
      {segments: ['spec', 'ports', 1, 'p'], literal: '8e1'},
      {segments: ['spec', 'n'], literal: '-2.50E+1'},
    ])
    assert.deepEqual(scan.duplicates, [])
    assert.deepEqual(scanJsonText('[1.5, {"a": [2.0 ]}]').fractionalNumbers, [
      {segments: [0], literal: '1.5'},
      {segments: [1, 'a', 0], literal: '2.0'},
    ])
  })
})
