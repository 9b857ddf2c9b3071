// Write options: dryRun and fieldValidation.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('API writes: dryRun and fieldValidation', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const base = '/api/v1/namespaces/default/configmaps'
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('dryRun=All on create: validated, answered as if done, nothing stored, no resourceVersion consumed, no watch event', async () => {
    const before = (await api('GET', base)).json.metadata.resourceVersion
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${before}`)
    const result = await api('POST', `${base}?dryRun=All`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dry'}, data: {a: 'b'}})
    assert.equal(result.status, 201, result.text)
    assert.equal(result.json.metadata.name, 'dry')
    assert.ok(result.json.metadata.uid)
    assert.equal(result.json.metadata.resourceVersion, undefined)
    assert.equal((await api('GET', `${base}/dry`)).status, 404)
    // a real write afterwards gets the very next revision and is the first event the watch sees
    const real = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'wet'}})
    assert.equal(Number(real.json.metadata.resourceVersion), Number(before) + 1)
    const events = await stream.waitFor(1)
    stream.close()
    assert.equal(events[0].object.metadata.name, 'wet')
    const invalid = await api('POST', `${base}?dryRun=All`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'Bad Name'}})
    assert.equal(invalid.status, 422)
  })

  it('dryRun=All on update, patch, delete and deletecollection changes nothing', async () => {
    const live = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'keep', labels: {dry: 'run'}}, data: {a: '1'}})).json
    const updated = await api('PUT', `${base}/keep?dryRun=All`, {...live, data: {a: '2'}})
    assert.equal(updated.status, 200)
    assert.equal(updated.json.data.a, '2')
    const patched = await api('PATCH', `${base}/keep?dryRun=All`, {data: {a: '3'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.json.data.a, '3')
    assert.equal((await api('DELETE', `${base}/keep?dryRun=All`)).status, 200)
    assert.equal((await api('DELETE', `${base}?dryRun=All&labelSelector=dry%3Drun`)).status, 200)
    const after = (await api('GET', `${base}/keep`)).json
    assert.equal(after.data.a, '1')
    assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion)
  })

  it('dryRun with a value other than All is refused', async () => {
    const result = await api('POST', `${base}?dryRun=Some`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}})
    assert.equal(result.status, 422, result.text)
  })

  it('fieldValidation=Strict: unknown and duplicate fields are 400 naming each, nothing stored', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict","name":"strict"},"dataa":{"a":"b"}}'
    const result = await api('POST', `${base}?fieldValidation=Strict`, body)
    assert.equal(result.status, 400, result.text)
    assert.match(result.json.message, /strict decoding error: /)
    assert.match(result.json.message, /unknown field "dataa"/)
    assert.match(result.json.message, /duplicate field "metadata.name"/)
    assert.equal((await api('GET', `${base}/strict`)).status, 404)
  })

  it('fieldValidation=Warn (the default): stored, each problem in a Warning header of RFC 7234 form', async () => {
    const result = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'warned'}, spec: {x: 1}, data: {a: 'b'}})
    assert.equal(result.status, 201)
    assert.equal(result.headers['warning'], '299 - "unknown field \\"spec\\""')
    assert.equal(result.json.spec, undefined)
  })

  it('fieldValidation=Ignore: stored, no warning', async () => {
    const result = await api('POST', `${base}?fieldValidation=Ignore`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'ignored'}, extra: true})
    assert.equal(result.status, 201)
    assert.equal(result.headers['warning'], undefined)
  })
})
