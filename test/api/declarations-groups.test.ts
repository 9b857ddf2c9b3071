import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {declarations as admissionregistration} from '../../src/api/admissionregistration/index.js'
import {goLabelSelectorString, paramRefCell} from '../../src/api/admissionregistration/shared.js'
import {declarations as authentication} from '../../src/api/authentication/index.js'
import {declarations as authorization} from '../../src/api/authorization/index.js'
import {certificateSigningRequest, csrConditionCell, csrRequestedDurationCell} from '../../src/api/certificates/certificatesigningrequest.js'
import {declarations as certificates} from '../../src/api/certificates/index.js'
import {declarations as networking} from '../../src/api/networking/index.js'
import {declarations as rbac} from '../../src/api/rbac/index.js'
import {declarations as storagemigration} from '../../src/api/storagemigration/index.js'
import {apiVersionOf, type AnyObject, type KindDeclaration, type Schema} from '../../src/api/types.js'

const all: KindDeclaration[] = [
  ...networking,
  ...storagemigration,
  ...certificates,
  ...admissionregistration,
  ...rbac,
  ...authorization,
  ...authentication,
]

function byKind(kind: string): KindDeclaration {
  const d = all.find((x) => x.kind === kind)
  assert.ok(d, `no declaration for ${kind}`)
  return d
}

const now = new Date('2026-01-01T00:00:00Z')

/** every object schema under `schema`, with its JSON path ('' fields are Go-embedded, inline in JSON) */
function objectSchemas(schema: Schema, path: string, out: Array<{path: string; schema: Schema & {type: 'object'}}> = []) {
  if (schema.type === 'object') {
    out.push({path, schema})
    for (const [name, field] of Object.entries(schema.fields)) objectSchemas(field, name === '' ? path : `${path}.${name}`, out)
  } else if (schema.type === 'array') {
    objectSchemas(schema.items, `${path}[]`, out)
  } else if (schema.type === 'map') {
    objectSchemas(schema.values, `${path}{}`, out)
  }
  return out
}

/** the field at a JSON path (`a.b[].c`), looking through inline ('') fields */
function fieldAt(d: KindDeclaration, path: string): (Schema & {required?: boolean}) | undefined {
  let current: Schema = d.schema
  let found: (Schema & {required?: boolean}) | undefined
  for (const raw of path.split('.')) {
    const name = raw.replace(/\[\]$/, '')
    const lookup = (s: Schema): (Schema & {required?: boolean}) | undefined => {
      if (s.type !== 'object') return undefined
      if (name in s.fields) return s.fields[name]
      return '' in s.fields ? lookup(s.fields['']) : undefined
    }
    found = lookup(current)
    if (!found) return undefined
    current = found
    if (raw.endsWith('[]')) {
      if (current.type !== 'array') return undefined
      current = current.items
    }
  }
  return found
}

describe('declarations of networking, storagemigration, certificates, admissionregistration, rbac, authorization, authentication', () => {
  it('names each kind once, with its group and version', () => {
    const seen = new Set<string>()
    for (const d of all) {
      const key = `${apiVersionOf(d)}/${d.kind}`
      assert.ok(!seen.has(key), `duplicate ${key}`)
      seen.add(key)
      assert.match(d.group, /\.orch\.io$/, `${d.kind}: group ${d.group}`)
      assert.equal(d.schema.name, d.kind)
      assert.equal(d.schema.fields.metadata?.proto, 1, `${d.kind}: metadata is field 1`)
    }
    assert.equal(apiVersionOf(byKind('ServiceCIDR')), 'networking.orch.io/v1')
    assert.equal(apiVersionOf(byKind('StorageVersionMigration')), 'storagemigration.orch.io/v1beta1')
    assert.equal(apiVersionOf(byKind('CertificateSigningRequest')), 'certificates.orch.io/v1')
    assert.equal(apiVersionOf(byKind('ValidatingAdmissionPolicy')), 'admissionregistration.orch.io/v1')
    assert.equal(apiVersionOf(byKind('MutatingAdmissionPolicyBinding')), 'admissionregistration.orch.io/v1beta1')
    assert.equal(apiVersionOf(byKind('TokenReview')), 'authentication.orch.io/v1')
    for (const kind of ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview', 'TokenReview']) {
      assert.deepEqual(byKind(kind).verbs, ['create'])
    }
    const namespaced = ['Role', 'RoleBinding', 'LocalSubjectAccessReview']
    for (const d of all) assert.equal(d.namespaced, namespaced.includes(d.kind), d.kind)
  })

  it('gives every field of every object schema a distinct positive protobuf number', () => {
    for (const d of all) {
      for (const {path, schema} of objectSchemas(d.schema, d.kind)) {
        // a field of an embedded struct is numbered inside that struct's message: key it by the embedding chain
        const numbers = new Map<string, string>()
        for (const [name, field] of Object.entries(schema.fields)) {
          assert.ok(Number.isInteger(field.proto) && field.proto > 0, `${path}.${name}: proto ${field.proto}`)
          let key = `${field.proto}`
          for (let e = field.embeddedIn; e; e = e.inner) key = `${key}@${e.proto}`
          const other = numbers.get(key)
          assert.equal(other, undefined, `${path} (${schema.name}): ${name} and ${other} share proto ${key}`)
          numbers.set(key, name)
        }
      }
    }
  })

  it('declares the fields of the documents, with the required ones marked required', () => {
    const required: Record<string, string[]> = {
      StorageVersionMigration: ['spec.resource', 'spec.resource.group', 'spec.resource.resource'],
      CertificateSigningRequest: ['spec', 'spec.request', 'spec.signerName', 'status.conditions[].type', 'status.conditions[].status'],
      ValidatingWebhookConfiguration: [
        'webhooks[].name',
        'webhooks[].clientConfig',
        'webhooks[].sideEffects',
        'webhooks[].admissionReviewVersions',
        'webhooks[].clientConfig.service.name',
        'webhooks[].clientConfig.service.namespace',
        'webhooks[].rules[].apiGroups',
        'webhooks[].rules[].apiVersions',
        'webhooks[].rules[].operations',
        'webhooks[].rules[].resources',
        'webhooks[].matchConditions[].name',
        'webhooks[].matchConditions[].expression',
      ],
      ValidatingAdmissionPolicy: [
        'spec.matchConstraints',
        'spec.validations[].expression',
        'spec.auditAnnotations[].key',
        'spec.auditAnnotations[].valueExpression',
        'spec.variables[].name',
        'spec.variables[].expression',
        'status.typeChecking.expressionWarnings[].fieldRef',
        'status.typeChecking.expressionWarnings[].warning',
      ],
      ValidatingAdmissionPolicyBinding: ['spec.policyName', 'spec.validationActions'],
      MutatingAdmissionPolicy: ['spec.matchConstraints', 'spec.mutations[].patchType', 'spec.reinvocationPolicy'],
      IPAddress: ['spec.parentRef', 'spec.parentRef.resource', 'spec.parentRef.name'],
      RoleBinding: ['roleRef', 'roleRef.kind', 'roleRef.name', 'subjects[].kind', 'subjects[].name'],
      ClusterRoleBinding: ['roleRef', 'roleRef.kind', 'roleRef.name', 'subjects[].kind', 'subjects[].name'],
      Role: ['rules[].verbs'],
      ClusterRole: ['rules[].verbs'],
      SubjectAccessReview: ['spec', 'status.allowed'],
      TokenReview: ['spec', 'spec.token'],
    }
    for (const [kind, paths] of Object.entries(required)) {
      for (const path of paths) {
        const field = fieldAt(byKind(kind), path)
        assert.ok(field, `${kind}: ${path} is missing`)
        assert.equal(field.required, true, `${kind}: ${path} should be required`)
      }
    }
    const present: Record<string, string[]> = {
      ServiceCIDR: ['spec.cidrs', 'status.conditions[].lastTransitionTime'],
      StorageVersionMigration: ['status.conditions', 'status.resourceVersion'],
      CertificateSigningRequest: [
        'spec.expirationSeconds',
        'spec.usages',
        'spec.username',
        'spec.uid',
        'spec.groups',
        'spec.extra',
        'status.certificate',
        'status.conditions[].reason',
        'status.conditions[].message',
        'status.conditions[].lastUpdateTime',
        'status.conditions[].lastTransitionTime',
      ],
      ValidatingWebhookConfiguration: [
        'webhooks[].clientConfig.caBundle',
        'webhooks[].clientConfig.url',
        'webhooks[].clientConfig.service.path',
        'webhooks[].clientConfig.service.port',
        'webhooks[].failurePolicy',
        'webhooks[].matchPolicy',
        'webhooks[].namespaceSelector',
        'webhooks[].objectSelector',
        'webhooks[].timeoutSeconds',
        'webhooks[].rules[].scope',
      ],
      ValidatingAdmissionPolicy: [
        'spec.failurePolicy',
        'spec.matchConditions',
        'spec.paramKind.apiVersion',
        'spec.paramKind.kind',
        'spec.validations[].message',
        'spec.validations[].messageExpression',
        'spec.validations[].reason',
        'spec.matchConstraints.resourceRules[].resourceNames',
        'spec.matchConstraints.resourceRules[].scope',
        'spec.matchConstraints.excludeResourceRules',
        'spec.matchConstraints.matchPolicy',
        'spec.matchConstraints.namespaceSelector',
        'spec.matchConstraints.objectSelector',
        'status.observedGeneration',
        'status.conditions',
      ],
      ValidatingAdmissionPolicyBinding: [
        'spec.paramRef.name',
        'spec.paramRef.namespace',
        'spec.paramRef.selector',
        'spec.paramRef.parameterNotFoundAction',
        'spec.matchResources.resourceRules',
      ],
      MutatingAdmissionPolicy: [
        'spec.paramKind',
        'spec.variables',
        'spec.failurePolicy',
        'spec.matchConditions',
        'spec.mutations[].applyConfiguration.expression',
        'spec.mutations[].jsonPatch.expression',
      ],
      MutatingAdmissionPolicyBinding: ['spec.policyName', 'spec.paramRef', 'spec.matchResources.excludeResourceRules'],
      ClusterRole: ['aggregationRule.clusterRoleSelectors', 'rules[].apiGroups', 'rules[].resources', 'rules[].resourceNames', 'rules[].nonResourceURLs'],
      RoleBinding: ['roleRef.apiGroup', 'subjects[].apiGroup', 'subjects[].namespace'],
      SubjectAccessReview: [
        'spec.resourceAttributes.namespace',
        'spec.resourceAttributes.verb',
        'spec.resourceAttributes.group',
        'spec.resourceAttributes.version',
        'spec.resourceAttributes.resource',
        'spec.resourceAttributes.subresource',
        'spec.resourceAttributes.name',
        'spec.resourceAttributes.fieldSelector.requirements',
        'spec.resourceAttributes.labelSelector.rawSelector',
        'spec.nonResourceAttributes.path',
        'spec.nonResourceAttributes.verb',
        'spec.user',
        'spec.groups',
        'spec.extra',
        'spec.uid',
        'status.denied',
        'status.reason',
        'status.evaluationError',
      ],
      SelfSubjectAccessReview: ['spec.resourceAttributes', 'spec.nonResourceAttributes', 'status.allowed'],
      LocalSubjectAccessReview: ['spec.resourceAttributes', 'spec.user', 'status.allowed'],
      SelfSubjectRulesReview: ['spec.namespace', 'status.resourceRules[].resourceNames', 'status.nonResourceRules[].nonResourceURLs', 'status.incomplete', 'status.evaluationError'],
      TokenReview: ['spec.audiences', 'status.authenticated', 'status.user.username', 'status.user.uid', 'status.user.groups', 'status.user.extra', 'status.audiences', 'status.error'],
    }
    for (const [kind, paths] of Object.entries(present)) {
      for (const path of paths) assert.ok(fieldAt(byKind(kind), path), `${kind}: ${path} is missing`)
    }
  })

  it('replaces the lists the documents call replaced whole, and merges the keyed ones', () => {
    const listOf = (kind: string, path: string) => {
      const f = fieldAt(byKind(kind), path)
      assert.ok(f && f.type === 'array', `${kind}: ${path} is not a list`)
      return f
    }
    for (const [kind, path] of [
      ['ServiceCIDR', 'spec.cidrs'],
      ['CertificateSigningRequest', 'spec.usages'],
      ['CertificateSigningRequest', 'spec.groups'],
      ['ValidatingAdmissionPolicy', 'spec.validations'],
      ['ValidatingAdmissionPolicy', 'spec.auditAnnotations'],
      ['ValidatingAdmissionPolicy', 'spec.matchConstraints.resourceRules'],
      ['ValidatingAdmissionPolicy', 'spec.matchConstraints.resourceRules[].apiGroups'],
      ['ValidatingAdmissionPolicy', 'spec.matchConstraints.resourceRules[].operations'],
      ['MutatingAdmissionPolicy', 'spec.mutations'],
      ['MutatingAdmissionPolicy', 'spec.variables'],
      ['ValidatingWebhookConfiguration', 'webhooks[].rules'],
      ['ClusterRole', 'rules'],
      ['RoleBinding', 'subjects'],
    ]) {
      const f = listOf(kind, path)
      assert.equal(f.listType, 'atomic', `${kind}: ${path}`)
      assert.equal(f.patchStrategy, undefined, `${kind}: ${path}`)
    }
    for (const [kind, path, key] of [
      ['ServiceCIDR', 'status.conditions', 'type'],
      ['StorageVersionMigration', 'status.conditions', 'type'],
      ['ValidatingWebhookConfiguration', 'webhooks', 'name'],
      ['ValidatingWebhookConfiguration', 'webhooks[].matchConditions', 'name'],
      ['ValidatingAdmissionPolicy', 'spec.variables', 'name'],
      ['MutatingAdmissionPolicy', 'spec.matchConditions', 'name'],
    ]) {
      const f = listOf(kind, path)
      assert.equal(f.patchMergeKey, key, `${kind}: ${path}`)
      assert.equal(f.patchStrategy, 'merge', `${kind}: ${path}`)
      assert.deepEqual(f.listMapKeys, [key], `${kind}: ${path}`)
    }
    const csrConditions = listOf('CertificateSigningRequest', 'status.conditions')
    assert.equal(csrConditions.listType, 'map')
    assert.deepEqual(csrConditions.listMapKeys, ['type'])
    assert.equal(listOf('ValidatingAdmissionPolicyBinding', 'spec.validationActions').listType, 'set')
  })

  it('fills Kubernetes defaults, idempotently', () => {
    const samples: Record<string, AnyObject> = {
      ValidatingWebhookConfiguration: {
        metadata: {name: 'w'},
        webhooks: [
          {
            name: 'a.example.com',
            clientConfig: {service: {namespace: 'ns', name: 'svc'}},
            rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods']}],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
          {name: 'b.example.com', clientConfig: {url: 'https://x'}, sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 3, failurePolicy: 'Ignore'},
        ],
      },
      ValidatingAdmissionPolicy: {
        metadata: {name: 'p'},
        spec: {matchConstraints: {resourceRules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]}},
      },
      ValidatingAdmissionPolicyBinding: {metadata: {name: 'b'}, spec: {policyName: 'p', validationActions: ['Deny'], matchResources: {}}},
      MutatingAdmissionPolicy: {metadata: {name: 'm'}, spec: {}},
      MutatingAdmissionPolicyBinding: {metadata: {name: 'mb'}, spec: {policyName: 'm'}},
      RoleBinding: {
        metadata: {name: 'rb', namespace: 'ns'},
        roleRef: {kind: 'Role', name: 'r'},
        subjects: [
          {kind: 'User', name: 'alice'},
          {kind: 'Group', name: 'devs'},
          {kind: 'ServiceAccount', name: 'default', namespace: 'ns'},
        ],
      },
      ClusterRoleBinding: {metadata: {name: 'crb'}, roleRef: {kind: 'ClusterRole', name: 'view', apiGroup: ''}},
      CertificateSigningRequest: {metadata: {name: 'c'}, spec: {signerName: 'example.com/x'}, status: {conditions: [{type: 'Approved'}, {type: 'Failed', status: 'True'}]}},
    }
    for (const d of all) {
      if (!d.defaults) continue
      const sample = samples[d.kind]
      assert.ok(sample, `no sample for ${d.kind}, which has defaults`)
      const once = structuredClone(sample)
      d.defaults(once)
      const twice = structuredClone(once)
      d.defaults(twice)
      assert.deepEqual(twice, once, `${d.kind}: defaults are not idempotent`)
      d.defaults({metadata: {name: 'empty'}}) // an object without spec must not throw
    }

    const vwc = structuredClone(samples.ValidatingWebhookConfiguration)
    byKind('ValidatingWebhookConfiguration').defaults!(vwc)
    assert.deepEqual(vwc.webhooks[0], {
      name: 'a.example.com',
      clientConfig: {service: {namespace: 'ns', name: 'svc', port: 443}},
      rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*'}],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
    })
    assert.equal(vwc.webhooks[1].timeoutSeconds, 3)
    assert.equal(vwc.webhooks[1].failurePolicy, 'Ignore')
    const noSideEffects: AnyObject = {webhooks: [{name: 'c'}]}
    byKind('ValidatingWebhookConfiguration').defaults!(noSideEffects)
    assert.equal(noSideEffects.webhooks[0].sideEffects, undefined, 'v1 does not default sideEffects')

    const vap = structuredClone(samples.ValidatingAdmissionPolicy)
    byKind('ValidatingAdmissionPolicy').defaults!(vap)
    assert.equal(vap.spec.failurePolicy, 'Fail')
    assert.deepEqual(vap.spec.matchConstraints, {
      resourceRules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*'}],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    })

    const map: AnyObject = {}
    byKind('MutatingAdmissionPolicy').defaults!(map)
    assert.deepEqual(map.spec, {failurePolicy: 'Fail'}, 'reinvocationPolicy has no default')

    const mapb = structuredClone(samples.MutatingAdmissionPolicyBinding)
    byKind('MutatingAdmissionPolicyBinding').defaults!(mapb)
    assert.equal(mapb.spec.matchResources, undefined, 'an absent matchResources stays absent')

    const vapb = structuredClone(samples.ValidatingAdmissionPolicyBinding)
    byKind('ValidatingAdmissionPolicyBinding').defaults!(vapb)
    assert.deepEqual(vapb.spec.matchResources, {matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}})

    const rb = structuredClone(samples.RoleBinding)
    byKind('RoleBinding').defaults!(rb)
    assert.equal(rb.roleRef.apiGroup, 'rbac.orch.io')
    assert.deepEqual(
      rb.subjects.map((s: AnyObject) => s.apiGroup),
      ['rbac.orch.io', 'rbac.orch.io', undefined],
    )
    const crb = structuredClone(samples.ClusterRoleBinding)
    byKind('ClusterRoleBinding').defaults!(crb)
    assert.equal(crb.roleRef.apiGroup, 'rbac.orch.io')
  })
})

describe('CertificateSigningRequest table', () => {
  const csr = (status: AnyObject, spec: AnyObject = {}) => ({
    metadata: {name: 'csr-1', creationTimestamp: '2025-12-31T23:50:00Z'},
    spec: {request: 'AAAA', signerName: 'orch.io/apiserver-client-agent', username: 'system:node:a', ...spec},
    status,
  })
  const condition = (type: string) => ({type, status: 'True', lastTransitionTime: '2025-12-31T23:55:00Z'})

  it('prints CONDITION as kubectl does', () => {
    assert.equal(csrConditionCell(csr({})), 'Pending')
    assert.equal(csrConditionCell(csr({conditions: []})), 'Pending')
    assert.equal(csrConditionCell(csr({conditions: [condition('Approved')], certificate: 'LS0t'})), 'Approved,Issued')
    assert.equal(csrConditionCell(csr({conditions: [condition('Approved')]})), 'Approved')
    assert.equal(csrConditionCell(csr({conditions: [condition('Denied')]})), 'Denied')
    assert.equal(csrConditionCell(csr({conditions: [condition('Approved'), condition('Failed')]})), 'Approved,Failed')
  })

  it('prints REQUESTEDDURATION as kubectl does', () => {
    assert.equal(csrRequestedDurationCell(csr({}, {expirationSeconds: 600})), '10m')
    assert.equal(csrRequestedDurationCell(csr({}, {expirationSeconds: 86400})), '24h')
    assert.equal(csrRequestedDurationCell(csr({}, {expirationSeconds: 3600 * 24 * 30})), '30d')
    assert.equal(csrRequestedDurationCell(csr({})), '<none>')
  })

  it('has the columns NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION', () => {
    const columns = certificateSigningRequest.columns ?? []
    assert.deepEqual(
      columns.map((c) => c.name.toUpperCase()),
      ['AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION'],
    )
    const object = csr({conditions: [condition('Approved')], certificate: 'LS0t'}, {expirationSeconds: 600})
    assert.deepEqual(
      columns.map((c) => c.cell(object, now)),
      ['10m', 'orch.io/apiserver-client-agent', 'system:node:a', '10m', 'Approved,Issued'],
    )
    assert.equal(certificateSigningRequest.fieldSelectors?.['spec.signerName'](object), 'orch.io/apiserver-client-agent')
    assert.deepEqual(certificateSigningRequest.shortNames, ['csr'])
    assert.deepEqual(
      certificateSigningRequest.subresources?.map((s) => [s.name, s.writes]),
      [
        ['status', 'status'],
        ['approval', 'custom'],
      ],
    )
  })
})

describe('other tables', () => {
  const cells = (kind: string, object: AnyObject, wide = false) =>
    (byKind(kind).columns ?? []).filter((c) => wide || c.priority === 0).map((c) => c.cell(object, now))

  it('prints ServiceCIDR, IPAddress and StorageVersionMigration rows', () => {
    const created = {creationTimestamp: '2025-12-31T23:00:00Z'}
    assert.deepEqual(cells('ServiceCIDR', {metadata: created, spec: {cidrs: ['10.0.0.0/16', 'fd00::/108']}}), ['10.0.0.0/16,fd00::/108', '60m'])
    assert.deepEqual(cells('IPAddress', {spec: {parentRef: {group: '', resource: 'services', namespace: 'default', name: 'kubernetes'}}}), ['services/default/kubernetes'])
    assert.deepEqual(cells('IPAddress', {spec: {parentRef: {group: 'Gateway.Example.io', resource: 'Gateways', name: 'g'}}}), ['gateways.gateway.example.io/g'])
    assert.deepEqual(cells('IPAddress', {spec: {}}), ['<none>'])
    assert.deepEqual(cells('StorageVersionMigration', {spec: {resource: {group: 'apps', resource: 'deployments'}}}), ['deployments.apps'])
  })

  it('prints admission policies and bindings', () => {
    const created = {creationTimestamp: '2025-12-31T23:59:00Z'}
    assert.deepEqual(cells('ValidatingWebhookConfiguration', {metadata: created, webhooks: [{}, {}]}), [2, '60s'])
    assert.deepEqual(
      cells('ValidatingAdmissionPolicy', {metadata: created, spec: {validations: [{expression: 'true'}], paramKind: {apiVersion: 'v1', kind: 'ConfigMap'}}}),
      [1, 'v1/ConfigMap', '60s'],
    )
    assert.deepEqual(cells('MutatingAdmissionPolicy', {metadata: created, spec: {}}), [0, '<unset>', '60s'])
    assert.deepEqual(cells('ValidatingAdmissionPolicyBinding', {metadata: created, spec: {policyName: 'p', paramRef: {name: 'cm', namespace: 'ns'}}}), ['p', 'ns/cm', '60s'])
    assert.equal(paramRefCell({name: 'cm'}), '*/cm')
    assert.equal(paramRefCell(undefined), '<unset>')
    assert.equal(
      paramRefCell({selector: {matchLabels: {b: '2', a: '1'}, matchExpressions: [{key: 'k', operator: 'In', values: ['x', 'y']}]}}),
      '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
    )
    assert.equal(goLabelSelectorString({}), '&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}')
  })

  it('prints bindings with ROLE AGE and, wide, USERS GROUPS SERVICEACCOUNTS; roles use the default table', () => {
    const binding = {
      metadata: {creationTimestamp: '2025-12-31T23:59:30Z'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'admin'},
      subjects: [
        {kind: 'User', name: 'alice'},
        {kind: 'User', name: 'bob'},
        {kind: 'Group', name: 'devs'},
        {kind: 'ServiceAccount', namespace: 'kube', name: 'ctl'},
      ],
    }
    assert.deepEqual(cells('RoleBinding', binding), ['ClusterRole/admin', '30s'])
    assert.deepEqual(cells('ClusterRoleBinding', binding, true), ['ClusterRole/admin', '30s', 'alice, bob', 'devs', 'kube/ctl'])
    assert.deepEqual(
      byKind('ClusterRoleBinding').columns?.map((c) => [c.name, c.priority]),
      [
        ['Role', 0],
        ['Age', 0],
        ['Users', 1],
        ['Groups', 1],
        ['ServiceAccounts', 1],
      ],
    )
    assert.equal(byKind('Role').columns, undefined)
    assert.equal(byKind('ClusterRole').columns, undefined)
  })
})
