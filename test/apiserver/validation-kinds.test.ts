// The kind validators of src/apiserver/validation: one test per field rule of document 2 (and the
// basic Lease rules), each asserting Kubernetes' field path and message. Workloads (StatefulSet, Pod)
// are in validation-kinds-workloads.test.ts.
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {AnyObject} from '../../src/api/types.js'
import {formatFieldError} from '../../src/machinery/field-errors.js'
import {kindValidators, kindValidatorKey} from '../../src/apiserver/validation/index.js'
import {validateConditions} from '../../src/apiserver/validation/conditions.js'
import {clone, configMap, create, errorsOf, has, makeNode, none, serviceCIDR, svm, update} from './validation-kinds-fixtures.js'

// ---------- the registry ----------

describe('kindValidators', () => {
  it('is keyed by <group>/<Kind>, the core group written as the empty group', () => {
    assert.deepEqual([...kindValidators.keys()].sort(), [
      '/ConfigMap',
      '/Event',
      '/Namespace',
      '/Node',
      '/Pod',
      '/Service',
      'admissionregistration.orch.io/MutatingAdmissionPolicy',
      'admissionregistration.orch.io/MutatingAdmissionPolicyBinding',
      'admissionregistration.orch.io/ValidatingAdmissionPolicy',
      'admissionregistration.orch.io/ValidatingAdmissionPolicyBinding',
      'admissionregistration.orch.io/ValidatingWebhookConfiguration',
      'apps/StatefulSet',
      'certificates.orch.io/CertificateSigningRequest',
      'coordination.orch.io/Lease',
      'networking.orch.io/ServiceCIDR',
      'rbac.orch.io/ClusterRole',
      'rbac.orch.io/ClusterRoleBinding',
      'rbac.orch.io/Role',
      'rbac.orch.io/RoleBinding',
      'storagemigration.orch.io/StorageVersionMigration',
    ])
    assert.equal(kindValidatorKey('', 'ConfigMap'), '/ConfigMap')
    assert.equal(kindValidatorKey('apps', 'StatefulSet'), 'apps/StatefulSet')
  })
})

// ---------- ConfigMap ----------

describe('ConfigMap', () => {
  const keyRule =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

  it('ConfigMap: data keys consist of alphanumeric characters, -, _ or .', () => {
    none(create('/ConfigMap', configMap({data: {'key.name': 'a', KEY_NAME: 'b', 'key-name': 'c'}})))
    const errs = create('/ConfigMap', configMap({data: {'bad key': 'x', '..x': 'y'}}))
    has(errs, `data[bad key]: Invalid value: "bad key": ${keyRule}`)
    has(errs, `data[..x]: Invalid value: "..x": must not start with '..'`)
  })

  it('ConfigMap: binaryData keys follow the same key rule', () => {
    has(create('/ConfigMap', configMap({binaryData: {'a/b': 'AAE='}})), `binaryData[a/b]: Invalid value: "a/b": ${keyRule}`)
  })

  it('ConfigMap: keys must not overlap between data and binaryData', () => {
    const errs = create('/ConfigMap', configMap({data: {shared: 'text'}, binaryData: {shared: 'AAE='}}))
    assert.deepEqual(errs, ['data[shared]: Invalid value: "shared": duplicate of key present in binaryData'])
  })

  it('ConfigMap: data and binaryData together hold at most 1 MiB', () => {
    const half = 'x'.repeat(512 * 1024)
    const bytes = Buffer.alloc(512 * 1024, 7).toString('base64')
    none(create('/ConfigMap', configMap({data: {a: half}, binaryData: {b: bytes}})))
    assert.deepEqual(create('/ConfigMap', configMap({data: {a: half + 'y'}, binaryData: {b: bytes}})), [': Too long: may not be more than 1048576 bytes'])
  })

  it('ConfigMap: values with non-UTF-8 bytes must go in binaryData', () => {
    has(create('/ConfigMap', configMap({data: {bad: 'a\ud800b'}})), 'data[bad]: Invalid value: "bad": must be valid UTF-8; values with non-UTF-8 bytes must go in binaryData')
    none(create('/ConfigMap', configMap({data: {emoji: '\u{1F600}'}, binaryData: {raw: Buffer.from([0xff, 0xfe, 0x00]).toString('base64')}})))
  })

  it('ConfigMap: when immutable is true, data and binaryData cannot be updated', () => {
    const old = configMap({immutable: true, data: {a: '1'}, binaryData: {b: 'AAE='}})
    const errs = update('/ConfigMap', configMap({immutable: true, data: {a: '2'}, binaryData: {b: 'AAI='}}), old)
    assert.deepEqual(errs, ['data: Forbidden: field is immutable when `immutable` is set', 'binaryData: Forbidden: field is immutable when `immutable` is set'])
    // only metadata can be modified
    none(update('/ConfigMap', {...clone(old), metadata: {...old.metadata, labels: {x: 'y'}}}, old))
  })

  it('ConfigMap: immutable cannot be unset once true', () => {
    const old = configMap({immutable: true, data: {a: '1'}})
    assert.deepEqual(update('/ConfigMap', configMap({immutable: false, data: {a: '1'}}), old), ['immutable: Forbidden: field is immutable when `immutable` is set'])
    assert.deepEqual(update('/ConfigMap', configMap({data: {a: '1'}}), old), ['immutable: Forbidden: field is immutable when `immutable` is set'])
  })

  it('ConfigMap: when immutable is not true the data can change any time', () => {
    none(update('/ConfigMap', configMap({data: {a: '2'}, immutable: true}), configMap({data: {a: '1'}})))
    none(update('/ConfigMap', configMap({data: {a: '2'}}), configMap({immutable: false, data: {a: '1'}})))
  })
})

// ---------- Node ----------

describe('Node', () => {
  it('Node: podCIDRs entry 0 equals podCIDR', () => {
    none(create('/Node', makeNode({podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24', 'fd00::/64']})))
    has(create('/Node', makeNode({podCIDR: '10.0.1.0/24', podCIDRs: ['10.0.0.0/24']})), 'spec.podCIDRs[0]: Invalid value: "10.0.0.0/24": must be equal to `podCIDR`')
  })

  it('Node: podCIDRs entries are valid CIDRs (a lone podCIDR counts as podCIDRs[0])', () => {
    has(create('/Node', makeNode({podCIDRs: ['10.0.0.1/24']})), 'spec.podCIDRs[0]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length')
    has(create('/Node', makeNode({podCIDR: 'ten'})), 'spec.podCIDRs[0]: Invalid value: "ten": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')
  })

  it('Node: podCIDRs hold at most one IPv4 and one IPv6 CIDR', () => {
    const message = 'may specify no more than one CIDR for each IP family'
    has(create('/Node', makeNode({podCIDRs: ['10.0.0.0/24', '10.1.0.0/24']})), `spec.podCIDRs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: ${message}`)
    has(create('/Node', makeNode({podCIDRs: ['10.0.0.0/24', 'fd00::/64', '10.1.0.0/24']})), `spec.podCIDRs: Invalid value: ["10.0.0.0/24","fd00::/64","10.1.0.0/24"]: ${message}`)
    has(create('/Node', makeNode({podCIDRs: ['10.0.0.0/24', '10.0.0.0/24']})), 'spec.podCIDRs[1]: Duplicate value: "10.0.0.0/24"')
  })

  it('Node: podCIDR and podCIDRs may be set once but not changed', () => {
    const old = makeNode({podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24']})
    none(update('/Node', clone(old), makeNode()))
    none(update('/Node', clone(old), old))
    assert.deepEqual(update('/Node', makeNode({podCIDR: '10.0.1.0/24', podCIDRs: ['10.0.1.0/24']}), old), [
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
    ])
    has(update('/Node', makeNode({podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24', 'fd00::/64']}), old), 'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid')
  })

  it('Node: providerID has the form <ProviderName>://<ProviderSpecificNodeID>', () => {
    none(create('/Node', makeNode({providerID: 'aws:///us-east-1a/i-0123'})))
    none(create('/Node', makeNode({providerID: 'kind://docker/kind/kind-worker'})))
    has(create('/Node', makeNode({providerID: 'i-0123'})), 'spec.providerID: Invalid value: "i-0123": must be of the form <ProviderName>://<ProviderSpecificNodeID>')
  })

  it('Node: providerID is immutable once set', () => {
    none(update('/Node', makeNode({providerID: 'kind://a'}), makeNode()))
    assert.deepEqual(update('/Node', makeNode({providerID: 'kind://b'}), makeNode({providerID: 'kind://a'})), [
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ])
  })

  it('Node: taints[].key is required and a qualified name', () => {
    const errs = create('/Node', makeNode({taints: [{key: '', effect: 'NoSchedule'}]}))
    has(errs, 'metadata.taints[0].key: Invalid value: "": name part must be non-empty')
    has(create('/Node', makeNode({taints: [{key: 'a b', effect: 'NoSchedule'}]})), `metadata.taints[0].key: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)
  })

  it('Node: taints[].value is a label value', () => {
    has(create('/Node', makeNode({taints: [{key: 'k', value: 'a b', effect: 'NoSchedule'}]})), `metadata.taints[0].value: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`)
  })

  it('Node: taints[].effect is required', () => {
    assert.deepEqual(create('/Node', makeNode({taints: [{key: 'k'}]})), ['metadata.taints[0].effect: Required value'])
  })

  it('Node: taints[].effect is NoSchedule, PreferNoSchedule or NoExecute', () => {
    none(create('/Node', makeNode({taints: [{key: 'a', effect: 'NoSchedule'}, {key: 'a', effect: 'PreferNoSchedule'}, {key: 'a', effect: 'NoExecute'}]})))
    assert.deepEqual(create('/Node', makeNode({taints: [{key: 'k', effect: 'Sometimes'}]})), [
      'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ])
  })

  it('Node: taints are unique by key and effect', () => {
    const errs = errorsOf('/Node', makeNode({taints: [{key: 'k', effect: 'NoSchedule'}, {key: 'k', value: 'v', effect: 'NoSchedule'}]}))
    assert.equal(errs.length, 1)
    assert.equal(errs[0]!.type, 'FieldValueDuplicate')
    assert.equal(errs[0]!.field, 'metadata.taints[1]')
    assert.equal(errs[0]!.message, 'taints must be unique by key and effect pair')
    assert.equal(formatFieldError(errs[0]!), 'metadata.taints[1]: Duplicate value: {"key":"k","value":"v","effect":"NoSchedule"}: taints must be unique by key and effect pair')
  })

  it('Node: configSource has exactly one sub-field non-nil', () => {
    assert.deepEqual(create('/Node', makeNode({configSource: {}})), ['spec.configSource: Invalid value: {}: exactly one reference subfield must be non-nil'])
  })

  it('Node: configSource.configMap needs agentConfigKey, name and namespace', () => {
    assert.deepEqual(create('/Node', makeNode({configSource: {configMap: {}}})), [
      'spec.configSource.configMap.namespace: Required value: namespace must be set',
      'spec.configSource.configMap.name: Required value: name must be set',
      'spec.configSource.configMap.agentConfigKey: Required value: agentConfigKey must be set',
    ])
    none(create('/Node', makeNode({configSource: {configMap: {namespace: 'kube-system', name: 'agent-config', agentConfigKey: 'agent'}}})))
  })

  it('Node: configSource.configMap resourceVersion and uid are forbidden in spec', () => {
    const source = {configMap: {namespace: 'kube-system', name: 'c', agentConfigKey: 'k', uid: 'u1', resourceVersion: '5'}}
    assert.deepEqual(create('/Node', makeNode({configSource: source})), [
      'spec.configSource.configMap.uid: Forbidden: uid must not be set in spec',
      'spec.configSource.configMap.resourceVersion: Forbidden: resourceVersion must not be set in spec',
    ])
  })

  it('Node: status.config sources need uid and resourceVersion', () => {
    const errs = create('/Node', makeNode({}, {config: {active: {configMap: {namespace: 'kube-system', name: 'c', agentConfigKey: 'k'}}}}))
    assert.deepEqual(errs, [
      'status.config.active.configMap.uid: Required value: uid must be set in status',
      'status.config.active.configMap.resourceVersion: Required value: resourceVersion must be set in status',
    ])
  })

  it('Node: status.addresses[] need an address and a type Hostname, ExternalIP or InternalIP', () => {
    none(create('/Node', makeNode({}, {addresses: [{type: 'InternalIP', address: '10.0.0.5'}, {type: 'Hostname', address: 'n1'}, {type: 'ExternalIP', address: '1.2.3.4'}]})))
    assert.deepEqual(create('/Node', makeNode({}, {addresses: [{type: 'PublicIP', address: '1.2.3.4'}, {type: 'InternalIP'}, {address: 'x'}]})), [
      'status.addresses[0].type: Unsupported value: "PublicIP": supported values: "Hostname", "InternalIP", "ExternalIP", "InternalDNS", "ExternalDNS"',
      'status.addresses[1].address: Required value',
      'status.addresses[2].type: Required value',
    ])
  })

  it('Node: status.addresses may not repeat an address', () => {
    const node = makeNode({}, {addresses: [{type: 'InternalIP', address: '10.0.0.5'}, {type: 'InternalIP', address: '10.0.0.5'}]})
    assert.deepEqual(update('/Node', node, makeNode(), 'status'), ['status.addresses[1]: Duplicate value: {"type":"InternalIP","address":"10.0.0.5"}'])
  })

  it('Node: capacity and allocatable are quantities', () => {
    has(create('/Node', makeNode({}, {capacity: {cpu: 'lots'}})), `status.capacity.cpu: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`)
    has(create('/Node', makeNode({}, {allocatable: {memory: '1GB'}})), `status.allocatable.memory: Invalid value: "1GB": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`)
    none(create('/Node', makeNode({}, {capacity: {cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100G'}})))
  })

  it('Node: capacity and allocatable are not negative', () => {
    assert.deepEqual(create('/Node', makeNode({}, {allocatable: {memory: '-1.5Gi'}})), ['status.allocatable.memory: Invalid value: "-1536Mi": must be greater than or equal to 0'])
  })

  it('Node: the pods capacity and extended resources are whole numbers', () => {
    assert.deepEqual(create('/Node', makeNode({}, {capacity: {pods: '1500m', 'example.com/gpu': '0.5'}})), [
      'status.capacity.pods: Invalid value: "1500m": must be an integer',
      'status.capacity.example.com/gpu: Invalid value: "500m": must be an integer',
    ])
  })

  it('Node: daemonEndpoints.agentEndpoint.Port is a port number', () => {
    none(create('/Node', makeNode({}, {daemonEndpoints: {agentEndpoint: {Port: 10250}}})))
    assert.deepEqual(create('/Node', makeNode({}, {daemonEndpoints: {agentEndpoint: {Port: 70000}}})), [
      'status.daemonEndpoints.agentEndpoint.Port: Invalid value: 70000: must be between 0 and 65535, inclusive',
    ])
  })

  it('Node: unschedulable, taints, labels and status may change on update', () => {
    const old = makeNode({podCIDR: '10.0.0.0/24', providerID: 'kind://n1'})
    const next = makeNode({podCIDR: '10.0.0.0/24', providerID: 'kind://n1', unschedulable: true, taints: [{key: 'k', effect: 'NoExecute'}]}, {capacity: {cpu: '8'}})
    next.metadata!.labels = {zone: 'a'}
    none(update('/Node', next, old))
  })

  it('Node: externalID may not be updated', () => {
    assert.deepEqual(update('/Node', makeNode({externalID: 'b'}), makeNode({externalID: 'a'})), ['spec.externalID: Forbidden: may not be updated'])
  })
})

// ---------- ServiceCIDR ----------

describe('ServiceCIDR', () => {
  const C = 'networking.orch.io/ServiceCIDR'

  it('ServiceCIDR: spec.cidrs is required', () => {
    assert.deepEqual(create(C, serviceCIDR()), ['spec.cidrs: Required value: at least one CIDR required'])
  })

  it('ServiceCIDR: spec.cidrs holds at most two CIDR blocks', () => {
    assert.deepEqual(create(C, serviceCIDR(['10.0.0.0/16', 'fd00::/108', '10.1.0.0/16'])), [
      'spec.cidrs: Invalid value: {"cidrs":["10.0.0.0/16","fd00::/108","10.1.0.0/16"]}: may only hold up to 2 values',
    ])
  })

  it('ServiceCIDR: spec.cidrs holds one CIDR per IP family', () => {
    none(create(C, serviceCIDR(['10.96.0.0/12', 'fd00:10:96::/112'])))
    assert.deepEqual(create(C, serviceCIDR(['10.96.0.0/12', '10.100.0.0/16'])), [
      'spec.cidrs: Invalid value: {"cidrs":["10.96.0.0/12","10.100.0.0/16"]}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64',
    ])
  })

  it('ServiceCIDR: spec.cidrs are CIDR blocks of form <ip>/<prefix_length> in canonical form', () => {
    assert.deepEqual(create(C, serviceCIDR(['10.96.0.1/12'])), ['spec.cidrs[0]: Invalid value: "10.96.0.1/12": must not have bits set beyond the prefix length'])
    assert.deepEqual(create(C, serviceCIDR(['10.96.0.0'])), ['spec.cidrs[0]: Invalid value: "10.96.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'])
    assert.deepEqual(create(C, serviceCIDR(['fd00:0:0::/64'])), ['spec.cidrs[0]: Invalid value: "fd00:0:0::/64": must be in canonical form ("fd00::/64")'])
  })

  it('ServiceCIDR: "ValidateServiceCIDRStatusUpdate" validates only metadata — status.conditions are not checked (/status)', () => {
    const at = '2025-01-01T00:00:00Z'
    const old = serviceCIDR(['10.96.0.0/12'])
    const ready = {type: 'Ready', status: 'True', reason: '', message: 'orch Service CIDR is ready', lastTransitionTime: at}
    const withConditions = (conditions: unknown[]) => ({...serviceCIDR(['10.96.0.0/12']), status: {conditions}})
    none(update(C, withConditions([ready, {...ready, type: 'example.com/Checked', message: 'fine'}]), old, 'status'))
    none(update(C, withConditions([{...ready, status: 'Bogus'}]), old, 'status'))
    none(update(C, withConditions([{...ready, lastTransitionTime: undefined}]), old, 'status'))
    none(update(C, withConditions([ready, {...ready, status: 'False'}]), old, 'status'))
  })

  it('ServiceCIDR: spec.cidrs is immutable', () => {
    const old = serviceCIDR(['10.96.0.0/12'])
    none(update(C, serviceCIDR(['10.96.0.0/12']), old))
    assert.deepEqual(update(C, serviceCIDR(['10.96.0.0/12', 'fd00::/108']), old), ['spec.cidrs: Invalid value: ["10.96.0.0/12","fd00::/108"]: field is immutable'])
  })
})

// ---------- StorageVersionMigration ----------

describe('StorageVersionMigration', () => {
  const M = 'storagemigration.orch.io/StorageVersionMigration'

  it('StorageVersionMigration: spec.resource.resource is required', () => {
    assert.deepEqual(create(M, svm({group: 'apps'})), ['spec.resource.resource: Required value: resource is required to be set'])
    assert.deepEqual(create(M, {metadata: {name: 'm'}}), ['spec.resource.resource: Required value: resource is required to be set'])
  })

  it('StorageVersionMigration: spec.resource.group may be empty for the core group', () => {
    none(create(M, svm({group: '', resource: 'configmaps'})))
    none(create(M, svm({resource: 'secrets'})))
    none(create(M, svm({group: 'apps', resource: 'statefulsets'})))
    has(create(M, svm({group: 'Apps', resource: 'statefulsets'})), `spec.resource.group: Invalid value: "Apps": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)
  })

  it('StorageVersionMigration: spec.resource is immutable', () => {
    const old = svm({group: 'apps', resource: 'statefulsets'})
    none(update(M, clone(old), old))
    assert.deepEqual(update(M, svm({group: 'apps', resource: 'deployments'}), old), [
      'spec: Invalid value: {"resource":{"group":"apps","resource":"deployments"}}: field is immutable',
    ])
  })

  it('StorageVersionMigration: status.resourceVersion cannot change once set', () => {
    const old = {...svm({resource: 'secrets'}), status: {resourceVersion: '10'}}
    none(update(M, {...svm({resource: 'secrets'}), status: {resourceVersion: '10'}}, {...svm({resource: 'secrets'}), status: {}}, 'status'))
    assert.deepEqual(update(M, {...svm({resource: 'secrets'}), status: {resourceVersion: '11'}}, old, 'status'), [
      'status.resourceVersion: Invalid value: "11": field is immutable',
    ])
  })

  it('StorageVersionMigration: Succeeded and Failed are never both true, nor Running beside them', () => {
    const at = '2025-01-01T00:00:00Z'
    const conditions = [
      {type: 'Succeeded', status: 'True', reason: 'Done', message: '', lastTransitionTime: at},
      {type: 'Running', status: 'True', reason: 'Busy', message: '', lastTransitionTime: at},
    ]
    const errs = update(M, {...svm({resource: 'secrets'}), status: {conditions}}, svm({resource: 'secrets'}), 'status')
    assert.deepEqual(errs, [
      `status.conditions: Invalid value: ${JSON.stringify(conditions)}: Running condition cannot be true when success condition is true`,
    ])
  })

  it('StorageVersionMigration: status.resourceVersion is the resource version as an integer string (not negative), or empty until recorded', () => {
    const status = (resourceVersion: string) => ({...svm({resource: 'secrets'}), status: {resourceVersion}})
    const old = svm({resource: 'secrets'})
    none(update(M, status(''), old, 'status'))
    none(update(M, status('12345'), old, 'status'))
    assert.deepEqual(update(M, status('abc'), old, 'status'), [
      'status.resourceVersion: Invalid value: "abc": failed to parse resource version "abc": strconv.ParseInt: parsing "abc": invalid syntax',
    ])
    assert.deepEqual(update(M, status('1.5'), old, 'status'), [
      'status.resourceVersion: Invalid value: "1.5": failed to parse resource version "1.5": strconv.ParseInt: parsing "1.5": invalid syntax',
    ])
    assert.deepEqual(update(M, status('99999999999999999999'), old, 'status'), [
      'status.resourceVersion: Invalid value: "99999999999999999999": failed to parse resource version "99999999999999999999": strconv.ParseInt: parsing "99999999999999999999": value out of range',
    ])
    assert.deepEqual(update(M, status('-1'), old, 'status'), ['status.resourceVersion: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('StorageVersionMigration: status.conditions have the shared Condition shape (type, status True/False/Unknown, lastTransitionTime and a non-empty reason required)', () => {
    const at = '2025-01-01T00:00:00Z'
    const withConditions = (conditions: unknown[]) => ({...svm({resource: 'secrets'}), status: {conditions}})
    const old = svm({resource: 'secrets'})
    none(update(M, withConditions([{type: 'Running', status: 'True', reason: 'MigrationRunning', message: '', lastTransitionTime: at}]), old, 'status'))
    assert.deepEqual(update(M, withConditions([{type: 'Running', status: 'Yes'}]), old, 'status'), [
      'status.conditions[0].status: Unsupported value: "Yes": supported values: "False", "True", "Unknown"',
      'status.conditions[0].lastTransitionTime: Required value: must be set',
      'status.conditions[0].reason: Required value: must be set',
    ])
  })
})

// ---------- Condition (document 1's shared shape) ----------

describe('Condition', () => {
  const at = '2025-01-01T00:00:00Z'
  const ok = {type: 'Ready', status: 'True', reason: 'AllGood', message: '', lastTransitionTime: at}
  const check = (condition: unknown) => validateConditions([condition], 'status.conditions').map(formatFieldError)

  it('Condition: type is required, CamelCase or <domain>/CamelCase (a qualified name)', () => {
    none(check({...ok, type: 'example.com/Ready'}))
    has(check({...ok, type: ''}), 'status.conditions[0].type: Invalid value: "": name part must be non-empty')
    has(check({...ok, type: 'not ready'}), `status.conditions[0].type: Invalid value: "not ready": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)
  })

  it('Condition: status is required, True, False or Unknown', () => {
    none(check({...ok, status: 'Unknown'}))
    assert.deepEqual(check({...ok, status: undefined}), ['status.conditions[0].status: Unsupported value: "": supported values: "False", "True", "Unknown"'])
  })

  it('Condition: lastTransitionTime is required', () => {
    assert.deepEqual(check({...ok, lastTransitionTime: undefined}), ['status.conditions[0].lastTransitionTime: Required value: must be set'])
    assert.deepEqual(check({...ok, lastTransitionTime: '0001-01-01T00:00:00Z'}), ['status.conditions[0].lastTransitionTime: Required value: must be set'])
  })

  it('Condition: reason is a programmatic CamelCase identifier; may not be empty', () => {
    none(check({...ok, reason: 'ReasonA,ReasonB:C_d'}))
    assert.deepEqual(check({...ok, reason: ''}), ['status.conditions[0].reason: Required value: must be set'])
    assert.deepEqual(check({...ok, reason: 'not camel'}), [
      `status.conditions[0].reason: Invalid value: "not camel": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')`,
    ])
    assert.deepEqual(check({...ok, reason: 'R'.repeat(1025)}), ['status.conditions[0].reason: Too long: may not be more than 1024 bytes'])
  })

  it('Condition: message is human-readable; may be an empty string (at most 32 KiB)', () => {
    none(check({...ok, message: ''}))
    none(check({...ok, message: undefined}))
    assert.deepEqual(check({...ok, message: 'm'.repeat(32 * 1024 + 1)}), ['status.conditions[0].message: Too long: may not be more than 32768 bytes'])
  })

  it('Condition: observedGeneration, when set, is not negative', () => {
    none(check({...ok, observedGeneration: 3}))
    assert.deepEqual(check({...ok, observedGeneration: -1}), ['status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero'])
  })
})

// ---------- Namespace ----------

describe('Namespace', () => {
  const N = '/Namespace'
  const ns = (fields: AnyObject): AnyObject => ({metadata: {name: 'team-a'}, ...fields})

  it('Namespace: spec.finalizers are qualified names, standard or domain-prefixed', () => {
    none(create(N, ns({spec: {finalizers: ['orch', 'example.com/cleanup']}})))
    assert.deepEqual(create(N, ns({spec: {finalizers: ['cleanup']}})), ['spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified'])
    has(update(N, ns({spec: {finalizers: ['orch', 'bad name/x']}}), ns({}), 'finalize'), `spec.finalizers[1]: Invalid value: "bad name/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)
  })

  it('Namespace: status.phase is Active or Terminating', () => {
    none(create(N, ns({status: {phase: 'Active'}})))
    assert.deepEqual(create(N, ns({status: {phase: 'Gone'}})), ['status.phase: Unsupported value: "Gone": supported values: "Active", "Terminating"'])
  })

  it('Namespace: status.phase is Terminating exactly while the namespace is being deleted', () => {
    assert.deepEqual(update(N, ns({status: {phase: 'Terminating'}}), ns({}), 'status'), [
      "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
    ])
    const deleting = ns({status: {phase: 'Active'}})
    deleting.metadata!.deletionTimestamp = '2025-01-01T00:00:00Z'
    assert.deepEqual(update(N, deleting, ns({}), 'status'), ["status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"])
  })
})

// ---------- Lease ----------

describe('Lease', () => {
  const L = 'coordination.orch.io/Lease'
  const lease = (spec: AnyObject): AnyObject => ({metadata: {name: 'n1', namespace: 'orch-node-lease'}, spec})

  it('Lease: leaseDurationSeconds is greater than 0 when set', () => {
    none(create(L, lease({holderIdentity: 'n1', leaseDurationSeconds: 40})))
    assert.deepEqual(create(L, lease({leaseDurationSeconds: 0})), ['spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'])
    assert.deepEqual(update(L, lease({leaseDurationSeconds: -1}), lease({})), ['spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0'])
  })

  it('Lease: holderIdentity is free-form', () => {
    none(create(L, lease({holderIdentity: 'controller-manager_7f3a Some Host'})))
  })

  it('Lease: leaseTransitions is not negative', () => {
    assert.deepEqual(create(L, lease({leaseTransitions: -1})), ['spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('Lease: strategy is OldestEmulationVersion or qualified, and preferredHolder needs a strategy', () => {
    none(create(L, lease({strategy: 'OldestEmulationVersion', preferredHolder: 'n2'})))
    assert.deepEqual(create(L, lease({strategy: 'Newest'})), ['spec.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'])
    assert.deepEqual(create(L, lease({preferredHolder: 'n2'})), ['spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined'])
  })
})
