// The Event validator (src/apiserver/validation/event.ts): Kubernetes' legacyValidateEvent as
// ValidateEventCreate / ValidateEventUpdate apply it to core v1 requests, one test per rule, with
// Kubernetes' field paths and messages.
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {AnyObject} from '../../src/api/types.js'
import {create, none, update} from './validation-kinds-fixtures.js'

const E = '/Event'

/** An old-style event (no eventTime), as client-go's core/v1 recorder writes it. */
function legacyEvent(namespace: string, involvedNamespace?: string): AnyObject {
  return {
    metadata: {name: 'web-0.181c5e2b3a4d5e6f', namespace},
    involvedObject: {kind: 'Pod', name: 'web-0', ...(involvedNamespace === undefined ? {} : {namespace: involvedNamespace})},
    reason: 'Started',
    message: 'Started container app',
    source: {component: 'agent', host: 'n1'},
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:00Z',
    count: 1,
    type: 'Normal',
  }
}

/** A new-style event (eventTime set), as an events.k8s.io recorder writes it. */
function newEvent(fields: AnyObject = {}, namespace = 'default', involvedNamespace: string | null = 'default'): AnyObject {
  return {
    metadata: {name: 'web.181c5e2b3a4d5e6f', namespace},
    involvedObject: {kind: 'Service', name: 'web', ...(involvedNamespace === null ? {} : {namespace: involvedNamespace})},
    reason: 'ClusterIPOutOfRange',
    message: 'Cluster IP 10.0.0.1 is not within any configured Service CIDR',
    type: 'Warning',
    eventTime: '2025-01-01T00:00:00.000000Z',
    action: 'ClusterIPAllocation',
    reportingComponent: 'ipallocator-repair-controller',
    reportingInstance: 'ipallocator-repair-controller-host1',
    ...fields,
  }
}

const mismatch = (value: string) => `involvedObject.namespace: Invalid value: "${value}": does not match event.namespace`

describe('Event (core v1)', () => {
  it('Event without eventTime: involvedObject.namespace must match the event namespace', () => {
    none(create(E, legacyEvent('team-a', 'team-a')))
    assert.deepEqual(create(E, legacyEvent('team-a', 'team-b')), [mismatch('team-b')])
    assert.deepEqual(create(E, legacyEvent('default', 'team-b')), [mismatch('team-b')])
  })

  it('Event without eventTime: an involved object without a namespace needs the event in "default" (or no namespace)', () => {
    none(create(E, legacyEvent('default')))
    none(create(E, legacyEvent('default', '')))
    assert.deepEqual(create(E, legacyEvent('team-a')), [mismatch('')])
    assert.deepEqual(create(E, legacyEvent('orch-system')), [mismatch('')])
  })

  it('Event without eventTime: Go\'s zero time counts as no eventTime', () => {
    const event = {...legacyEvent('team-a', 'team-b'), eventTime: '0001-01-01T00:00:00.000000Z'}
    assert.deepEqual(create(E, event), [mismatch('team-b')])
    assert.deepEqual(create(E, {...event, eventTime: null}), [mismatch('team-b')])
  })

  it('Event without eventTime: the reporting fields, action and lengths are not checked', () => {
    none(create(E, {...legacyEvent('default', 'default'), reason: 'R'.repeat(200), message: 'm'.repeat(2000), reportingInstance: ''}))
  })

  it('Event with eventTime: involvedObject.namespace may be empty only for events in "default" or the system namespace', () => {
    none(create(E, newEvent({}, 'default', null)))
    none(create(E, newEvent({}, 'orch-system', null)))
    assert.deepEqual(create(E, newEvent({}, 'team-a', null)), [mismatch('')])
    assert.deepEqual(create(E, newEvent({}, 'kube-system', null)), [mismatch('')])
  })

  it('Event with eventTime: a set involvedObject.namespace is not compared with the event namespace', () => {
    none(create(E, newEvent({}, 'default', 'team-a')))
  })

  it('Event with eventTime: reportingComponent (reportingController) is required and a qualified name, reported as reportingComponent', () => {
    const nameRule =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    none(create(E, newEvent({reportingComponent: 'example.com/my-controller'})))
    assert.deepEqual(create(E, newEvent({reportingComponent: ''})), [
      'reportingComponent: Required value',
      'reportingComponent: Invalid value: "": name part must be non-empty',
      `reportingComponent: Invalid value: "": ${nameRule}`,
    ])
    assert.deepEqual(create(E, newEvent({reportingComponent: 'my controller'})), [`reportingComponent: Invalid value: "my controller": ${nameRule}`])
  })

  it('Event with eventTime: reportingInstance is required and can have at most 128 characters', () => {
    none(create(E, newEvent({reportingInstance: 'i'.repeat(128)})))
    assert.deepEqual(create(E, newEvent({reportingInstance: ''})), ['reportingInstance: Required value'])
    assert.deepEqual(create(E, newEvent({reportingInstance: 'i'.repeat(129)})), ['reportingInstance: Invalid value: "": can have at most 128 characters'])
  })

  it('Event with eventTime: action is required and can have at most 128 characters', () => {
    assert.deepEqual(create(E, newEvent({action: undefined})), ['action: Required value'])
    assert.deepEqual(create(E, newEvent({action: 'a'.repeat(129)})), ['action: Invalid value: "": can have at most 128 characters'])
  })

  it('Event with eventTime: reason is required and can have at most 128 characters', () => {
    assert.deepEqual(create(E, newEvent({reason: ''})), ['reason: Required value'])
    assert.deepEqual(create(E, newEvent({reason: 'R'.repeat(129)})), ['reason: Invalid value: "": can have at most 128 characters'])
  })

  it('Event with eventTime: message (the note) can have at most 1024 characters', () => {
    none(create(E, newEvent({message: undefined})))
    none(create(E, newEvent({message: 'm'.repeat(1024)})))
    assert.deepEqual(create(E, newEvent({message: 'm'.repeat(1025)})), ['message: Invalid value: "": can have at most 1024 characters'])
  })

  it('Event: the event namespace must be a DNS-1123 subdomain', () => {
    const event = legacyEvent('Team_A', 'Team_A')
    assert.deepEqual(create(E, event), [
      `namespace: Invalid value: "Team_A": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ])
  })

  it('Event update: the new event passes the same legacy validation; core v1 updates may change any field', () => {
    const old = newEvent()
    none(update(E, {...old, series: {count: 2, lastObservedTime: '2025-01-01T00:01:00.000000Z'}, reason: 'Other', message: 'changed'}, old))
    assert.deepEqual(update(E, {...old, action: ''}, old), ['action: Required value'])
    assert.deepEqual(update(E, legacyEvent('team-a', 'team-b'), legacyEvent('team-b', 'team-b')), [mismatch('team-b')])
  })
})
