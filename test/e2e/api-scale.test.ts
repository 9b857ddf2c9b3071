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

describe('server-side apply to the scale subresource', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const APPLY = {'Content-Type': 'application/apply-patch+yaml'}
  const scaleConfig = (replicas: number) => JSON.stringify({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'db'}, spec: {replicas}})
  const managers = (object: AnyObject) =>
    (object.metadata!.managedFields as AnyObject[]).map((entry) => [entry.manager, entry.operation, entry.subresource ?? '', JSON.stringify(entry.fieldsV1)])

  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    const manifest = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'db'},
      spec: {replicas: 2, serviceName: 'db', selector: {matchLabels: {app: 'db'}}, template: {metadata: {labels: {app: 'db'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    }
    const applied = await api('PATCH', `${STS}/db?fieldManager=deployer`, JSON.stringify(manifest), APPLY)
    assert.equal(applied.status, 201, applied.text)
  })
  after(async () => server.cleanup())

  it("an apply of a Scale whose replicas another applier owns is 409 Conflict naming that manager and .spec.replicas, and changes nothing", async () => {
    const refused = await api('PATCH', `${STS}/db/scale?fieldManager=autoscaler`, scaleConfig(4), APPLY)
    assert.equal(refused.status, 409, refused.text)
    assert.equal(refused.json.reason, 'Conflict')
    assert.equal(refused.json.message, 'Apply failed with 1 conflict: conflict with "deployer": .spec.replicas')
    assert.deepEqual(refused.json.details.causes, [{reason: 'FieldManagerConflict', message: 'conflict with "deployer"', field: '.spec.replicas'}])
    assert.equal((await api('GET', `${STS}/db`)).json.spec.replicas, 2)
  })

  it('a forced apply of a Scale sets the parent\'s replicas and moves .spec.replicas to its manager (ScaleHandler.ToParent): the applier keeps the rest', async () => {
    const forced = await api('PATCH', `${STS}/db/scale?fieldManager=autoscaler&force=true`, scaleConfig(4), APPLY)
    assert.equal(forced.status, 200, forced.text)
    assert.equal(forced.json.kind, 'Scale')
    assert.equal(forced.json.spec.replicas, 4)
    const sts = (await api('GET', `${STS}/db`)).json
    assert.equal(sts.spec.replicas, 4)
    const entries = managers(sts)
    const deployer = entries.find(([manager]) => manager === 'deployer')!
    assert.doesNotMatch(deployer[3], /f:replicas/, 'the applier of the StatefulSet no longer owns its replicas')
    assert.match(deployer[3], /f:serviceName/)
    const autoscaler = entries.find(([manager]) => manager === 'autoscaler')!
    assert.deepEqual(autoscaler.slice(0, 3), ['autoscaler', 'Apply', 'scale'])
    assert.equal(autoscaler[3], '{"f:spec":{"f:replicas":{}}}')
    assert.equal((sts.metadata.managedFields as AnyObject[]).find((entry) => entry.manager === 'autoscaler')!.apiVersion, 'apps/v1')
  })

  it('the Scale\'s manager then applies again without force; the first applier now conflicts on /scale replicas, not on its other fields', async () => {
    const again = await api('PATCH', `${STS}/db/scale?fieldManager=autoscaler`, scaleConfig(6), APPLY)
    assert.equal(again.status, 200, again.text)
    assert.equal((await api('GET', `${STS}/db`)).json.spec.replicas, 6)
    const manifest = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'db'}, spec: {replicas: 2}}
    const conflict = await api('PATCH', `${STS}/db?fieldManager=deployer`, JSON.stringify(manifest), APPLY)
    assert.equal(conflict.status, 409, conflict.text)
    assert.match(conflict.json.message, /conflict with "autoscaler" with subresource "scale": \.spec\.replicas/)
  })

  it('a Scale apply needs a fieldManager, a Scale of autoscaling/v1 naming the URL\'s object, and the object to exist', async () => {
    const noManager = await api('PATCH', `${STS}/db/scale`, scaleConfig(3), APPLY)
    assert.equal(noManager.status, 422, noManager.text)
    assert.match(noManager.json.message, /fieldManager: Required value: is required for apply patch/)
    const wrongKind = await api('PATCH', `${STS}/db/scale?fieldManager=x`, JSON.stringify({apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'db'}}), APPLY)
    assert.equal(wrongKind.status, 400, wrongKind.text)
    assert.equal(wrongKind.json.message, 'invalid object type: apps/v1, Kind=StatefulSet')
    const elsewhere = await api('PATCH', `${STS}/db/scale?fieldManager=x`, JSON.stringify({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'db', namespace: 'other'}, spec: {replicas: 3}}), APPLY)
    assert.equal(elsewhere.status, 400, elsewhere.text)
    assert.equal(elsewhere.json.message, 'the namespace of the object (other) does not match the namespace on the request (default)')
    const absent = await api('PATCH', `${STS}/nothing/scale?fieldManager=x`, JSON.stringify({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'nothing'}, spec: {replicas: 1}}), APPLY)
    assert.equal(absent.status, 404, absent.text)
  })
})
