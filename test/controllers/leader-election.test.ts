// Leader election for the controllers, as client-go's leaderelection with a Lease lock: one holder at
// a time, renewals, a released Lease taken over at once, an abandoned one only after its duration as
// observed, leaseTransitions counting the changes of holder. Against a real `orch server`.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {RestClient} from '../../src/client/index.js'
import {LeaderElector} from '../../src/controllers/leader-election.js'
import {createLogger} from '../../src/machinery/log.js'
import {call} from '../support/http.js'
import {findEtcdBinary, startEtcd} from '../support/etcd.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const LEASES = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases'
const logger = createLogger({write: () => undefined})

describe('controller leader election', () => {
  let server: OrchServer
  let client: RestClient
  before(async () => {
    server = await startOrchServer(['--controllers='])
    client = new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key)})
  })
  after(async () => {
    await client.close()
    await server.cleanup()
  })

  const elector = (identity: string, name: string) =>
    new LeaderElector(client, {identity, name, leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 100}, logger)

  it('one holder at a time: the first candidate creates the Lease and leads; another waits while it renews; a clean stop releases the Lease and the other takes over at once (leaseTransitions 1)', async () => {
    const leading: string[] = []
    const a = elector('a', 'handover')
    const b = elector('b', 'handover')
    await a.run(async () => {
      leading.push('a')
      return async () => void leading.push('a stopped')
    })
    assert.equal(a.isLeader, true)
    const created = (await call(server.url, 'GET', `${LEASES}/handover`)).json
    assert.equal(created.spec.holderIdentity, 'a')
    assert.equal(created.spec.leaseDurationSeconds, 2)
    assert.equal(created.spec.leaseTransitions, 0)
    assert.match(created.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    await b.run(async () => {
      leading.push('b')
      return async () => void leading.push('b stopped')
    })
    assert.equal(b.isLeader, false)
    // a keeps renewing past its lease duration: b never leads
    const firstRenew = created.spec.renewTime
    await until('a renews', async () => (await call(server.url, 'GET', `${LEASES}/handover`)).json.spec.renewTime !== firstRenew)
    assert.equal(b.isLeader, false)
    await a.stop()
    assert.deepEqual(leading, ['a', 'a stopped'])
    await until('b leads', () => b.isLeader, {timeoutMs: 5_000})
    const taken = (await call(server.url, 'GET', `${LEASES}/handover`)).json
    assert.equal(taken.spec.holderIdentity, 'b')
    assert.equal(taken.spec.leaseTransitions, 1)
    await b.stop()
    assert.deepEqual(leading, ['a', 'a stopped', 'b', 'b stopped'])
    assert.equal((await call(server.url, 'GET', `${LEASES}/handover`)).json.spec.holderIdentity, '')
  })

  it('a Lease whose holder stopped renewing without releasing it is taken over only once its duration has passed since the last renewal observed', async () => {
    const now = new Date()
    const stamp = now.toISOString().replace('Z', '000Z')
    const lease = {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'abandoned'}, spec: {holderIdentity: 'gone', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp, leaseTransitions: 3}}
    assert.equal((await call(server.url, 'POST', LEASES, lease)).status, 201)
    const b = elector('b', 'abandoned')
    const started = Date.now()
    await b.run(async () => async () => undefined)
    assert.equal(b.isLeader, false, 'not while the holder may still be renewing')
    await until('b takes over', () => b.isLeader, {timeoutMs: 5_000})
    assert.ok(Date.now() - started >= 1_000, 'only after the lease duration')
    const taken = (await call(server.url, 'GET', `${LEASES}/abandoned`)).json
    assert.equal(taken.spec.holderIdentity, 'b')
    assert.equal(taken.spec.leaseTransitions, 4)
    await b.stop()
  })

  it('a candidate that restarts under the same identity takes its own Lease back at once', async () => {
    const first = elector('same', 'restart')
    await first.run(async () => async () => undefined)
    assert.equal(first.isLeader, true)
    // gone without releasing (a crash): the next incarnation renews what it holds
    const again = elector('same', 'restart')
    await again.run(async () => async () => undefined)
    assert.equal(again.isLeader, true)
    await again.stop()
    await first.stop()
  })
})

const skipEtcd = findEtcdBinary() ? false : 'no etcd binary found; install Debian package etcd-server'

describe('orch server --leader-elect on etcd', {skip: skipEtcd, timeout: 120_000}, () => {
  it('two servers on one etcd: only the holder of orch-system/orch-controller-manager runs the controllers; when it stops it releases the Lease and the other takes over at once; on SQLite no Lease is taken', async () => {
    const etcd = await startEtcd()
    const args = ['--storage', 'etcd', '--etcd-servers', etcd.endpoint, '--controllers=namespace', '--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=200ms']
    let first: OrchServer | undefined
    let second: OrchServer | undefined
    try {
      first = await startOrchServer(args)
      second = await startOrchServer(args)
      const lease = async () => (await call(first!.url, 'GET', `${LEASES}/orch-controller-manager`)).json
      const held = await lease()
      assert.match(held.spec.holderIdentity, /^.+_[0-9a-f-]{36}$/)
      assert.match(first.output(), /became leader/)
      assert.doesNotMatch(second.output(), /became leader/)
      assert.doesNotMatch(second.output(), /controllers started/)
      await first.cleanup()
      first = undefined
      await until('the second server leads', () => /became leader/.test(second!.output()) && /controllers started/.test(second!.output()), {timeoutMs: 10_000})
      const taken = (await call(second.url, 'GET', `${LEASES}/orch-controller-manager`)).json
      assert.notEqual(taken.spec.holderIdentity, held.spec.holderIdentity)
      assert.equal(taken.spec.leaseTransitions, 1)
    } finally {
      await first?.cleanup()
      await second?.cleanup()
      await etcd.stop()
    }
    const sqlite = await startOrchServer(['--controllers=namespace'])
    try {
      assert.match(sqlite.output(), /controllers started/)
      assert.equal((await call(sqlite.url, 'GET', `${LEASES}/orch-controller-manager`)).status, 404)
    } finally {
      await sqlite.cleanup()
    }
  })
})
