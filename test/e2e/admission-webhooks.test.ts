// ValidatingWebhookConfiguration end to end: real HTTPS webhook servers started here (own CA,
// caBundle), called by a real `orch server` child process.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {allow, deny, startWebhookServer, type WebhookServer} from '../support/webhook-server.js'

const VWC = '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations'
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`

function configMap(name: string, labels: Record<string, string> = {}) {
  return {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels}, data: {a: 'b'}}
}

describe('validating admission webhooks', () => {
  let server: OrchServer
  let hooks: WebhookServer
  let nsCounter = 0

  before(async () => {
    ;[server, hooks] = await Promise.all([startOrchServer(['--controllers=']), startWebhookServer(['hooks.webhooks.svc'])])
  })
  after(async () => {
    await hooks.close()
    await server.cleanup()
  })

  /** A fresh namespace and a configuration of one webhook matching configmap creates in it. */
  async function setup(name: string, webhook: Record<string, unknown>, probeLabels: Record<string, string> = {}): Promise<string> {
    const ns = `wh-${++nsCounter}`
    assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns, labels: {webhooks: ns}}})).status, 201)
    const configuration = {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: {name},
      webhooks: [{
        name: `${name}.hooks.example.com`,
        clientConfig: {url: `${hooks.url}/${name}`, caBundle: hooks.caBundle},
        rules: [{operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
        namespaceSelector: {matchLabels: {webhooks: ns}},
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        ...webhook,
      }],
    }
    const created = await call(server.url, 'POST', VWC, configuration)
    assert.equal(created.status, 201, created.text)
    // the dispatcher reads the configurations' watch cache: wait until a request reaches the webhook
    const deadline = Date.now() + 5000
    const before = hooks.received.get(`/${name}`)?.length ?? 0
    for (let i = 0; (hooks.received.get(`/${name}`)?.length ?? 0) === before; i++) {
      if (Date.now() > deadline) assert.fail('the webhook configuration never took effect')
      await call(server.url, 'POST', `${CM(ns)}?dryRun=All`, configMap(`probe-${i}`, probeLabels))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    hooks.received.delete(`/${name}`)
    return ns
  }

  it('sends an admission.orch.io/v1 AdmissionReview with uid, kind, resource, operation, userInfo, object and options, to the URL with ?timeout=10s', async () => {
    const urls: string[] = []
    hooks.handle('/review', (review, _raw, url) => {
      urls.push(url)
      return allow(review)
    })
    const ns = await setup('review', {})
    const created = await call(server.url, 'POST', CM(ns), configMap('seen'))
    assert.equal(created.status, 201, created.text)
    const [review] = hooks.received.get('/review')!
    assert.equal(review.apiVersion, 'admission.orch.io/v1')
    assert.equal(review.kind, 'AdmissionReview')
    const request = review.request
    assert.match(request.uid, /^[0-9a-f-]{36}$/)
    assert.deepEqual(request.kind, {group: '', version: 'v1', kind: 'ConfigMap'})
    assert.deepEqual(request.resource, {group: '', version: 'v1', resource: 'configmaps'})
    assert.equal(request.operation, 'CREATE')
    assert.equal(request.namespace, ns)
    assert.equal(request.name, 'seen')
    assert.equal(request.userInfo.username, 'orch-admin')
    assert.equal(request.object.data.a, 'b')
    assert.equal(request.oldObject, null)
    assert.equal(request.dryRun, false)
    assert.equal(request.options.kind, 'CreateOptions')
    assert.equal(urls.at(-1), '/review?timeout=10s')
  })

  it("request.options are the request's own CreateOptions, UpdateOptions (a patch's, without force) and DeleteOptions, as Kubernetes passes them to admission", async () => {
    hooks.handle('/options', (review) => allow(review))
    const ns = await setup('options', {rules: [{operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}]})
    const created = await call(server.url, 'POST', `${CM(ns)}?fieldManager=kubectl-client-side-apply&fieldValidation=Strict`, configMap('opts'))
    assert.equal(created.status, 201, created.text)
    const patched = await call(server.url, 'PATCH', `${CM(ns)}/opts?fieldManager=editor`, {data: {a: 'c'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    const deleted = await call(server.url, 'DELETE', `${CM(ns)}/opts`, {kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', gracePeriodSeconds: 0})
    assert.equal(deleted.status, 200, deleted.text)
    const [create, update, remove] = hooks.received.get('/options')!.map((review) => review.request.options)
    assert.deepEqual(create, {kind: 'CreateOptions', apiVersion: 'meta.orch.io/v1', fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict'})
    assert.deepEqual(update, {kind: 'UpdateOptions', apiVersion: 'meta.orch.io/v1', fieldManager: 'editor'})
    assert.deepEqual(remove, {kind: 'DeleteOptions', apiVersion: 'meta.orch.io/v1', gracePeriodSeconds: 0, propagationPolicy: 'Background'})
  })

  it('admissionReviewVersions: the first the server supports is used, and the answer must be of that version', async () => {
    hooks.handle('/beta', (review) =>
      review.request.object.metadata.name.startsWith('answer-v1')
        ? {body: {apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true}}}
        : {body: {apiVersion: review.apiVersion, kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true}}},
    )
    const ns = await setup('beta', {admissionReviewVersions: ['v1beta1', 'v1']})
    const created = await call(server.url, 'POST', CM(ns), configMap('as-beta'))
    assert.equal(created.status, 201, created.text)
    assert.equal(hooks.received.get('/beta')!.at(-1).apiVersion, 'admission.orch.io/v1beta1')
    const wrong = await call(server.url, 'POST', CM(ns), configMap('answer-v1'))
    assert.equal(wrong.status, 500, wrong.text)
    assert.match(wrong.json.message, /received invalid webhook response: expected webhook response of admission.orch.io\/v1beta1, Kind=AdmissionReview, got admission.orch.io\/v1, Kind=AdmissionReview/)
  })

  it('a denying webhook rejects with its status code and message; nothing is stored; warnings reach the client', async () => {
    hooks.handle('/deny', (review) =>
      review.request.object.metadata.name.startsWith('bad')
        ? {...deny(review, {code: 403, reason: 'Forbidden', message: 'names may not start with bad'})}
        : allow(review, {warnings: ['configmaps are old-fashioned']}),
    )
    const ns = await setup('deny', {})
    const rejected = await call(server.url, 'POST', CM(ns), configMap('bad-one'))
    assert.equal(rejected.status, 403, rejected.text)
    assert.equal(rejected.json.message, 'admission webhook "deny.hooks.example.com" denied the request: names may not start with bad')
    assert.equal((await call(server.url, 'GET', `${CM(ns)}/bad-one`)).status, 404)
    const fine = await call(server.url, 'POST', CM(ns), configMap('good'))
    assert.equal(fine.status, 201)
    assert.match(String(fine.headers.warning), /299 - "configmaps are old-fashioned"/)
  })

  it('a slow webhook times out after timeoutSeconds: failurePolicy Fail rejects (500), Ignore lets the request through', async () => {
    hooks.handle('/slow-fail', (review) => ({...allow(review), delayMs: 2500}))
    hooks.handle('/slow-ignore', (review) => ({...allow(review), delayMs: 2500}))
    const failNs = await setup('slow-fail', {timeoutSeconds: 1, failurePolicy: 'Fail'})
    const started = Date.now()
    const failed = await call(server.url, 'POST', CM(failNs), configMap('slow'))
    assert.equal(failed.status, 500, failed.text)
    assert.match(failed.json.message, /failed calling webhook "slow-fail.hooks.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:\d+\/slow-fail\?timeout=1s": context deadline exceeded/)
    assert.ok(Date.now() - started < 2400, 'the call was cut at the timeout')
    const ignoreNs = await setup('slow-ignore', {timeoutSeconds: 1, failurePolicy: 'Ignore'})
    assert.equal((await call(server.url, 'POST', CM(ignoreNs), configMap('slow'))).status, 201)
  })

  it('garbage, a wrong uid or a plain-HTTP endpoint obey failurePolicy', async () => {
    hooks.handle('/garbage', () => ({rawBody: 'not json at all'}))
    const garbageNs = await setup('garbage', {})
    const garbage = await call(server.url, 'POST', CM(garbageNs), configMap('x'))
    assert.equal(garbage.status, 500)
    assert.match(garbage.json.message, /received invalid webhook response/)
    hooks.handle('/wrong-uid', (review) => allow({request: {...review.request, uid: 'not-the-uid'}}))
    const uidNs = await setup('wrong-uid', {failurePolicy: 'Fail'})
    const wrong = await call(server.url, 'POST', CM(uidNs), configMap('x'))
    assert.equal(wrong.status, 500)
    assert.match(wrong.json.message, /expected response\.uid=/)
    assert.equal((await call(server.url, 'GET', `${CM(uidNs)}/x`)).status, 404, 'nothing stored')
  })

  it('a dry-run request reaches a NoneOnDryRun webhook with dryRun: true, and nothing is stored', async () => {
    hooks.handle('/dry', (review) => allow(review))
    const ns = await setup('dry', {sideEffects: 'NoneOnDryRun'})
    const dry = await call(server.url, 'POST', `${CM(ns)}?dryRun=All`, configMap('dry'))
    assert.equal(dry.status, 201, dry.text)
    const [review] = hooks.received.get('/dry')!
    assert.equal(review.request.dryRun, true)
    assert.deepEqual(review.request.options.dryRun, ['All'])
    assert.equal((await call(server.url, 'GET', `${CM(ns)}/dry`)).status, 404)
  })

  it('a service reference reaches a ready pod the Service selects, verified as <service>.<namespace>.svc', async () => {
    hooks.handle('/svc', (review) => deny(review, {message: 'through the service'}))
    const ns = `wh-${++nsCounter}`
    await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns, labels: {webhooks: ns}}})
    await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'webhooks'}})
    await call(server.url, 'POST', CM('webhooks').replace('configmaps', 'services'), {
      apiVersion: 'v1', kind: 'Service', metadata: {name: 'hooks'}, spec: {selector: {app: 'hooks'}, ports: [{port: 443, targetPort: hooks.port}]},
    })
    const pod = await call(server.url, 'POST', CM('webhooks').replace('configmaps', 'pods'), {
      apiVersion: 'v1', kind: 'Pod', metadata: {name: 'hooks', labels: {app: 'hooks'}}, spec: {containers: [{name: 'hooks', image: 'hooks'}]},
    })
    assert.equal(pod.status, 201, pod.text)
    const status = await call(server.url, 'PATCH', `${CM('webhooks').replace('configmaps', 'pods')}/hooks/status`, {
      status: {phase: 'Running', podIP: '127.0.0.1', podIPs: [{ip: '127.0.0.1'}], conditions: [{type: 'Ready', status: 'True'}]},
    }, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(status.status, 200, status.text)
    const created = await call(server.url, 'POST', VWC, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: {name: 'svc'},
      webhooks: [{
        name: 'svc.hooks.example.com',
        clientConfig: {service: {namespace: 'webhooks', name: 'hooks', path: '/svc'}, caBundle: hooks.caBundle},
        rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
        namespaceSelector: {matchLabels: {webhooks: ns}},
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    })
    assert.equal(created.status, 201, created.text)
    const deadline = Date.now() + 5000
    let answer = await call(server.url, 'POST', CM(ns), configMap('via-service'))
    while (answer.status === 201 && Date.now() < deadline) {
      await call(server.url, 'DELETE', `${CM(ns)}/via-service`)
      answer = await call(server.url, 'POST', CM(ns), configMap('via-service'))
    }
    assert.equal(answer.status, 400, answer.text)
    assert.equal(answer.json.message, 'admission webhook "svc.hooks.example.com" denied the request: through the service')
  })

  it('objectSelector and namespaceSelector limit which requests reach the webhook; webhook configurations themselves never do', async () => {
    hooks.handle('/selected', (review) => deny(review, {message: 'selected'}))
    const ns = await setup('selected', {objectSelector: {matchLabels: {checked: 'yes'}}}, {checked: 'yes'})
    assert.equal((await call(server.url, 'POST', CM(ns), configMap('unlabelled'))).status, 201)
    assert.equal((await call(server.url, 'POST', CM(ns), configMap('labelled', {checked: 'yes'}))).status, 400)
    assert.equal((await call(server.url, 'POST', CM('default'), configMap('other-ns', {checked: 'yes'}))).status, 201, 'namespaceSelector')
    // a webhook matching everything does not see webhook configurations
    hooks.handle('/everything', (review) => deny(review, {message: 'no'}))
    const everything = await call(server.url, 'POST', VWC, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: {name: 'everything'},
      webhooks: [{
        name: 'everything.hooks.example.com', clientConfig: {url: `${hooks.url}/everything`, caBundle: hooks.caBundle},
        rules: [{operations: ['*'], apiGroups: ['admissionregistration.orch.io'], apiVersions: ['*'], resources: ['*']}],
        sideEffects: 'None', admissionReviewVersions: ['v1'],
      }],
    })
    assert.equal(everything.status, 201)
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal((await call(server.url, 'DELETE', `${VWC}/everything`)).status, 200)
    assert.equal(hooks.received.get('/everything'), undefined)
  })

  it('an invalid configuration is 422 naming the field', async () => {
    const bad = await call(server.url, 'POST', VWC, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: {name: 'bad'},
      webhooks: [{name: 'bad.hooks.example.com', clientConfig: {url: 'http://insecure.example.com/'}, sideEffects: 'Some', admissionReviewVersions: ['v1'], timeoutSeconds: 60}],
    })
    assert.equal(bad.status, 422, bad.text)
    assert.deepEqual(bad.json.details.causes.map((c: {field: string}) => c.field).sort(), ['webhooks[0].clientConfig.url', 'webhooks[0].sideEffects', 'webhooks[0].timeoutSeconds'])
  })
})
