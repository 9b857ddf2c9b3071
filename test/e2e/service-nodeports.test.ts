// Service node ports (Kubernetes' portallocator and service REST allocation) and the fields a type
// change leaves unused (dropTypeDependentFields of pkg/registry/core/service/strategy.go), end to end
// against a real `orch server`.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, type OrchServer} from '../support/server.js'

const SVC = '/api/v1/namespaces/default/services'
const NET = '/apis/networking.orch.io/v1'
const MERGE = {'Content-Type': 'application/merge-patch+json'}
const JSON_PATCH = {'Content-Type': 'application/json-patch+json'}

type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>

const svc = (name: string, spec: any = {}) => ({apiVersion: 'v1', kind: 'Service', metadata: {name}, spec: {ports: [{port: 80}], selector: {app: name}, ...spec}})
const nodePorts = (service: any): number[] => service.spec.ports.map((p: any) => p.nodePort)
// Ports a test asks for by number come from the static band at the bottom of the range (30000-30085),
// which random allocation uses last, so that they never collide with the ports handed out at random.
const inRange = (port: number, low = 30000, high = 32767) => Number.isInteger(port) && port >= low && port <= high

/** Creates the Service and answers it (the create must succeed). */
async function create(api: Api, body: unknown): Promise<any> {
  const created = await api('POST', SVC, body)
  assert.equal(created.status, 201, created.text)
  return created.json
}

/** Whether a Service requesting this node port can be created now (tried as a dry run). */
async function free(api: Api, port: number, protocol = 'TCP'): Promise<boolean> {
  const probe = await api('POST', `${SVC}?dryRun=All`, svc(`probe-${port}`, {type: 'NodePort', ports: [{port: 80, protocol, nodePort: port}]}))
  if (probe.status === 201) return true
  assert.equal(probe.status, 422, probe.text)
  assert.match(probe.json.message, /provided port is already allocated/)
  return false
}

describe('Service node ports', () => {
  let server: OrchServer
  let api: Api
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('a NodePort Service gets a free node port from 30000-32767 for each port', async () => {
    const created = await create(api, svc('np', {type: 'NodePort', ports: [{name: 'http', port: 80, targetPort: 8080}, {name: 'https', port: 443}]}))
    const [http, https] = nodePorts(created)
    assert.ok(inRange(http) && inRange(https), JSON.stringify(created.spec.ports))
    assert.notEqual(http, https)
    assert.equal(created.spec.externalTrafficPolicy, 'Cluster')
    const read = (await api('GET', `${SVC}/np`)).json
    assert.deepEqual(nodePorts(read), [http, https])
    assert.equal(await free(api, http), false)
  })

  it('a LoadBalancer Service gets node ports (allocateLoadBalancerNodePorts defaults to true); with false only requested ones are kept', async () => {
    const lb = await create(api, svc('lb', {type: 'LoadBalancer'}))
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true)
    assert.ok(inRange(nodePorts(lb)[0]), JSON.stringify(lb.spec.ports))
    const none = await create(api, svc('lb-none', {type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{name: 'a', port: 80}, {name: 'b', port: 81, nodePort: 30018}]}))
    assert.equal(none.spec.ports[0].nodePort, undefined)
    assert.equal(none.spec.ports[1].nodePort, 30018)
    assert.equal(await free(api, 30018), false)
  })

  it('ports with the same port number (TCP and UDP) share one node port', async () => {
    const dns = await create(api, svc('dns', {type: 'NodePort', ports: [{name: 'udp', port: 53, protocol: 'UDP'}, {name: 'tcp', port: 53, protocol: 'TCP'}]}))
    const [udp, tcp] = nodePorts(dns)
    assert.ok(inRange(udp))
    assert.equal(udp, tcp)
  })

  it('a requested node port in range and free is kept', async () => {
    const created = await create(api, svc('fixed', {type: 'NodePort', ports: [{port: 80, nodePort: 30080}]}))
    assert.deepEqual(nodePorts(created), [30080])
  })

  it('"provided port is not in the valid range. The range of valid ports is 30000-32767": 422', async () => {
    const refused = await api('POST', SVC, svc('low', {type: 'NodePort', ports: [{port: 80, nodePort: 80}]}))
    assert.equal(refused.status, 422, refused.text)
    assert.equal(
      refused.json.message,
      'Service "low" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767',
    )
    assert.deepEqual(refused.json.details.causes, [
      {reason: 'FieldValueInvalid', message: 'Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767', field: 'spec.ports[0].nodePort'},
    ])
  })

  it('"provided port is already allocated": 422, whatever the protocol (one range for TCP, UDP and SCTP, as in Kubernetes)', async () => {
    for (const protocol of ['TCP', 'UDP']) {
      const refused = await api('POST', SVC, svc(`taken-${protocol.toLowerCase()}`, {type: 'NodePort', ports: [{port: 80, protocol, nodePort: 30080}]}))
      assert.equal(refused.status, 422, refused.text)
      assert.equal(refused.json.message, `Service "taken-${protocol.toLowerCase()}" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`)
    }
    // a refused create takes nothing: its other, automatic port is given back
    const before = (await api('GET', SVC)).json.items.length
    const refused = await api('POST', SVC, svc('half', {type: 'NodePort', ports: [{name: 'a', port: 81, nodePort: 30010}, {name: 'b', port: 82, nodePort: 30080}]}))
    assert.equal(refused.status, 422)
    assert.equal(await free(api, 30010), true)
    assert.equal((await api('GET', SVC)).json.items.length, before)
  })

  it('concurrent creates never get the same node port, and of two asking for one port exactly one gets it', async () => {
    const results = await Promise.all(Array.from({length: 20}, (_, i) => api('POST', SVC, svc(`many-${i}`, {type: 'NodePort'}))))
    for (const r of results) assert.equal(r.status, 201, r.text)
    const ports = results.map((r) => r.json.spec.ports[0].nodePort)
    assert.equal(new Set(ports).size, 20, JSON.stringify(ports))
    const race = await Promise.all(Array.from({length: 5}, (_, i) => api('POST', SVC, svc(`race-${i}`, {type: 'NodePort', ports: [{port: 80, nodePort: 30040}]}))))
    assert.deepEqual(race.map((r) => r.status).sort(), [201, 422, 422, 422, 422])
  })

  it('a dry run allocates nothing', async () => {
    const dry = await api('POST', `${SVC}?dryRun=All`, svc('dry', {type: 'NodePort', ports: [{port: 80, nodePort: 30055}]}))
    assert.equal(dry.status, 201, dry.text)
    assert.equal(await free(api, 30055), true)
    const taken = await api('POST', `${SVC}?dryRun=All`, svc('dry', {type: 'NodePort', ports: [{port: 80, nodePort: 30080}]}))
    assert.equal(taken.status, 422)
  })

  it('deleting a Service releases its node ports', async () => {
    await create(api, svc('gone', {type: 'NodePort', ports: [{port: 80, nodePort: 30060}]}))
    assert.equal(await free(api, 30060), false)
    assert.equal((await api('DELETE', `${SVC}/gone`)).status, 200)
    assert.equal(await free(api, 30060), true)
  })

  it('an update that leaves nodePort out keeps the allocated one (PUT, apply); a port added gets one, a port removed is released', async () => {
    const created = await create(api, svc('keep', {type: 'NodePort', ports: [{name: 'a', port: 80}]}))
    const [a] = nodePorts(created)
    const put = await api('PUT', `${SVC}/keep`, {...svc('keep', {type: 'NodePort', ports: [{name: 'a', port: 80}, {name: 'b', port: 81}]})})
    assert.equal(put.status, 200, put.text)
    const [a2, b] = nodePorts(put.json)
    assert.equal(a2, a)
    assert.ok(inRange(b) && b !== a)
    assert.equal(put.json.spec.clusterIP, created.spec.clusterIP)
    const removed = await api('PATCH', `${SVC}/keep`, [{op: 'remove', path: '/spec/ports/0'}], JSON_PATCH)
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual(nodePorts(removed.json), [b])
    assert.equal(await free(api, a), true)
    assert.equal(await free(api, b), false)
  })

  it('changing a node port takes the new one and releases the old one; a taken one is refused and nothing changes', async () => {
    await create(api, svc('move', {type: 'NodePort', ports: [{port: 80, nodePort: 30070}]}))
    const moved = await api('PATCH', `${SVC}/move`, {spec: {ports: [{port: 80, nodePort: 30071}]}}, {'Content-Type': 'application/strategic-merge-patch+json'})
    assert.equal(moved.status, 200, moved.text)
    assert.deepEqual(nodePorts(moved.json), [30071])
    assert.equal(await free(api, 30070), true)
    assert.equal(await free(api, 30071), false)
    const refused = await api('PATCH', `${SVC}/move`, {spec: {ports: [{port: 80, nodePort: 30080}]}}, {'Content-Type': 'application/strategic-merge-patch+json'})
    assert.equal(refused.status, 422)
    assert.match(refused.json.message, /spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated/)
    assert.deepEqual(nodePorts((await api('GET', `${SVC}/move`)).json), [30071])
    assert.equal(await free(api, 30071), false)
  })

  it('ClusterIP to NodePort allocates node ports on the update', async () => {
    await create(api, svc('grow'))
    const grown = await api('PATCH', `${SVC}/grow`, {spec: {type: 'NodePort'}}, MERGE)
    assert.equal(grown.status, 200, grown.text)
    assert.ok(inRange(nodePorts(grown.json)[0]))
    assert.equal(grown.json.spec.externalTrafficPolicy, 'Cluster')
  })

  it('a LoadBalancer with externalTrafficPolicy Local gets a healthCheckNodePort; released when the policy goes back to Cluster', async () => {
    const local = await create(api, svc('local', {type: 'LoadBalancer', externalTrafficPolicy: 'Local'}))
    const health = local.spec.healthCheckNodePort
    assert.ok(inRange(health), JSON.stringify(local.spec))
    assert.ok(!nodePorts(local).includes(health))
    assert.equal(await free(api, health), false)
    const cluster = await api('PATCH', `${SVC}/local`, {spec: {externalTrafficPolicy: 'Cluster'}}, MERGE)
    assert.equal(cluster.status, 200, cluster.text)
    assert.equal(cluster.json.spec.healthCheckNodePort, undefined)
    assert.equal(await free(api, health), true)
    const requested = await create(api, svc('local-2', {type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30081}))
    assert.equal(requested.spec.healthCheckNodePort, 30081)
    const immutable = await api('PATCH', `${SVC}/local-2`, {spec: {healthCheckNodePort: 30082}}, MERGE)
    assert.equal(immutable.status, 422)
    assert.match(immutable.json.message, /spec\.healthCheckNodePort: Forbidden: field is immutable/)
  })
})

describe('dropTypeDependentFields: a type change clears what the new type does not use, unless the update sets it', () => {
  let server: OrchServer
  let api: Api
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('ClusterIP to ExternalName drops clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy, and releases the IP', async () => {
    const created = await create(api, svc('web'))
    const ip = created.spec.clusterIP
    assert.equal((await api('GET', `${NET}/ipaddresses/${ip}`)).status, 200)
    const patched = await api('PATCH', `${SVC}/web`, {spec: {type: 'ExternalName', externalName: 'x.example.com'}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) assert.equal(patched.json.spec[field], undefined, field)
    assert.equal(patched.json.spec.externalName, 'x.example.com')
    assert.equal((await api('GET', `${NET}/ipaddresses/${ip}`)).status, 404)
  })

  it('ExternalName to ClusterIP allocates a cluster IP again', async () => {
    const patched = await api('PATCH', `${SVC}/web`, {spec: {type: 'ClusterIP', externalName: null}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    const ip = patched.json.spec.clusterIP
    assert.match(ip, /^10\./)
    assert.deepEqual(patched.json.spec.clusterIPs, [ip])
    assert.deepEqual(patched.json.spec.ipFamilies, ['IPv4'])
    assert.equal(patched.json.spec.ipFamilyPolicy, 'SingleStack')
    const address = (await api('GET', `${NET}/ipaddresses/${ip}`)).json
    assert.deepEqual(address.spec.parentRef, {group: '', resource: 'services', namespace: 'default', name: 'web'})
  })

  it('ExternalName with a clusterIP set in the same update is refused: "may not be set for ExternalName services"', async () => {
    const live = (await api('GET', `${SVC}/web`)).json
    const refused = await api('PATCH', `${SVC}/web`, {spec: {type: 'ExternalName', externalName: 'x.example.com', clusterIP: '10.96.0.99', clusterIPs: ['10.96.0.99']}}, MERGE)
    assert.equal(refused.status, 422, refused.text)
    assert.match(refused.json.message, /spec\.clusterIPs: Forbidden: may not be set for ExternalName services/)
    assert.equal((await api('GET', `${NET}/ipaddresses/${live.spec.clusterIP}`)).status, 200)
  })

  it('NodePort to ClusterIP drops the node ports and externalTrafficPolicy Cluster, and releases the ports', async () => {
    const created = await create(api, svc('np', {type: 'NodePort', ports: [{name: 'a', port: 80}, {name: 'b', port: 81, nodePort: 30028}]}))
    const [a] = nodePorts(created)
    const patched = await api('PATCH', `${SVC}/np`, {spec: {type: 'ClusterIP'}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(nodePorts(patched.json), [undefined, undefined])
    assert.equal(patched.json.spec.externalTrafficPolicy, undefined)
    assert.equal(patched.json.spec.clusterIP, created.spec.clusterIP)
    assert.equal(await free(api, a), true)
    assert.equal(await free(api, 30028), true)
  })

  it('NodePort to ClusterIP with a node port set in the update: "may not be used when `type` is \'ClusterIP\'", nothing released', async () => {
    await create(api, svc('np2', {type: 'NodePort', ports: [{port: 80, nodePort: 30029}]}))
    const refused = await api('PATCH', `${SVC}/np2`, {spec: {type: 'ClusterIP', ports: [{port: 80, nodePort: 30030}]}}, MERGE)
    assert.equal(refused.status, 422, refused.text)
    assert.equal(refused.json.message, 'Service "np2" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is \'ClusterIP\'')
    assert.equal(await free(api, 30029), false)
    assert.equal(await free(api, 30030), true)
  })

  it('NodePort to ClusterIP with externalTrafficPolicy changed in the update: "may only be set for externally-accessible services"', async () => {
    const refused = await api('PATCH', `${SVC}/np2`, {spec: {type: 'ClusterIP', externalTrafficPolicy: 'Local'}}, MERGE)
    assert.equal(refused.status, 422, refused.text)
    assert.match(refused.json.message, /spec\.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services/)
  })

  it('NodePort to ExternalName drops node ports and cluster IPs together', async () => {
    const live = (await api('GET', `${SVC}/np2`)).json
    const patched = await api('PATCH', `${SVC}/np2`, {spec: {type: 'ExternalName', externalName: 'np2.example.com'}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.json.spec.ports[0].nodePort, undefined)
    assert.equal(patched.json.spec.clusterIP, undefined)
    assert.equal(await free(api, 30029), true)
    assert.equal((await api('GET', `${NET}/ipaddresses/${live.spec.clusterIP}`)).status, 404)
  })

  it('LoadBalancer to NodePort drops healthCheckNodePort, allocateLoadBalancerNodePorts, loadBalancerClass and the load-balancer status; keeps node ports', async () => {
    const created = await create(api, svc('lb', {type: 'LoadBalancer', externalTrafficPolicy: 'Local', loadBalancerClass: 'example.com/lb'}))
    const health = created.spec.healthCheckNodePort
    const status = await api('PATCH', `${SVC}/lb/status`, {status: {loadBalancer: {ingress: [{ip: '192.0.2.10'}]}}}, MERGE)
    assert.equal(status.status, 200, status.text)
    assert.equal(status.json.status.loadBalancer.ingress[0].ip, '192.0.2.10')
    const patched = await api('PATCH', `${SVC}/lb`, {spec: {type: 'NodePort'}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    const spec = patched.json.spec
    assert.equal(spec.healthCheckNodePort, undefined)
    assert.equal(spec.allocateLoadBalancerNodePorts, undefined)
    assert.equal(spec.loadBalancerClass, undefined)
    assert.equal(spec.externalTrafficPolicy, 'Local')
    assert.deepEqual(nodePorts(patched.json), nodePorts(created))
    assert.deepEqual(patched.json.status.loadBalancer, {})
    assert.equal(await free(api, health), true)
  })

  it('LoadBalancer to ClusterIP keeping allocateLoadBalancerNodePorts changed in the update is refused', async () => {
    await create(api, svc('lb2', {type: 'LoadBalancer'}))
    const refused = await api('PATCH', `${SVC}/lb2`, {spec: {type: 'ClusterIP', allocateLoadBalancerNodePorts: false}}, MERGE)
    assert.equal(refused.status, 422, refused.text)
    assert.match(refused.json.message, /spec\.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'/)
    const patched = await api('PATCH', `${SVC}/lb2`, {spec: {type: 'ClusterIP'}}, MERGE)
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.json.spec.allocateLoadBalancerNodePorts, undefined)
    assert.equal(patched.json.spec.ports[0].nodePort, undefined)
  })
})

describe('--service-node-port-range and restarts', () => {
  let server: OrchServer
  let api: Api
  const restarted: OrchServer[] = []
  before(async () => {
    server = await startOrchServer(['--service-node-port-range', '31000-31002'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => {
    for (const s of restarted) await s.cleanup()
    await server.cleanup()
  })

  it('--service-node-port-range sets the range ports come from and the range errors name', async () => {
    const created = await create(api, svc('a', {type: 'NodePort'}))
    assert.ok(inRange(created.spec.ports[0].nodePort, 31000, 31002), JSON.stringify(created.spec.ports))
    const refused = await api('POST', SVC, svc('out', {type: 'NodePort', ports: [{port: 80, nodePort: 30080}]}))
    assert.equal(refused.status, 422)
    assert.match(refused.json.message, /provided port is not in the valid range\. The range of valid ports is 31000-31002$/)
  })

  it('a full range: "failed to allocate a nodePort: range is full" (500, as in Kubernetes), and nothing is kept of the refused Service', async () => {
    await create(api, svc('b', {type: 'NodePort'}))
    await create(api, svc('c', {type: 'NodePort'}))
    const full = await api('POST', SVC, svc('d', {type: 'NodePort'}))
    assert.equal(full.status, 500, full.text)
    assert.equal(full.json.message, 'Internal error occurred: failed to allocate a nodePort: range is full')
    assert.equal((await api('GET', `${SVC}/d`)).status, 404)
  })

  it('allocations survive a restart on the same data dir; a delete after it releases the port', async () => {
    const held = (await api('GET', `${SVC}/a`)).json.spec.ports[0].nodePort
    assert.equal(await server.stop(), 0)
    const again = await startOrchServer(['--service-node-port-range', '31000-31002'], {dataDir: server.dataDir})
    restarted.push(again)
    const api2: Api = (method, path, body, headers) => call(again.url, method, path, body, headers)
    assert.equal((await api2('GET', `${SVC}/a`)).json.spec.ports[0].nodePort, held)
    assert.equal(await free(api2, held), false)
    assert.equal((await api2('POST', SVC, svc('e', {type: 'NodePort'}))).status, 500)
    assert.equal((await api2('DELETE', `${SVC}/a`)).status, 200)
    const e = await create(api2, svc('e', {type: 'NodePort'}))
    assert.equal(e.spec.ports[0].nodePort, held)
  })

  it('a bad --service-node-port-range stops the server from starting (exit 2)', async () => {
    const result = await runOrch(['server', '--data-dir', server.dataDir, '--port', '0', '--service-node-port-range', '32767-30000'])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /invalid argument "32767-30000" for "--service-node-port-range" flag: end port cannot be less than start port/)
  })
})
