// A continue token whose snapshot was compacted away: 410 Expired, and the Status carries a token
// that goes on from the same place at the latest state (Kubernetes' handleCompactedErrorForPaging,
// resourceVersion -1 in the token). On a real SQLite store.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, describe, it} from 'node:test'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {ApiError} from '../../src/machinery/status.js'
import {openSqliteStore, type SqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'

const now = new Date()
const cm = (name: string) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data: {a: 'b'}})

describe('continue tokens after compaction', () => {
  let dir: string
  let store: SqliteStore
  let registry: ResourceRegistry

  before(async () => {
    dir = tempDir('orch-registry-continue-')
    store = openSqliteStore({dataDir: dir})
    registry = new ResourceRegistry(configMapDeclaration, {store, now: () => now, namespaceOf: async (name) => ({metadata: {name}})})
    for (const name of ['a', 'b', 'c', 'd', 'e']) await registry.create('default', cm(name), {context: {now}})
  })
  after(async () => {
    await store.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('a compacted continue token is 410 Expired whose metadata.continue goes on from the same key at the latest state, and that token pages on', async () => {
    const first = await registry.list('default', {limit: 2})
    assert.deepEqual(first.items.map((item) => item.metadata?.name), ['a', 'b'])
    assert.ok(first.continue)
    // a change after the snapshot, then compaction past it
    await registry.create('default', cm('f'), {context: {now}})
    await registry.delete('default', 'c', {context: {now}})
    await store.compact(await store.currentRevision())
    let expired: ApiError | undefined
    try {
      await registry.list('default', {limit: 2, continue: first.continue})
    } catch (error) {
      expired = error as ApiError
    }
    assert.ok(expired instanceof ApiError, 'the old token is refused')
    assert.equal(expired.code, 410)
    assert.equal(expired.reason, 'Expired')
    const status = expired.toStatus()
    assert.match(status.message ?? "", /use the continue token in this response to retrieve the remainder of the results/)
    const latest = (status.metadata as {continue?: string}).continue
    assert.ok(latest, 'the Status carries the token it speaks of')
    const next = await registry.list('default', {limit: 2, continue: latest})
    // after b, at the latest state: c is gone, f is there
    assert.deepEqual(next.items.map((item) => item.metadata?.name), ['d', 'e'])
    assert.equal(next.resourceVersion, String(await store.currentRevision()))
    const last = await registry.list('default', {limit: 2, continue: next.continue})
    assert.deepEqual(last.items.map((item) => item.metadata?.name), ['f'])
    assert.equal(last.continue, undefined)
  })
})
