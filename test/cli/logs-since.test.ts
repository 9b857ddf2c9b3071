// `orch logs --since`: the duration becomes sinceSeconds as kubectl logs computes it.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {sinceSecondsOf} from '../../src/cli/logs.js'

describe('orch logs --since', () => {
  it('rounds to the nearest second as kubectl does (SinceSeconds.Round(time.Second))', () => {
    assert.equal(sinceSecondsOf('1500ms'), 2)
    assert.equal(sinceSecondsOf('1200ms'), 1)
    assert.equal(sinceSecondsOf('400ms'), 0)
    assert.equal(sinceSecondsOf('1h30m'), 5400)
  })

  it('takes every Go duration form kubectl takes (0, .5s, 1.5h) and refuses the rest', () => {
    assert.equal(sinceSecondsOf('0'), 0)
    assert.equal(sinceSecondsOf('.5s'), 1)
    assert.equal(sinceSecondsOf('1.5h'), 5400)
    assert.equal(sinceSecondsOf('soon'), undefined)
    assert.equal(sinceSecondsOf('5'), undefined)
  })
})
