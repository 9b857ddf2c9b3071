import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {statefulSet} from '../../src/api/apps/statefulset.js'
import {node} from '../../src/api/core/node.js'
import type {AnyObject} from '../../src/api/types.js'
import {apply, applyConflictError, type ApplyOptions, type ApplyResult} from '../../src/machinery/apply.js'
import {FieldSet, pathString} from '../../src/machinery/field-path.js'
import {type ManagedFieldsEntry, resetFields, updateManagedFields} from '../../src/machinery/managed-fields.js'
import {ApiError} from '../../src/machinery/status.js'

const schema = statefulSet.schema
const now = new Date('2025-06-01T12:00:00.250Z')
const later = new Date('2025-06-01T12:05:00Z')
const options: ApplyOptions = {now, apiVersion: 'apps/v1', kind: 'StatefulSet'}

function sts(spec?: AnyObject, labels?: Record<string, string>): AnyObject {
  const metadata: AnyObject = {name: 'web', namespace: 'default'}
  if (labels) metadata.labels = labels
  const out: AnyObject = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata}
  if (spec) out.spec = spec
  return out
}

const webConfig = sts(
  {
    replicas: 3,
    selector: {matchLabels: {app: 'web'}},
    serviceName: 'web',
    template: {
      metadata: {labels: {app: 'web'}},
      spec: {containers: [{name: 'nginx', image: 'nginx:1.27', ports: [{containerPort: 80, name: 'http'}]}]},
    },
  },
  {app: 'web'},
)

function applied(result: ApplyResult): Exclude<ApplyResult, {conflicts: unknown[]}> {
  if (result.conflicts) assert.fail(`unexpected conflicts: ${JSON.stringify(result.conflicts)}`)
  return result
}

/** the live object as stored: with a uid, as the server gives every object */
function stored(result: ApplyResult): AnyObject {
  const object = applied(result).object
  return {...object, metadata: {...object.metadata, uid: 'b1c9f2c4'}}
}

function fieldsOf(entries: ManagedFieldsEntry[], manager: string, operation = 'Apply'): unknown {
  return entries.find((e) => e.manager === manager && e.operation === operation)?.fieldsV1
}

function thrown(fn: () => unknown): ApiError {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`)
    return e
  }
  assert.fail('no error')
}

describe('server-side apply: create and managedFields', () => {
  it('creates the object when there is none, owned by the applier', () => {
    const result = applied(apply(undefined, webConfig, schema, 'kubectl', options))
    assert.equal(result.changed, true)
    const {managedFields, ...metadata} = result.object.metadata!
    assert.deepEqual({...result.object, metadata}, webConfig)
    assert.deepEqual(managedFields, result.managedFields)
    assert.equal(result.managedFields.length, 1)
  })

  it("managedFields JSON is exactly Kubernetes' for a StatefulSet", () => {
    const result = applied(apply(undefined, webConfig, schema, 'kubectl', options))
    const expected =
      '[{"manager":"kubectl","operation":"Apply","apiVersion":"apps/v1","time":"2025-06-01T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":' +
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:serviceName":{},"f:template":{"f:metadata":' +
      '{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":' +
      '{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:name":{}}}}}}}}}}]'
    assert.equal(JSON.stringify(result.managedFields), expected)
  })

  it('applying the same configuration again changes nothing and keeps the time', () => {
    const first = stored(apply(undefined, webConfig, schema, 'kubectl', options))
    const again = applied(apply(first, webConfig, schema, 'kubectl', {...options, now: later}))
    assert.equal(again.changed, false)
    assert.equal(again.managedFields[0].time, '2025-06-01T12:00:00Z')
    assert.deepEqual(again.object, first)
  })

  it('a second applier that changes no value still gets its entry stamped with the time (managedFieldsUpdater), after the first', () => {
    const first = stored(apply(undefined, webConfig, schema, 'kubectl', options))
    const coOwner = applied(apply(first, sts({replicas: 3}), schema, 'scaler', {...options, now: later}))
    assert.equal(coOwner.changed, false)
    assert.deepEqual(
      coOwner.managedFields.map((entry) => [entry.manager, entry.time]),
      [
        ['kubectl', '2025-06-01T12:00:00Z'],
        ['scaler', '2025-06-01T12:05:00Z'],
      ],
    )
    // and applying it again later is a no-op: the stored entries, times included, are kept
    const again = applied(apply(stored(coOwner), sts({replicas: 3}), schema, 'scaler', {...options, now: new Date('2025-06-01T13:00:00Z')}))
    assert.deepEqual(again.managedFields, coOwner.managedFields)
  })

  it('a value of the wrong type is named as structured-merge-diff prints it: &value.valueUnstructured{Value:...} (Go\'s %#v)', () => {
    const message = (replicas: unknown) => thrown(() => apply(undefined, sts({serviceName: replicas}), schema, 'kubectl', options)).message.replace(/^.*\.spec\.serviceName: /, '')
    assert.equal(message(7), 'expected string, got &value.valueUnstructured{Value:7}')
    assert.equal(message(true), 'expected string, got &value.valueUnstructured{Value:true}')
    assert.equal(message(1.5), 'expected string, got &value.valueUnstructured{Value:1.5}')
    assert.equal(message(1234567.5), 'expected string, got &value.valueUnstructured{Value:1.2345675e+06}')
    assert.equal(message(['a', 1]), 'expected string, got &value.valueUnstructured{Value:[]interface {}{"a", 1}}')
    assert.equal(message({b: 'x', a: null}), 'expected string, got &value.valueUnstructured{Value:map[string]interface {}{"a":interface {}(nil), "b":"x"}}')
  })

  it('the applied configuration must be of the endpoint\'s kind and carry no managedFields', () => {
    const wrongKind = thrown(() => apply(undefined, {...webConfig, apiVersion: 'apps/v1beta1'}, schema, 'kubectl', options))
    assert.equal(wrongKind.code, 400)
    assert.equal(wrongKind.message, 'invalid object type: apps/v1beta1, Kind=StatefulSet')
    const withManaged = thrown(() => apply(undefined, {...webConfig, metadata: {...webConfig.metadata, managedFields: []}}, schema, 'kubectl', options))
    assert.equal(withManaged.code, 400)
    assert.equal(withManaged.message, 'metadata.managedFields must be nil')
  })

  it('a configuration that does not fit the schema fails with Kubernetes\' message, as a 400 (bad input is never a 500)', () => {
    const unknown = thrown(() => apply(undefined, sts({replicas: 1, replica: 2}), schema, 'kubectl', options))
    assert.equal(unknown.code, 400)
    assert.equal(unknown.message, 'failed to create typed patch object (default/web; apps/v1, Kind=StatefulSet): .spec.replica: field not declared in schema')
    const duplicate = thrown(() =>
      apply(undefined, sts({template: {spec: {containers: [{name: 'a'}, {name: 'a'}]}}}), schema, 'kubectl', options),
    )
    assert.equal(
      duplicate.message,
      'failed to create typed patch object (default/web; apps/v1, Kind=StatefulSet): .spec.template.spec.containers: duplicate entries for key [name="a"]',
    )
  })
})

describe('server-side apply: conflicts', () => {
  it('a second manager changing .spec.replicas conflicts, one entry per field and manager', () => {
    const live = stored(apply(undefined, webConfig, schema, 'kubectl', options))
    const result = apply(live, sts({replicas: 5}), schema, 'autoscaler', options)
    assert.deepEqual(result.conflicts, [{manager: 'kubectl', operation: 'Apply', field: '.spec.replicas', message: 'conflict with "kubectl"'}])
    const error = applyConflictError(result.conflicts!)
    assert.equal(error.code, 409)
    assert.deepEqual(error.toStatus(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
      reason: 'Conflict',
      details: {causes: [{reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas'}]},
      code: 409,
    })
  })

  it('a conflict with an updater names its apiVersion', () => {
    const created = updateManagedFields(undefined, {...webConfig, metadata: {...webConfig.metadata, uid: 'u1'}}, schema, 'kubectl', {now, apiVersion: 'apps/v1'})
    const result = apply(created.object, sts({replicas: 5}), schema, 'deployer', options)
    assert.ok(result.conflicts)
    assert.equal(applyConflictError(result.conflicts).message, 'Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas')
    assert.deepEqual(result.conflicts, [{manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', field: '.spec.replicas', message: 'conflict with "kubectl" using apps/v1'}])
  })

  it('several conflicts: one cause per field and manager, the message grouped by manager', () => {
    let live = stored(apply(undefined, sts({replicas: 2}, {app: 'web'}), schema, 'a', options))
    live = stored(apply(live, sts({replicas: 2}), schema, 'b', options))
    const result = apply(live, sts({replicas: 3}, {app: 'other'}), schema, 'c', options)
    assert.ok(result.conflicts)
    assert.deepEqual(
      result.conflicts.map((c) => [c.manager, c.field]),
      [
        ['a', '.metadata.labels.app'],
        ['a', '.spec.replicas'],
        ['b', '.spec.replicas'],
      ],
    )
    const error = applyConflictError(result.conflicts)
    assert.equal(error.message, 'Apply failed with 3 conflicts: conflicts with "a":\n- .metadata.labels.app\n- .spec.replicas\nconflicts with "b":\n- .spec.replicas')
    assert.equal(error.details?.causes?.length, 3)
  })

  it('applying the value another manager set is no conflict: both own the field', () => {
    const live = stored(apply(undefined, webConfig, schema, 'kubectl', options))
    const result = applied(apply(live, sts({replicas: 3}), schema, 'autoscaler', options))
    assert.deepEqual(fieldsOf(result.managedFields, 'autoscaler'), {'f:spec': {'f:replicas': {}}})
    assert.ok((fieldsOf(result.managedFields, 'kubectl') as any)['f:spec']['f:replicas'])
  })

  it('force takes ownership: the other manager loses the field', () => {
    const live = stored(apply(undefined, webConfig, schema, 'kubectl', options))
    const result = applied(apply(live, sts({replicas: 5}), schema, 'autoscaler', {...options, force: true}))
    assert.equal(result.object.spec.replicas, 5)
    assert.deepEqual(fieldsOf(result.managedFields, 'autoscaler'), {'f:spec': {'f:replicas': {}}})
    assert.equal('f:replicas' in (fieldsOf(result.managedFields, 'kubectl') as any)['f:spec'], false)
  })

  it('an object nobody manages is first recorded as before-first-apply\'s', () => {
    const legacy = sts({replicas: 1, serviceName: 'web'})
    legacy.metadata!.uid = 'legacy'
    const result = apply(legacy, sts({replicas: 3}), schema, 'kubectl', options)
    assert.equal(applyConflictError(result.conflicts!).message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas')
    const forced = applied(apply(legacy, sts({replicas: 3}), schema, 'kubectl', {...options, force: true}))
    assert.deepEqual(fieldsOf(forced.managedFields, 'before-first-apply', 'Update'), {'f:spec': {'f:serviceName': {}}})
  })
})

describe('server-side apply: ownership release', () => {
  const first = sts({replicas: 2, serviceName: 'web'}, {app: 'web', tier: 'frontend'})

  it('a field the applier alone owned and no longer applies is removed', () => {
    const live = stored(apply(undefined, first, schema, 'kubectl', options))
    live.spec.revisionHistoryLimit = 10
    const result = applied(apply(live, sts({replicas: 2}, {app: 'web'}), schema, 'kubectl', options))
    assert.deepEqual(result.object.metadata!.labels, {app: 'web'})
    assert.deepEqual(result.object.spec, {replicas: 2, revisionHistoryLimit: 10})
    assert.deepEqual(fieldsOf(result.managedFields, 'kubectl'), {'f:metadata': {'f:labels': {'f:app': {}}}, 'f:spec': {'f:replicas': {}}})
  })

  it('a field another applier also owns is kept, and is then that applier\'s alone', () => {
    let live = stored(apply(undefined, first, schema, 'kubectl', options))
    live = stored(apply(live, sts(undefined, {tier: 'frontend'}), schema, 'labeller', options))
    const result = applied(apply(live, sts({replicas: 2, serviceName: 'web'}, {app: 'web'}), schema, 'kubectl', options))
    assert.deepEqual(result.object.metadata!.labels, {app: 'web', tier: 'frontend'})
    assert.deepEqual(fieldsOf(result.managedFields, 'labeller'), {'f:metadata': {'f:labels': {'f:tier': {}}}})
  })

  it('a field an updater also owns is kept', () => {
    const live = stored(apply(undefined, first, schema, 'kubectl', options))
    const relabelled = {...live, metadata: {...live.metadata, labels: {...live.metadata!.labels, tier: 'backend'}}}
    const updated = updateManagedFields(live, relabelled, schema, 'kubectl-label', {now, apiVersion: 'apps/v1'}).object
    const result = applied(apply(updated, sts({replicas: 2, serviceName: 'web'}, {app: 'web'}), schema, 'kubectl', options))
    assert.deepEqual(result.object.metadata!.labels, {app: 'web', tier: 'backend'})
  })

  it('a container one applier stops applying goes; another applier\'s container stays', () => {
    const containers = (...names: string[]) => sts({template: {spec: {containers: names.map((name) => ({name, image: `${name}:1`}))}}})
    let live = stored(apply(undefined, containers('app', 'proxy'), schema, 'team-a', options))
    live = stored(apply(live, containers('metrics'), schema, 'team-b', options))
    assert.deepEqual(live.spec.template.spec.containers.map((c: AnyObject) => c.name), ['app', 'proxy', 'metrics'])
    const result = applied(apply(live, containers('app'), schema, 'team-a', options))
    assert.deepEqual(result.object.spec.template.spec.containers.map((c: AnyObject) => c.name), ['app', 'metrics'])
  })
})

describe('server-side apply: atomic and granular lists', () => {
  const nodeOptions: ApplyOptions = {now, apiVersion: 'v1', kind: 'Node'}
  const nodeWith = (taints: AnyObject[]) => ({apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}, spec: {taints}})

  it('an atomic list (a Node\'s taints) is replaced whole and owned as a whole', () => {
    const live = stored(apply(undefined, nodeWith([{key: 'a', effect: 'NoSchedule'}, {key: 'b', effect: 'NoSchedule'}]), node.schema, 'admin', nodeOptions))
    const result = applied(apply(live, nodeWith([{key: 'c', effect: 'NoExecute'}]), node.schema, 'admin', nodeOptions))
    assert.deepEqual(result.object.spec.taints, [{key: 'c', effect: 'NoExecute'}])
    assert.deepEqual(result.managedFields[0].fieldsV1, {'f:spec': {'f:taints': {}}})
    const other = apply(live, nodeWith([{key: 'a', effect: 'NoSchedule'}]), node.schema, 'drainer', nodeOptions)
    assert.deepEqual(other.conflicts?.map((c) => c.field), ['.spec.taints'])
  })
})

describe('managedFields for create, update and patch', () => {
  const created = {...webConfig, metadata: {...webConfig.metadata, uid: 'u1'}}

  it('a create records the creator as an Update entry, "." marking what the change added whole', () => {
    const {object, managedFields} = updateManagedFields(undefined, created, schema, 'kubectl-create', {now, apiVersion: 'apps/v1'})
    assert.deepEqual(object.metadata!.managedFields, managedFields)
    assert.equal(
      JSON.stringify(managedFields),
      '[{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"2025-06-01T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":' +
        '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:serviceName":{},"f:template":{"f:metadata":' +
        '{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":' +
        '{".":{},"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:name":{}}},"f:resources":{}}}}}}}}]',
    )
  })

  it('an update takes the fields it changed from their owner; managers left with nothing are dropped', () => {
    const first = updateManagedFields(undefined, sts({replicas: 1, serviceName: 'web'}), schema, 'creator', {now, apiVersion: 'apps/v1'}).object
    first.metadata!.uid = 'u1'
    const second = updateManagedFields(first, {...first, spec: {replicas: 4, serviceName: 'web'}}, schema, 'scaler', {now: later, apiVersion: 'apps/v1'})
    assert.deepEqual(
      second.managedFields.map((e) => [e.manager, e.time, e.fieldsV1]),
      [
        ['creator', '2025-06-01T12:00:00Z', {'f:spec': {'f:serviceName': {}}}],
        ['scaler', '2025-06-01T12:05:00Z', {'f:spec': {'f:replicas': {}}}],
      ],
    )
    const third = updateManagedFields(second.object, {...second.object, spec: {replicas: 4, serviceName: 'api'}}, schema, 'scaler', {now: later, apiVersion: 'apps/v1'})
    assert.deepEqual(third.managedFields.map((e) => e.manager), ['scaler'])
    assert.deepEqual(third.managedFields[0].fieldsV1, {'f:spec': {'f:replicas': {}, 'f:serviceName': {}}})
  })

  it('fields removed are dropped from every manager', () => {
    const first = updateManagedFields(undefined, sts({replicas: 1}, {app: 'web', tier: 'fe'}), schema, 'creator', {now, apiVersion: 'apps/v1'}).object
    first.metadata!.uid = 'u1'
    const next = {...first, metadata: {...first.metadata, labels: {app: 'web'}}}
    const {managedFields} = updateManagedFields(first, next, schema, 'editor', {now: later, apiVersion: 'apps/v1'})
    assert.deepEqual(managedFields.map((e) => [e.manager, e.fieldsV1]), [['creator', {'f:metadata': {'f:labels': {'.': {}, 'f:app': {}}}, 'f:spec': {'f:replicas': {}}}]])
  })

  it('entries are grouped per manager, operation, apiVersion and subresource', () => {
    let object = updateManagedFields(undefined, created, schema, 'ctl', {now, apiVersion: 'apps/v1'}).object
    object = updateManagedFields(object, {...object, status: {replicas: 3}}, schema, 'ctl', {now, apiVersion: 'apps/v1', subresource: 'status'}).object
    object = updateManagedFields(object, {...object, spec: {...object.spec, replicas: 1}}, schema, 'ctl', {now: later, apiVersion: 'apps/v1'}).object
    const entries: ManagedFieldsEntry[] = object.metadata!.managedFields
    assert.deepEqual(
      entries.map((e) => [e.manager, e.operation, e.apiVersion, e.subresource ?? '']),
      [
        ['ctl', 'Update', 'apps/v1', 'status'],
        ['ctl', 'Update', 'apps/v1', ''],
      ],
    )
    assert.deepEqual(entries[0].fieldsV1, {'f:status': {'f:replicas': {}}})
  })

  it('reset fields are not tracked', () => {
    const withStatus = {...created, status: {replicas: 0, availableReplicas: 0}}
    const {managedFields} = updateManagedFields(undefined, withStatus, schema, 'ctl', {now, apiVersion: 'apps/v1', ignoredFields: resetFields(statefulSet)})
    assert.equal('f:status' in (managedFields[0].fieldsV1 as object), false)
  })

  it('an existing object without managedFields keeps having none; an empty list resets them', () => {
    const untracked = {...created, metadata: {...created.metadata}}
    const result = updateManagedFields(untracked, {...untracked, spec: {replicas: 9}}, schema, 'ctl', {now, apiVersion: 'apps/v1'})
    assert.equal('managedFields' in result.object.metadata!, false)
    const tracked = updateManagedFields(undefined, created, schema, 'one', {now, apiVersion: 'apps/v1'}).object
    const reset = updateManagedFields(tracked, {...tracked, metadata: {...tracked.metadata, managedFields: []}}, schema, 'two', {now, apiVersion: 'apps/v1'})
    assert.deepEqual(reset.managedFields, [])
  })
})

describe('field sets', () => {
  it('fieldsV1 reads and writes f:, k:, v:, i: and "."', () => {
    const fields = {
      'f:metadata': {'f:finalizers': {'.': {}, 'v:"a"': {}}},
      'f:spec': {'f:ports': {'k:{"port":80,"protocol":"TCP"}': {'.': {}, 'f:port': {}}}, 'f:x': {'i:0': {}}},
    }
    const set = FieldSet.fromFieldsV1(fields)
    assert.deepEqual(set.toFieldsV1(), fields)
    assert.deepEqual(
      set.paths().map(pathString),
      ['.metadata.finalizers', '.metadata.finalizers[="a"]', '.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=80,protocol="TCP"].port', '.spec.x[0]'],
    )
  })
})
