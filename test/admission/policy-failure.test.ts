// failurePolicy of admission policies (seed 002: `spec.failurePolicy` "covers parse, type-check,
// runtime errors and invalid policy or binding ...; does not govern validations that evaluate to
// false (binding validationActions do when Fail)"), as Kubernetes' dispatchers apply it: an error
// under Fail is a deny decision that goes through the binding's validationActions, a denial for an
// error is 422 Invalid, and a misconfigured binding is `failed to configure binding: ...`.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {celEngine} from '../../src/admission/cel/engine.js'
import {MutatingPolicyPlugin} from '../../src/admission/policy/mutating.js'
import type {ParamLookup} from '../../src/admission/policy/params.js'
import {VALIDATION_FAILURE_ANNOTATION, ValidatingPolicyPlugin} from '../../src/admission/policy/validating.js'
import type {AdmissionAttributes} from '../../src/admission/types.js'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'

interface Recorded {
  warnings: string[]
  annotations: Map<string, string>
}

function attributes(recorded: Recorded, object: AnyObject = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cm', namespace: 'default'}, data: {x: 'not a number'}}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: {group: '', version: 'v1', kind: 'ConfigMap'},
    resource: {group: '', version: 'v1', resource: 'configmaps'},
    subresource: '',
    name: 'cm',
    namespace: 'default',
    object,
    oldObject: null,
    userInfo: {username: 'u', groups: []},
    dryRun: false,
    options: null,
    declaration: configMapDeclaration,
    namespaceObject: async () => ({metadata: {name: 'default'}}),
    warn: (message) => recorded.warnings.push(message),
    annotate: (key, value) => recorded.annotations.set(key, value),
  }
}

const RULES = {resourceRules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps']}]}
const logger = createLogger({verbosity: 0, write: () => {}})
/** ConfigMaps are known (none stored); no other kind is. */
const params: ParamLookup = (apiVersion, kind) => (apiVersion === 'v1' && kind === 'ConfigMap' ? {namespaced: true, objects: () => []} : undefined)

function policy(spec: AnyObject): AnyObject {
  return {metadata: {name: 'p', uid: `uid-${JSON.stringify(spec)}`, resourceVersion: '1'}, spec: {matchConstraints: RULES, ...spec}}
}

function validating(policySpec: AnyObject, bindingSpec: AnyObject): ValidatingPolicyPlugin {
  return new ValidatingPolicyPlugin({
    policies: () => [policy(policySpec)],
    bindings: () => [{metadata: {name: 'b'}, spec: {policyName: 'p', ...bindingSpec}}],
    params,
    engine: celEngine(),
    logger,
  })
}

const ERROR_EXPRESSION = 'int(object.data.x) > 0'

async function denial(plugin: {validate?(a: AdmissionAttributes): Promise<void>; admit?(a: AdmissionAttributes): Promise<unknown>}, recorded: Recorded = {warnings: [], annotations: new Map()}) {
  const attempt = plugin.validate ? plugin.validate(attributes(recorded)) : plugin.admit!(attributes(recorded))
  let caught: (Error & {code?: number; reason?: string; details?: AnyObject}) | undefined
  await attempt.catch((error) => {
    caught = error
  })
  return caught
}

describe('ValidatingAdmissionPolicy failurePolicy', () => {
  it('failurePolicy Fail: a runtime error under a Warn-only binding only warns (the error goes through validationActions)', async () => {
    const recorded: Recorded = {warnings: [], annotations: new Map()}
    const error = await denial(validating({validations: [{expression: ERROR_EXPRESSION}]}, {validationActions: ['Warn']}), recorded)
    assert.equal(error, undefined, 'the request is admitted')
    assert.equal(recorded.warnings.length, 1)
    assert.match(recorded.warnings[0], /^Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': expression 'int\(object.data.x\) > 0' resulted in error: /)
  })

  it('failurePolicy Fail: a runtime error under an Audit-only binding only annotates', async () => {
    const recorded: Recorded = {warnings: [], annotations: new Map()}
    const error = await denial(validating({failurePolicy: 'Fail', validations: [{expression: ERROR_EXPRESSION}]}, {validationActions: ['Audit']}), recorded)
    assert.equal(error, undefined)
    assert.deepEqual(recorded.warnings, [])
    const [failure] = JSON.parse(recorded.annotations.get(VALIDATION_FAILURE_ANNOTATION) ?? '[]')
    assert.equal(failure.policy, 'p')
    assert.equal(failure.expressionIndex, 0)
    assert.match(failure.message, /resulted in error/)
  })

  it('failurePolicy Fail: a runtime error under a Deny binding is 422 Invalid, with the policy and binding named', async () => {
    const error = await denial(validating({validations: [{expression: 'true'}, {expression: ERROR_EXPRESSION}]}, {validationActions: ['Deny']}))
    assert.equal(error?.code, 422)
    assert.equal(error?.reason, 'Invalid')
    assert.match(error!.message, /^configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'int\(object.data.x\) > 0' resulted in error: /)
    assert.deepEqual(error?.details?.causes, [{message: error!.message.replace('configmaps "cm" is forbidden: ', '')}])
    assert.equal(error?.details?.kind, 'configmaps')
  })

  it('a match condition error under Fail is a deny decision too; under Ignore nothing happens', async () => {
    const failing = {matchConditions: [{name: 'bad', expression: ERROR_EXPRESSION}], validations: [{expression: 'true'}]}
    const recorded: Recorded = {warnings: [], annotations: new Map()}
    assert.equal(await denial(validating(failing, {validationActions: ['Warn']}), recorded), undefined)
    assert.equal(recorded.warnings.length, 1)
    assert.equal((await denial(validating(failing, {validationActions: ['Deny']})))?.code, 422)
    assert.equal(await denial(validating({...failing, failurePolicy: 'Ignore'}, {validationActions: ['Deny']})), undefined)
  })

  it('"expression \'<expr>\' resulted in error": every match condition error, aggregated as Kubernetes\' matcher reports them; a false condition wins over errors', async () => {
    const two = {matchConditions: [{name: 'a', expression: ERROR_EXPRESSION}, {name: 'b', expression: "object.data.nosuch == 'x'"}], validations: [{expression: 'true'}]}
    const error = await denial(validating(two, {validationActions: ['Deny']}))
    assert.match(error!.message, new RegExp(`denied request: \\[expression '${ERROR_EXPRESSION.replace(/[()]/g, '\\$&')}' resulted in error: .*, expression 'object.data.nosuch == 'x'' resulted in error: .*\\]$`))
    const skipped = {...two, matchConditions: [...two.matchConditions, {name: 'c', expression: 'false'}]}
    assert.equal(await denial(validating(skipped, {validationActions: ['Deny']})), undefined)
  })

  it("params not found with parameterNotFoundAction Deny: 422 'failed to configure binding: ', whatever the validationActions", async () => {
    const spec = {paramKind: {apiVersion: 'v1', kind: 'ConfigMap'}, validations: [{expression: 'true'}]}
    for (const validationActions of [['Deny'], ['Warn']]) {
      const error = await denial(validating(spec, {validationActions, paramRef: {name: 'limits', parameterNotFoundAction: 'Deny'}}))
      assert.equal(error?.code, 422, `${validationActions}`)
      assert.equal(error?.reason, 'Invalid')
      assert.equal(error?.message, 'configmaps "cm" is forbidden: ' + "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
    }
    const allowed = await denial(validating(spec, {validationActions: ['Deny'], paramRef: {name: 'limits', parameterNotFoundAction: 'Allow'}}))
    assert.equal(allowed, undefined, 'Allow: no params, no evaluation')
  })

  it("a paramKind the server does not serve: 'failed to configure policy: ' without the binding", async () => {
    const error = await denial(validating({paramKind: {apiVersion: 'v1', kind: 'Missing'}, validations: [{expression: 'true'}]}, {validationActions: ['Deny'], paramRef: {name: 'x', parameterNotFoundAction: 'Deny'}}))
    assert.equal(error?.code, 422)
    assert.equal(error?.message, 'configmaps "cm" is forbidden: ' + "ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: '/v1, Kind=Missing'")
  })

  it('a failed validation keeps its reason and code; every binding is evaluated before the first denial answers', async () => {
    const recorded: Recorded = {warnings: [], annotations: new Map()}
    const plugin = new ValidatingPolicyPlugin({
      policies: () => [policy({validations: [{expression: 'false', reason: 'Forbidden', message: 'no'}]})],
      bindings: () => [
        {metadata: {name: 'deny'}, spec: {policyName: 'p', validationActions: ['Deny']}},
        {metadata: {name: 'warn'}, spec: {policyName: 'p', validationActions: ['Warn']}},
      ],
      params,
      engine: celEngine(),
      logger,
    })
    const error = await denial(plugin, recorded)
    assert.equal(error?.code, 403)
    assert.equal(error?.message, 'configmaps "cm" is forbidden: ' + "ValidatingAdmissionPolicy 'p' with binding 'deny' denied request: no")
    assert.deepEqual(recorded.warnings, ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'warn': no"])
  })
})

describe('MutatingAdmissionPolicy failurePolicy', () => {
  function mutating(policySpec: AnyObject, bindingSpec: AnyObject = {}): MutatingPolicyPlugin {
    return new MutatingPolicyPlugin({
      policies: () => [policy({reinvocationPolicy: 'Never', ...policySpec})],
      bindings: () => [{metadata: {name: 'b'}, spec: {policyName: 'p', ...bindingSpec}}],
      params,
      engine: celEngine(),
      logger,
    })
  }
  const failingMutation = {patchType: 'JSONPatch', jsonPatch: {expression: `${ERROR_EXPRESSION} ? [] : []`}}

  it('failurePolicy Fail: a mutation error is 403 with reason Invalid (Kubernetes keeps admission.NewForbidden code)', async () => {
    const error = await denial(mutating({mutations: [failingMutation]}))
    assert.equal(error?.code, 403)
    assert.equal(error?.reason, 'Invalid')
    assert.match(error!.message, /^policy 'p' with binding 'b' denied request: mutation 0 failed: /)
    assert.deepEqual(error?.details?.causes, [{message: error!.message}])
    assert.equal(await denial(mutating({failurePolicy: 'Ignore', mutations: [failingMutation]})), undefined)
  })

  it("params not found with parameterNotFoundAction Deny: 403 Forbidden 'failed to configure binding: '", async () => {
    const error = await denial(mutating(
      {paramKind: {apiVersion: 'v1', kind: 'ConfigMap'}, mutations: [{patchType: 'JSONPatch', jsonPatch: {expression: '[]'}}]},
      {paramRef: {name: 'limits', parameterNotFoundAction: 'Deny'}},
    ))
    assert.equal(error?.code, 403)
    assert.equal(error?.reason, 'Forbidden')
    assert.equal(error?.message, "policy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
  })
})
