// The Service allocation repair loops (Kubernetes' portallocator and ipallocator repair controllers),
// end to end against a real `orch server` whose hidden --service-repair-interval makes them run every
// 100 ms: leaked node port claims and IPAddresses are freed while the server runs, young ones are not,
// a Service gets back what it lost, and each problem is a Warning Event as Kubernetes records it. On
// SQLite through the API (and a restart for a claim, the store being the server's alone); on etcd also
// by writing to the store while the server runs, as another replica or a backup restore would.
import assert from 'node:assert/strict'
import {randomUUID} from 'node:crypto'
import {after, before, describe, it} from 'node:test'
import {encodeStored} from '../../src/apiserver/stored-json.js'
import {NODE_PORT_PREFIX} from '../../src/apiserver/service-nodeports.js'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {openStore, type Store} from '../../src/storage/index.js'
import {startEtcd, type RunningEtcd} from '../support/etcd.js'
import {call, waitForCollection, type HttpResult} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const SVC = '/api/v1/namespaces/default/services'
const EVENTS = '/api/v1/namespaces/default/events'
const IPS = '/apis/networking.orch.io/v1/ipaddresses'
const FAST = ['--service-repair-interval', '100ms']

type Api = (method: string, path: string, body?: unknown) => Promise<HttpResult>

const svc = (name: string, spec: any = {}) => ({apiVersion: 'v1', kind: 'Service', metadata: {name}, spec: {ports: [{port: 80}], selector: {app: name}, ...spec}})
const ipAddress = (ip: string, service: string, managed = true) => ({
  apiVersion: 'networking.orch.io/v1',
  kind: 'IPAddress',
  metadata: {name: ip, labels: managed ? {'ipaddress.orch.io/managed-by': 'ipallocator.orch.io', 'ipaddress.orch.io/ip-family': 'IPv4'} : {}},
  spec: {parentRef: {group: '', resource: 'services', namespace: 'default', name: service}},
})
const claim = (name: string, created: Date) => Buffer.from(JSON.stringify({namespace: 'default', name, uid: randomUUID(), created: created.toISOString()}))
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000)

/** The Warning Event with this reason about this object, once it is there. */
function eventFor(url: string, reason: string, name: string): Promise<any> {
  return waitForCollection(url, EVENTS, (items) => items.find((e) => e.reason === reason && e.involvedObject?.name === name), `a ${reason} event about ${name}`)
}

/** Whether a Service may take this node port now (a dry run asking for it). */
async function portFree(api: Api, port: number): Promise<boolean> {
  const probe = await api('POST', `${SVC}?dryRun=All`, svc(`probe-${port}`, {type: 'NodePort', ports: [{port: 80, nodePort: port}]}))
  assert.ok(probe.status === 201 || probe.status === 422, probe.text)
  return probe.status === 201
}

describe('cluster IP repair (SQLite): while the server runs', () => {
  let server: OrchServer
  let api: Api
  before(async () => {
    server = await startOrchServer([...FAST, '--service-repair-grace', '2s'])
    api = (method, path, body) => call(server.url, method, path, body)
  })
  after(() => server.cleanup())

  it('a leaked IPAddress (its Service does not exist) is deleted once older than the grace: Warning IPAddressNotAllocated; one the allocator does not manage is left alone', async () => {
    assert.equal((await api('POST', IPS, ipAddress('10.96.100.1', 'ghost'))).status, 201)
    assert.equal((await api('POST', IPS, ipAddress('10.96.100.3', 'ghost', false))).status, 201)
    // young: a create in flight may be about to store its Service
    assert.equal((await api('GET', `${IPS}/10.96.100.1`)).status, 200)
    await waitForCollection(server.url, IPS, (items) => !items.some((i) => i.metadata.name === '10.96.100.1'), 'the leaked IPAddress to go')
    const event = await eventFor(server.url, 'IPAddressNotAllocated', '10.96.100.1')
    assert.equal(event.type, 'Warning')
    assert.equal(event.action, 'IPAddressAllocation')
    assert.equal(event.message, 'IPAddress: 10.96.100.1 for Service default/ghost appears to have leaked: cleaning up')
    assert.equal(event.reportingComponent, 'ipallocator-repair-controller')
    assert.match(event.reportingInstance, /^ipallocator-repair-controller-/)
    assert.deepEqual([event.involvedObject.kind, event.involvedObject.apiVersion], ['IPAddress', 'networking.orch.io/v1'])
    assert.match(event.eventTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    assert.equal((await api('GET', `${IPS}/10.96.100.3`)).status, 200)
  })

  it('an IPAddress naming a Service that holds another IP is deleted: Warning IPAddressWrongReference; the Service keeps its own', async () => {
    const web = await api('POST', SVC, svc('web'))
    assert.equal(web.status, 201, web.text)
    const own = web.json.spec.clusterIP
    assert.notEqual(own, '10.96.100.2')
    assert.equal((await api('POST', IPS, ipAddress('10.96.100.2', 'web'))).status, 201)
    await waitForCollection(server.url, IPS, (items) => !items.some((i) => i.metadata.name === '10.96.100.2'), 'the wrongly referencing IPAddress to go')
    const event = await eventFor(server.url, 'IPAddressWrongReference', '10.96.100.2')
    assert.equal(event.message, 'IPAddress: 10.96.100.2 for Service default/web has a wrong reference; cleaning up')
    assert.equal(event.action, 'IPAddressAllocation')
    assert.equal((await api('GET', `${IPS}/${own}`)).json.spec.parentRef.name, 'web')
  })

  it('a Service whose IPAddress was deleted gets it back: Warning ClusterIPNotAllocated on the Service', async () => {
    const created = await api('POST', SVC, svc('api'))
    assert.equal(created.status, 201, created.text)
    const ip = created.json.spec.clusterIP
    assert.equal((await api('DELETE', `${IPS}/${ip}`)).status, 200)
    const back = await waitForCollection(server.url, IPS, (items) => items.find((i) => i.metadata.name === ip), 'the IPAddress to come back')
    assert.deepEqual(back.spec.parentRef, {group: '', resource: 'services', namespace: 'default', name: 'api'})
    assert.equal(back.metadata.labels['ipaddress.orch.io/managed-by'], 'ipallocator.orch.io')
    const event = await eventFor(server.url, 'ClusterIPNotAllocated', 'api')
    assert.equal(event.message, `Cluster IP [IPv4]: ${ip} is not allocated; repairing`)
    assert.equal(event.action, 'ClusterIPAllocation')
    assert.deepEqual([event.involvedObject.kind, event.involvedObject.uid], ['Service', created.json.metadata.uid])
  })
})

describe('node port repair (SQLite): a claim leaked while the server was down', () => {
  let server: OrchServer | undefined
  after(() => server?.cleanup())

  it('is flagged by the run at start and freed by a later periodic run (the third in a row to see it leaked); a young claim is kept; SIGTERM stops the loops (exit 0)', async () => {
    const first = await startOrchServer(FAST)
    assert.equal(await first.stop(), 0)
    const store = openSqliteStore({dataDir: first.dataDir})
    await store.create(`${NODE_PORT_PREFIX}30123`, claim('crashed', minutesAgo(10)))
    await store.create(`${NODE_PORT_PREFIX}30124`, claim('in-flight', new Date()))
    await store.close()
    server = await startOrchServer(FAST, {dataDir: first.dataDir})
    await server.waitForLog(/the node port 30123 appears to have leaked: cleaning up/)
    const logs = server.logs()
    // the run at start only flags it (one run never both flags and frees a port); a later one frees it
    const flagged = logs.indexOf('the node port 30123 may have leaked: flagging for later clean up')
    assert.ok(flagged >= 0 && flagged < logs.indexOf('the node port 30123 appears to have leaked'), logs)
    assert.doesNotMatch(logs, /node port 30124/)
    const api: Api = (method, path, body) => call(server!.url, method, path, body)
    assert.equal(await portFree(api, 30123), true)
    assert.equal(await portFree(api, 30124), false)
    assert.equal(await server.stop(), 0)
    await first.cleanup()
  })
})

describe('Service allocation repair (etcd): the store written while the server runs', () => {
  let etcd: RunningEtcd
  let server: OrchServer
  let store: Store
  before(async () => {
    etcd = await startEtcd()
    server = await startOrchServer(['--storage', 'etcd', '--etcd-servers', etcd.endpoint, ...FAST])
    store = await openStore({backend: 'etcd', etcdServers: [etcd.endpoint], dataDir: ''})
  })
  after(async () => {
    await store?.close()
    await server?.cleanup()
    await etcd?.stop()
  })

  it('a leaked node port claim is freed on the third run that sees it while the server runs; a young claim is kept', async () => {
    await store.create(`${NODE_PORT_PREFIX}30200`, claim('crashed', minutesAgo(10)))
    await store.create(`${NODE_PORT_PREFIX}30201`, claim('in-flight', new Date()))
    await until('the leaked claim to be freed', async () => (await store.get(`${NODE_PORT_PREFIX}30200`)) === null)
    // the server logs the clean-up after the delete, and its output arrives through a pipe
    await server.waitForLog(/the node port 30200 appears to have leaked: cleaning up/)
    const logs = server.logs()
    assert.ok(logs.indexOf('the node port 30200 may have leaked: flagging for later clean up') >= 0, logs)
    assert.ok(logs.indexOf('the node port 30200 may have leaked') < logs.indexOf('the node port 30200 appears to have leaked: cleaning up'), logs)
    assert.notEqual(await store.get(`${NODE_PORT_PREFIX}30201`), null)
  })

  it('a leaked IPAddress (another replica died between allocating and storing its Service) is deleted: Warning IPAddressNotAllocated', async () => {
    const leaked = {...ipAddress('10.96.100.9', 'never-stored'), metadata: {...ipAddress('10.96.100.9', 'never-stored').metadata, uid: randomUUID(), creationTimestamp: minutesAgo(5).toISOString().replace(/\.\d+Z$/, 'Z')}}
    await store.create('/registry/networking.orch.io/ipaddresses/10.96.100.9', encodeStored(leaked))
    await until('the leaked IPAddress to be deleted', async () => (await store.get('/registry/networking.orch.io/ipaddresses/10.96.100.9')) === null)
    const event = await eventFor(server.url, 'IPAddressNotAllocated', '10.96.100.9')
    assert.equal(event.message, 'IPAddress: 10.96.100.9 for Service default/never-stored appears to have leaked: cleaning up')
  })

  it('Services restored without their allocations get them back (Warning PortNotAllocated, ClusterIPNotAllocated); an IP outside every ServiceCIDR is Warning ClusterIPOutOfRange', async () => {
    const restored = (name: string, ip: string, nodePort: number) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {name, namespace: 'default', uid: randomUUID(), creationTimestamp: minutesAgo(30).toISOString().replace(/\.\d+Z$/, 'Z')},
      spec: {type: 'NodePort', clusterIP: ip, clusterIPs: [ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{port: 80, protocol: 'TCP', targetPort: 80, nodePort}], externalTrafficPolicy: 'Cluster'},
      status: {loadBalancer: {}},
    })
    const good = restored('restored', '10.96.77.77', 30777)
    await store.create('/registry/core/services/default/restored', encodeStored(good))
    await store.create('/registry/core/services/default/elsewhere', encodeStored(restored('elsewhere', '192.0.2.10', 30778)))
    const ports = await eventFor(server.url, 'PortNotAllocated', 'restored')
    assert.equal(ports.message, 'Port 30777 is not allocated; repairing')
    assert.equal(ports.action, 'PortAllocation')
    assert.equal(ports.reportingComponent, 'portallocator-repair-controller')
    const kv = await store.get(`${NODE_PORT_PREFIX}30777`)
    assert.equal(JSON.parse(Buffer.from(kv!.value).toString()).uid, good.metadata.uid)
    const ips = await eventFor(server.url, 'ClusterIPNotAllocated', 'restored')
    assert.equal(ips.message, 'Cluster IP [IPv4]: 10.96.77.77 is not allocated; repairing')
    const address = await waitForCollection(server.url, IPS, (items) => items.find((i) => i.metadata.name === '10.96.77.77'), 'the restored Service\'s IPAddress')
    assert.equal(address.spec.parentRef.name, 'restored')
    const outside = await eventFor(server.url, 'ClusterIPOutOfRange', 'elsewhere')
    assert.equal(outside.message, 'Cluster IP [IPv4]: 192.0.2.10 is not within any configured Service CIDR; please recreate service')
    assert.equal((await call(server.url, 'GET', `${IPS}/192.0.2.10`)).status, 404)
    // seen again on later runs: a series on the same Event, not an Event a run
    const series = await waitForCollection(server.url, EVENTS, (items) => items.find((e) => e.metadata.name === outside.metadata.name && e.series?.count >= 3), 'the event\'s series to count the later runs')
    assert.match(series.series.lastObservedTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    const all = (await call(server.url, 'GET', EVENTS)).json.items
    assert.equal(all.filter((e: any) => e.reason === 'ClusterIPOutOfRange').length, 1)
  })
})
