// Table views (src/apiserver/views.ts): the Name column where the kind's printer puts it (first by
// default, last and only with -o wide for Events), and the Scale subresource's own columns.
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {AnyObject} from '../../src/api/types.js'
import {configMap} from '../../src/api/core/configmap.js'
import {event} from '../../src/api/core/event.js'
import {objectView, table, type ViewRequest} from '../../src/apiserver/views.js'
import {scaleTable, toScale} from '../../src/apiserver/scale.js'

const view: ViewRequest = {as: 'Table', group: 'meta.orch.io', version: 'v1'}
const now = new Date('2025-01-01T01:00:00Z')

const header = (t: AnyObject) => t.columnDefinitions.map((c: AnyObject) => `${c.name}:${c.priority}${c.format ? `:${c.format}` : ''}`)

describe('table views', () => {
  it('a kind without placement: Name first, priority 0, format name', () => {
    const t = table(configMap, [{metadata: {name: 'cm', creationTimestamp: '2025-01-01T00:00:00Z'}}], {}, view, now)
    assert.deepEqual(header(t).slice(0, 1), ['Name:0:name'])
    assert.equal(t.rows[0].cells[0], 'cm')
  })

  it('Event: eventColumnDefinitions end with the Name column, priority 1 (only -o wide)', () => {
    const ev = {
      metadata: {name: 'web-0.181c5e2b3a4d5e6f', namespace: 'default'},
      involvedObject: {kind: 'Pod', name: 'web-0', fieldPath: 'spec.containers{app}'},
      reason: 'Started',
      message: 'Started container app',
      source: {component: 'agent', host: 'n1'},
      firstTimestamp: '2025-01-01T00:55:00Z',
      lastTimestamp: '2025-01-01T00:59:30Z',
      count: 2,
      type: 'Normal',
    }
    const t = table(event, [ev], {}, view, now)
    assert.deepEqual(header(t), ['Last Seen:0', 'Type:0', 'Reason:0', 'Object:0', 'Subobject:1', 'Source:1', 'Message:0', 'First Seen:1', 'Count:1', 'Name:1:name'])
    // printEvent's wide cells, in the columns' order
    assert.deepEqual(t.rows[0].cells, ['30s', 'Normal', 'Started', 'pod/web-0', 'spec.containers{app}', 'agent, n1', 'Started container app', '5m', 2, 'web-0.181c5e2b3a4d5e6f'])
  })

  it('Scale: scaleColumnDefinitions, NAME DESIRED AVAILABLE AGE (the name column not marked as such)', () => {
    const sts = {metadata: {name: 'web', namespace: 'default', creationTimestamp: '2025-01-01T00:00:00Z'}, spec: {replicas: 3}, status: {replicas: 2}}
    const t = objectView(scaleTable, toScale(sts), view, now)
    assert.equal(t.kind, 'Table')
    assert.deepEqual(header(t), ['Name:0', 'Desired:0', 'Available:0', 'Age:0'])
    assert.deepEqual(
      t.columnDefinitions.map((c: AnyObject) => c.type),
      ['string', 'integer', 'integer', 'string'],
    )
    assert.deepEqual(t.rows[0].cells, ['web', 3, 2, '60m'])
    assert.deepEqual(t.rows[0].object, {kind: 'PartialObjectMetadata', apiVersion: 'meta.orch.io/v1', metadata: toScale(sts).metadata})
  })
})
