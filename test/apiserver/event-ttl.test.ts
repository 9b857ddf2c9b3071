// --event-ttl: an Event lives for the TTL after its last write, as Kubernetes' etcd lease keeps it;
// then storage deletes it (no admission, no finalizers; watchers see DELETED). On a real SQLite store
// with the registry's own watch cache, and the clock moved by the test.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, before, describe, it} from 'node:test'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import {event as eventDeclaration} from '../../src/api/core/event.js'
import {EventExpiry, lastWritten} from '../../src/apiserver/event-ttl.js'
import {ResourceRegistry} from '../../src/apiserver/registry.js'
import {openSqliteStore, type SqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'
import {until} from '../support/until.js'

const HOUR = 60 * 60_000

describe('events expire an --event-ttl after their last write', () => {
  let dir: string
  let store: SqliteStore
  let events: ResourceRegistry
  let configMaps: ResourceRegistry
  let now = new Date('2026-01-01T00:00:00Z')

  const event = (name: string, lastTimestamp: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {name, finalizers: ['example.com/keep']},
    involvedObject: {kind: 'Pod', name: 'p', namespace: 'default'},
    reason: 'Started',
    message: 'started',
    source: {component: 'agent'},
    firstTimestamp: lastTimestamp,
    lastTimestamp,
    count: 1,
    type: 'Normal',
  })

  before(async () => {
    dir = tempDir('orch-event-ttl-')
    store = openSqliteStore({dataDir: dir})
    const deps = {store, now: () => now, namespaceOf: async (name: string) => ({metadata: {name}})}
    events = new ResourceRegistry(eventDeclaration, deps)
    configMaps = new ResourceRegistry(configMapDeclaration, deps)
    await events.cache.start()
  })
  after(async () => {
    events.cache.stop()
    await store.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it("an Event's last write is its newest timestamp: lastTimestamp, eventTime, series.lastObservedTime, creationTimestamp or a managedFields time", () => {
    assert.equal(lastWritten({lastTimestamp: '2026-01-01T00:00:05Z', metadata: {creationTimestamp: '2026-01-01T00:00:01Z'}}), Date.parse('2026-01-01T00:00:05Z'))
    assert.equal(lastWritten({eventTime: '2026-01-01T00:00:01.500000Z', series: {lastObservedTime: '2026-01-01T00:00:09.000000Z'}}), Date.parse('2026-01-01T00:00:09Z'))
    assert.equal(lastWritten({metadata: {creationTimestamp: '2026-01-01T00:00:01Z', managedFields: [{time: '2026-01-01T00:00:30Z'}]}}), Date.parse('2026-01-01T00:00:30Z'))
  })

  it('an Event not written for the TTL is deleted by the sweep, finalizers or not; one written since, and other kinds, stay', async () => {
    const context = {now}
    await events.create('default', event('stale', '2026-01-01T00:00:00Z'), {context})
    await events.create('default', event('fresh', '2026-01-01T00:00:00Z'), {context})
    await configMaps.create('default', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'kept'}}, {context})
    // 50 minutes on, "fresh" is observed again
    now = new Date(now.getTime() + 50 * 60_000)
    await events.guaranteedUpdate('default', 'fresh', (current) => ({...current, count: 2, lastTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z')}), {})
    await until('the cache has the update', () => events.cache.get(events.key('default', 'fresh'))?.object.count === 2)
    // an hour and a minute after the first write
    now = new Date(Date.parse('2026-01-01T00:00:00Z') + HOUR + 60_000)
    const expiry = new EventExpiry(store, events.cache, {ttlMs: HOUR, now: () => now})
    assert.equal(await expiry.sweep(), 1)
    assert.equal(await store.get(events.key('default', 'stale')), null, 'deleted though it has a finalizer, as a lease expiry deletes')
    assert.ok(await store.get(events.key('default', 'fresh')))
    assert.ok(await store.get(configMaps.key('default', 'kept')))
  })

  it('a write that changes none of its timestamps still renews an Event, as every write renews its lease', async () => {
    const start = Date.parse('2026-02-01T00:00:00Z')
    now = new Date(start)
    await events.create('default', event('quiet', '2026-02-01T00:00:00Z'), {context: {now}})
    const expiry = new EventExpiry(store, events.cache, {ttlMs: HOUR, now: () => now})
    expiry.start()
    try {
      now = new Date(start + 50 * 60_000)
      await events.guaranteedUpdate('default', 'quiet', (current) => ({...current, message: 'still starting'}), {})
      await until('the cache has the update', () => events.cache.get(events.key('default', 'quiet'))?.object.message === 'still starting')
      now = new Date(start + HOUR + 60_000)
      await expiry.sweep()
      assert.ok(await store.get(events.key('default', 'quiet')), 'written 11 minutes ago')
      now = new Date(start + 50 * 60_000 + HOUR + 60_000)
      await expiry.sweep()
      assert.equal(await store.get(events.key('default', 'quiet')), null)
    } finally {
      await expiry.stop()
    }
  })
})
