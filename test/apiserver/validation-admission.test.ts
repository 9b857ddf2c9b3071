// Field rules of the admissionregistration kinds (seed 002), checked by the kind validators.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {celEngine} from '../../src/admission/cel/engine.js'
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

/** The server's compiler: the admission layer's CEL engine, as admission-setup installs it. */
const celCompile: ExpressionCompiler = (expression, scope) => {
  const result = celEngine().compile(expression, scope)
  return 'errors' in result ? result.errors : []
}

describe('expression result types (Kubernetes ExpressionAccessor.ReturnTypes), checked when a policy is saved', () => {
  it('matchConditions and validations must evaluate to bool, messageExpression to string, auditAnnotations valueExpression to string or null', () => {
    const errs = validateValidatingPolicy(policy({
      matchConditions: [{name: 'm', expression: '1'}],
      validations: [{expression: "'yes'", messageExpression: '42'}, {expression: 'object.spec.paused', messageExpression: 'object.metadata.name'}],
      auditAnnotations: [{key: 'a', valueExpression: '1 + 1'}, {key: 'b', valueExpression: 'null'}, {key: 'c', valueExpression: "'x'"}],
    }), celCompile)
    assert.deepEqual(fields(errs), ['spec.matchConditions[0].expression', 'spec.validations[0].expression', 'spec.validations[0].messageExpression', 'spec.auditAnnotations[0].valueExpression'])
    assert.equal(messageOf(errs, 'spec.matchConditions[0].expression'), 'spec.matchConditions[0].expression: Invalid value: "1": must evaluate to bool but got int')
    assert.equal(messageOf(errs, 'spec.validations[0].expression'), `spec.validations[0].expression: Invalid value: "'yes'": must evaluate to bool but got string`)
    assert.equal(messageOf(errs, 'spec.validations[0].messageExpression'), 'spec.validations[0].messageExpression: Invalid value: "42": must evaluate to string but got int')
    assert.equal(messageOf(errs, 'spec.auditAnnotations[0].valueExpression'), 'spec.auditAnnotations[0].valueExpression: Invalid value: "1 + 1": must evaluate to one of [string null_type] but got int')
  })

  it('a dyn result is accepted (orch types variables, params and request as dyn)', () => {
    const errs = validateValidatingPolicy(policy({
      paramKind: {apiVersion: 'v1', kind: 'ConfigMap'},
      variables: [{name: 'enabled', expression: 'object.data.enabled'}],
      validations: [{expression: 'variables.enabled'}, {expression: 'params.data.on'}, {expression: 'object.spec.paused'}],
    }), celCompile)
    assert.deepEqual(errs, [])
  })

  it('a JSONPatch mutation must evaluate to list(JSONPatch), an ApplyConfiguration to an Object', () => {
    const mutating = (mutations: unknown[]) => validateMutatingPolicy({spec: {matchConstraints: {resourceRules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}]}, reinvocationPolicy: 'Never', mutations}}, celCompile)
    const errs = mutating([
      {patchType: 'JSONPatch', jsonPatch: {expression: "[{'op': 'add', 'path': '/x'}]"}},
      {patchType: 'ApplyConfiguration', applyConfiguration: {expression: "{'spec': 1}"}},
      {patchType: 'JSONPatch', jsonPatch: {expression: "JSONPatch{op: 'add', path: '/x', value: 1}"}},
    ])
    assert.equal(messageOf(errs, 'spec.mutations[0].jsonPatch.expression'), `spec.mutations[0].jsonPatch.expression: Invalid value: "[{'op': 'add', 'path': '/x'}]": must evaluate to list(JSONPatch) but got list(map(string, string))`)
    assert.equal(messageOf(errs, 'spec.mutations[1].applyConfiguration.expression'), `spec.mutations[1].applyConfiguration.expression: Invalid value: "{'spec': 1}": must evaluate to Object but got map(string, int)`)
    assert.match(messageOf(errs, 'spec.mutations[2].jsonPatch.expression'), /must evaluate to list\(JSONPatch\) but got JSONPatch$/)
    assert.deepEqual(mutating([
      {patchType: 'JSONPatch', jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]"}},
      {patchType: 'JSONPatch', jsonPatch: {expression: "has(object.metadata.labels) ? [] : [JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]"}},
      {patchType: 'JSONPatch', jsonPatch: {expression: 'object.data.patches'}},
      {patchType: 'ApplyConfiguration', applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}},
    ]), [])
  })
})

describe('ValidatingAdmissionPolicy field rules as Kubernetes ValidateValidatingAdmissionPolicy reports them', () => {
  it('resourceRules[].resourceNames: each a valid path segment, no duplicates', () => {
    const rule = {operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], resourceNames: ['ok', '..', 'a/b', 'ok']}
    const errs = validateValidatingPolicy(policy({matchConstraints: {resourceRules: [rule]}, validations: [{expression: 'true'}]}), undefined)
    const path = 'spec.matchConstraints.resourceRules[0].resourceNames'
    assert.equal(messageOf(errs, `${path}[1]`), `${path}[1]: Invalid value: "..": may not be '..'`)
    assert.equal(messageOf(errs, `${path}[2]`), `${path}[2]: Invalid value: "a/b": may not contain '/'`)
    assert.equal(messageOf(errs, `${path}[3]`), `${path}[3]: Duplicate value: "ok"`)
  })

  it('variable names: CEL reserved words are refused; blank names and expressions are "not specified"', () => {
    const errs = validateValidatingPolicy(policy({variables: [{name: 'namespace', expression: '1'}, {name: 'in', expression: '2'}, {name: ' ', expression: ' '}], validations: [{expression: 'true'}]}), undefined)
    assert.equal(messageOf(errs, 'spec.variables[0].name'), 'spec.variables[0].name: Invalid value: "namespace": name is not a valid CEL identifier')
    assert.equal(messageOf(errs, 'spec.variables[1].name'), 'spec.variables[1].name: Invalid value: "in": name is not a valid CEL identifier')
    assert.equal(messageOf(errs, 'spec.variables[2].name'), 'spec.variables[2].name: Required value: name is not specified')
    assert.equal(messageOf(errs, 'spec.variables[2].expression'), 'spec.variables[2].expression: Required value: expression is not specified')
  })

  it('validations: a blank expression is "expression is not specified"; a blank message or messageExpression "must be non-empty if specified"', () => {
    const errs = validateValidatingPolicy(policy({validations: [{expression: '  '}, {expression: 'true', message: '  ', messageExpression: ' '}]}), undefined)
    assert.equal(messageOf(errs, 'spec.validations[0].expression'), 'spec.validations[0].expression: Required value: expression is not specified')
    assert.equal(messageOf(errs, 'spec.validations[1].message'), 'spec.validations[1].message: Invalid value: "  ": message must be non-empty if specified')
    assert.equal(messageOf(errs, 'spec.validations[1].messageExpression'), 'spec.validations[1].messageExpression: Invalid value: " ": must be non-empty if specified')
  })

  it('paramKind: apiVersion group a DNS subdomain, version a DNS-1035 label and present; kind a DNS-1035 label in any case', () => {
    const check = (paramKind: unknown) => validateValidatingPolicy(policy({paramKind, validations: [{expression: 'true'}]}), undefined)
    assert.deepEqual(check({apiVersion: 'example.com/v1', kind: 'ReplicaLimit'}), [])
    assert.deepEqual(check({apiVersion: 'v1', kind: 'ConfigMap'}), [])
    assert.equal(messageOf(check({apiVersion: 'a/b/c', kind: 'X'}), 'spec.paramKind.apiVersion'), 'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c')
    assert.equal(messageOf(check({apiVersion: 'example.com/', kind: 'X'}), 'spec.paramKind.apiVersion'), 'spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified')
    assert.match(messageOf(check({apiVersion: 'Example_Com/v1', kind: 'X'}), 'spec.paramKind.apiVersion'), /^spec\.paramKind\.apiVersion: Invalid value: "Example_Com": a lowercase RFC 1123 subdomain/)
    assert.match(messageOf(check({apiVersion: 'example.com/1v', kind: 'X'}), 'spec.paramKind.apiVersion'), /^spec\.paramKind\.apiVersion: Invalid value: "1v": a DNS-1035 label/)
    assert.match(messageOf(check({apiVersion: 'v1', kind: 'Replica_Limit'}), 'spec.paramKind.kind'), /^spec\.paramKind\.kind: Invalid value: "Replica_Limit": may have mixed case, but should otherwise match: a DNS-1035 label/)
    assert.equal(messageOf(check({apiVersion: 'v1'}), 'spec.paramKind.kind'), 'spec.paramKind.kind: Required value')
  })

  it('at most 20 auditAnnotations', () => {
    const annotations = Array.from({length: 21}, (_, i) => ({key: `k${i}`, valueExpression: "'x'"}))
    assert.match(messageOf(validateValidatingPolicy(policy({auditAnnotations: annotations}), undefined), 'spec.auditAnnotations'), /^spec\.auditAnnotations: Invalid value: .*: must not have more than 20 auditAnnotations$/)
    assert.deepEqual(validateValidatingPolicy(policy({auditAnnotations: annotations.slice(0, 20)}), undefined), [])
  })

  it('no validations and no auditAnnotations: Required on both spec.validations and spec.auditAnnotations', () => {
    const errs = validateValidatingPolicy(policy({}), undefined)
    assert.deepEqual(errs.map(formatFieldError), [
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
    ])
  })
})

describe('ValidatingWebhookConfiguration clientConfig and sideEffects as Kubernetes reports them', () => {
  const service = (path: string) => webhook({clientConfig: {service: {name: 's', namespace: 'n', path}}})
  const pathErrors = (path: string) => validateWebhookConfiguration({webhooks: [service(path)]}, undefined).map(formatFieldError)
  const P = 'webhooks[0].clientConfig.service.path'

  it('service.path: each segment a DNS-1123 subdomain, no empty segments, starting with /', () => {
    assert.deepEqual(pathErrors('/validate/pods'), [])
    assert.deepEqual(pathErrors('/'), [])
    assert.deepEqual(pathErrors('/trailing/'), [])
    assert.deepEqual(pathErrors('//'), [`${P}: Invalid value: "//": segment[0] may not be empty`])
    assert.deepEqual(pathErrors('/a//b'), [`${P}: Invalid value: "/a//b": segment[1] may not be empty`])
    assert.deepEqual(pathErrors('relative'), [`${P}: Invalid value: "relative": must start with a '/'`])
    const upper = pathErrors('/Validate')
    assert.equal(upper.length, 1)
    assert.match(upper[0], /^webhooks\[0\]\.clientConfig\.service\.path: Invalid value: "\/Validate": segment\[0\]: a lowercase RFC 1123 subdomain must consist of/)
  })

  it("url: Kubernetes' values and the desired format", () => {
    const urlErrors = (url: string) => validateWebhookConfiguration({webhooks: [webhook({clientConfig: {url}})]}, undefined).map(formatFieldError)
    const U = 'webhooks[0].clientConfig.url'
    assert.deepEqual(urlErrors('http://x.example.com/'), [`${U}: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`])
    assert.deepEqual(urlErrors('hooks.example.com/check'), [
      `${U}: Invalid value: "": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      `${U}: Invalid value: "": host must be provided; desired format: https://host[/path]`,
    ])
    assert.deepEqual(urlErrors('https://user:pw@x.example.com/'), [`${U}: Invalid value: "user:pw": user information is not permitted in the URL`])
    assert.deepEqual(urlErrors('https://x.example.com/#frag'), [`${U}: Invalid value: "frag": fragments are not permitted in the URL`])
    assert.deepEqual(urlErrors('https://x.example.com/?q=1'), [`${U}: Invalid value: "q=1": query parameters are not permitted in the URL`])
    assert.deepEqual(urlErrors('https://x.example.com:port/'), [`${U}: Required value: url must be a valid URL: parse "https://x.example.com:port/": invalid port ":port" after host; desired format: https://host[/path]`])
    assert.deepEqual(urlErrors('https://[::1/'), [`${U}: Required value: url must be a valid URL: parse "https://[::1/": missing ']' in host; desired format: https://host[/path]`])
    assert.deepEqual(urlErrors('https://127.0.0.1:8443/check'), [])
  })

  it('sideEffects Required: must specify one of None, NoneOnDryRun', () => {
    assert.deepEqual(validateWebhookConfiguration({webhooks: [webhook({sideEffects: undefined})]}, undefined).map(formatFieldError), ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'])
  })
})

describe('label selectors of webhooks and policies: each error on its sub-field, as ValidateLabelSelector', () => {
  it('operator, values, key and matchLabels are checked one by one', () => {
    const selector = {
      matchLabels: {'bad key': 'v'},
      matchExpressions: [
        {key: 'a', operator: 'Foo', values: ['x']},
        {key: 'b', operator: 'In'},
        {key: 'c', operator: 'Exists', values: ['x']},
        {key: 'd', operator: 'NotIn', values: ['not ok']},
      ],
    }
    const S = 'webhooks[0].namespaceSelector'
    const errs = validateWebhookConfiguration({webhooks: [webhook({namespaceSelector: selector})]}, undefined).map(formatFieldError)
    assert.ok(errs.some((e) => e.startsWith(`${S}.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters`)), errs.join('\n'))
    assert.ok(errs.includes(`${S}.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator`), errs.join('\n'))
    assert.ok(errs.includes(`${S}.matchExpressions[1].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`), errs.join('\n'))
    assert.ok(errs.includes(`${S}.matchExpressions[2].values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`), errs.join('\n'))
    assert.ok(errs.some((e) => e.startsWith(`${S}.matchExpressions[3].values[0]: Invalid value: "not ok": a valid label must be`)), errs.join('\n'))
    const policyErrs = validateValidatingPolicy(policy({matchConstraints: {resourceRules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}], objectSelector: {matchExpressions: [{key: 'x', operator: 'In'}]}}, validations: [{expression: 'true'}]}), undefined)
    assert.deepEqual(policyErrs.map(formatFieldError), ["spec.matchConstraints.objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"])
  })
})
