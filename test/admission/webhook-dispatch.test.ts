// The webhook dispatcher below the HTTP layer: what it does before any call is made, and the
// AdmissionReview version and URL of a call to a real HTTPS webhook.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {AdmissionAttributes} from '../../src/admission/types.js'
import {ValidatingWebhookDispatcher, admissionReview, denial} from '../../src/admission/webhook.js'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import {createLogger} from '../../src/machinery/log.js'
import {startWebhookServer, type WebhookServer} from '../support/webhook-server.js'

function attributes(overrides: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: {group: '', version: 'v1', kind: 'ConfigMap'},
    resource: {group: '', version: 'v1', resource: 'configmaps'},
    subresource: '',
    name: 'x',
    namespace: 'default',
    object: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x', namespace: 'default'}},
    oldObject: null,
    userInfo: {username: 'u', groups: []},
    dryRun: false,
    options: null,
    declaration: configMapDeclaration,
    namespaceObject: async () => ({metadata: {name: 'default'}}),
    warn: () => {},
    annotate: () => {},
    ...overrides,
  }
}

function dispatcher(sideEffects: string, calls: string[]): ValidatingWebhookDispatcher {
  return new ValidatingWebhookDispatcher({
    configurations: () => [{metadata: {name: 'c'}, webhooks: [{
      name: 'side.example.com',
      sideEffects,
      admissionReviewVersions: ['v1'],
      // an address nothing listens on: a call would fail with a connection error, not the dry-run refusal
      clientConfig: {url: 'https://127.0.0.1:1/'},
      rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
      failurePolicy: 'Fail',
    }]}],
    resolveService: async () => {
      calls.push('resolve')
      throw new Error('no services here')
    },
    logger: createLogger({verbosity: 0, write: () => {}}),
  })
}

describe('webhook dispatch', () => {
  for (const sideEffects of ['Some', 'Unknown']) {
    it(`a dry-run request matching a webhook with sideEffects ${sideEffects} is rejected without calling it`, async () => {
      const calls: string[] = []
      await assert.rejects(dispatcher(sideEffects, calls).validate(attributes({dryRun: true})), (error: Error & {code?: number}) => {
        assert.equal(error.code, 400)
        assert.equal(error.message, 'admission webhook "side.example.com" does not support dry run')
        return true
      })
      assert.deepEqual(calls, [])
    })
  }

  it('webhooks are never called for requests on webhook configuration objects', async () => {
    const calls: string[] = []
    const onConfiguration = attributes({
      resource: {group: 'admissionregistration.orch.io', version: 'v1', resource: 'validatingwebhookconfigurations'},
      kind: {group: 'admissionregistration.orch.io', version: 'v1', kind: 'ValidatingWebhookConfiguration'},
    })
    await dispatcher('None', calls).validate(onConfiguration)
  })

  it('"a match condition error fails closed as Forbidden" (ShouldCallHook) under failurePolicy Fail, without a call; under Ignore the webhook is passed over', async () => {
    for (const failurePolicy of ['Fail', 'Ignore']) {
      const calls: string[] = []
      const plugin = new ValidatingWebhookDispatcher({
        configurations: () => [{metadata: {name: 'c'}, webhooks: [{
          name: 'conditions.example.com', sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy,
          clientConfig: {url: 'https://127.0.0.1:1/'},
          rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
          matchConditions: [{name: 'errs', expression: 'object.data.x == "y"'}],
        }]}],
        resolveService: async () => {
          calls.push('resolve')
          throw new Error('no services here')
        },
        evaluateConditions: () => ({error: "expression 'object.data.x == \"y\"' resulted in error: no such key: data"}),
        logger: createLogger({verbosity: 0, write: () => {}}),
      })
      if (failurePolicy === 'Ignore') {
        await plugin.validate(attributes())
        continue
      }
      await assert.rejects(plugin.validate(attributes()), (error: Error & {code?: number; reason?: string}) => {
        assert.equal(error.code, 403)
        assert.equal(error.reason, 'Forbidden')
        assert.equal(error.message, 'configmaps "x" is forbidden: expression \'object.data.x == "y"\' resulted in error: no such key: data')
        return true
      })
      assert.deepEqual(calls, [])
    }
  })

  it('a denial is at least 400, its message prefixed with the webhook name, its reason the webhook\'s own (ToStatusErr)', () => {
    assert.equal(denial('w.example.com', {code: 200, message: 'no'}).code, 400)
    assert.equal(denial('w.example.com', undefined).message, 'admission webhook "w.example.com" denied the request without explanation')
    assert.equal(denial('w.example.com', {code: 422, reason: 'Invalid'}).message, 'admission webhook "w.example.com" denied the request: Invalid')
    // ToStatusErr keeps the webhook's reason and makes none up: the Status has no reason field then
    const unexplained = denial('w.example.com', {code: 403, message: 'no'}).toStatus()
    assert.equal(unexplained.code, 403)
    assert.equal('reason' in unexplained, false)
    assert.equal(denial('w.example.com', {code: 422, reason: 'Invalid'}).toStatus().reason, 'Invalid')
  })

  it('the AdmissionReview carries subResource and namespace only when set', () => {
    const review = admissionReview('uid-1', attributes({namespace: '', subresource: 'status'}))
    assert.equal(review.request.subResource, 'status')
    assert.equal(review.request.namespace, undefined)
  })
})

describe('AdmissionReview versions and the call (against a real HTTPS webhook)', () => {
  let hooks: WebhookServer
  before(async () => {
    hooks = await startWebhookServer()
  })
  after(async () => hooks.close())

  function against(path: string, webhook: Record<string, unknown>): ValidatingWebhookDispatcher {
    return new ValidatingWebhookDispatcher({
      configurations: () => [{metadata: {name: 'c'}, webhooks: [{
        name: 'versions.example.com',
        sideEffects: 'None',
        clientConfig: {url: `${hooks.url}${path}`, caBundle: hooks.caBundle},
        rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
        failurePolicy: 'Fail',
        ...webhook,
      }]}],
      resolveService: async () => {
        throw new Error('no services here')
      },
      logger: createLogger({verbosity: 0, write: () => {}}),
    })
  }

  it('the first of admissionReviewVersions the server supports is used (seed: "the first supported by the server is used")', async () => {
    const seen: string[] = []
    hooks.handle('/first', (review, _raw, url) => {
      seen.push(`${review.apiVersion} ${url}`)
      // v1beta1 answers are not checked for the uid, as Kubernetes
      return {body: {apiVersion: review.apiVersion, kind: 'AdmissionReview', response: {allowed: true}}}
    })
    await against('/first', {admissionReviewVersions: ['v2', 'v1beta1', 'v1']}).validate(attributes())
    // v1 first: a v1 answer without the request's uid is refused
    await assert.rejects(against('/first', {admissionReviewVersions: ['v1', 'v1beta1'], timeoutSeconds: 3}).validate(attributes()), /expected response\.uid=/)
    assert.deepEqual(seen, ['admission.orch.io/v1beta1 /first?timeout=10s', 'admission.orch.io/v1 /first?timeout=3s'])
  })

  it('the answer must be an AdmissionReview of the version asked for', async () => {
    hooks.handle('/other-version', (review) => ({body: {apiVersion: 'admission.orch.io/v1beta1', kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true}}}))
    await assert.rejects(against('/other-version', {admissionReviewVersions: ['v1']}).validate(attributes()), (error: Error & {code?: number}) => {
      assert.equal(error.code, 500)
      assert.equal(error.message, 'Internal error occurred: failed calling webhook "versions.example.com": received invalid webhook response: expected webhook response of admission.orch.io/v1, Kind=AdmissionReview, got admission.orch.io/v1beta1, Kind=AdmissionReview')
      return true
    })
    hooks.handle('/absent', () => ({body: {apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview'}}))
    await assert.rejects(against('/absent', {admissionReviewVersions: ['v1']}).validate(attributes()), /received invalid webhook response: webhook response was absent/)
    // Ignore lets the request through
    await against('/other-version', {admissionReviewVersions: ['v1'], failurePolicy: 'Ignore'}).validate(attributes())
  })

  it('a stored webhook with no known version fails at call time, subject to failurePolicy, without a call', async () => {
    hooks.received.delete('/unknown')
    await assert.rejects(against('/unknown', {admissionReviewVersions: ['v2']}).validate(attributes()), (error: Error & {code?: number}) => {
      assert.equal(error.code, 500)
      assert.equal(error.message, 'Internal error occurred: failed calling webhook "versions.example.com": could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)')
      return true
    })
    await against('/unknown', {admissionReviewVersions: ['v2'], failurePolicy: 'Ignore'}).validate(attributes())
    assert.equal(hooks.received.get('/unknown'), undefined)
  })
})
