// Field rules of the admissionregistration kinds (seed 002), checked by the kind validators.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import type {FieldError} from '../../src/api/types.js'
import {formatFieldError} from '../../src/machinery/field-errors.js'
import {validateResources, type ExpressionCompiler} from '../../src/apiserver/validation/admission-common.js'
import {validateMutatingBinding, validateMutatingPolicy, validateValidatingBinding, validateValidatingPolicy} from '../../src/apiserver/validation/admissionpolicies.js'
import {validateWebhookConfiguration} from '../../src/apiserver/validation/webhookconfiguration.js'

const fields = (errs: FieldError[]) => errs.map((e) => e.field)
/** The whole error text of the (last) error on `field`, as the 422 message shows it. */
const messageOf = (errs: FieldError[], field: string) => errs.filter((e) => e.field === field).map(formatFieldError).join('; ')

function webhook(overrides: Record<string, unknown> = {}) {
  return {
    name: 'check.example.com',
    clientConfig: {url: 'https://hooks.example.com/check'},
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
    ...overrides,
  }
}

describe('ValidatingWebhookConfiguration validation', () => {
  it('a well-formed webhook is valid', () => {
    assert.deepEqual(validateWebhookConfiguration({webhooks: [webhook()]}, undefined), [])
  })

  it('exactly one of url or service; url https only, no user info, fragment or query', () => {
    assert.match(messageOf(validateWebhookConfiguration({webhooks: [webhook({clientConfig: {}})]}, undefined), 'webhooks[0].clientConfig'), /exactly one of url or service is required/)
    assert.deepEqual(fields(validateWebhookConfiguration({webhooks: [webhook({clientConfig: {url: 'https://x.example.com', service: {name: 's', namespace: 'n'}}})]}, undefined)), ['webhooks[0].clientConfig'])
    for (const [url, message] of [
      ['http://x.example.com/', "'https' is the only allowed URL scheme"],
      ['https://user:pw@x.example.com/', 'user information is not permitted in the URL'],
      ['https://x.example.com/#frag', 'fragments are not permitted in the URL'],
      ['https://x.example.com/?q=1', 'query parameters are not permitted in the URL'],
    ]) {
      assert.match(messageOf(validateWebhookConfiguration({webhooks: [webhook({clientConfig: {url}})]}, undefined), 'webhooks[0].clientConfig.url'), new RegExp(message.replace(/[.*+?^${}()|[\]\\']/g, '.')), url)
    }
  })

  it('service port is 1..65535; timeoutSeconds is 1..30', () => {
    const errs = validateWebhookConfiguration({webhooks: [webhook({clientConfig: {service: {name: 's', namespace: 'n', port: 70000}}, timeoutSeconds: 31})]}, undefined)
    assert.deepEqual(fields(errs).sort(), ['webhooks[0].clientConfig.service.port', 'webhooks[0].timeoutSeconds'])
    assert.match(messageOf(errs, 'webhooks[0].timeoutSeconds'), /the timeout value must be between 1 and 30 seconds/)
  })

  it('admissionReviewVersions must include a supported one; sideEffects Some and Unknown are refused in v1', () => {
    const errs = validateWebhookConfiguration({webhooks: [webhook({admissionReviewVersions: ['v2'], sideEffects: 'Some'})]}, undefined)
    assert.match(messageOf(errs, 'webhooks[0].admissionReviewVersions'), /must include at least one of v1, v1beta1/)
    assert.match(messageOf(errs, 'webhooks[0].sideEffects'), /Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/)
    assert.ok(fields(validateWebhookConfiguration({webhooks: [webhook({sideEffects: undefined})]}, undefined)).includes('webhooks[0].sideEffects'))
  })

  it('webhook names are qualified with three segments and unique', () => {
    const errs = validateWebhookConfiguration({webhooks: [webhook({name: 'short.com'}), webhook(), webhook()]}, undefined)
    assert.match(messageOf(errs, 'webhooks[0].name'), /at least three segments/)
    assert.match(messageOf(errs, 'webhooks[2].name'), /Duplicate value/)
  })

  it('at most 64 matchConditions, names unique, expressions compiled by the CEL compiler', () => {
    const many = Array.from({length: 65}, (_, i) => ({name: `c${i}`, expression: 'true'}))
    assert.match(messageOf(validateWebhookConfiguration({webhooks: [webhook({matchConditions: many})]}, undefined), 'webhooks[0].matchConditions'), /must have at most 64 items/)
    const compile: ExpressionCompiler = (expression) => (expression.includes('(') ? ['ERROR: <input>:1:2: Syntax error'] : [])
    const errs = validateWebhookConfiguration({webhooks: [webhook({matchConditions: [{name: 'a', expression: 'x('}, {name: 'a', expression: 'true'}]})]}, compile)
    assert.match(messageOf(errs, 'webhooks[0].matchConditions[0].expression'), /compilation failed: ERROR: <input>:1:2: Syntax error/)
    assert.match(messageOf(errs, 'webhooks[0].matchConditions[1].name'), /Duplicate value: "a"/)
  })

  it('rules: a wildcard must be the only entry, and resource wildcards must not overlap', () => {
    const errs = validateWebhookConfiguration({webhooks: [webhook({rules: [{operations: ['*', 'CREATE'], apiGroups: ['*', 'apps'], apiVersions: [], resources: ['*/*', 'pods']}]})]}, undefined)
    assert.deepEqual(fields(errs).sort(), ['webhooks[0].rules[0].apiGroups', 'webhooks[0].rules[0].apiVersions', 'webhooks[0].rules[0].operations', 'webhooks[0].rules[0].resources'])
    assert.match(messageOf(validateResources(['pods/*', 'pods/status'], 'r'), 'r[1]'), /if 'pods\/\*' is present, must not specify pods\/status/)
    assert.match(messageOf(validateResources(['*', 'pods'], 'r'), 'r'), /if '\*' is present, must not specify other resources without subresources/)
    assert.deepEqual(validateResources(['*', 'pods/status', '*/scale'], 'r'), [])
  })
})

function policy(spec: Record<string, unknown>) {
  return {metadata: {name: 'p'}, spec: {matchConstraints: {resourceRules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}]}, ...spec}}
}

describe('ValidatingAdmissionPolicy validation', () => {
  it('validations or auditAnnotations must contain at least one item; matchConstraints is required', () => {
    assert.match(messageOf(validateValidatingPolicy(policy({}), undefined), 'spec.validations'), /validations or auditAnnotations must contain at least one item/)
    assert.ok(fields(validateValidatingPolicy({spec: {validations: [{expression: 'true'}]}}, undefined)).includes('spec.matchConstraints'))
  })

  it('message without line breaks, required when the expression has them; reason from the seed list', () => {
    const errs = validateValidatingPolicy(policy({validations: [{expression: 'true', message: 'a\nb'}, {expression: 'true &&\ntrue'}, {expression: 'true', reason: 'Teapot'}]}), undefined)
    assert.match(messageOf(errs, 'spec.validations[0].message'), /message must not contain line breaks/)
    assert.match(messageOf(errs, 'spec.validations[1].message'), /message must be specified if expression contains line breaks/)
    assert.match(messageOf(errs, 'spec.validations[2].reason'), /supported values: "Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"/)
  })

  it('audit annotation keys are qualified names of at most 63 bytes, unique; valueExpression at most 5 kb', () => {
    const errs = validateValidatingPolicy(policy({auditAnnotations: [
      {key: 'bad key', valueExpression: "'x'"},
      {key: 'k'.repeat(64), valueExpression: "'x'"},
      {key: 'ok', valueExpression: `'${'x'.repeat(5200)}'`},
      {key: 'ok', valueExpression: "'y'"},
    ]}), undefined)
    assert.deepEqual(fields(errs), ['spec.auditAnnotations[0].key', 'spec.auditAnnotations[1].key', 'spec.auditAnnotations[2].valueExpression', 'spec.auditAnnotations[3].key'])
  })

  it('variables are CEL identifiers, unique, and see only the variables before them (ordered, acyclic)', () => {
    const seen: string[][] = []
    const compile: ExpressionCompiler = (_e, scope) => {
      seen.push([...scope.variables])
      return []
    }
    const errs = validateValidatingPolicy(policy({variables: [{name: 'a', expression: '1'}, {name: 'b', expression: 'variables.a'}, {name: 'a', expression: '2'}, {name: '9x', expression: '3'}], validations: [{expression: 'true'}]}), compile)
    assert.deepEqual(fields(errs), ['spec.variables[2].name', 'spec.variables[3].name'])
    assert.deepEqual(seen.slice(0, 2), [[], ['a']], 'each variable compiles against the earlier ones only')
  })

  it('a binding needs policyName and validationActions from Deny, Warn, Audit, not both Deny and Warn; paramRef name or selector', () => {
    assert.deepEqual(fields(validateValidatingBinding({spec: {}})).sort(), ['spec.policyName', 'spec.validationActions'])
    assert.match(messageOf(validateValidatingBinding({spec: {policyName: 'p', validationActions: ['Deny', 'Warn']}}), 'spec.validationActions'), /must not contain both Deny and Warn/)
    const ref = validateValidatingBinding({spec: {policyName: 'p', validationActions: ['Deny'], paramRef: {name: 'x', selector: {}}}})
    assert.deepEqual(fields(ref).sort(), ['spec.paramRef.name', 'spec.paramRef.parameterNotFoundAction'])
  })
})

describe('MutatingAdmissionPolicy validation', () => {
  it('only CREATE, UPDATE and CONNECT may be matched: DELETE is refused', () => {
    const errs = validateMutatingPolicy({spec: {
      matchConstraints: {resourceRules: [{operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}]},
      reinvocationPolicy: 'Never',
      mutations: [{patchType: 'JSONPatch', jsonPatch: {expression: '[]'}}],
    }}, undefined)
    assert.deepEqual(fields(errs), ['spec.matchConstraints.resourceRules[0].operations[0]'])
    assert.match(formatFieldError(errs[0]), /Unsupported value: "DELETE"/)
  })

  it('at least one mutation with a patchType and its expression; reinvocationPolicy required', () => {
    const errs = validateMutatingPolicy({spec: {matchConstraints: {resourceRules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]}, mutations: [{patchType: 'ApplyConfiguration'}, {patchType: 'Merge'}]}}, undefined)
    assert.deepEqual(fields(errs).sort(), ['spec.mutations[0].applyConfiguration.expression', 'spec.mutations[1].patchType', 'spec.reinvocationPolicy'])
    assert.ok(fields(validateMutatingPolicy({spec: {matchConstraints: {resourceRules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}]}, reinvocationPolicy: 'Never'}}, undefined)).includes('spec.mutations'))
    assert.deepEqual(fields(validateMutatingBinding({spec: {}})), ['spec.policyName'])
  })
})
