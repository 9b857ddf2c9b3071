import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {defaultGates, FeatureGateError, parseFeatureGates} from '../../src/machinery/features.js'

describe('feature gates', () => {
  it('alpha is disabled by default, beta and stable are enabled by default', () => {
    const gates = defaultGates()
    assert.equal(gates.CBORServingAndStorage, false)
    assert.equal(gates.PodsAPI, false)
    assert.equal(gates.APIResponseCompression, true)
    assert.equal(gates.ContainerCheckpoint, true)
    assert.equal(gates.InPlacePodVerticalScaling, true)
  })

  it('--feature-gates A=true,B=false overrides the defaults', () => {
    const gates = parseFeatureGates('CBORServingAndStorage=true, APIResponseCompression=false')
    assert.equal(gates.CBORServingAndStorage, true)
    assert.equal(gates.APIResponseCompression, false)
    assert.equal(gates.ContainerCheckpoint, true)
  })

  it('unknown names and non-boolean values are errors', () => {
    assert.throws(() => parseFeatureGates('Nope=true'), FeatureGateError)
    assert.throws(() => parseFeatureGates('PodsAPI=yes'), /must be true or false/)
  })
})
