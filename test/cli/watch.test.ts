// `orch watch` and `orch get --watch` as child processes: one line per event, made while they run. The
// tests wait for a line that proves the watch is established (the initial ADDED of a marker object, or the
// table of the initial list) before changing anything, so no sleeps are needed.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {HttpMethod} from '../../src/client/index.js'
import {runOrch, type RunningOrch} from '../support/server.js'
import {apiOf, isolatedEnv, lines, serverFlags, spawnOrch, startCliServer, type LineStream} from './support.js'

describe('orch watch', () => {
  let server: RunningOrch
  const streams: LineStream[] = []
  let access: ReturnType<typeof apiOf>
  const api = async (method: HttpMethod, path: string, body?: unknown) => {
    const result = await access.call(method, path, body)
    assert.ok(result.status >= 200 && result.status < 300, `${method} ${path}: ${result.text}`)
    return result.json
  }
  const namespace = (name: string) => api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
  const cm = (ns: string, name: string, data: Record<string, string> = {}) =>
    api('POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data})
  const watch = (args: string[]) => {
    const stream = spawnOrch([...args, ...serverFlags(server)])
    streams.push(stream)
    return stream
  }

  before(async () => {
    server = await startCliServer()
    access = apiOf(server)
  })
  after(async () => {
    await Promise.all(streams.map((s) => s.stop()))
    await access.close()
    await server.cleanup()
  })

  it('prints one line per event: EVENT kind/name resourceVersion', async () => {
    await namespace('watch-one')
    const marker = await cm('watch-one', 'marker')
    const stream = watch(['watch', 'configmaps', '-n', 'watch-one'])
    const start = await stream.waitFor(/^ADDED configmap\/marker /)
    assert.equal(start.line, `ADDED configmap/marker ${marker.metadata.resourceVersion}`)

    const created = await cm('watch-one', 'x', {a: '1'})
    const added = await stream.waitFor(/ configmap\/x /, start.index + 1)
    assert.equal(added.line, `ADDED configmap/x ${created.metadata.resourceVersion}`)

    const updated = await api('PUT', '/api/v1/namespaces/watch-one/configmaps/x', {...created, data: {a: '2'}})
    const modified = await stream.waitFor(/^MODIFIED /, added.index + 1)
    assert.equal(modified.line, `MODIFIED configmap/x ${updated.metadata.resourceVersion}`)

    await api('DELETE', '/api/v1/namespaces/watch-one/configmaps/x')
    const deleted = await stream.waitFor(/^DELETED /, modified.index + 1)
    assert.match(deleted.line, /^DELETED configmap\/x \d+$/)

    assert.deepEqual(
      stream.lines.map((l) => l.split(' ').slice(0, 2).join(' ')),
      ['ADDED configmap/marker', 'ADDED configmap/x', 'MODIFIED configmap/x', 'DELETED configmap/x'],
      'exactly one line per event, nothing else',
    )
    await stream.stop()
    assert.equal(stream.stderr(), '')
  })

  it('with -A the namespace is a fourth field; -l filters', async () => {
    await namespace('watch-a')
    await namespace('watch-b')
    await api('POST', '/api/v1/namespaces/watch-a/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'marker-a', labels: {watch: 'me'}}})
    const stream = watch(['watch', 'cm', '-A', '-l', 'watch=me'])
    const start = await stream.waitFor(/^ADDED configmap\/marker-a \d+ watch-a$/)
    await cm('watch-b', 'unlabelled')
    const created = await api('POST', '/api/v1/namespaces/watch-b/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'labelled', labels: {watch: 'me'}}})
    const added = await stream.waitFor(/configmap\/labelled/, start.index + 1)
    assert.equal(added.line, `ADDED configmap/labelled ${created.metadata.resourceVersion} watch-b`)
    assert.ok(!stream.lines.some((l) => l.includes('unlabelled')), 'the selector leaves out unlabelled objects')
    await stream.stop()
  })

  it('-o json prints each event as one line of JSON', async () => {
    await namespace('watch-json')
    const stream = watch(['watch', 'configmaps', '-n', 'watch-json', '-o', 'json'])
    // created before or after the watch is up, the marker is its first event (initial state or change)
    const marker = await cm('watch-json', 'marker')
    const first = await stream.waitFor(() => true)
    const event = JSON.parse(first.line)
    assert.equal(event.type, 'ADDED')
    assert.equal(event.object.metadata.name, 'marker')
    assert.equal(event.object.metadata.resourceVersion, marker.metadata.resourceVersion)
    await stream.stop()
  })

  it('--timeout ends the watch with exit 0 after printing the initial state', async () => {
    const result = await runOrch(['watch', 'namespaces', '--timeout', '1', ...serverFlags(server)], {env: isolatedEnv})
    assert.equal(result.code, 0, result.stderr)
    assert.ok(lines(result.stdout).some((l) => /^ADDED namespace\/default \d+$/.test(l)), result.stdout)
  })

  it('an unknown resource type is one line, exit 1', async () => {
    const result = await runOrch(['watch', 'widgets', ...serverFlags(server)], {env: isolatedEnv})
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: the server doesn\'t have a resource type "widgets"\n')
  })

  it('get --watch prints the table, then a row per change lined up with it', async () => {
    await namespace('watch-get')
    await cm('watch-get', 'a-long-name-first', {k: 'v'})
    const stream = watch(['get', 'configmaps', '-n', 'watch-get', '--watch'])
    const row = await stream.waitFor(/^a-long-name-first /)
    assert.match(stream.lines[0], /^NAME +DATA +AGE$/)
    await cm('watch-get', 'b', {one: '1', two: '2'})
    const next = await stream.waitFor(/^b /, row.index + 1)
    assert.equal(next.line.indexOf('2'), stream.lines[0].indexOf('DATA'), 'the new row lines up with the header')
    await stream.stop()
  })
})
