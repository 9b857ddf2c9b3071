// The ServiceCIDR controllers, end to end: the apiserver's default-ServiceCIDR controller, which
// recreates `orch` when it is gone, and the servicecidr controller's Ready condition and deletion
// grace period. The server runs them with short intervals (hidden test flags).
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'

const NET = '/apis/networking.orch.io/v1'
const GRACE_MS = 2_000

describe('ServiceCIDR controllers', () => {
  let server: OrchServer
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer([
      '--service-cluster-ip-range',
      '10.101.0.0/24',
      '--default-service-cidr-interval',
      '200ms',
      '--service-cidr-deletion-grace',
      `${GRACE_MS}ms`,
    ])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  /** Watches one ServiceCIDR until the predicate holds (or it is deleted, when predicate is 'deleted'). */
  async function waitFor(name: string, predicate: ((o: any) => boolean) | 'deleted'): Promise<any> {
    const collection = `${NET}/servicecidrs`
    const list = (await api('GET', collection)).json
    const current = list.items.find((i: any) => i.metadata.name === name)
    if (predicate === 'deleted' ? !current : current && predicate(current)) return current
    const stream = await openWatch(server.url, `${collection}?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    try {
      for (let n = 1; ; n++) {
        const event = (await stream.waitFor(n))[n - 1]
        if (predicate === 'deleted' ? event.type === 'DELETED' : event.type !== 'DELETED' && predicate(event.object)) return event.object
      }
    } finally {
      stream.close()
    }
  }

  const ready = (o: any) => o.status?.conditions?.find((c: any) => c.type === 'Ready')
  const isReady = (o: any) => ready(o)?.status === 'True'
  const serviceCIDR = (name: string, cidrs: string[]) => ({apiVersion: 'networking.orch.io/v1', kind: 'ServiceCIDR', metadata: {name}, spec: {cidrs}})

  it('a ServiceCIDR\'s Ready condition is status "True", reason "" (Kubernetes sets none), message "orch Service CIDR is ready"', {timeout: 30_000}, async () => {
    const created = await api('POST', `${NET}/servicecidrs`, serviceCIDR('fresh', ['10.210.0.0/28']))
    assert.equal(created.status, 201, created.text)
    const cidr = await waitFor('fresh', (o) => ready(o)?.message === 'orch Service CIDR is ready')
    const condition = ready(cidr)
    assert.equal(condition.status, 'True')
    assert.equal(condition.reason, '')
    assert.match(condition.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  it('a PATCH to /status with a condition of status "Bogus" is 200: "ValidateServiceCIDRStatusUpdate" validates only metadata', {timeout: 30_000}, async () => {
    await waitFor('fresh', isReady)
    const patch = {status: {conditions: [{type: 'example.com/Probe', status: 'Bogus', reason: '', message: 'anything', lastTransitionTime: '2025-01-01T00:00:00Z'}]}}
    const patched = await api('PATCH', `${NET}/servicecidrs/fresh/status`, patch, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.json.status.conditions.find((c: any) => c.type === 'example.com/Probe').status, 'Bogus')
  })

  it('a deleted ServiceCIDR no IPAddress needs keeps its finalizer until "deletionGracePeriod" has passed since its deletionTimestamp', {timeout: 30_000}, async () => {
    const created = await api('POST', `${NET}/servicecidrs`, serviceCIDR('spare', ['10.211.0.0/28']))
    assert.equal(created.status, 201, created.text)
    await waitFor('spare', isReady)
    const started = Date.now()
    const deleted = await api('DELETE', `${NET}/servicecidrs/spare`)
    assert.equal(deleted.status, 200, deleted.text)
    const marked = (await api('GET', `${NET}/servicecidrs/spare`)).json
    assert.ok(marked.metadata.deletionTimestamp, 'still there, marked for deletion')
    assert.deepEqual(marked.metadata.finalizers, ['networking.orch.io/service-cidr-finalizer'])
    await waitFor('spare', 'deleted')
    // deletionTimestamp is in whole seconds: the grace may end up to a second before DELETE + grace
    const elapsed = Date.now() - started
    assert.ok(elapsed >= GRACE_MS - 1_000, `finalizer removed ${elapsed} ms after the delete`)
  })

  it('the default ServiceCIDR orch, once deleted for good, is created again with the configured CIDRs ("Creating default ServiceCIDR with CIDRs") and Services get IPs from it', {timeout: 30_000}, async () => {
    const before = await waitFor('orch', isReady)
    assert.deepEqual(before.spec.cidrs, ['10.101.0.0/24'])
    const deleted = await api('DELETE', `${NET}/servicecidrs/orch`)
    assert.equal(deleted.status, 200, deleted.text)
    await waitFor('orch', 'deleted')
    const again = await waitFor('orch', (o) => o.metadata.uid !== before.metadata.uid && isReady(o))
    assert.deepEqual(again.spec.cidrs, ['10.101.0.0/24'])
    assert.deepEqual(again.metadata.finalizers, ['networking.orch.io/service-cidr-finalizer'])
    await server.waitForLog(/Creating default ServiceCIDR with CIDRs: \[10\.101\.0\.0\/24\]/)
    // an IP of the range can be had again
    const service = await api('POST', '/api/v1/namespaces/default/services', {apiVersion: 'v1', kind: 'Service', metadata: {name: 'after-recreate'}, spec: {ports: [{port: 80}], clusterIP: '10.101.0.50'}})
    assert.equal(service.status, 201, service.text)
  })
})

describe('the default-ServiceCIDR controller alone (no controllers running)', () => {
  let server: OrchServer
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers=', '--default-service-cidr-interval', '200ms'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('the default ServiceCIDR without a Ready condition gets Ready "True", reason "", message "orch default Service CIDR is ready" from the apiserver', {timeout: 30_000}, async () => {
    const path = `${NET}/servicecidrs/orch`
    const first = (await api('GET', path)).json
    const condition = first.status.conditions.find((c: any) => c.type === 'Ready')
    assert.deepEqual({status: condition.status, reason: condition.reason, message: condition.message}, {status: 'True', reason: '', message: 'orch default Service CIDR is ready'})
    // taken away, it is set again at the next check
    const cleared = await api('PUT', `${path}/status`, {...first, status: {conditions: []}})
    assert.equal(cleared.status, 200, cleared.text)
    const stream = await openWatch(server.url, `${NET}/servicecidrs?watch=1&resourceVersion=${cleared.json.metadata.resourceVersion}&fieldSelector=metadata.name%3Dorch`)
    try {
      const [event] = await stream.waitFor(1)
      assert.equal(event.object.status.conditions.find((c: any) => c.type === 'Ready').status, 'True')
    } finally {
      stream.close()
    }
  })
})
