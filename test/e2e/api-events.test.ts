// core v1 Events over HTTP: Kubernetes' ValidateEventCreate / ValidateEventUpdate for core v1 requests
// (legacyValidateEvent) and the Table kubectl prints for `get events` (eventColumnDefinitions).
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const TABLE = {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'}
const NS = 'shop'
const EVENTS = `/api/v1/namespaces/${NS}/events`

function event(name: string, fields: AnyObject = {}): AnyObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {name},
    involvedObject: {kind: 'Pod', namespace: NS, name: 'web-0', fieldPath: 'spec.containers{app}'},
    reason: 'Started',
    message: 'Started container app',
    source: {component: 'agent', host: 'n1'},
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:00Z',
    count: 1,
    type: 'Normal',
    ...fields,
  }
}

function assertInvalid(result: HttpResult, name: string, causes: string[]): void {
  assert.equal(result.status, 422, result.text)
  assert.equal(result.json.reason, 'Invalid')
  assert.equal(result.json.message, `Event "${name}" is invalid: ${causes.length === 1 ? causes[0] : `[${causes.join(', ')}]`}`)
}

describe('core v1 Events', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    const created = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: NS}})
    assert.equal(created.status, 201, created.text)
  })
  after(async () => server.cleanup())

  it('an Event without eventTime: involvedObject.namespace must match the event namespace (422 "does not match event.namespace")', async () => {
    const other = event('other-ns', {involvedObject: {kind: 'Pod', namespace: 'default', name: 'web-0'}})
    assertInvalid(await api('POST', EVENTS, other), 'other-ns', ['involvedObject.namespace: Invalid value: "default": does not match event.namespace'])
    const none = event('no-ns', {involvedObject: {kind: 'Node', name: 'n1'}})
    assertInvalid(await api('POST', EVENTS, none), 'no-ns', ['involvedObject.namespace: Invalid value: "": does not match event.namespace'])
    const inDefault = await api('POST', '/api/v1/namespaces/default/events', {...none, metadata: {name: 'node-n1.1'}})
    assert.equal(inDefault.status, 201, inDefault.text)
  })

  it('an Event with eventTime: reportingComponent, reportingInstance, action and reason are required (reported by their core v1 names)', async () => {
    const newStyle = event('new-style', {eventTime: '2025-01-01T00:00:00.000000Z', source: undefined, firstTimestamp: undefined, lastTimestamp: undefined, count: undefined, reportingComponent: '', reason: ''})
    const result = await api('POST', EVENTS, newStyle)
    assert.equal(result.status, 422, result.text)
    assert.deepEqual(
      result.json.details.causes.map((c: AnyObject) => `${c.field}: ${c.message}`),
      [
        'reportingComponent: Required value',
        'reportingComponent: Invalid value: "": name part must be non-empty',
        `reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        'reportingInstance: Required value',
        'action: Required value',
        'reason: Required value',
      ],
    )
    const valid = {...newStyle, reportingComponent: 'example.com/controller', reportingInstance: 'controller-1', action: 'Start', reason: 'Started'}
    assert.equal((await api('POST', EVENTS, valid)).status, 201)
  })

  it('an Event with eventTime: reason can have at most 128 characters and message at most 1024', async () => {
    const long = event('long', {eventTime: '2025-01-01T00:00:00.000000Z', reportingComponent: 'ctl', reportingInstance: 'ctl-1', action: 'Start', reason: 'R'.repeat(129), message: 'm'.repeat(1025)})
    assertInvalid(await api('POST', EVENTS, long), 'long', ['reason: Invalid value: "": can have at most 128 characters', 'message: Invalid value: "": can have at most 1024 characters'])
  })

  it('an update passes the same validation: a core v1 update may change the event, but not into an invalid one', async () => {
    const created = await api('POST', EVENTS, event('updated'))
    assert.equal(created.status, 201, created.text)
    const bumped = await api('PUT', `${EVENTS}/updated`, {...created.json, count: 2, message: 'again'})
    assert.equal(bumped.status, 200, bumped.text)
    const moved = await api('PUT', `${EVENTS}/updated`, {...bumped.json, involvedObject: {kind: 'Pod', namespace: 'elsewhere', name: 'web-0'}})
    assertInvalid(moved, 'updated', ['involvedObject.namespace: Invalid value: "elsewhere": does not match event.namespace'])
  })

  it('a core v1 Event name is only checked as a path segment (ValidateEventCreate skips ValidateObjectMeta for core v1)', async () => {
    assert.equal((await api('POST', EVENTS, event('Web-0.Started_1'))).status, 201)
    const percent = await api('POST', EVENTS, event('a%b'))
    assertInvalid(percent, 'a%b', [`metadata.name: Invalid value: "a%b": may not contain '%'`])
  })

  it('get events as a Table: LAST SEEN TYPE REASON OBJECT MESSAGE, the Name column last and only with -o wide (printEvent)', async () => {
    const result = await api('GET', `${EVENTS}/updated`, undefined, TABLE)
    assert.equal(result.status, 200, result.text)
    const columns = result.json.columnDefinitions as AnyObject[]
    assert.deepEqual(
      columns.map((c) => [c.name, c.priority, c.format]),
      [
        ['Last Seen', 0, ''],
        ['Type', 0, ''],
        ['Reason', 0, ''],
        ['Object', 0, ''],
        ['Subobject', 1, ''],
        ['Source', 1, ''],
        ['Message', 0, ''],
        ['First Seen', 1, ''],
        ['Count', 1, ''],
        ['Name', 1, 'name'],
      ],
    )
    const cells = result.json.rows[0].cells as unknown[]
    assert.deepEqual(cells.slice(1), ['Normal', 'Started', 'pod/web-0', 'spec.containers{app}', 'agent, n1', 'again', cells[7], 2, 'updated'])
    const list = await api('GET', EVENTS, undefined, TABLE)
    assert.ok(list.json.rows.every((row: AnyObject) => row.cells.at(-1) === row.object.metadata.name))
  })
})

describe('orch server --event-ttl', () => {
  let server: RunningOrch
  before(async () => {
    server = await startOrchServer(['--controllers=', '--event-ttl=1s'])
    await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: NS}})
  })
  after(async () => server.cleanup())

  it('--event-ttl: an Event is deleted once the TTL has passed since its last write, and watchers see it DELETED', async () => {
    const created = await call(server.url, 'POST', EVENTS, event('short-lived'))
    assert.equal(created.status, 201, created.text)
    const watch = await openWatch(server.url, `${EVENTS}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`)
    try {
      const [deleted] = await watch.waitFor(1)
      assert.equal(deleted.type, 'DELETED')
      assert.equal(deleted.object.metadata.name, 'short-lived')
    } finally {
      watch.close()
    }
    assert.equal((await call(server.url, 'GET', `${EVENTS}/short-lived`)).status, 404)
  })
})
