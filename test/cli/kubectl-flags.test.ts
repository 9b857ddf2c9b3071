// kubectl's flags of get, apply and delete that kubectl users reach for, against a real server: get
// --no-headers, -L, --sort-by, --watch-only, --output-watch-events and -o json|yaml --watch (one document per
// object); apply -o name|json|yaml, -R and -f URL; delete --dry-run, -o name, --wait and --timeout. Each
// output is the one kubectl 1.32 prints for the same command.
import assert from 'node:assert/strict'
import {mkdirSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import type {HttpMethod} from '../../src/client/index.js'
import {byteCompare, parseSortPath, sortByPath} from '../../src/cli/sort.js'
import {tempDir, type RunningOrch} from '../support/server.js'
import {apiOf, lines, orchAt, serverFlags, spawnOrch, startCliServer, type LineStream, type OrchResult} from './support.js'

const dir = tempDir('orch-cli-kubectl-flags-')

function write(name: string, text: string): string {
  const path = join(dir, name)
  mkdirSync(join(path, '..'), {recursive: true})
  writeFileSync(path, text)
  return path
}

const cmYaml = (name: string, ns: string, data: Record<string, string> = {k: 'v'}) =>
  yaml.dump({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, namespace: ns}, data})

describe('kubectl flags of orch get, apply and delete', () => {
  let server: RunningOrch
  let orch: (args: string[], input?: string) => Promise<OrchResult>
  let access: ReturnType<typeof apiOf>
  const streams: LineStream[] = []
  const api = async (method: HttpMethod, path: string, body?: unknown) => {
    const result = await access.call(method, path, body)
    assert.ok(result.status >= 200 && result.status < 300, `${method} ${path}: ${result.text}`)
    return result.json
  }
  const cm = (ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) =>
    api('POST', `/api/v1/namespaces/${ns}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels}, data})

  before(async () => {
    server = await startCliServer()
    orch = orchAt(server)
    access = apiOf(server)
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'kf'}})
    await cm('kf', 'web-10', {app: 'web', 'app.orch.io/tier': 'fe'}, {a: '1', b: '2', c: '3'})
    await cm('kf', 'web-2', {app: 'db'}, {a: '1'})
    await cm('kf', 'web-1', {}, {a: '1', b: '2'})
  })
  after(async () => {
    await Promise.all(streams.map((s) => s.stop()))
    await access.close()
    await server.cleanup()
  })

  it('get --no-headers prints the rows only, the columns as wide as the rows need (at least 6)', async () => {
    const result = await orch(['get', 'cm', '-n', 'kf', '--no-headers'])
    assert.equal(result.code, 0, result.stderr)
    const out = lines(result.stdout).map((l) => l.replace(/\d+s$/, 'AGE'))
    assert.deepEqual(out, ['web-1    2     AGE', 'web-10   3     AGE', 'web-2    1     AGE'])
    const many = await orch(['get', 'cm,ns', '-n', 'kf', '--no-headers'])
    assert.ok(!many.stdout.includes('\n\n'), `no blank line between the tables without headers:\n${many.stdout}`)
    assert.ok(!/NAME/.test(many.stdout), many.stdout)
  })

  it('get -L KEY adds a column per label key headed by its last path segment; empty where the label is missing', async () => {
    const result = await orch(['get', 'cm', '-n', 'kf', '-L', 'app,app.orch.io/tier', '--show-labels'])
    assert.equal(result.code, 0, result.stderr)
    const out = lines(result.stdout)
    assert.match(out[0], /^NAME {5}DATA {3}AGE +APP {3}TIER {3}LABELS$/)
    // each row's cells start where their header does
    const at = (header: string) => out[0].indexOf(header)
    const cells = (line: string) => ['APP', 'TIER', 'LABELS'].map((h, i, all) => line.slice(at(h), i + 1 < all.length ? at(all[i + 1]) : undefined).trim())
    assert.deepEqual(cells(out[1]), ['', '', '<none>'])
    assert.deepEqual(cells(out[2]), ['web', 'fe', 'app.orch.io/tier=fe,app=web'], 'pairs sorted as strings, as kubectl sorts them')
    assert.deepEqual(cells(out[3]), ['db', '', 'app=db'])
    assert.match(out[1], /^web-1 {4}2 {6}\d+s +<none>$/)
    // -L repeated, and a name after it is still a name
    const repeated = await orch(['get', 'cm', '-n', 'kf', '-L', 'app', '-L', 'nope', 'web-2'])
    assert.equal(repeated.code, 0, repeated.stderr)
    assert.match(lines(repeated.stdout)[1], /^web-2 +1 +\d+s +db +$/)
  })

  it('get --sort-by orders rows by a JSONPath field: strings byte by byte as kubectl 1.32 (web-10 before web-2), missing fields first, numbers by value', async () => {
    const byName = await orch(['get', 'cm', '-n', 'kf', '--sort-by=.metadata.name', '-o', 'name'])
    assert.equal(byName.stdout, 'configmap/web-1\nconfigmap/web-10\nconfigmap/web-2\n')
    const table = await orch(['get', 'cm', '-n', 'kf', '--sort-by', '{.data.b}'])
    assert.equal(table.code, 0, table.stderr)
    assert.deepEqual(lines(table.stdout).map((l) => l.split(/\s+/)[0]), ['NAME', 'web-2', 'web-1', 'web-10'])
    const json = await orch(['get', 'cm', '-n', 'kf', '--sort-by=.metadata.labels.app', '-o', 'json'])
    assert.deepEqual(JSON.parse(json.stdout).items.map((o: any) => o.metadata.name), ['web-1', 'web-2', 'web-10'])
    const missing = await orch(['get', 'cm', '-n', 'kf', '--sort-by=.nothing'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr, 'error: couldn\'t find any field with path "{.nothing}" in the list of objects\n')
  })

  it('--sort-by helpers: paths with indexes and escaped dots, byte order', () => {
    assert.deepEqual(parseSortPath('{.status.containerStatuses[0].restartCount}'), ['status', 'containerStatuses', 0, 'restartCount'])
    assert.deepEqual(parseSortPath('.metadata.labels.app\\.orch\\.io/name'), ['metadata', 'labels', 'app.orch.io/name'])
    assert.deepEqual(['web-10', 'web-2', 'web-1', 'a'].sort(byteCompare), ['a', 'web-1', 'web-10', 'web-2'])
    assert.deepEqual(sortByPath([{n: 3}, {n: 10}, {}, {n: 1}], '.n', (o) => o), [{}, {n: 1}, {n: 3}, {n: 10}])
  })

  it('get --output-watch-events without --watch is kubectl\'s one-line usage error', async () => {
    const result = await orch(['get', 'cm', '-n', 'kf', '--output-watch-events'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: --output-watch-events option can only be used with --watch or --watch-only\n')
  })

  it('get -w --output-watch-events adds a leading EVENT column; --watch-only prints only the changes', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'kf-watch'}})
    await cm('kf-watch', 'first')
    const events = spawnOrch(['get', 'cm', '-A', '-w', '--output-watch-events', ...serverFlags(server)])
    const only = spawnOrch(['get', 'cm', '-n', 'kf-watch', '--watch-only', ...serverFlags(server)])
    streams.push(events, only)
    await events.waitFor(/^ADDED +kf-watch +first /)
    assert.match(events.lines[0], /^EVENT {6}NAMESPACE +NAME +DATA +AGE$/)
    // --watch-only prints nothing until a change; give it time to start watching
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await cm('kf-watch', 'second')
    await api('DELETE', '/api/v1/namespaces/kf-watch/configmaps/second')
    await events.waitFor(/^DELETED {4}kf-watch +second /)
    await only.waitFor(/^second /, 2)
    assert.match(only.lines[0], /^NAME +DATA +AGE$/)
    assert.ok(!only.lines.some((l) => l.startsWith('first')), only.lines.join('\n'))
    await Promise.all([events.stop(), only.stop()])
  })

  it('get -o json|yaml --watch prints each object as its own document, and --output-watch-events each event', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'kf-doc'}})
    await cm('kf-doc', 'one')
    const docs = spawnOrch(['get', 'cm', '-n', 'kf-doc', '-o', 'yaml', '-w', ...serverFlags(server)])
    const jsonEvents = spawnOrch(['get', 'cm', '-n', 'kf-doc', '-o', 'json', '-w', '--output-watch-events', ...serverFlags(server)])
    streams.push(docs, jsonEvents)
    await docs.waitFor(/^ {2}name: one$/)
    const first = await jsonEvents.waitFor(/"name":"one"/)
    assert.deepEqual(Object.keys(JSON.parse(first.line)), ['type', 'object'])
    assert.equal(JSON.parse(first.line).type, 'ADDED')
    await cm('kf-doc', 'two')
    await docs.waitFor(/^ {2}name: two$/)
    const second = await jsonEvents.waitFor(/"name":"two"/)
    assert.equal(JSON.parse(second.line).type, 'ADDED')
    const documents = yaml.loadAll(docs.lines.join('\n')) as any[]
    assert.deepEqual(documents.map((d) => `${d.kind}/${d.metadata.name}`), ['ConfigMap/one', 'ConfigMap/two'], 'no List, one document per object')
    await Promise.all([docs.stop(), jsonEvents.stop()])
  })

  it('apply -o name prints kind/name; -o json|yaml the applied objects, several in a List', async () => {
    const file = write('two.yaml', `${cmYaml('ap-a', 'kf')}---\n${cmYaml('ap-b', 'kf')}`)
    const named = await orch(['apply', '-f', file, '-o', 'name'])
    assert.equal(named.code, 0, named.stderr)
    assert.equal(named.stdout, 'configmap/ap-a\nconfigmap/ap-b\n')
    const asJson = await orch(['apply', '-f', file, '-o', 'json'])
    const list = JSON.parse(asJson.stdout)
    assert.deepEqual(Object.keys(list), ['kind', 'apiVersion', 'metadata', 'items'])
    assert.deepEqual(list.metadata, {})
    assert.deepEqual(list.items.map((o: any) => o.metadata.name), ['ap-a', 'ap-b'])
    assert.ok(list.items[0].metadata.uid, 'the objects as the server answered')
    const one = await orch(['apply', '-f', write('one.yaml', cmYaml('ap-a', 'kf')), '-o', 'yaml'])
    const object = yaml.load(one.stdout) as any
    assert.equal(object.kind, 'ConfigMap')
    assert.equal(object.metadata.name, 'ap-a')
  })

  it('apply -R reads subdirectories; without -R only the directory\'s own files', async () => {
    write('tree/top.yaml', cmYaml('tree-top', 'kf'))
    write('tree/sub/deep.yaml', cmYaml('tree-deep', 'kf'))
    const flat = await orch(['apply', '-f', join(dir, 'tree')])
    assert.equal(flat.stdout, 'configmap/tree-top created\n')
    const recursive = await orch(['apply', '-R', '-f', join(dir, 'tree')])
    assert.equal(recursive.stdout, 'configmap/tree-top unchanged\nconfigmap/tree-deep created\n')
  })

  it('apply -f URL and delete -f URL read the manifest over HTTP; a 404 is kubectl\'s one-line error', async () => {
    const http: Server = createServer((request, response) => {
      if (request.url === '/app.yaml') response.end(cmYaml('from-url', 'kf'))
      else response.writeHead(404, 'Not Found').end()
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
    try {
      const applied = await orch(['apply', '-f', `${base}/app.yaml`])
      assert.equal(applied.code, 0, applied.stderr)
      assert.equal(applied.stdout, 'configmap/from-url created\n')
      const missing = await orch(['apply', '-f', `${base}/nope.yaml`])
      assert.equal(missing.code, 1)
      assert.equal(missing.stderr, `error: unable to read URL "${base}/nope.yaml", server reported 404 Not Found, status code=404\n`)
      const deleted = await orch(['delete', '-f', `${base}/app.yaml`])
      assert.equal(deleted.stdout, 'configmap "from-url" deleted\n')
    } finally {
      await new Promise((resolve) => http.close(resolve))
    }
  })

  it('delete --dry-run=server|client says so and deletes nothing; -o name prints kind/name', async () => {
    await cm('kf', 'dry')
    const server = await orch(['delete', 'cm', 'dry', '-n', 'kf', '--dry-run=server'])
    assert.equal(server.code, 0, server.stderr)
    assert.equal(server.stdout, 'configmap "dry" deleted (server dry run)\n')
    const client = await orch(['delete', 'cm', 'dry', '-n', 'kf', '--dry-run=client'])
    assert.equal(client.stdout, 'configmap "dry" deleted (dry run)\n')
    assert.equal((await access.call('GET', '/api/v1/namespaces/kf/configmaps/dry')).status, 200, 'still there')
    const named = await orch(['delete', 'cm', 'dry', '-n', 'kf', '-o', 'name'])
    assert.equal(named.stdout, 'configmap/dry\n')
    assert.equal((await access.call('GET', '/api/v1/namespaces/kf/configmaps/dry')).status, 404)
  })

  it('delete waits until a finalized object is gone (--wait, default); --timeout ends the wait with kubectl\'s error; --wait=false returns at once', async () => {
    const finalized = (name: string) =>
      api('POST', '/api/v1/namespaces/kf/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, finalizers: ['kf.orch.io/hold']}})

    await finalized('held')
    const timedOut = await orch(['delete', 'cm', 'held', '-n', 'kf', '--timeout=1s'])
    assert.equal(timedOut.code, 1)
    assert.equal(timedOut.stdout, 'configmap "held" deleted\n')
    assert.equal(timedOut.stderr, 'error: timed out waiting for the condition on configmaps/held\n')

    const noWait = await orch(['delete', 'cm', 'held', '-n', 'kf', '--wait=false'])
    assert.equal(noWait.code, 0, noWait.stderr)

    const waiting = spawnOrch(['delete', 'cm', 'held', '-n', 'kf', ...serverFlags(server)])
    streams.push(waiting)
    await waiting.waitFor(/^configmap "held" deleted$/)
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal(waiting.child.exitCode, null, 'still waiting while the finalizer holds the object')
    const exited = new Promise<number | null>((resolve) => waiting.child.on('exit', (code) => resolve(code)))
    const released = await orch(['patch', 'cm', 'held', '-n', 'kf', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]'])
    assert.equal(released.code, 0, released.stderr)
    assert.equal(await exited, 0)
    assert.equal((await access.call('GET', '/api/v1/namespaces/kf/configmaps/held')).status, 404)
  })
})
