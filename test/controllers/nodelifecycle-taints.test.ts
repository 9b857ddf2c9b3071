// The NoSchedule tainting pass's arithmetic (withNoScheduleTaints), without a server.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {withNoScheduleTaints} from '../../src/controllers/nodelifecycle.js'

const at = '2024-01-02T03:04:05Z'
const node = (conditions: [string, string][], taints?: unknown[], unschedulable?: boolean) => ({
  metadata: {name: 'n'},
  spec: {...(taints ? {taints} : {}), ...(unschedulable ? {unschedulable} : {})},
  status: {conditions: conditions.map(([type, status]) => ({type, status}))},
})
const keys = (taints: any[] | undefined) => taints?.map((t) => `${t.key}:${t.effect}`)

describe('NoSchedule tainting pass (withNoScheduleTaints)', () => {
  it('"each condition maps to its NoSchedule taint: Ready False not-ready, Ready Unknown unreachable, pressure and NetworkUnavailable True" — in the order of the conditions, unschedulable last, each with timeAdded', () => {
    const taints = withNoScheduleTaints(
      node([['NetworkUnavailable', 'True'], ['Ready', 'Unknown'], ['PIDPressure', 'True'], ['MemoryPressure', 'True'], ['DiskPressure', 'True']], undefined, true),
      at,
    )
    assert.deepEqual(keys(taints), [
      'node.orch.io/network-unavailable:NoSchedule',
      'node.orch.io/unreachable:NoSchedule',
      'node.orch.io/pid-pressure:NoSchedule',
      'node.orch.io/memory-pressure:NoSchedule',
      'node.orch.io/disk-pressure:NoSchedule',
      'node.orch.io/unschedulable:NoSchedule',
    ])
    for (const taint of taints!) assert.equal(taint.timeAdded, at)
    assert.deepEqual(keys(withNoScheduleTaints(node([['Ready', 'False']]), at)), ['node.orch.io/not-ready:NoSchedule'])
  })

  it('"conditions that call for no taint add none": Ready True, pressure False or Unknown, NetworkUnavailable False, unknown types', () => {
    const calm = node([['Ready', 'True'], ['MemoryPressure', 'Unknown'], ['DiskPressure', 'False'], ['NetworkUnavailable', 'False'], ['__proto__', 'True'], ['constructor', 'False']])
    assert.equal(withNoScheduleTaints(calm, at), undefined)
  })

  it('"only the taints it manages are removed": managed NoSchedule taints no longer called for go; other keys, and managed keys with another effect, stay where they are', () => {
    const existing = [
      {key: 'node.orch.io/unreachable', effect: 'NoExecute', timeAdded: at},
      {key: 'node.orch.io/memory-pressure', effect: 'NoSchedule', timeAdded: at},
      {key: 'example.com/own', effect: 'NoSchedule'},
      {key: 'node.orch.io/unschedulable', effect: 'NoSchedule', timeAdded: at},
      {key: 'node.orch.io/disk-pressure', effect: 'PreferNoSchedule'},
    ]
    assert.deepEqual(withNoScheduleTaints(node([['Ready', 'True'], ['MemoryPressure', 'True']], existing), '2030-01-01T00:00:00Z'), [existing[0], existing[1], existing[2], existing[4]])
    // nothing to change: undefined (no write), an existing taint keeps its timeAdded
    const settled = node([['MemoryPressure', 'True']], existing.slice(0, 3).concat(existing[4]))
    assert.equal(withNoScheduleTaints(settled, '2030-01-01T00:00:00Z'), undefined)
  })

  it('a condition listed twice gives one taint', () => {
    assert.deepEqual(keys(withNoScheduleTaints(node([['Ready', 'False'], ['Ready', 'False']]), at)), ['node.orch.io/not-ready:NoSchedule'])
  })
})
