// orch describe's header as kubectl's describers print it: annotations as printAnnotationsMultiline does.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {describeObject} from '../../src/cli/describe.js'

describe('describe: annotations', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  const object = (annotations: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {name: 'c', namespace: 'ns', creationTimestamp: '2025-12-31T00:00:00Z', annotations},
  })

  it('"printAnnotationsMultiline": key: value lines, the last-applied-configuration annotation left out (<none> when nothing else), no stray blank line', () => {
    const lastApplied = {'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"ConfigMap"}\n'}
    assert.match(describeObject({kind: 'ConfigMap'}, object(lastApplied), [], now), /^Annotations: +<none>\n(?!\n)/m)
    const text = describeObject({kind: 'ConfigMap'}, object({...lastApplied, 'b.example/x': 'two', a: 'one\n'}), [], now)
    assert.match(text, /^Annotations: +a: one\n +b\.example\/x: two\n(?!\n)/m)
    assert.doesNotMatch(text, /last-applied/)
  })

  it('a long annotation goes on lines of its own under its key, each cut at 140 characters', () => {
    const text = describeObject({kind: 'ConfigMap'}, object({long: 'x'.repeat(200)}), [], now)
    assert.match(text, new RegExp(`^Annotations: +long:\\n +${'x'.repeat(140)}\\.\\.\\.\\n`, 'm'))
  })
})
