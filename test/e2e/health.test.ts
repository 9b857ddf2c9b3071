// The health endpoints of `orch server`, as Kubernetes serves them (k8s.io/apiserver/pkg/server/healthz):
// /healthz, /livez, /readyz with ?verbose and ?exclude, one check at /livez/NAME, a failing check a 500
// with the reason withheld, and /readyz failing through --shutdown-delay-duration. The store checks
// run against the real store: SQLite on disk, and a real etcd that the test stops.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call} from '../support/http.js'
import {startEtcd, type RunningEtcd} from '../support/etcd.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const MONITOR_TOKEN = 'monitor-token-0123456789'
const PLAIN_TOKEN = 'plain-token-0123456789'

describe('health endpoints (embedded store)', () => {
  let server: OrchServer
  before(async () => {
    const tokens = join(tempDir('orch-health-tokens-'), 'tokens.csv')
    writeFileSync(tokens, `${MONITOR_TOKEN},prometheus,uid-prom,"system:monitoring"\n${PLAIN_TOKEN},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--token-auth-file', tokens])
  })
  after(() => server.cleanup())

  it('"?verbose" lists every check ("[+]ping ok") and ends "livez check passed"; /healthz runs the same checks', async () => {
    const livez = await call(server.url, 'GET', '/livez?verbose')
    assert.equal(livez.status, 200)
    assert.equal(livez.text, '[+]ping ok\n[+]sqlite ok\nlivez check passed\n')
    assert.equal(livez.headers['content-type'], 'text/plain; charset=utf-8')
    assert.equal(livez.headers['x-content-type-options'], 'nosniff')
    const healthz = await call(server.url, 'GET', '/healthz?verbose')
    assert.equal(healthz.text, '[+]ping ok\n[+]sqlite ok\nhealthz check passed\n')
  })

  it('/readyz adds the store readiness, informer-sync and shutdown checks', async () => {
    const readyz = await call(server.url, 'GET', '/readyz?verbose=1')
    assert.equal(readyz.status, 200)
    assert.equal(readyz.text, '[+]ping ok\n[+]sqlite ok\n[+]sqlite-readiness ok\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n')
  })

  it('without ?verbose a passing endpoint answers "ok", to anonymous callers too', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const response = await call(server.url, 'GET', path, undefined, {}, {as: 'anonymous'})
      assert.deepEqual([response.status, response.text], [200, 'ok'], path)
    }
  })

  it('"?exclude=NAME" skips a check ("[+]shutdown excluded: ok"); a name matching none gets "warn: some health checks cannot be excluded"', async () => {
    const response = await call(server.url, 'GET', '/readyz?verbose&exclude=shutdown&exclude=etcd&exclude=bogus')
    assert.equal(response.status, 200)
    assert.equal(
      response.text,
      '[+]ping ok\n[+]sqlite ok\n[+]sqlite-readiness ok\n[+]informer-sync ok\n[+]shutdown excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "bogus","etcd"\nreadyz check passed\n',
    )
  })

  it('/livez/NAME and /readyz/NAME run one check: "ok"; a check the endpoint does not have is 404', async () => {
    for (const path of ['/livez/ping', '/livez/sqlite', '/healthz/sqlite', '/readyz/sqlite-readiness', '/readyz/informer-sync', '/readyz/shutdown']) {
      const response = await call(server.url, 'GET', path)
      assert.deepEqual([response.status, response.text], [200, 'ok'], path)
    }
    for (const path of ['/livez/shutdown', '/livez/etcd', '/livez/', '/readyz/nope']) {
      const response = await call(server.url, 'GET', path)
      assert.equal(response.status, 404, path)
      assert.equal(response.json?.kind, 'Status', path)
    }
  })

  it('the individual checks are for system:monitoring (its default ClusterRole), not for every user', async () => {
    const monitor = await call(server.url, 'GET', '/livez/sqlite', undefined, {}, {as: {token: MONITOR_TOKEN}})
    assert.deepEqual([monitor.status, monitor.text], [200, 'ok'])
    const plain = await call(server.url, 'GET', '/livez/sqlite', undefined, {}, {as: {token: PLAIN_TOKEN}})
    assert.equal(plain.status, 403)
    const plainRoot = await call(server.url, 'GET', '/livez?verbose', undefined, {}, {as: {token: PLAIN_TOKEN}})
    assert.equal(plainRoot.status, 200)
  })
})

describe('shutdown', () => {
  it('"--shutdown-delay-duration": after SIGTERM /readyz fails ("[-]shutdown failed: reason withheld") while everything else is still served; a second signal exits at once with status 1', async () => {
    // long enough that the requests below are surely inside it; the second signal ends it
    const server = await startOrchServer(['--shutdown-delay-duration=60s'])
    try {
      server.child.kill('SIGTERM')
      await server.waitForLog(/shutting down/)
      const readyz = await call(server.url, 'GET', '/readyz?verbose')
      assert.equal(readyz.status, 500)
      assert.equal(
        readyz.text,
        '[+]ping ok\n[+]sqlite ok\n[+]sqlite-readiness ok\n[+]informer-sync ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n',
      )
      // a failing endpoint is verbose without being asked
      assert.equal((await call(server.url, 'GET', '/readyz')).text, readyz.text)
      const shutdown = await call(server.url, 'GET', '/readyz/shutdown')
      assert.deepEqual([shutdown.status, shutdown.text], [500, 'internal server error: process is shutting down\n'])
      assert.deepEqual([(await call(server.url, 'GET', '/livez')).status, (await call(server.url, 'GET', '/livez')).text], [200, 'ok'])
      const created = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'late'}})
      assert.equal(created.status, 201)
      const started = Date.now()
      assert.equal(await server.stop('SIGINT'), 1)
      assert.ok(Date.now() - started < 10_000, `exited after ${Date.now() - started} ms`)
      assert.match(server.logs(), /second signal: exiting now/)
    } finally {
      await server.cleanup()
    }
  })

  it('without a delay, SIGTERM stops the server at once with status 0', async () => {
    const server = await startOrchServer()
    try {
      assert.equal(await server.stop('SIGTERM'), 0)
    } finally {
      await server.cleanup()
    }
  })
})

describe('health endpoints (etcd)', () => {
  let etcd: RunningEtcd
  let server: OrchServer
  before(async () => {
    etcd = await startEtcd()
    server = await startOrchServer(['--storage', 'etcd', '--etcd-servers', etcd.endpoint])
  })
  after(async () => {
    await server?.cleanup()
    await etcd?.stop()
  })

  it('the store check is named "etcd" and reads from etcd: "[+]etcd ok", then "[-]etcd failed: reason withheld" (500) once etcd is gone', async () => {
    const healthy = await call(server.url, 'GET', '/livez?verbose')
    assert.equal(healthy.text, '[+]ping ok\n[+]etcd ok\nlivez check passed\n')
    await etcd.stop()
    const livez = await call(server.url, 'GET', '/livez')
    assert.equal(livez.status, 500)
    assert.equal(livez.text, '[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n')
    const one = await call(server.url, 'GET', '/livez/etcd')
    assert.equal(one.status, 500)
    assert.match(one.text, /^internal server error: .+\n$/)
    const readyz = await call(server.url, 'GET', '/readyz?verbose')
    assert.equal(readyz.status, 500)
    assert.match(readyz.text, /\[-\]etcd failed: reason withheld\n\[-\]etcd-readiness failed: reason withheld\n/)
  })
})
