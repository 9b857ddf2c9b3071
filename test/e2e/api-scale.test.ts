// The scale subresource in the views kubectl asks for: `kubectl get sts web --subresource=scale` prints
// Kubernetes' scaleColumnDefinitions (printScale: NAME DESIRED AVAILABLE AGE), not the default table.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const TABLE = {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'}
const STS = '/apis/apps/v1/namespaces/default/statefulsets'

describe('the scale subresource as a Table', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    const created = await api('POST', STS, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'web'},
      spec: {replicas: 3, serviceName: 'web', selector: {matchLabels: {app: 'web'}}, template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    const status = await api('PATCH', `${STS}/web/status`, {status: {replicas: 2}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(status.status, 200, status.text)
  })
  after(async () => server.cleanup())

  it('GET /scale as a Table: scaleColumnDefinitions (Name, Desired, Available, Age), DESIRED = spec.replicas, AVAILABLE = status.replicas', async () => {
    const result = await api('GET', `${STS}/web/scale`, undefined, TABLE)
    assert.equal(result.status, 200, result.text)
    assert.equal(result.json.kind, 'Table')
    assert.deepEqual(
      result.json.columnDefinitions.map((c: AnyObject) => [c.name, c.type, c.format, c.priority]),
      [
        ['Name', 'string', '', 0],
        ['Desired', 'integer', '', 0],
        ['Available', 'integer', '', 0],
        ['Age', 'string', '', 0],
      ],
    )
    assert.equal(result.json.rows.length, 1)
    const [name, desired, available, age] = result.json.rows[0].cells
    assert.deepEqual([name, desired, available], ['web', 3, 2])
    assert.match(age, /^\d+s$/)
    assert.equal(result.json.rows[0].object.kind, 'PartialObjectMetadata')
    assert.equal(result.json.rows[0].object.metadata.name, 'web')
  })

  it('a write to /scale asking for a Table answers with the Scale as a Table', async () => {
    const patched = await api('PATCH', `${STS}/web/scale`, {spec: {replicas: 5}}, {'Content-Type': 'application/merge-patch+json', ...TABLE})
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.json.kind, 'Table')
    assert.deepEqual(patched.json.rows[0].cells.slice(0, 3), ['web', 5, 2])
  })

  it('without a Table the scale subresource still answers an autoscaling/v1 Scale', async () => {
    const result = await api('GET', `${STS}/web/scale`)
    assert.equal(result.json.kind, 'Scale')
    assert.equal(result.json.apiVersion, 'autoscaling/v1')
    assert.deepEqual(result.json.status, {replicas: 2, selector: 'app=web'})
  })
})
