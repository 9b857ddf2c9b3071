// ServiceCIDR, Service cluster IPs (IPAddress objects) and StorageVersionMigration, end to end.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const NET = '/apis/networking.orch.io/v1'
const SVM = '/apis/storagemigration.orch.io/v1beta1/storageversionmigrations'

describe('ServiceCIDR and Service IPs', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    // a deleted range's grace period shortened from 10 s
    server = await startOrchServer(['--service-cluster-ip-range', '10.100.0.0/24', '--service-cidr-deletion-grace', '500ms'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  /** Watches one object until the predicate holds (or it is deleted, when predicate is 'deleted'). */
  async function waitFor(collection: string, name: string, predicate: ((o: any) => boolean) | 'deleted'): Promise<any> {
    const list = (await api('GET', collection)).json
    const current = list.items.find((i: any) => i.metadata.name === name)
    if (predicate === 'deleted' ? !current : current && predicate(current)) return current
    const stream = await openWatch(server.url, `${collection}?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let n = 1; ; n++) {
        const event = (await stream.waitFor(n))[n - 1]
        if (predicate === 'deleted' ? event.type === 'DELETED' : predicate(event.object)) return event.object
      }
    } finally {
      stream.close()
    }
  }

  const svc = (name: string, spec: any = {}) => ({apiVersion: 'v1', kind: 'Service', metadata: {name}, spec: {ports: [{port: 80}], selector: {app: name}, ...spec}})

  it('a default ServiceCIDR named orch is created from --service-cluster-ip-range and becomes Ready', async () => {
    const cidr = await waitFor(`${NET}/servicecidrs`, 'orch', (o) => o.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
    assert.deepEqual(cidr.spec.cidrs, ['10.100.0.0/24'])
    assert.ok(cidr.metadata.finalizers.includes('networking.orch.io/service-cidr-finalizer'))
  })

  it('a Service gets a ClusterIP from the ServiceCIDRs, recorded as an IPAddress naming it', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/services', svc('web'))
    assert.equal(created.status, 201, created.text)
    const ip = created.json.spec.clusterIP
    assert.match(ip, /^10\.100\.0\.\d+$/)
    assert.deepEqual(created.json.spec.clusterIPs, [ip])
    const address = (await api('GET', `${NET}/ipaddresses/${ip}`)).json
    assert.deepEqual(address.spec.parentRef, {group: '', resource: 'services', namespace: 'default', name: 'web'})
  })

  it('a requested ClusterIP already allocated is refused with 422; one outside every range too', async () => {
    const first = await api('POST', '/api/v1/namespaces/default/services', svc('fixed', {clusterIP: '10.100.0.77'}))
    assert.equal(first.status, 201, first.text)
    const taken = await api('POST', '/api/v1/namespaces/default/services', svc('fixed-2', {clusterIP: '10.100.0.77'}))
    assert.equal(taken.status, 422, taken.text)
    assert.match(taken.json.message, /provided IP is already allocated/)
    const outside = await api('POST', '/api/v1/namespaces/default/services', svc('outside', {clusterIP: '192.168.1.1'}))
    assert.equal(outside.status, 422)
    assert.match(outside.json.message, /not in the valid range/)
  })

  it('concurrent Services never share an IP', async () => {
    const results = await Promise.all(Array.from({length: 20}, (_, i) => api('POST', '/api/v1/namespaces/default/services', svc(`many-${i}`))))
    const ips = results.map((r) => r.json.spec.clusterIP)
    assert.equal(new Set(ips).size, 20)
  })

  it('a ClusterIP may not change once set', async () => {
    const live = (await api('GET', '/api/v1/namespaces/default/services/web')).json
    const result = await api('PUT', '/api/v1/namespaces/default/services/web', {...live, spec: {...live.spec, clusterIP: '10.100.0.200', clusterIPs: ['10.100.0.200']}})
    assert.equal(result.status, 422, result.text)
  })

  it('deleting a Service releases its IPAddress', async () => {
    const ip = (await api('GET', '/api/v1/namespaces/default/services/fixed')).json.spec.clusterIP
    await api('DELETE', '/api/v1/namespaces/default/services/fixed')
    assert.equal((await api('GET', `${NET}/ipaddresses/${ip}`)).status, 404)
  })

  it('deleting a ServiceCIDR that still has allocated IPs waits (finalizer) until they are gone', async () => {
    const created = await api('POST', `${NET}/servicecidrs`, {apiVersion: 'networking.orch.io/v1', kind: 'ServiceCIDR', metadata: {name: 'extra'}, spec: {cidrs: ['10.200.0.0/28']}})
    assert.equal(created.status, 201, created.text)
    const inExtra = await api('POST', '/api/v1/namespaces/default/services', svc('in-extra', {clusterIP: '10.200.0.5'}))
    assert.equal(inExtra.status, 201, inExtra.text)
    await api('DELETE', `${NET}/servicecidrs/extra`)
    const held = await waitFor(`${NET}/servicecidrs`, 'extra', (o) => o.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'False'))
    assert.equal(held.status.conditions.find((c: any) => c.type === 'Ready').reason, 'Terminating')
    assert.ok(held.metadata.deletionTimestamp)
    // no new IPs come from a range being deleted
    const refused = await api('POST', '/api/v1/namespaces/default/services', svc('late', {clusterIP: '10.200.0.6'}))
    assert.equal(refused.status, 422)
    await api('DELETE', '/api/v1/namespaces/default/services/in-extra')
    await waitFor(`${NET}/servicecidrs`, 'extra', 'deleted')
  })

  it('ServiceCIDR validation: at most 2, one per family, valid and immutable', async () => {
    const bad = async (cidrs: string[]) =>
      (await api('POST', `${NET}/servicecidrs`, {apiVersion: 'networking.orch.io/v1', kind: 'ServiceCIDR', metadata: {name: 'bad'}, spec: {cidrs}})).status
    assert.equal(await bad(['10.0.0.0/8', '11.0.0.0/8']), 422)
    assert.equal(await bad(['10.0.0.0/8', 'fd00::/64', '12.0.0.0/8']), 422)
    assert.equal(await bad(['not-a-cidr']), 422)
  })
})

describe('StorageVersionMigration', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    // a resource discovery does not serve is looked for again for 2 s (Kubernetes: a minute)
    server = await startOrchServer(['--storage-migration-discovery-wait', '2s'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  async function waitForCondition(name: string, type: string): Promise<any> {
    for (;;) {
      const list = (await api('GET', SVM)).json
      const svm = list.items.find((i: any) => i.metadata.name === name)
      if (svm?.status?.conditions?.some((c: any) => c.type === type && c.status === 'True')) return svm
      const stream = await openWatch(server.url, `${SVM}?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
      await stream.waitFor(1)
      stream.close()
    }
  }

  it('the migrator records status.resourceVersion, rewrites every object with a no-op update, and ends Succeeded', async () => {
    for (let i = 0; i < 5; i++) await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `m-${i}`}, data: {i: String(i)}})
    const created = await api('POST', SVM, {apiVersion: 'storagemigration.orch.io/v1beta1', kind: 'StorageVersionMigration', metadata: {name: 'cms'}, spec: {resource: {group: '', resource: 'configmaps'}}})
    assert.equal(created.status, 201, created.text)
    const done = await waitForCondition('cms', 'Succeeded')
    assert.match(done.status.resourceVersion, /^\d+$/)
    assert.equal(done.status.conditions.find((c: any) => c.type === 'Running').status, 'False')
    const after = (await api('GET', '/api/v1/namespaces/default/configmaps/m-0')).json
    assert.equal(after.data.i, '0')
  })

  it('conditions as Kubernetes\' svm controller writes them: "Running" reason "StorageVersionMigrationInProgress", then "Succeeded" reason "StorageVersionMigrationSucceeded", messages empty, Running turned False keeping its reason', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'reasons'}})
    const created = await api('POST', SVM, {apiVersion: 'storagemigration.orch.io/v1beta1', kind: 'StorageVersionMigration', metadata: {name: 'reasons'}, spec: {resource: {group: '', resource: 'configmaps'}}})
    assert.equal(created.status, 201, created.text)
    const done = await waitForCondition('reasons', 'Succeeded')
    const strip = (c: any) => ({type: c.type, status: c.status, reason: c.reason, message: c.message})
    assert.deepEqual(done.status.conditions.map(strip), [
      {type: 'Running', status: 'False', reason: 'StorageVersionMigrationInProgress', message: ''},
      {type: 'Succeeded', status: 'True', reason: 'StorageVersionMigrationSucceeded', message: ''},
    ])
  })

  it('create clears status, so a forged Succeeded condition cannot stop the migration (svm.Status = {} on create)', async () => {
    const forged = {
      conditions: [{type: 'Succeeded', status: 'True', reason: 'Forged', message: 'nothing to do', lastTransitionTime: '2025-01-01T00:00:00Z'}],
      resourceVersion: '1',
    }
    const created = await api('POST', SVM, {apiVersion: 'storagemigration.orch.io/v1beta1', kind: 'StorageVersionMigration', metadata: {name: 'forged'}, spec: {resource: {group: '', resource: 'configmaps'}}, status: forged})
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.status, {})
    const done = await waitForCondition('forged', 'Succeeded')
    assert.notEqual(done.status.conditions.find((c: any) => c.type === 'Succeeded').reason, 'Forged')
    assert.equal(done.status.conditions.find((c: any) => c.type === 'Running')?.status, 'False', 'the migrator ran it')
    assert.notEqual(done.status.resourceVersion, '1')
  })

  it('/status is validated as Kubernetes\' v1beta1 does: conditions of the shared Condition shape, status.resourceVersion an integer', async () => {
    const created = await api('POST', SVM, {apiVersion: 'storagemigration.orch.io/v1beta1', kind: 'StorageVersionMigration', metadata: {name: 'shaped'}, spec: {resource: {group: 'example.com', resource: 'gadgets'}}})
    assert.equal(created.status, 201, created.text)
    // no resourceVersion precondition: the migrator may write the status meanwhile
    const body = {...created.json, metadata: {name: 'shaped'}, status: {resourceVersion: 'latest', conditions: [{type: 'Running', status: 'True'}]}}
    const refused = await api('PUT', `${SVM}/shaped/status`, body)
    assert.equal(refused.status, 422, refused.text)
    const causes = refused.json.details.causes.map((c: any) => `${c.field}: ${c.message}`)
    for (const cause of [
      'status.resourceVersion: Invalid value: "latest": failed to parse resource version "latest": strconv.ParseInt: parsing "latest": invalid syntax',
      'status.conditions[0].lastTransitionTime: Required value: must be set',
      'status.conditions[0].reason: Required value: must be set',
    ]) {
      assert.ok(causes.includes(cause), `${cause} among ${JSON.stringify(causes)}`)
    }
  })

  it('a migration of a resource discovery does not serve is retried, then "Failed" with reason "StorageVersionMigrationFailed" and message "migration encountered unhandled error: unable to obtain GVR from discovery"', async () => {
    const created = await api('POST', SVM, {apiVersion: 'storagemigration.orch.io/v1beta1', kind: 'StorageVersionMigration', metadata: {name: 'nope'}, spec: {resource: {group: 'example.com', resource: 'widgets'}}})
    assert.equal(created.status, 201, created.text)
    const failed = await waitForCondition('nope', 'Failed')
    const condition = failed.status.conditions.find((c: any) => c.type === 'Failed')
    assert.equal(condition.reason, 'StorageVersionMigrationFailed')
    assert.equal(condition.message, 'migration encountered unhandled error: unable to obtain GVR from discovery')
    // it never ran: no Running condition, no resourceVersion
    assert.deepEqual(failed.status.conditions.map((c: any) => c.type), ['Failed'])
    // not before the wait (2 s here) since its creation was over; timestamps are whole seconds
    const waited = Date.parse(condition.lastTransitionTime) - Date.parse(failed.metadata.creationTimestamp)
    assert.ok(waited >= 1000, `failed ${waited} ms after creation`)
  })
})
