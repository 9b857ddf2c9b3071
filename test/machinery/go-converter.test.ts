// runtime's unstructured converter, as a strategic merge patch's result meets it, and Go's %v of the patch.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {ObjectSchema} from '../../src/api/types.js'
import {goFormatValue, unstructuredConversionError} from '../../src/machinery/go-converter.js'
import {writtenLiteralsOf} from '../../src/machinery/go-json.js'

const schema: ObjectSchema = {
  type: 'object',
  name: 'Thing',
  fields: {
    count: {type: 'integer', format: 'int32', proto: 1},
    ratio: {type: 'number', proto: 2},
    on: {type: 'boolean', proto: 3},
    name: {type: 'string', proto: 4},
    port: {type: 'int-or-string', proto: 5},
    size: {type: 'quantity', proto: 6},
    at: {type: 'time', proto: 7},
    tags: {type: 'array', items: {type: 'string'}, proto: 8},
    labels: {type: 'map', values: {type: 'string'}, proto: 9},
    inner: {type: 'object', name: 'Inner', fields: {x: {type: 'integer', format: 'int64', proto: 1}}, proto: 10},
    free: {type: 'raw', proto: 11},
  },
}

describe('go-converter', () => {
  it('"cannot convert <source> to <target>" for scalars, a whole float taken for an integer', () => {
    assert.equal(unstructuredConversionError({count: 'x'}, schema), 'cannot convert string to int32')
    assert.equal(unstructuredConversionError({count: 1.5}, schema), 'cannot convert float64 to int32')
    assert.equal(unstructuredConversionError({count: 2}, schema), undefined)
    assert.equal(unstructuredConversionError({ratio: true}, schema), 'cannot convert bool to float64')
    assert.equal(unstructuredConversionError({on: 1}, schema), 'cannot convert int64 to bool')
    assert.equal(unstructuredConversionError({name: {a: 1}}, schema), 'cannot convert map[string]interface {} to string')
    assert.equal(unstructuredConversionError({name: [1]}, schema), 'cannot convert []interface {} to string')
  })

  it('"cannot restore struct from: KIND", "cannot restore slice from KIND", "cannot restore map from KIND"', () => {
    assert.equal(unstructuredConversionError({inner: 'x'}, schema), 'cannot restore struct from: string')
    assert.equal(unstructuredConversionError({tags: {a: 1}}, schema), 'cannot restore slice from map')
    assert.equal(unstructuredConversionError({labels: [1]}, schema), 'cannot restore map from slice')
    assert.equal(unstructuredConversionError({inner: {x: 'y'}}, schema), 'cannot convert string to int64')
  })

  it('types with their own UnmarshalJSON give its error; nulls and free-form values convert', () => {
    assert.equal(unstructuredConversionError({port: 1.5}, schema), 'json: cannot unmarshal number 1.5 into Go value of type int32')
    assert.equal(unstructuredConversionError({port: true}, schema), 'json: cannot unmarshal bool into Go value of type int32')
    assert.equal(unstructuredConversionError({port: 'http'}, schema), undefined)
    assert.equal(unstructuredConversionError({at: 5}, schema), 'json: cannot unmarshal number into Go value of type string')
    assert.match(unstructuredConversionError({at: 'yesterday'}, schema)!, /^parsing time "yesterday"/)
    assert.match(unstructuredConversionError({size: 'lots'}, schema)!, /quantities must match the regular expression/)
    assert.equal(unstructuredConversionError({size: 2}, schema), undefined)
    assert.equal(unstructuredConversionError({count: null, inner: null, free: {anything: [1, 'x']}}, schema), undefined)
  })

  it('the first error in the struct\'s field order is the one reported', () => {
    assert.equal(unstructuredConversionError({tags: 'x', count: 'y'}, schema), 'cannot convert string to int32')
  })

  it('%v: maps with sorted keys, slices, <nil>, int64 as written, float64 in strconv\'s shortest %g', () => {
    assert.equal(goFormatValue({b: [1, 'x', null, true], a: {c: {}}}), 'map[a:map[c:map[]] b:[1 x <nil> true]]')
    assert.equal(goFormatValue([3.5, 1e-5, 0.0001, 123456.5, 1234567.5]), '[3.5 1e-05 0.0001 123456.5 1.2345675e+06]')
    assert.equal(goFormatValue(2 ** 64), '1.8446744073709552e+19')
    // how the text wrote a number decides int64 or float64
    const literals = writtenLiteralsOf([
      {segments: ['a', 0], literal: '1e6'},
      {segments: ['a', 1], literal: '2.0'},
      {segments: ['b'], literal: '9007199254740993'},
    ])
    assert.equal(goFormatValue({a: [1e6, 2, 7], b: 9007199254740992}, literals), 'map[a:[1e+06 2 7] b:9007199254740993]')
  })
})
