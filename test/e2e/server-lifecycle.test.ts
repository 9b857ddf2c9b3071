// `orch server` as a user runs it: health endpoints, clean shutdown, and bad stores refused.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {call, openWatch} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type RunningOrch} from '../support/server.js'

describe('orch server lifecycle', () => {
  const started: RunningOrch[] = []
  after(async () => {
    for (const s of started) await s.cleanup()
  })

  it('serves /healthz, /livez and /readyz once the store and caches are synced', async () => {
    const server = await startOrchServer()
    started.push(server)
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const response = await call(server.url, 'GET', path)
      assert.equal(response.status, 200, path)
      assert.equal(response.text, 'ok')
    }
  })

  // (how fast is a benchmark's question, not a test's: a loaded CI machine must not fail it)
  it('on an empty data dir it starts and reports how long it took to be ready (readyInMs in its serving line)', async () => {
    const server = await startOrchServer()
    started.push(server)
    const match = /readyInMs=(\d+)/.exec(server.logs())
    assert.ok(match, server.logs())
    assert.ok(Number(match[1]) >= 0)
  })

  it('SIGTERM shuts it down cleanly with exit code 0 and a committed store', async () => {
    const server = await startOrchServer()
    const created = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'kept'}, data: {a: 'b'}})
    assert.equal(created.status, 201)
    assert.equal(await server.stop('SIGTERM'), 0)
    assert.match(server.logs(), /shutting down signal=SIGTERM/)
    const again = await startOrchServer([], {dataDir: server.dataDir})
    started.push(again)
    const got = await call(again.url, 'GET', '/api/v1/namespaces/default/configmaps/kept')
    assert.equal(got.status, 200)
    assert.deepEqual(got.json.data, {a: "b"})
  })

  it('SIGTERM with watches open: they end cleanly (no ERROR event) and the server exits at once, not when the watches time out', async () => {
    const server = await startOrchServer()
    const watch = await openWatch(server.url, '/api/v1/namespaces?watch=1&resourceVersion=0')
    assert.equal(watch.status, 200)
    await watch.waitFor(1)
    const started = Date.now()
    assert.equal(await server.stop('SIGTERM'), 0)
    await watch.ended
    assert.ok(Date.now() - started < 8_000, `stopped after ${Date.now() - started} ms`)
    assert.ok(watch.events.every((e) => e.type !== 'ERROR'), JSON.stringify(watch.events.map((e) => e.type)))
  })

  it('SIGINT shuts it down cleanly too', async () => {
    const server = await startOrchServer()
    assert.equal(await server.stop('SIGINT'), 0)
  })

  it('two servers on one data dir: the second refuses with a one-line error naming state.db', async () => {
    const first = await startOrchServer()
    started.push(first)
    const second = await runOrch(['server', '--data-dir', first.dataDir, '--port', '0'])
    assert.equal(second.code, 1)
    const lines = second.stderr.trim().split('\n')
    assert.equal(lines.length, 1, second.stderr)
    assert.match(lines[0], /state\.db is locked: another orch server is using this data dir/)
    const still = await call(first.url, 'GET', '/readyz')
    assert.equal(still.status, 200)
  })

  it('a corrupt state.db is refused with a one-line error naming the file and is left untouched', async () => {
    const dataDir = tempDir()
    const path = join(dataDir, 'state.db')
    const garbage = Buffer.from('this is not an sqlite database, just some bytes '.repeat(100))
    writeFileSync(path, garbage)
    const result = await runOrch(['server', '--data-dir', dataDir, '--port', '0'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(result.stderr.includes(path), result.stderr)
    assert.deepEqual(readFileSync(path), garbage)
  })

  it('a state.db emptied to 0 bytes is refused as not a valid orch store (not taken for a new, empty cluster) and left as it is', async () => {
    const dataDir = tempDir()
    const path = join(dataDir, 'state.db')
    writeFileSync(path, '')
    const result = await runOrch(['server', '--data-dir', dataDir, '--port', '0'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(result.stderr.includes(`${path} is not a valid orch store (the file is empty)`), result.stderr)
    assert.equal(readFileSync(path).length, 0)
  })

  it('an unwritable data dir is refused with a one-line error naming the path', async () => {
    const base = tempDir()
    const file = join(base, 'a-file')
    writeFileSync(file, 'x')
    const result = await runOrch(['server', '--data-dir', join(file, 'data'), '--port', '0'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(result.stderr.includes(join(file, 'data')), result.stderr)
  })

  it('an unreachable etcd is refused with a one-line error naming the endpoint', async () => {
    const dir = tempDir()
    mkdirSync(dir, {recursive: true})
    const result = await runOrch(['server', '--storage', 'etcd', '--etcd-servers', 'http://127.0.0.1:1', '--port', '0', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(result.stderr.includes('http://127.0.0.1:1'), result.stderr)
  })
})

describe('feature gates', () => {
  it('"--feature-gates with the seeds\' gates and defaults (alpha off, beta and stable on)": APIResponseCompression=false turns gzip off', async () => {
    const server = await startOrchServer(['--feature-gates', 'APIResponseCompression=false'])
    try {
      const {rawGet} = await import('../support/http.js')
      const result = await rawGet(server.url, '/api/v1/namespaces', {'Accept-Encoding': 'gzip'})
      assert.equal(result.status, 200)
      assert.equal(result.headers['content-encoding'], undefined)
    } finally {
      await server.cleanup()
    }
  })

  it('an unknown feature gate is a one-line error and exit 2', async () => {
    const result = await runOrch(['server', '--feature-gates', 'NoSuchGate=true', '--port', '0', '--data-dir', tempDir()])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /^error: unrecognized feature gate: NoSuchGate/)
    assert.equal(result.stderr.trim().split('\n').length, 1)
  })
})
