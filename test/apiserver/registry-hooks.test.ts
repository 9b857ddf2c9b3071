// The registry's beginCreate / beginUpdate hooks run where Kubernetes' Store runs BeginCreate and
// BeginUpdate: after mutating admission, before validation and validating admission (which see what
// the hook set), and the hook's finish is called exactly once — true once the object is stored, false
// when anything after the hook refused the write, it lost a conflict, or it was a dry run. On a real
// SQLite store, with a real admission chain of recording plugins; the kind is ConfigMap.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, beforeEach, describe, it} from 'node:test'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import type {AnyObject, RequestContext} from '../../src/api/types.js'
import {AdmissionChain} from '../../src/admission/chain.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {ApiError, errors} from '../../src/machinery/status.js'
import {openSqliteStore, type SqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'

const now = new Date('2025-06-01T12:00:00Z')
const ctx = (): {context: RequestContext} => ({context: {now, warnings: []}})
const cm = (name: string, data: Record<string, string> = {a: 'b'}, labels?: Record<string, string>) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels}, data})

describe('registry hooks: beginCreate / beginUpdate in Kubernetes\' order, finish called once', () => {
  let dir: string
  let store: SqliteStore
  let registry: ResourceRegistry
  /** what happened, in order */
  let events: string[]
  /** what the validating plugin saw of the object (the hook's annotation) */
  let validatedTaken: (string | undefined)[]
  /** run once from the validating plugin, before it answers (a concurrent write) */
  let duringValidation: (() => Promise<void>) | undefined

  before(() => {
    dir = tempDir('orch-registry-hooks-')
    store = openSqliteStore({dataDir: dir})
    registry = new ResourceRegistry(configMapDeclaration, {store, now: () => now, namespaceOf: async (name) => ({metadata: {name}})})
    let taken = 0
    registry.hooks = {
      beginCreate: async (object, options) => {
        // what mutating admission set is there already
        events.push(`beginCreate(${object.metadata?.labels?.mutated ?? 'unmutated'}${options.dryRun ? ', dry run' : ''})`)
        object.metadata!.annotations = {...object.metadata!.annotations, taken: String(++taken)}
        return async (success) => void events.push(`finish(${success})`)
      },
      beginUpdate: async (object, old) => {
        events.push(`beginUpdate(${object.metadata?.labels?.mutated ?? 'unmutated'}, old ${old.metadata?.annotations?.taken})`)
        object.metadata!.annotations = {...object.metadata!.annotations, taken: String(++taken)}
        return async (success) => void events.push(`finish(${success})`)
      },
    }
    registry.admission = new AdmissionChain()
      .addMutating({
        name: 'label',
        admit: async (attributes) => {
          events.push(`mutate(${attributes.object?.metadata?.annotations?.taken ?? 'nothing taken'})`)
          const object = attributes.object as AnyObject
          object.metadata = {...object.metadata, labels: {...object.metadata?.labels, mutated: 'yes'}}
        },
      })
      .addValidating({
        name: 'check',
        validate: async (attributes) => {
          events.push('validate')
          validatedTaken.push(attributes.object?.metadata?.annotations?.taken)
          const hook = duringValidation
          duringValidation = undefined
          await hook?.()
          if (attributes.object?.metadata?.labels?.deny) throw errors.forbidden({group: '', resource: 'configmaps'}, attributes.name, 'denied')
        },
      })
  })
  after(async () => {
    await store?.close()
    rmSync(dir, {recursive: true, force: true})
  })
  beforeEach(() => {
    events = []
    validatedTaken = []
    duringValidation = undefined
  })

  async function refused(promise: Promise<unknown>): Promise<ApiError> {
    try {
      await promise
    } catch (error) {
      assert.ok(error instanceof ApiError, String(error))
      return error
    }
    assert.fail('expected the write to be refused')
  }

  it('create: mutating admission, the hook, validating admission (which sees what the hook set), the write, finish(true)', async () => {
    const created = await registry.create('default', cm('ok'), ctx())
    assert.deepEqual(events, ['mutate(nothing taken)', 'beginCreate(yes)', 'validate', 'finish(true)'])
    assert.equal(validatedTaken[0], created.metadata!.annotations.taken)
    assert.equal(created.metadata!.labels.mutated, 'yes')
  })

  it('create refused by validation (422), by validating admission, or AlreadyExists: finish(false) once', async () => {
    const invalid = await refused(registry.create('default', cm('invalid', {'not a key!': 'x'}), ctx()))
    assert.equal(invalid.code, 422)
    assert.deepEqual(events, ['mutate(nothing taken)', 'beginCreate(yes)', 'finish(false)'], 'validation comes after the hook and before validating admission')
    events = []
    const denied = await refused(registry.create('default', cm('denied', {a: 'b'}, {deny: 'yes'}), ctx()))
    assert.equal(denied.code, 403)
    assert.deepEqual(events, ['mutate(nothing taken)', 'beginCreate(yes)', 'validate', 'finish(false)'])
    events = []
    await registry.create('default', cm('twice'), ctx())
    events = []
    const exists = await refused(registry.create('default', cm('twice'), ctx()))
    assert.equal(exists.code, 409)
    assert.deepEqual(events, ['mutate(nothing taken)', 'beginCreate(yes)', 'validate', 'finish(false)'])
  })

  it('a dry-run create runs the hook in dry-run mode and finishes with false: nothing is kept', async () => {
    const dry = await registry.create('default', cm('dry'), {...ctx(), dryRun: true})
    assert.ok(dry.metadata!.annotations.taken)
    assert.deepEqual(events, ['mutate(nothing taken)', 'beginCreate(yes, dry run)', 'validate', 'finish(false)'])
  })

  it('each attempt of a generated name begins and finishes on its own: a taken name gives back before the next try; mutating admission runs once (createWithGenerateNameRetry retries inside Store.Create)', async () => {
    const random = Math.random
    Math.random = () => 0
    try {
      await registry.create('default', {...cm(''), metadata: {generateName: 'gen-'}}, ctx())
      events = []
      const exhausted = await refused(registry.create('default', {...cm(''), metadata: {generateName: 'gen-'}}, ctx()))
      assert.equal(exhausted.code, 409)
    } finally {
      Math.random = random
    }
    const attempt = ['beginCreate(yes)', 'validate', 'finish(false)']
    assert.deepEqual(events, ['mutate(nothing taken)', ...Array.from({length: 8}, () => attempt).flat()])
  })

  it('update: mutating admission, the hook, validation, validating admission (which sees what the hook set), the write, finish(true)', async () => {
    const stored = await registry.create('default', cm('upd'), ctx())
    events = []
    validatedTaken = []
    const {object} = await registry.update('default', 'upd', {...stored, data: {a: 'c'}}, ctx())
    assert.deepEqual(events, [`mutate(${stored.metadata!.annotations.taken})`, `beginUpdate(yes, old ${stored.metadata!.annotations.taken})`, 'validate', 'finish(true)'])
    assert.equal(validatedTaken[0], object.metadata!.annotations.taken)
    assert.notEqual(object.metadata!.annotations.taken, stored.metadata!.annotations.taken)
  })

  it('update refused by validation, by validating admission, or a dry run: finish(false); validation runs after the hook', async () => {
    const stored = await registry.create('default', cm('upd-refused'), ctx())
    events = []
    const invalid = await refused(registry.update('default', 'upd-refused', {...stored, data: {'not a key!': 'x'}}, ctx()))
    assert.equal(invalid.code, 422)
    assert.deepEqual(events.slice(1), [`beginUpdate(yes, old ${stored.metadata!.annotations.taken})`, 'finish(false)'])
    events = []
    await refused(registry.update('default', 'upd-refused', {...stored, metadata: {...stored.metadata, labels: {deny: 'yes'}}}, ctx()))
    assert.deepEqual(events.slice(1), [`beginUpdate(yes, old ${stored.metadata!.annotations.taken})`, 'validate', 'finish(false)'])
    events = []
    await registry.update('default', 'upd-refused', {...stored, data: {a: 'dry'}}, {...ctx(), dryRun: true})
    assert.deepEqual(events.slice(1), [`beginUpdate(yes, old ${stored.metadata!.annotations.taken})`, 'validate', 'finish(false)'])
    const patched = await registry.guaranteedUpdate('default', 'upd-refused', (current) => registry.prepareUpdate(current, {...current, data: {'bad key!': 'x'}}, '', ctx()), {admit: {...ctx(), subresource: ''}})
      .then(() => assert.fail('the patch should be refused'), (error: ApiError) => error)
    assert.equal(patched.code, 422, 'guaranteedUpdate (patch, apply) validates what prepareUpdate built')
  })

  it('an update that loses a conflict finishes with false and begins again on the object it reads next', async () => {
    const stored = await registry.create('default', cm('race'), ctx())
    events = []
    duringValidation = async () => {
      // someone else writes the object while this update is being admitted
      const current = await registry.get('default', 'race')
      events.push('concurrent write')
      await registry.update('default', 'race', {...current, data: {a: 'other'}}, ctx())
      events.push('concurrent write done')
    }
    const {object} = await registry.update('default', 'race', {...stored, metadata: {...stored.metadata, resourceVersion: undefined}, data: {a: 'mine'}}, ctx())
    assert.equal(object.data.a, 'mine')
    const first = events.indexOf('finish(false)')
    assert.ok(first > events.indexOf('concurrent write done'), events.join(' | '))
    // the retry: mutate, begin, validate, finish(true), with the concurrent write's object as old
    assert.deepEqual(events.slice(first + 1).map((e) => e.replace(/old \d+/, 'old N').replace(/mutate\(\d+\)/, 'mutate(N)')), ['mutate(N)', 'beginUpdate(yes, old N)', 'validate', 'finish(true)'])
  })
})
