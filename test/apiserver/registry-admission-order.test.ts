// Where mutating admission runs among the registry's own steps, as in Kubernetes: the create handler
// admits before Store.Create fills the system fields (uid, creationTimestamp, a generated name) and
// runs the strategy's PrepareForCreate; an update admits in UpdatedObject, before BeforeUpdate runs
// PrepareForUpdate and counts the generation. On a real SQLite store with a real admission chain;
// the kind is StatefulSet (a spec counted by generation, a status PrepareForCreate resets).
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, describe, it} from 'node:test'
import {statefulSet as statefulSetDeclaration} from '../../src/api/apps/statefulset.js'
import type {AnyObject, RequestContext} from '../../src/api/types.js'
import {AdmissionChain} from '../../src/admission/chain.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {openSqliteStore, type SqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'
import {statefulSet} from '../support/statefulset.js'

const now = new Date('2025-06-01T12:00:00Z')
const ctx = (): {context: RequestContext} => ({context: {now, warnings: []}})

describe('mutating admission in Kubernetes\' place among the registry\'s steps', () => {
  let dir: string
  let store: SqliteStore
  let registry: ResourceRegistry
  /** the metadata mutating admission saw, per call */
  const seen: AnyObject[] = []

  before(() => {
    dir = tempDir('orch-admission-order-')
    store = openSqliteStore({dataDir: dir})
    registry = new ResourceRegistry(statefulSetDeclaration, {store, now: () => now, namespaceOf: async (name) => ({metadata: {name}})})
    registry.admission = new AdmissionChain().addMutating({
      name: 'scaler',
      admit: async (attributes) => {
        const object = attributes.object as AnyObject
        seen.push({...object.metadata, attributesName: attributes.name})
        // a plugin that writes a status on create, and scales up a set annotated so on update
        if (attributes.operation === 'CREATE') object.status = {replicas: 7, availableReplicas: 7}
        if (attributes.operation === 'UPDATE' && object.metadata?.annotations?.scale === 'up') object.spec.replicas += 1
        if (object.metadata?.annotations?.limits === 'half-a-cpu') {
          object.spec.template.spec.containers[0].resources = {limits: {cpu: '0.5'}}
          delete object.spec.podManagementPolicy
        }
      },
    })
  })
  after(async () => {
    await store?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('"Store.Create fills uid, creationTimestamp and a generated name after mutating admission": admission sees none of them', async () => {
    seen.length = 0
    const created = await registry.create('default', {...statefulSet('ignored'), metadata: {generateName: 'web-'}}, ctx())
    assert.match(created.metadata!.name, /^web-[a-z0-9]{5}$/)
    assert.equal(typeof created.metadata!.uid, 'string')
    assert.equal(seen.length, 1)
    assert.equal(seen[0].uid, undefined)
    assert.equal(seen[0].creationTimestamp, undefined)
    assert.equal(seen[0].name, undefined)
    assert.equal(seen[0].attributesName, '', 'the admission request names no object yet')
    assert.equal(seen[0].generation, undefined)
  })

  it('"PrepareForCreate runs after mutating admission": a status admission wrote on create is reset, generation is 1', async () => {
    const created = await registry.create('default', statefulSet('status-reset'), ctx())
    assert.deepEqual(created.status, {replicas: 0, availableReplicas: 0})
    assert.equal(created.metadata!.generation, 1)
  })

  it('"PrepareForUpdate counts the generation after mutating admission": a spec change only admission made raises it', async () => {
    const created = await registry.create('default', statefulSet('scaled'), ctx())
    const labelled = await registry.update('default', 'scaled', {...created, metadata: {...created.metadata, labels: {tier: 'web'}}}, ctx())
    assert.equal(labelled.object.metadata!.generation, 1, 'a metadata change is not counted')
    const scaled = await registry.update('default', 'scaled', {...labelled.object, metadata: {...labelled.object.metadata, annotations: {scale: 'up'}}}, ctx())
    assert.equal(scaled.object.spec.replicas, 2)
    assert.equal(scaled.object.metadata!.generation, 2)
  })

  it('an update keeps the stored creationTimestamp and uid whatever admission or the body said', async () => {
    const created = await registry.create('default', statefulSet('kept'), ctx())
    const {uid: _uid, ...withoutUid} = created.metadata!
    const updated = await registry.update('default', 'kept', {...created, metadata: {...withoutUid, creationTimestamp: '2020-01-01T00:00:00Z', labels: {x: 'y'}}}, ctx())
    assert.equal(updated.object.metadata!.uid, created.metadata!.uid)
    assert.equal(updated.object.metadata!.creationTimestamp, created.metadata!.creationTimestamp)
  })

  it('"what a mutating plugin wrote is decoded and defaulted again": its quantities are canonical, a default it removed is back', async () => {
    const set = statefulSet('admitted-limits')
    set.metadata.annotations = {limits: 'half-a-cpu'}
    const created = await registry.create('default', set, ctx())
    assert.deepEqual(created.spec.template.spec.containers[0].resources, {limits: {cpu: '500m'}})
    assert.equal(created.spec.podManagementPolicy, 'OrderedReady')
  })
})

describe('the scale subresource in admission', () => {
  let dir: string
  let store: SqliteStore
  let registry: ResourceRegistry
  const seen: {kind: string; objectKind?: string; replicas?: number; oldReplicas?: number}[] = []

  before(() => {
    dir = tempDir('orch-admission-scale-')
    store = openSqliteStore({dataDir: dir})
    registry = new ResourceRegistry(statefulSetDeclaration, {store, now: () => now, namespaceOf: async (name) => ({metadata: {name}})})
    registry.admission = new AdmissionChain()
      .addMutating({
        name: 'cap',
        admit: async (attributes) => {
          if (attributes.subresource !== 'scale') return
          const object = attributes.object as AnyObject
          // a plugin that caps replicas at 4
          if (object.spec.replicas > 4) object.spec.replicas = 4
        },
      })
      .addValidating({
        name: 'record',
        validate: async (attributes) => {
          if (attributes.subresource !== 'scale') return
          seen.push({kind: attributes.kind.kind, objectKind: attributes.object?.kind, replicas: attributes.object?.spec?.replicas, oldReplicas: attributes.oldObject?.spec?.replicas})
        },
      })
  })
  after(async () => {
    await store?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('"/scale is admitted as the autoscaling/v1 Scale it writes": kind, object and oldObject are Scales, and a mutated Scale\'s replicas are what is stored', async () => {
    await registry.create('default', statefulSet('scaled-set'), ctx())
    const scaled = await registry.guaranteedUpdate(
      'default',
      'scaled-set',
      (current) => registry.prepareUpdate(current, {...current, spec: {...current.spec, replicas: 9}}, '', ctx()),
      {admit: {...ctx(), subresource: 'scale'}},
    )
    assert.equal(scaled.spec.replicas, 4, 'capped by the mutating plugin')
    assert.deepEqual(seen, [{kind: 'Scale', objectKind: 'Scale', replicas: 4, oldReplicas: 1}])
  })
})
