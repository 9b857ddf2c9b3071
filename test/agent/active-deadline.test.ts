// The agent's active deadline timer (the kubelet's activeDeadlineHandler): a deadline further away than
// a timer can wait (2^31-1 ms, ~24.8 days) is not fired at once (Node's TimeoutOverflowWarning and a
// 1 ms timer) but waited for in steps, armed again each time.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {checkActiveDeadline, type DeadlineState} from '../../src/agent/pods/pod-lifecycle.js'

describe('activeDeadlineSeconds timers', () => {
  it('a deadline 30 days away arms a timer of at most 2^31-1 ms, without a TimeoutOverflowWarning, and is not due yet', () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const nowMs = Date.now()
      const state: DeadlineState = {pod: {metadata: {name: 'p', namespace: 'ns', uid: 'u'}, spec: {activeDeadlineSeconds: 30 * 24 * 3600}}, startMs: nowMs}
      let woken = 0
      checkActiveDeadline(state, nowMs, undefined, () => woken++)
      assert.equal(state.evicted, undefined)
      assert.ok(state.deadline, 'a timer is armed')
      const timer = state.deadline!.timer as unknown as {_idleTimeout: number}
      assert.ok(timer._idleTimeout <= 2 ** 31 - 1 && timer._idleTimeout > 2 ** 30, `timer of ${timer._idleTimeout} ms`)
      clearTimeout(state.deadline!.timer)
      assert.equal(woken, 0)
    } finally {
      process.off('warning', onWarning)
    }
    assert.deepEqual(warnings.filter((name) => name === 'TimeoutOverflowWarning'), [])
  })
})
