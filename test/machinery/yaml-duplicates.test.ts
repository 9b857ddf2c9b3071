import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {yamlDuplicateKeys} from '../../src/machinery/yaml-duplicates.js'

describe('yamlDuplicateKeys', () => {
  it('"line N: key \\"k\\" already set in map" for each repeated key, in block and flow mappings, in sequences, with explicit keys', () => {
    const text = 'a: 1\nb: {x: 1, x: 2}\n? c\n: 1\n? c\n: 2\nl:\n- k: 1\n  k: 2\n'
    assert.deepEqual(yamlDuplicateKeys(text), [
      'line 2: key "x" already set in map',
      'line 5: key "c" already set in map',
      'line 9: key "k" already set in map',
    ])
  })

  it('keys are compared as go-yaml compares them (1 and "1" differ); values that repeat are not keys', () => {
    assert.deepEqual(yamlDuplicateKeys('1: a\n"1": b\nx: same\ny: same\n'), [])
    assert.deepEqual(yamlDuplicateKeys('1: a\n1: b\n'), ['line 2: key 1 already set in map'])
  })

  it('a JSON document read as YAML: the line of the key that repeats', () => {
    assert.deepEqual(yamlDuplicateKeys('{\n  "a": 1,\n  "b": {"c": 1,\n    "c": 2}\n}'), ['line 4: key "c" already set in map'])
  })

  it('nothing for a document that does not parse (the decoder reports that)', () => {
    assert.deepEqual(yamlDuplicateKeys('a: [\n'), [])
  })
})
