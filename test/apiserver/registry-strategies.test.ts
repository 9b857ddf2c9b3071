// Kind strategies as the generic registry applies them (prepare for create / update, defaults,
// dropped fields, warnings, the namespace check), against a real SQLite store: Kubernetes'
// namespaceStrategy, SetDefaults_Namespace, nodeStrategy (dropDisabledFields, fieldIsDeprecatedWarnings,
// v1 podCIDR conversion), the StatefulSet maxUnavailable gate and the StorageVersionMigration strategy.
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {statefulSet as statefulSetDeclaration} from '../../src/api/apps/statefulset.js'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import {namespace as namespaceDeclaration, NAMESPACE_NAME_LABEL} from '../../src/api/core/namespace.js'
import {node as nodeDeclaration} from '../../src/api/core/node.js'
import {storageVersionMigration as svmDeclaration} from '../../src/api/storagemigration/storageversionmigration.js'
import type {AnyObject, KindDeclaration, RequestContext} from '../../src/api/types.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {ApiError} from '../../src/machinery/status.js'
import {openSqliteStore, type SqliteStore} from '../../src/storage/sqlite.js'

const now = new Date('2025-06-01T12:00:00Z')

describe('kind strategies through the registry', () => {
  let dir: string
  let store: SqliteStore
  /** namespaces the namespaced registries see (name -> object) */
  const namespaces = new Map<string, AnyObject>()
  const registry = (declaration: KindDeclaration) =>
    new ResourceRegistry(declaration, {store, now: () => now, namespaceOf: async (name) => namespaces.get(name) ?? null})
  const ctx = (extra: Partial<RequestContext> = {}): {context: RequestContext} => ({context: {now, warnings: [], ...extra}})

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-strategies-'))
    store = openSqliteStore({dataDir: dir})
  })
  after(async () => {
    await store?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  async function rejected(promise: Promise<unknown>): Promise<ApiError> {
    try {
      await promise
    } catch (error) {
      assert.ok(error instanceof ApiError, String(error))
      return error
    }
    assert.fail('expected the write to be refused')
  }

  // ---------- Namespace ----------

  it('Namespace: a plain update keeps the stored spec.finalizers; only /finalize changes them (namespaceStrategy.PrepareForUpdate)', async () => {
    const namespaces = registry(namespaceDeclaration)
    const created = await namespaces.create('', {metadata: {name: 'keep-fin'}, spec: {finalizers: ['example.com/keep']}}, ctx())
    assert.deepEqual(created.spec.finalizers, ['example.com/keep', 'orch'])
    const put = await namespaces.update('', 'keep-fin', {metadata: {name: 'keep-fin'}, spec: {finalizers: []}}, ctx())
    assert.deepEqual(put.object.spec.finalizers, ['example.com/keep', 'orch'], 'PUT of the namespace: spec.finalizers as stored')
    const other = await namespaces.update('', 'keep-fin', {metadata: {name: 'keep-fin'}, spec: {finalizers: ['example.com/other']}}, ctx())
    assert.deepEqual(other.object.spec.finalizers, ['example.com/keep', 'orch'], 'nor can a PUT add one')
    const finalized = await namespaces.update('', 'keep-fin', {metadata: {name: 'keep-fin'}, spec: {finalizers: ['example.com/keep']}}, {...ctx(), subresource: 'finalize'})
    assert.deepEqual(finalized.object.spec.finalizers, ['example.com/keep'], '/finalize changes them')
  })

  it('Namespace: every namespace is labelled orch.io/metadata.name=<name> on create, and again on every update (SetDefaults_Namespace)', async () => {
    const namespaces = registry(namespaceDeclaration)
    const created = await namespaces.create('', {metadata: {name: 'labelled', labels: {team: 'a', [NAMESPACE_NAME_LABEL]: 'forged'}}}, ctx())
    assert.deepEqual(created.metadata!.labels, {team: 'a', [NAMESPACE_NAME_LABEL]: 'labelled'})
    const generated = await namespaces.create('', {metadata: {generateName: 'gen-'}}, ctx())
    assert.match(generated.metadata!.name, /^gen-[a-z0-9]{5}$/)
    assert.equal(generated.metadata!.labels[NAMESPACE_NAME_LABEL], generated.metadata!.name, 'the generated name')
    const put = await namespaces.update('', 'labelled', {metadata: {name: 'labelled', labels: {team: 'b'}}}, ctx())
    assert.deepEqual(put.object.metadata!.labels, {team: 'b', [NAMESPACE_NAME_LABEL]: 'labelled'}, 're-added on update')
    const unlabelled = await namespaces.update('', 'labelled', {metadata: {name: 'labelled'}}, ctx())
    assert.deepEqual(unlabelled.object.metadata!.labels, {[NAMESPACE_NAME_LABEL]: 'labelled'})
    const status = await namespaces.update('', 'labelled', {metadata: {name: 'labelled', labels: {}}, status: {phase: 'Active'}}, {...ctx(), subresource: 'status'})
    assert.equal(status.object.metadata!.labels[NAMESPACE_NAME_LABEL], 'labelled')
  })

  // ---------- creating in a terminating namespace ----------

  it('creating in a Terminating namespace: 403 `configmaps "y" is forbidden: ...`, details.name set and a NamespaceTerminating cause at metadata.namespace', async () => {
    namespaces.set('t2', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 't2', deletionTimestamp: '2025-06-01T11:00:00Z'}, status: {phase: 'Terminating'}})
    const error = await rejected(registry(configMapDeclaration).create('t2', {metadata: {name: 'y'}, data: {a: 'b'}}, ctx()))
    assert.deepEqual(error.toStatus(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "y" is forbidden: unable to create new content in namespace t2 because it is being terminated',
      reason: 'Forbidden',
      details: {
        name: 'y',
        group: undefined,
        kind: 'configmaps',
        causes: [{reason: 'NamespaceTerminating', message: 'namespace t2 is being terminated', field: 'metadata.namespace'}],
      },
      code: 403,
    })
  })

  // ---------- StatefulSet ----------

  const set = (name: string, rollingUpdate?: AnyObject): AnyObject => ({
    metadata: {name},
    spec: {
      selector: {matchLabels: {app: name}},
      template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'app', image: 'app:1'}]}},
      ...(rollingUpdate ? {updateStrategy: {type: 'RollingUpdate', rollingUpdate}} : {}),
    },
  })

  it('StatefulSet: updateStrategy.rollingUpdate.maxUnavailable "default 1; beta, enabled by default" (MaxUnavailableStatefulSet on)', async () => {
    namespaces.set('apps', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'apps'}, status: {phase: 'Active'}})
    const sets = registry(statefulSetDeclaration)
    const defaulted = await sets.create('apps', set('by-default'), ctx())
    assert.deepEqual(defaulted.spec.updateStrategy, {type: 'RollingUpdate', rollingUpdate: {partition: 0, maxUnavailable: 1}})
    const gateOn = await sets.create('apps', set('gate-on', {partition: 1}), ctx({gates: {MaxUnavailableStatefulSet: true}}))
    assert.deepEqual(gateOn.spec.updateStrategy.rollingUpdate, {partition: 1, maxUnavailable: 1})
    const given = await sets.create('apps', set('given', {maxUnavailable: '50%'}), ctx())
    assert.equal(given.spec.updateStrategy.rollingUpdate.maxUnavailable, '50%')
    const onDelete = await sets.create('apps', {...set('on-delete'), spec: {...set('on-delete').spec, updateStrategy: {type: 'OnDelete'}}}, ctx())
    assert.deepEqual(onDelete.spec.updateStrategy, {type: 'OnDelete'})
    // an update of a set stored without it (written while the gate was off) gets the default too
    const put = await sets.update('apps', 'given', {...given, spec: {...given.spec, updateStrategy: {type: 'RollingUpdate', rollingUpdate: {}}}}, ctx())
    assert.deepEqual(put.object.spec.updateStrategy.rollingUpdate, {partition: 0, maxUnavailable: 1})
  })

  it('StatefulSet: with MaxUnavailableStatefulSet off, maxUnavailable is dropped on create, and on update unless the stored set uses it (dropStatefulSetDisabledFields)', async () => {
    namespaces.set('apps', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'apps'}, status: {phase: 'Active'}})
    const sets = registry(statefulSetDeclaration)
    const off = ctx({gates: {MaxUnavailableStatefulSet: false}})
    const created = await sets.create('apps', set('gate-off', {maxUnavailable: 2}), off)
    assert.deepEqual(created.spec.updateStrategy.rollingUpdate, {partition: 0}, 'dropped on create, and no default')
    const put = await sets.update('apps', 'gate-off', {...created, spec: {...created.spec, updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 3}}}}, ctx({gates: {MaxUnavailableStatefulSet: false}}))
    assert.deepEqual(put.object.spec.updateStrategy.rollingUpdate, {partition: 0}, 'dropped on update: the stored set does not use it')
    // a set stored while the gate was on keeps using it
    const inUse = await sets.create('apps', set('in-use', {maxUnavailable: 2}), ctx())
    const kept = await sets.update('apps', 'in-use', {...inUse, spec: {...inUse.spec, updateStrategy: {type: 'RollingUpdate', rollingUpdate: {maxUnavailable: 3}}}}, ctx({gates: {MaxUnavailableStatefulSet: false}}))
    assert.deepEqual(kept.object.spec.updateStrategy.rollingUpdate, {partition: 0, maxUnavailable: 3})
  })

  // ---------- Node ----------

  it('Node: podCIDRs[0] is filled from podCIDR, and podCIDR from podCIDRs[0] (Kubernetes\' v1 conversion)', async () => {
    const nodes = registry(nodeDeclaration)
    const fromPodCIDR = await nodes.create('', {metadata: {name: 'cidr-a'}, spec: {podCIDR: '10.244.1.0/24'}}, ctx())
    assert.equal(fromPodCIDR.spec.podCIDR, '10.244.1.0/24')
    assert.deepEqual(fromPodCIDR.spec.podCIDRs, ['10.244.1.0/24'])
    const fromPodCIDRs = await nodes.create('', {metadata: {name: 'cidr-b'}, spec: {podCIDRs: ['10.244.2.0/24', 'fd00:2::/64']}}, ctx())
    assert.equal(fromPodCIDRs.spec.podCIDR, '10.244.2.0/24')
    assert.deepEqual(fromPodCIDRs.spec.podCIDRs, ['10.244.2.0/24', 'fd00:2::/64'])
    // set later, through an update naming only podCIDR
    await nodes.create('', {metadata: {name: 'cidr-c'}}, ctx())
    const later = await nodes.update('', 'cidr-c', {metadata: {name: 'cidr-c'}, spec: {podCIDR: '10.244.3.0/24'}}, ctx())
    assert.deepEqual(later.object.spec.podCIDRs, ['10.244.3.0/24'])
    // document 2's rule still holds when both are given: entry 0 equals podCIDR
    const mismatch = await rejected(nodes.create('', {metadata: {name: 'cidr-d'}, spec: {podCIDR: '10.244.4.0/24', podCIDRs: ['10.244.5.0/24']}}, ctx()))
    assert.equal(mismatch.code, 422)
    assert.match(mismatch.message, /spec\.podCIDRs\[0\]: Invalid value: "10\.244\.5\.0\/24": must be equal to `podCIDR`/)
  })

  it('Node: spec.configSource and status.config are dropped on create; spec.externalID is warned about as deprecated (dropDisabledFields, WarningsOnCreate)', async () => {
    const nodes = registry(nodeDeclaration)
    const source = {configMap: {namespace: 'orch-system', name: 'agent-config', agentConfigKey: 'agent'}}
    const options = ctx()
    const created = await nodes.create(
      '',
      {metadata: {name: 'cfg-create'}, spec: {configSource: source, externalID: 'ext-1'}, status: {config: {assigned: source, error: 'x'}}},
      options,
    )
    assert.equal(created.spec.configSource, undefined)
    assert.equal(created.status.config, undefined)
    assert.equal(created.spec.externalID, 'ext-1')
    assert.deepEqual(options.context.warnings, ['spec.externalID: this field is deprecated, and is unused by orch'])
    // an invalid configSource is no reason to refuse a create: it is dropped before validation
    const dropped = await nodes.create('', {metadata: {name: 'cfg-invalid'}, spec: {configSource: {}}}, ctx())
    assert.equal(dropped.spec.configSource, undefined)
  })

  it('Node: an update drops spec.configSource unless the stored node has one, /status drops status.config likewise; configSource is warned about where kept (dropDisabledFields, WarningsOnUpdate)', async () => {
    const nodes = registry(nodeDeclaration)
    const source = {configMap: {namespace: 'orch-system', name: 'agent-config', agentConfigKey: 'agent'}}
    // a node without a configSource cannot gain one
    const plain = await nodes.create('', {metadata: {name: 'cfg-plain'}}, ctx())
    const put = await nodes.update('', 'cfg-plain', {...plain, spec: {configSource: source}}, ctx())
    assert.equal(put.object.spec.configSource, undefined)
    const statusPut = await nodes.update('', 'cfg-plain', {...put.object, status: {...put.object.status, config: {assigned: source}}}, {...ctx(), subresource: 'status'})
    assert.equal(statusPut.object.status.config, undefined)
    // a node stored with them (written before they were dropped) keeps them, and their rules still apply
    const legacy = registry({...nodeDeclaration, prepareForCreate: undefined})
    const stored = await legacy.create('', {metadata: {name: 'cfg-legacy'}, spec: {configSource: source, externalID: 'ext-2'}, status: {config: {assigned: {configMap: {...source.configMap, uid: 'u', resourceVersion: '1'}}}}}, ctx())
    assert.deepEqual(stored.spec.configSource, source)
    const options = ctx()
    const kept = await nodes.update('', 'cfg-legacy', {...stored, spec: {...stored.spec, unschedulable: true}}, options)
    assert.deepEqual(kept.object.spec.configSource, source)
    assert.deepEqual(options.context.warnings, ['spec.configSource: the feature is removed', 'spec.externalID: this field is deprecated, and is unused by orch'])
    const invalid = await rejected(nodes.update('', 'cfg-legacy', {...kept.object, spec: {...kept.object.spec, configSource: {}}}, ctx()))
    assert.match(invalid.message, /spec\.configSource: Invalid value: \{\}: exactly one reference subfield must be non-nil/)
    const statusOptions = ctx()
    const status = await nodes.update('', 'cfg-legacy', {...kept.object, status: {...kept.object.status, config: {error: 'failed'}}}, {...statusOptions, subresource: 'status'})
    assert.deepEqual(status.object.status.config, {error: 'failed'}, 'kept: the stored node has status.config')
    assert.deepEqual(statusOptions.context.warnings, [], '/status warns of nothing (nodeStatusStrategy)')
  })

  // ---------- StorageVersionMigration ----------

  it('StorageVersionMigration: create starts from an empty status whatever was sent (strategy.PrepareForCreate: svm.Status = {})', async () => {
    const migrations = registry(svmDeclaration)
    const forged = {
      conditions: [{type: 'Succeeded', status: 'True', reason: 'Forged', message: '', lastTransitionTime: '2025-01-01T00:00:00Z'}],
      resourceVersion: '999999',
    }
    const created = await migrations.create('', {metadata: {name: 'forged'}, spec: {resource: {group: '', resource: 'configmaps'}}, status: forged}, ctx())
    assert.deepEqual(created.status, {})
  })

  it('StorageVersionMigration: /status conditions must have the shared Condition shape and status.resourceVersion be an integer string', async () => {
    const migrations = registry(svmDeclaration)
    const created = await migrations.create('', {metadata: {name: 'status-shape'}, spec: {resource: {group: '', resource: 'configmaps'}}}, ctx())
    const bad = await rejected(
      migrations.update('', 'status-shape', {...created, status: {resourceVersion: 'abc', conditions: [{type: 'Running', status: 'True'}]}}, {...ctx(), subresource: 'status'}),
    )
    assert.equal(bad.code, 422)
    assert.deepEqual(
      bad.details!.causes!.map((c) => `${c.field}: ${c.message}`),
      [
        'status.resourceVersion: Invalid value: "abc": failed to parse resource version "abc": strconv.ParseInt: parsing "abc": invalid syntax',
        'status.conditions[0].lastTransitionTime: Required value: must be set',
        'status.conditions[0].reason: Required value: must be set',
      ],
    )
    const good = await migrations.update(
      '',
      'status-shape',
      {...created, status: {resourceVersion: '42', conditions: [{type: 'Running', status: 'True', reason: 'MigrationRunning', message: '', lastTransitionTime: '2025-06-01T12:00:00Z'}]}},
      {...ctx(), subresource: 'status'},
    )
    assert.equal(good.object.status.resourceVersion, '42')
  })
})
