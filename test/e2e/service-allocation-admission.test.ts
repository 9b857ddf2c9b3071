// A Service's cluster IPs and node ports are allocated where Kubernetes allocates them (the service
// REST storage's BeginCreate / BeginUpdate): after mutating admission, before validation and
// validating admission, so a ValidatingAdmissionPolicy or a validating webhook sees the allocated
// values; whatever refuses the write after that (validation, admission, a dry run) gives them back.
// End to end against a real `orch server` and a real HTTPS webhook.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult, eventually} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {allow, deny, startWebhookServer, type WebhookServer} from '../support/webhook-server.js'


const ADM = '/apis/admissionregistration.orch.io/v1'
const ADM_BETA = '/apis/admissionregistration.orch.io/v1beta1'
const NET = '/apis/networking.orch.io/v1'
const MERGE = {'Content-Type': 'application/merge-patch+json'}
/** namespaces: one the ValidatingAdmissionPolicy matches, one the webhook matches, one the mutating policy matches */
const POLICY_NS = 'alloc-policy'
const WEBHOOK_NS = 'alloc-webhook'
const MUTATE_NS = 'alloc-mutate'
const svcs = (ns: string) => `/api/v1/namespaces/${ns}/services`

const svc = (name: string, spec: any = {}, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {name, labels},
  spec: {ports: [{port: 80}], selector: {app: name}, ...spec},
})
const inRange = (port: unknown) => typeof port === 'number' && port >= 30000 && port <= 32767
const POLICY_DENIAL = /^services "[^"]+" is forbidden: ValidatingAdmissionPolicy 'service-allocation' with binding 'service-allocation' denied request: /

describe('Service allocation before validating admission (Kubernetes\' BeginCreate / BeginUpdate)', () => {
  let server: OrchServer
  let hooks: WebhookServer
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>

  /** Repeats a request until check accepts its answer (policies and webhook configurations reach the
   *  server's caches a moment after they are stored). */
  async function created(path: string, body: unknown): Promise<any> {
    const result = await api('POST', path, body)
    assert.equal(result.status, 201, `${path}: ${result.text}`)
    return result.json
  }

  /** Whether a Service may take this node port now (a dry run that requests it, in a namespace no
   *  admission matches). */
  async function portFree(port: number): Promise<boolean> {
    const probe = await api('POST', `${svcs('default')}?dryRun=All`, svc(`probe-${port}`, {type: 'NodePort', ports: [{port: 80, nodePort: port}]}))
    if (probe.status === 201) return true
    assert.equal(probe.status, 422, probe.text)
    assert.match(probe.json.message, /provided port is already allocated/)
    return false
  }

  /** Whether a cluster IP is held: its IPAddress object exists. */
  async function ipHeld(ip: string): Promise<boolean> {
    const status = (await api('GET', `${NET}/ipaddresses/${ip}`)).status
    assert.ok(status === 200 || status === 404, String(status))
    return status === 200
  }

  async function ipAddressCount(): Promise<number> {
    return (await api('GET', `${NET}/ipaddresses`)).json.items.length
  }

  before(async () => {
    ;[server, hooks] = await Promise.all([startOrchServer(['--service-cluster-ip-range', '10.110.0.0/24']), startWebhookServer()])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    for (const [name, label] of [[POLICY_NS, 'policy'], [WEBHOOK_NS, 'webhook'], [MUTATE_NS, 'mutate']]) {
      await created('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name, labels: {'alloc-test': label}}})
    }
    const services = (operations: string[]) => [{apiGroups: [''], apiVersions: ['v1'], operations, resources: ['services']}]
    // validating admission that refuses a Service without a cluster IP or a NodePort Service with a
    // port without a node port: before allocation moved ahead of it, it refused every Service
    await created(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: 'service-allocation'},
      spec: {
        matchConstraints: {resourceRules: services(['CREATE', 'UPDATE']), namespaceSelector: {matchLabels: {'alloc-test': 'policy'}}},
        validations: [
          {expression: "has(object.spec.clusterIP) && object.spec.clusterIP != ''", message: 'no cluster IP'},
          {expression: "object.spec.type != 'NodePort' || object.spec.ports.all(p, has(p.nodePort) && p.nodePort != 0)", message: 'a port without a node port'},
          {expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)", message: 'denied by label'},
        ],
      },
    })
    await created(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: 'service-allocation'},
      spec: {policyName: 'service-allocation', validationActions: ['Deny']},
    })
    // a validating webhook that records what it is sent and refuses Services labelled deny
    hooks.handle('/services', (review) => (review.request.object?.metadata?.labels?.deny ? deny(review, {code: 403, message: 'denied by the webhook'}) : allow(review)))
    await created(`${ADM}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: {name: 'service-allocation'},
      webhooks: [{
        name: 'services.hooks.example.com', clientConfig: {url: `${hooks.url}/services`, caBundle: hooks.caBundle},
        rules: services(['CREATE', 'UPDATE']), namespaceSelector: {matchLabels: {'alloc-test': 'webhook'}},
        sideEffects: 'None', admissionReviewVersions: ['v1'],
      }],
    })
    // a mutating policy that records, as labels, whether it saw a cluster IP and a node port
    await created(`${ADM_BETA}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: {name: 'service-allocation'},
      spec: {
        matchConstraints: {resourceRules: services(['CREATE', 'UPDATE']), namespaceSelector: {matchLabels: {'alloc-test': 'mutate'}}},
        reinvocationPolicy: 'Never',
        mutations: [{
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: "Object{metadata: Object.metadata{labels: {'saw-cluster-ip': has(object.spec.clusterIP) && object.spec.clusterIP != '' ? 'yes' : 'no', 'saw-node-port': has(object.spec.ports) && object.spec.ports.exists(p, has(p.nodePort) && p.nodePort != 0) ? 'yes' : 'no'}}}",
          },
        }],
      },
    })
    await created(`${ADM_BETA}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicyBinding', metadata: {name: 'service-allocation'},
      spec: {policyName: 'service-allocation'},
    })
    // wait until all three take effect (dry runs keep nothing)
    await eventually(() => api('POST', `${svcs(POLICY_NS)}?dryRun=All`, svc('ready', {}, {deny: 'yes'})), (r) => r.status === 422 && POLICY_DENIAL.test(r.json.message), 'the policy')
    await eventually(() => api('POST', `${svcs(WEBHOOK_NS)}?dryRun=All`, svc('ready', {}, {deny: 'yes'})), (r) => r.status === 403, 'the webhook')
    await eventually(() => api('POST', `${svcs(MUTATE_NS)}?dryRun=All`, svc('ready')), (r) => r.status === 201 && r.json.metadata.labels?.['saw-cluster-ip'] !== undefined, 'the mutating policy')
    hooks.received.delete('/services')
  })
  after(async () => {
    await hooks.close()
    await server.cleanup()
  })

  it('a ValidatingAdmissionPolicy requiring a cluster IP and node ports admits a NodePort Service: it sees the allocated values', async () => {
    const service = await created(svcs(POLICY_NS), svc('np', {type: 'NodePort', ports: [{name: 'a', port: 80}, {name: 'b', port: 81}]}))
    assert.match(service.spec.clusterIP, /^10\.110\.0\.\d+$/)
    assert.ok(service.spec.ports.every((p: any) => inRange(p.nodePort)), JSON.stringify(service.spec.ports))
    const plain = await created(svcs(POLICY_NS), svc('cip'))
    assert.match(plain.spec.clusterIP, /^10\.110\.0\.\d+$/)
  })

  it('a validating webhook is sent the Service with its allocated cluster IP and node port; its denial gives both back', async () => {
    const admitted = await created(svcs(WEBHOOK_NS), svc('seen', {type: 'NodePort'}))
    const sent = hooks.received.get('/services')!.at(-1).request.object
    assert.equal(sent.spec.clusterIP, admitted.spec.clusterIP)
    assert.deepEqual(sent.spec.clusterIPs, [admitted.spec.clusterIP])
    assert.equal(sent.spec.ports[0].nodePort, admitted.spec.ports[0].nodePort)
    assert.ok(inRange(sent.spec.ports[0].nodePort))
    const ipsBefore = await ipAddressCount()
    const denied = await api('POST', svcs(WEBHOOK_NS), svc('refused', {type: 'NodePort'}, {deny: 'yes'}))
    assert.equal(denied.status, 403, denied.text)
    assert.match(denied.json.message, /denied by the webhook/)
    const refused = hooks.received.get('/services')!.at(-1).request.object
    assert.match(refused.spec.clusterIP, /^10\.110\.0\.\d+$/, 'the refused Service had its cluster IP when the webhook saw it')
    assert.ok(inRange(refused.spec.ports[0].nodePort))
    assert.equal(await ipHeld(refused.spec.clusterIP), false)
    assert.equal(await portFree(refused.spec.ports[0].nodePort), true)
    assert.equal(await ipAddressCount(), ipsBefore)
    assert.equal((await api('GET', `${svcs(WEBHOOK_NS)}/refused`)).status, 404)
  })

  it('a policy denial after allocation leaves the requested cluster IP and node port free: a second Service gets exactly them', async () => {
    const spec = {type: 'NodePort', clusterIP: '10.110.0.50', ports: [{port: 80, nodePort: 30150}]}
    const denied = await api('POST', svcs(POLICY_NS), svc('first', spec, {deny: 'yes'}))
    assert.equal(denied.status, 422, denied.text)
    assert.match(denied.json.message, POLICY_DENIAL)
    assert.match(denied.json.message, /denied by label/)
    assert.equal(await ipHeld('10.110.0.50'), false)
    assert.equal(await portFree(30150), true)
    const second = await created(svcs(POLICY_NS), svc('second', spec))
    assert.equal(second.spec.clusterIP, '10.110.0.50')
    assert.equal(second.spec.ports[0].nodePort, 30150)
    assert.equal(await ipHeld('10.110.0.50'), true)
  })

  it('a validation failure (422) after allocation leaks nothing: the same IP and port can be taken next', async () => {
    // loadBalancerClass on a NodePort Service: refused by validation, which now runs after allocation
    const spec = {type: 'NodePort', clusterIP: '10.110.0.60', ports: [{port: 80, nodePort: 30160}]}
    const ipsBefore = await ipAddressCount()
    const invalid = await api('POST', svcs(POLICY_NS), svc('invalid', {...spec, loadBalancerClass: 'example.com/lb'}))
    assert.equal(invalid.status, 422, invalid.text)
    assert.equal(invalid.json.message, 'Service "invalid" is invalid: spec.loadBalancerClass: Forbidden: may only be used when `type` is \'LoadBalancer\'')
    const automatic = await api('POST', svcs(POLICY_NS), svc('Invalid_Name', {type: 'NodePort'}))
    assert.equal(automatic.status, 422, automatic.text)
    assert.match(automatic.json.message, /^Service "Invalid_Name" is invalid: metadata\.name: Invalid value/)
    assert.equal(await ipAddressCount(), ipsBefore)
    assert.equal(await ipHeld('10.110.0.60'), false)
    assert.equal(await portFree(30160), true)
    const valid = await created(svcs(POLICY_NS), svc('valid', spec))
    assert.equal(valid.spec.clusterIP, '10.110.0.60')
    assert.equal(valid.spec.ports[0].nodePort, 30160)
  })

  it('a dry-run create and a dry-run update are admitted with allocated values and keep nothing', async () => {
    const ipsBefore = await ipAddressCount()
    const dry = await api('POST', `${svcs(POLICY_NS)}?dryRun=All`, svc('dry', {type: 'NodePort', clusterIP: '10.110.0.70', ports: [{port: 80, nodePort: 30170}, {port: 81}]}))
    assert.equal(dry.status, 201, dry.text)
    assert.equal(dry.json.spec.clusterIP, '10.110.0.70')
    assert.equal(dry.json.spec.ports[0].nodePort, 30170)
    assert.ok(inRange(dry.json.spec.ports[1].nodePort), 'the policy saw an allocated node port on the dry run too')
    const automatic = await api('POST', `${svcs(POLICY_NS)}?dryRun=All`, svc('dry-auto', {type: 'NodePort'}))
    assert.equal(automatic.status, 201, automatic.text)
    assert.match(automatic.json.spec.clusterIP, /^10\.110\.0\.\d+$/)
    assert.equal(await ipAddressCount(), ipsBefore)
    assert.equal(await ipHeld('10.110.0.70'), false)
    assert.equal(await portFree(30170), true)
    assert.equal((await api('GET', `${svcs(POLICY_NS)}/dry`)).status, 404)
    await created(svcs(POLICY_NS), svc('dry-update'))
    const dryUpdate = await api('PATCH', `${svcs(POLICY_NS)}/dry-update?dryRun=All`, {spec: {type: 'NodePort', ports: [{port: 80, nodePort: 30171}]}}, MERGE)
    assert.equal(dryUpdate.status, 200, dryUpdate.text)
    assert.equal(dryUpdate.json.spec.ports[0].nodePort, 30171)
    assert.equal(await portFree(30171), true)
    assert.equal((await api('GET', `${svcs(POLICY_NS)}/dry-update`)).json.spec.type, 'ClusterIP')
    const real = await created(svcs(POLICY_NS), svc('after-dry', {type: 'NodePort', clusterIP: '10.110.0.70', ports: [{port: 80, nodePort: 30170}]}))
    assert.equal(real.spec.clusterIP, '10.110.0.70')
  })

  it('ClusterIP to NodePort: validating admission sees the node port the update allocated; a denied type change gives it back and leaves the Service as it was', async () => {
    const original = await created(svcs(POLICY_NS), svc('grow'))
    const grown = await api('PATCH', `${svcs(POLICY_NS)}/grow`, {spec: {type: 'NodePort'}}, MERGE)
    assert.equal(grown.status, 200, grown.text)
    assert.ok(inRange(grown.json.spec.ports[0].nodePort), JSON.stringify(grown.json.spec.ports))
    assert.equal(grown.json.spec.clusterIP, original.spec.clusterIP)
    await created(svcs(POLICY_NS), svc('stay'))
    const denied = await api('PATCH', `${svcs(POLICY_NS)}/stay`, {metadata: {labels: {deny: 'yes'}}, spec: {type: 'NodePort', ports: [{port: 80, nodePort: 30180}]}}, MERGE)
    assert.equal(denied.status, 422, denied.text)
    assert.match(denied.json.message, /denied by label/)
    assert.equal(await portFree(30180), true)
    const stored = (await api('GET', `${svcs(POLICY_NS)}/stay`)).json
    assert.equal(stored.spec.type, 'ClusterIP')
    assert.equal(stored.spec.ports[0].nodePort, undefined)
    // through the webhook: it is sent the allocated node port, and its denial gives it back
    await created(svcs(WEBHOOK_NS), svc('hooked'))
    const refused = await api('PATCH', `${svcs(WEBHOOK_NS)}/hooked`, {metadata: {labels: {deny: 'yes'}}, spec: {type: 'NodePort'}}, MERGE)
    assert.equal(refused.status, 403, refused.text)
    const review = hooks.received.get('/services')!.at(-1).request
    assert.equal(review.operation, 'UPDATE')
    assert.equal(review.oldObject.spec.ports[0].nodePort, undefined)
    const seen = review.object.spec.ports[0].nodePort
    assert.ok(inRange(seen), JSON.stringify(review.object.spec.ports))
    assert.equal(await portFree(seen), true)
    // the same change admitted: the port it was given is held
    const admitted = await api('PATCH', `${svcs(WEBHOOK_NS)}/hooked`, {spec: {type: 'NodePort'}}, MERGE)
    assert.equal(admitted.status, 200, admitted.text)
    const held = admitted.json.spec.ports[0].nodePort
    assert.equal(hooks.received.get('/services')!.at(-1).request.object.spec.ports[0].nodePort, held)
    assert.equal(await portFree(held), false)
  })

  it('mutating admission sees the Service before allocation, as in Kubernetes', async () => {
    const service = await created(svcs(MUTATE_NS), svc('mutated', {type: 'NodePort'}))
    assert.equal(service.metadata.labels['saw-cluster-ip'], 'no')
    assert.equal(service.metadata.labels['saw-node-port'], 'no')
    assert.match(service.spec.clusterIP, /^10\.110\.0\.\d+$/)
    assert.ok(inRange(service.spec.ports[0].nodePort))
    await created(svcs(MUTATE_NS), svc('mutated-update'))
    const updated = await api('PATCH', `${svcs(MUTATE_NS)}/mutated-update`, {spec: {type: 'NodePort'}}, MERGE)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.json.metadata.labels['saw-node-port'], 'no', 'the update was mutated before its node port was allocated')
    assert.ok(inRange(updated.json.spec.ports[0].nodePort))
  })

  it('allocation errors come first, as Kubernetes\' allocator reports them; a malformed cluster IP is still the validation 422', async () => {
    const ipsBefore = await ipAddressCount()
    // the allocator checks the cluster IP fields before it allocates (ValidateServiceClusterIPsRelatedFields)
    const badIP = await api('POST', svcs(POLICY_NS), svc('bad-ip', {clusterIP: '10.110.0.300'}))
    assert.equal(badIP.status, 422, badIP.text)
    assert.equal(badIP.json.message, 'Service "bad-ip" is invalid: spec.clusterIPs[0]: Invalid value: "10.110.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')
    const mismatch = await api('POST', svcs(POLICY_NS), svc('mismatch', {clusterIP: '10.110.0.80', clusterIPs: ['10.110.0.81']}))
    assert.equal(mismatch.status, 422, mismatch.text)
    assert.equal(mismatch.json.message, 'Service "mismatch" is invalid: spec.clusterIPs: Invalid value: ["10.110.0.81"]: first value must match `clusterIP`')
    // a node port that is not a number never gets that far: the decoder's 400
    const notNumber = await api('POST', svcs(POLICY_NS), svc('nan', {type: 'NodePort', ports: [{port: 80, nodePort: 'x'}]}))
    assert.equal(notNumber.status, 400, notNumber.text)
    assert.match(notNumber.json.message, /cannot unmarshal string into Go struct field ServicePort\.spec\.ports\.nodePort of type int32/)
    // ExternalName with a cluster IP: no allocation for ExternalName, so validation's 422
    const external = await api('POST', svcs(POLICY_NS), svc('ext', {type: 'ExternalName', externalName: 'example.com', clusterIP: '10.110.0.82'}))
    assert.equal(external.status, 422, external.text)
    assert.equal(external.json.message, 'Service "ext" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services')
    // two ports asking for one node port: the allocator refuses the second (initNodePorts)
    const twice = await api('POST', svcs(POLICY_NS), svc('twice', {type: 'NodePort', ports: [{name: 'a', port: 80, nodePort: 30190}, {name: 'b', port: 81, nodePort: 30190}]}))
    assert.equal(twice.status, 422, twice.text)
    assert.equal(twice.json.message, 'Service "twice" is invalid: spec.ports[1].nodePort: Invalid value: 30190: provided port is already allocated')
    // a requested health check node port the allocator cannot take is its internal error
    const health = await api('POST', svcs(POLICY_NS), svc('health', {type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 70000}))
    assert.equal(health.status, 500, health.text)
    assert.equal(health.json.message, 'Internal error occurred: failed to allocate requested HealthCheck NodePort 70000: provided port is not in the valid range. The range of valid ports is 30000-32767')
    assert.equal(await portFree(30190), true)
    assert.equal(await ipAddressCount(), ipsBefore)
  })
})
