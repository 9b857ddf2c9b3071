// The webhook dispatcher below the HTTP layer: what it does before any call is made.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {AdmissionAttributes} from '../../src/admission/types.js'
import {ValidatingWebhookDispatcher, admissionReview, denial} from '../../src/admission/webhook.js'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import {createLogger} from '../../src/machinery/log.js'

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

  it('a denial is at least 400, its message prefixed with the webhook name', () => {
    assert.equal(denial('w.example.com', {code: 200, message: 'no'}).code, 400)
    assert.equal(denial('w.example.com', undefined).message, 'admission webhook "w.example.com" denied the request without explanation')
    assert.equal(denial('w.example.com', {code: 422, reason: 'Invalid'}).message, 'admission webhook "w.example.com" denied the request: Invalid')
  })

  it('the AdmissionReview carries subResource and namespace only when set', () => {
    const review = admissionReview('uid-1', attributes({namespace: '', subresource: 'status'}))
    assert.equal(review.request.subResource, 'status')
    assert.equal(review.request.namespace, undefined)
  })
})
