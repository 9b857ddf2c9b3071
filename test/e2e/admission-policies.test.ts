// ValidatingAdmissionPolicy and MutatingAdmissionPolicy in CEL, end to end against a real server:
// the policies users write (replicas limit from a params ConfigMap, required labels, image prefix;
// a MAP adding a label with JSONPatch and one setting a default with ApplyConfiguration), failure
// policies, the cost budget, and compile errors at create time.
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call, eventually} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'


const ADM = '/apis/admissionregistration.orch.io/v1'
const ADM_BETA = '/apis/admissionregistration.orch.io/v1beta1'

function statefulSet(name: string, replicas: number, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name, labels},
    spec: {serviceName: name, replicas, selector: {matchLabels: {app: name}}, template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'c', image: 'registry.orch.io/app:1'}]}}},
  }
}

describe('admission policies', () => {
  let server: OrchServer
  let auditPath: string
  let nsCounter = 0

  before(async () => {
    auditPath = join(tempDir('orch-vap-'), 'audit.log')
    server = await startOrchServer(['--controllers=admissionpolicystatus', '--audit-log-path', auditPath])
  })
  after(async () => server.cleanup())

  async function namespace(): Promise<string> {
    const ns = `vap-${++nsCounter}`
    assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns, labels: {policy: ns}}})).status, 201)
    return ns
  }

  async function create(path: string, body: unknown): Promise<void> {
    const result = await call(server.url, 'POST', path, body)
    assert.equal(result.status, 201, `${path}: ${result.text}`)
  }

  /** Repeats a request until check accepts its answer (policies reach the server's caches a moment after they are stored). */
  /** The first audit line matching (the log is written just after each answer). */
  async function auditLine(match: (event: any) => boolean): Promise<any> {
    const deadline = Date.now() + 5000
    for (;;) {
      // only whole lines: the server may be writing the last one
      const text = readFileSync(auditPath, 'utf8')
      const found = text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l)).find(match)
      if (found) return found
      if (Date.now() > deadline) assert.fail(`no such audit line in ${readFileSync(auditPath, 'utf8').split('\n').filter((l) => l.includes('unlabelled')).join('\n')}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  function rules(resources: string[], group = '', operations = ['CREATE', 'UPDATE']) {
    return {resourceRules: [{apiGroups: [group], apiVersions: ['*'], operations, resources}]}
  }

  it('replicas limit from a params ConfigMap: over the limit is 422 with the default message, under it is created', async () => {
    const ns = await namespace()
    await create(`/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'limits'}, data: {maxReplicas: '3'}})
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `replicas-${ns}`},
      spec: {paramKind: {apiVersion: 'v1', kind: 'ConfigMap'}, matchConstraints: rules(['statefulsets'], 'apps'), validations: [{expression: 'object.spec.replicas <= int(params.data.maxReplicas)'}]},
    })
    await create(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `replicas-${ns}-binding`},
      spec: {policyName: `replicas-${ns}`, validationActions: ['Deny'], paramRef: {name: 'limits', parameterNotFoundAction: 'Deny'}, matchResources: {namespaceSelector: {matchLabels: {policy: ns}}}},
    })
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets`
    const denied = await eventually(() => call(server.url, 'POST', `${path}?dryRun=All`, statefulSet('big', 5)), (r) => r.status !== 201, 'the policy to take effect')
    assert.equal(denied.status, 422, denied.text)
    assert.equal(denied.json.reason, 'Invalid')
    assert.equal(denied.json.message, `statefulsets.apps "big" is forbidden: ValidatingAdmissionPolicy 'replicas-${ns}' with binding 'replicas-${ns}-binding' denied request: failed expression: object.spec.replicas <= int(params.data.maxReplicas)`)
    assert.equal((await call(server.url, 'POST', path, statefulSet('small', 3))).status, 201)
    // another namespace: no params object there, parameterNotFoundAction Deny, failurePolicy Fail (default)
    const other = await namespace()
    const patched = await call(server.url, 'PATCH', `${ADM}/validatingadmissionpolicybindings/replicas-${ns}-binding`, {spec: {matchResources: {namespaceSelector: {matchLabels: null, matchExpressions: [{key: 'policy', operator: 'In', values: [ns, other]}]}}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    const missing = await eventually(() => call(server.url, 'POST', `/apis/apps/v1/namespaces/${other}/statefulsets?dryRun=All`, statefulSet('x', 1)), (r) => r.status !== 201, 'the binding change')
    assert.equal(missing.status, 422, missing.text)
    assert.equal(missing.json.reason, 'Invalid')
    assert.equal(missing.json.message, `statefulsets.apps "x" is forbidden: ValidatingAdmissionPolicy 'replicas-${ns}' with binding 'replicas-${ns}-binding' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`)
  })

  it('a denial of a subresource write names the resource alone (admission.NewForbidden: GetResource().GroupResource()): statefulsets.apps "x", not statefulsets/scale.apps', async () => {
    const ns = await namespace()
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `scale-${ns}`},
      spec: {
        matchConstraints: {...rules(['statefulsets/scale'], 'apps', ['UPDATE']), namespaceSelector: {matchLabels: {policy: ns}}},
        validations: [{expression: 'object.spec.replicas <= 2', message: 'at most 2'}],
      },
    })
    await create(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `scale-${ns}`},
      spec: {policyName: `scale-${ns}`, validationActions: ['Deny']},
    })
    await create(`/apis/apps/v1/namespaces/${ns}/statefulsets`, statefulSet('web', 1))
    const scale = () => call(server.url, 'PATCH', `/apis/apps/v1/namespaces/${ns}/statefulsets/web/scale`, {spec: {replicas: 5}}, {'Content-Type': 'application/merge-patch+json'})
    const denied = await eventually(scale, (r) => r.status !== 200, 'the policy')
    assert.equal(denied.status, 422, denied.text)
    assert.equal(denied.json.message, `statefulsets.apps "web" is forbidden: ValidatingAdmissionPolicy 'scale-${ns}' with binding 'scale-${ns}' denied request: at most 2`)
    assert.equal(denied.json.details.kind, 'statefulsets')
  })

  it('required labels with messageExpression and reason Forbidden (403); the rejected object is not stored', async () => {
    const ns = await namespace()
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `labels-${ns}`},
      spec: {
        matchConstraints: {...rules(['configmaps']), namespaceSelector: {matchLabels: {policy: ns}}},
        validations: [{expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", messageExpression: "'configmap ' + object.metadata.name + ' has no team label'", reason: 'Forbidden'}],
      },
    })
    await create(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `labels-${ns}`},
      spec: {policyName: `labels-${ns}`, validationActions: ['Deny', 'Audit']},
    })
    const cm = (name: string, labels?: Record<string, string>) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels}})
    const denied = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, cm('unlabelled')), (r) => r.status !== 201, 'the policy')
    assert.equal(denied.status, 403, denied.text)
    assert.equal(denied.json.message, `configmaps "unlabelled" is forbidden: ValidatingAdmissionPolicy 'labels-${ns}' with binding 'labels-${ns}' denied request: configmap unlabelled has no team label`)
    // admission.NewForbidden's words with the validation's reason; the policy's message alone is the cause
    assert.deepEqual(denied.json.details.causes, [{message: `ValidatingAdmissionPolicy 'labels-${ns}' with binding 'labels-${ns}' denied request: configmap unlabelled has no team label`}])
    assert.equal((await call(server.url, 'GET', `/api/v1/namespaces/${ns}/configmaps/unlabelled`)).status, 404)
    assert.equal((await call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, cm('labelled', {team: 'a'}))).status, 201)
    const line = await auditLine((e) => e.objectRef?.name === 'unlabelled' && e.annotations?.['validation.policy.admission.orch.io/validation_failure'])
    assert.equal(JSON.parse(line.annotations['validation.policy.admission.orch.io/validation_failure'])[0].policy, `labels-${ns}`)
  })

  it('image prefix with validationActions Warn: the pod is created and the failure comes back as a Warning header', async () => {
    const ns = await namespace()
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `images-${ns}`},
      spec: {
        matchConstraints: {...rules(['pods']), namespaceSelector: {matchLabels: {policy: ns}}},
        validations: [{expression: "object.spec.containers.all(c, c.image.startsWith('registry.orch.io/'))", message: 'images must come from registry.orch.io'}],
        auditAnnotations: [{key: 'images', valueExpression: "object.spec.containers.map(c, c.image).join(',')"}],
      },
    })
    await create(`${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `images-${ns}`},
      spec: {policyName: `images-${ns}`, validationActions: ['Warn']},
    })
    const pod = (name: string) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {containers: [{name: 'c', image: 'docker.io/evil:1'}]}})
    let n = 0
    const warned = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/pods`, pod(`p${n++}`)), (r) => r.headers.warning !== undefined, 'the warning')
    assert.equal(warned.status, 201)
    assert.match(String(warned.headers.warning), new RegExp(`Validation failed for ValidatingAdmissionPolicy 'images-${ns}' with binding 'images-${ns}': images must come from registry.orch.io`))
    await auditLine((e) => e.annotations?.[`images-${ns}/images`] === 'docker.io/evil:1')
  })

  it('failurePolicy: a runtime error under Fail is a deny decision through validationActions (Deny: 422 Invalid, Warn: a warning) and is skipped under Ignore; a runaway expression is cut off by the cost budget', async () => {
    const ns = await namespace()
    const runaway = '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, a + b + c + d + e + f + g > 0)))))))'
    for (const [name, expression, failurePolicy, action] of [['err-fail', "int(object.data.x) > 0", 'Fail', 'Deny'], ['err-ignore', "int(object.data.y) > 0", 'Ignore', 'Deny'], ['err-warn', "int(object.data.x) > 0", 'Fail', 'Warn'], ['cost', runaway, 'Fail', 'Deny']]) {
      await create(`${ADM}/validatingadmissionpolicies`, {
        apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `${name}-${ns}`},
        spec: {failurePolicy, matchConstraints: {...rules(['configmaps']), namespaceSelector: {matchLabels: {policy: ns}}, objectSelector: {matchLabels: {check: name}}}, validations: [{expression}]},
      })
      await create(`${ADM}/validatingadmissionpolicybindings`, {
        apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `${name}-${ns}`},
        spec: {policyName: `${name}-${ns}`, validationActions: [action]},
      })
    }
    const cm = (check: string) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {generateName: 'c-', labels: {check}}, data: {x: 'not a number', y: 'nope'}})
    const failed = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, cm('err-fail')), (r) => r.status !== 201, 'the Fail policy')
    assert.equal(failed.status, 422, failed.text)
    assert.equal(failed.json.reason, 'Invalid')
    assert.match(failed.json.message, new RegExp(`^configmaps "c-[a-z0-9]{5}" is forbidden: ValidatingAdmissionPolicy 'err-fail-${ns}' with binding 'err-fail-${ns}' denied request: expression 'int\\(object.data.x\\) > 0' resulted in error`))
    assert.equal((await call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, cm('err-ignore'))).status, 201)
    const warned = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, cm('err-warn')), (r) => r.headers.warning !== undefined, 'the Warn policy')
    assert.equal(warned.status, 201, 'a Warn-only binding does not deny for an error')
    assert.match(String(warned.headers.warning), new RegExp(`Validation failed for ValidatingAdmissionPolicy 'err-warn-${ns}' with binding 'err-warn-${ns}': expression 'int\\(object.data.x\\) > 0' resulted in error`))
    const started = Date.now()
    const cut = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, cm('cost')), (r) => r.status !== 201, 'the cost policy')
    assert.equal(cut.status, 422, cut.text)
    assert.match(cut.json.message, /operation cancelled: actual cost limit exceeded|running out of cost budget/)
    assert.ok(Date.now() - started < 5000, `stopped fast (${Date.now() - started} ms), not run for its 10^7 steps`)
  })

  it('a policy whose expression does not compile, or does not evaluate to its type, is refused at create time: 422 naming the field and the compiler message', async () => {
    const bad = await call(server.url, 'POST', `${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: 'broken'},
      spec: {
        matchConstraints: rules(['configmaps']),
        validations: [{expression: 'object.data +'}, {expression: "'not a bool'"}, {expression: 'object.spec.paused', messageExpression: '1'}],
        matchConditions: [{name: 'm', expression: 'params.x'}],
      },
    })
    assert.equal(bad.status, 422, bad.text)
    const fields = bad.json.details.causes.map((c: {field: string}) => c.field).sort()
    assert.deepEqual(fields, ['spec.matchConditions[0].expression', 'spec.validations[0].expression', 'spec.validations[1].expression', 'spec.validations[2].messageExpression'])
    assert.match(bad.json.message, /spec.validations\[0\].expression: Invalid value: "object.data \+": compilation failed: .*Unexpected token/)
    assert.match(bad.json.message, /spec.validations\[1\].expression: Invalid value: "'not a bool'": must evaluate to bool but got string/)
    assert.match(bad.json.message, /spec.validations\[2\].messageExpression: Invalid value: "1": must evaluate to string but got int/)
    const mutation = await call(server.url, 'POST', `${ADM_BETA}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: {name: 'broken-patch'},
      spec: {matchConstraints: rules(['configmaps'], '', ['CREATE']), reinvocationPolicy: 'Never', mutations: [{patchType: 'JSONPatch', jsonPatch: {expression: "[{'op': 'add', 'path': '/x'}]"}}]},
    })
    assert.equal(mutation.status, 422, mutation.text)
    assert.match(mutation.json.message, /spec.mutations\[0\].jsonPatch.expression: Invalid value: .*: must evaluate to list\(JSONPatch\) but got list\(map\(string, string\)\)/)
    assert.equal((await call(server.url, 'GET', `${ADM}/validatingadmissionpolicies/broken`)).status, 404)
  })

  it('MutatingAdmissionPolicy: a JSONPatch mutation adds a label and an ApplyConfiguration one sets a default, before validation', async () => {
    const ns = await namespace()
    const policy = (name: string, mutation: Record<string, unknown>) => ({
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: {name: `${name}-${ns}`},
      spec: {matchConstraints: {...rules(['configmaps'], '', ['CREATE']), namespaceSelector: {matchLabels: {policy: ns}}}, reinvocationPolicy: 'Never', mutations: [mutation]},
    })
    await create(`${ADM_BETA}/mutatingadmissionpolicies`, policy('label', {
      patchType: 'JSONPatch',
      jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}, JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('orch.io/managed'), value: 'true'}]"},
    }))
    await create(`${ADM_BETA}/mutatingadmissionpolicies`, policy('default', {
      patchType: 'ApplyConfiguration',
      applyConfiguration: {expression: "Object{data: {'tier': has(object.data) && 'tier' in object.data ? object.data.tier : 'standard'}}"},
    }))
    for (const name of ['label', 'default']) {
      await create(`${ADM_BETA}/mutatingadmissionpolicybindings`, {
        apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicyBinding', metadata: {name: `${name}-${ns}`}, spec: {policyName: `${name}-${ns}`},
      })
    }
    let n = 0
    const created = await eventually(
      () => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `m${n++}`}, data: {a: 'b'}}),
      (r) => r.status === 201 && r.json.metadata?.labels?.['orch.io/managed'] === 'true' && r.json.data?.tier === 'standard',
      'both mutations',
    )
    assert.deepEqual(created.json.data, {a: 'b', tier: 'standard'})
    const kept = await call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'premium'}, data: {tier: 'premium'}})
    assert.equal(kept.json.data.tier, 'premium', 'the default does not override a value that is set')
    const refused = await call(server.url, 'POST', `${ADM_BETA}/mutatingadmissionpolicies`, policy('atomic', {patchType: 'ApplyConfiguration', applyConfiguration: {expression: 'Object{data: {}}'}}))
    assert.equal(refused.status, 201, 'a valid ApplyConfiguration policy')
  })

  it('the status controller type-checks every expression against the matched kinds: status.typeChecking.expressionWarnings and observedGeneration', async () => {
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: 'typed'},
      spec: {
        matchConstraints: rules(['statefulsets'], 'apps'),
        validations: [{expression: 'object.spec.replicas <= 5'}, {expression: 'object.spec.replicaz <= 5'}, {expression: "object.spec.replicas > 'many'"}],
      },
    })
    const policy = await eventually(() => call(server.url, 'GET', `${ADM}/validatingadmissionpolicies/typed`), (r) => r.json.status?.observedGeneration === 1, 'the status')
    const warnings = policy.json.status.typeChecking.expressionWarnings
    assert.deepEqual(warnings.map((w: {fieldRef: string}) => w.fieldRef), ['spec.validations[1].expression', 'spec.validations[2].expression'])
    assert.match(warnings[0].warning, /^apps\/v1, Kind=StatefulSet: .*replicaz/)
    assert.match(warnings[1].warning, /^apps\/v1, Kind=StatefulSet: no such overload: int > string/)
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: 'typed-ok'},
      spec: {matchConstraints: rules(['configmaps']), validations: [{expression: "has(object.data) && object.metadata.labels['a'] == 'b'"}]},
    })
    const ok = await eventually(() => call(server.url, 'GET', `${ADM}/validatingadmissionpolicies/typed-ok`), (r) => r.json.status?.observedGeneration === 1, 'the status')
    assert.deepEqual(ok.json.status.typeChecking, {})
  })

  it('an ApplyConfiguration that would set an atomic map is refused (failurePolicy Fail); IfNeeded reinvokes a policy after a later one changed the object', async () => {
    const ns = await namespace()
    const policy = (name: string, resources: string[], mutation: Record<string, unknown>, reinvocationPolicy = 'Never') => ({
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: {name: `${name}-${ns}`},
      spec: {matchConstraints: {...rules(resources, '', ['CREATE']), namespaceSelector: {matchLabels: {policy: ns}}}, reinvocationPolicy, mutations: [mutation]},
    })
    const bind = (name: string) => create(`${ADM_BETA}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1beta1', kind: 'MutatingAdmissionPolicyBinding', metadata: {name: `${name}-${ns}`}, spec: {policyName: `${name}-${ns}`},
    })
    await create(`${ADM_BETA}/mutatingadmissionpolicies`, policy('atomic', ['pods'], {
      patchType: 'ApplyConfiguration', applyConfiguration: {expression: "Object{spec: Object.spec{nodeSelector: {'disk': 'ssd'}}}"},
    }))
    await bind('atomic')
    const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}, spec: {containers: [{name: 'c', image: 'i'}]}}
    const refused = await eventually(() => call(server.url, 'POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod), (r) => r.status !== 201, 'the atomic policy')
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.json.reason, 'Invalid', 'a mutation error: 403 with reason Invalid, as Kubernetes')
    assert.match(refused.json.message, /may not mutate atomic arrays, maps or structs: spec.nodeSelector/)
    // 'first' copies label b into label a (IfNeeded); 'second', which runs after it, sets label b
    await create(`${ADM_BETA}/mutatingadmissionpolicies`, policy('first', ['configmaps'], {
      patchType: 'ApplyConfiguration', applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'a': has(object.metadata.labels) && 'b' in object.metadata.labels ? object.metadata.labels['b'] : 'none'}}}"},
    }, 'IfNeeded'))
    await create(`${ADM_BETA}/mutatingadmissionpolicies`, policy('second', ['configmaps'], {
      patchType: 'ApplyConfiguration', applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'b': 'set-by-second'}}}"},
    }))
    await bind('first')
    await bind('second')
    let n = 0
    const created = await eventually(
      () => call(server.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `r${n++}`}}),
      (r) => r.status === 201 && r.json.metadata.labels?.b === 'set-by-second',
      'both policies',
    )
    assert.equal(created.json.metadata.labels.a, 'set-by-second', 'the IfNeeded policy ran again and saw the later change')
  })

  it('an eviction is admitted as a CREATE of pods/eviction (kind policy/v1 Eviction), not as the pod\'s DELETE, as Kubernetes admits it', async () => {
    const ns = await namespace()
    const policy = (name: string, operations: string[], resources: string[], message: string) => ({
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `${name}-${ns}`},
      spec: {matchConstraints: rules(resources, '', operations), validations: [{expression: "object == null || object.kind != 'Eviction' || object.deleteOptions.gracePeriodSeconds == 0", message}]},
    })
    const binding = (name: string) => ({
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `${name}-${ns}`},
      spec: {policyName: `${name}-${ns}`, validationActions: ['Deny'], matchResources: {namespaceSelector: {matchLabels: {policy: ns}}}},
    })
    await create(`${ADM}/validatingadmissionpolicies`, policy('evict', ['CREATE'], ['pods/eviction'], 'evictions need gracePeriodSeconds 0'))
    await create(`${ADM}/validatingadmissionpolicybindings`, binding('evict'))
    const pods = `/api/v1/namespaces/${ns}/pods`
    await create(pods, {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}, spec: {containers: [{name: 'c', image: 'busybox'}]}})
    const evict = (deleteOptions: unknown) =>
      call(server.url, 'POST', `${pods}/p/eviction`, {apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: 'p'}, deleteOptions})
    const denied = await eventually(() => evict({gracePeriodSeconds: 30, dryRun: ['All']}), (r) => r.status !== 201, 'the policy to take effect')
    assert.equal(denied.status, 422, denied.text)
    assert.match(denied.json.message, /evictions need gracePeriodSeconds 0/)
    assert.equal((await call(server.url, 'GET', `${pods}/p`)).status, 200)
    // the pod's DELETE admission is not asked for an eviction: a policy refusing every pod DELETE
    await create(`${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `nodelete-${ns}`},
      spec: {matchConstraints: rules(['pods'], '', ['DELETE']), validations: [{expression: 'false', message: 'no pod deletes'}]},
    })
    await create(`${ADM}/validatingadmissionpolicybindings`, binding('nodelete'))
    await eventually(() => call(server.url, 'DELETE', `${pods}/p?dryRun=All`), (r) => r.status === 403 || r.status === 422, 'the delete policy to take effect')
    const evicted = await evict({gracePeriodSeconds: 0})
    assert.equal(evicted.status, 201, evicted.text)
    assert.equal((await call(server.url, 'GET', `${pods}/p`)).status, 404)
  })

  it('orch get lists policies and bindings with their columns', async () => {
    const got = await runOrch(['get', 'validatingadmissionpolicybindings'], {env: server.cliEnv})
    assert.equal(got.code, 0, got.stderr)
    assert.match(got.stdout.split('\n')[0], /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE$/)
    const policies = await runOrch(['get', 'validatingadmissionpolicies'], {env: server.cliEnv})
    assert.equal(policies.code, 0, policies.stderr)
    assert.match(policies.stdout, /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\n/)
  })
})
