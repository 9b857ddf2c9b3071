// The node port allocator on a real SQLite store: --service-node-port-range parsing (apimachinery's
// PortRange), operations (revert, deferred release, dry run) and the node port repair loop's runs.
import assert from 'node:assert/strict'
import {rmSync} from 'node:fs'
import {after, describe, it} from 'node:test'
import {NODE_PORT_PREFIX, NodePortAllocator, parsePortRange, PortAllocationError} from '../../src/apiserver/service-nodeports.js'
import {NodePortRepair, NUM_REPAIRS_BEFORE_LEAK_CLEANUP} from '../../src/apiserver/service-repair-nodeports.js'
import {createLogger} from '../../src/machinery/log.js'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'

const owner = (name: string) => ({namespace: 'default', name, uid: `uid-${name}`})
const service = (name: string, spec: any) => ({metadata: {namespace: 'default', name, uid: `uid-${name}`}, spec})

describe('--service-node-port-range parsing (PortRange.Set)', () => {
  it('FIRST-LAST, FIRST+COUNT and one port', () => {
    assert.deepEqual(parsePortRange('30000-32767'), {base: 30000, size: 2768})
    assert.deepEqual(parsePortRange('30000+2767'), {base: 30000, size: 2768})
    assert.deepEqual(parsePortRange(' 31000 '), {base: 31000, size: 1})
  })
  it('"end port cannot be less than start port", "cannot be greater than 65535", not a number', () => {
    assert.throws(() => parsePortRange('32767-30000'), /end port cannot be less than start port: 32767-30000/)
    assert.throws(() => parsePortRange('60000-70000'), /the port range cannot be greater than 65535/)
    assert.throws(() => parsePortRange('abc'), /strconv.Atoi: parsing "abc": invalid syntax/)
    assert.throws(() => parsePortRange('1-2+3'), /unable to parse port range/)
  })
})

describe('NodePortAllocator', () => {
  const dirs: string[] = []
  after(() => {
    for (const d of dirs) rmSync(d, {recursive: true, force: true})
  })
  function open(now = () => new Date()) {
    const dir = tempDir('orch-nodeports-')
    dirs.push(dir)
    const store = openSqliteStore({dataDir: dir})
    return {store, allocator: new NodePortAllocator(store, {base: 30000, size: 10}, now)}
  }

  it('revert gives back what an operation took; commit releases what it deferred, only for its owner', async () => {
    const {store, allocator} = open()
    const op = allocator.operation(owner('a'), false)
    await op.allocate(30001)
    const next = await op.allocateNext()
    assert.ok(next >= 30000 && next < 30010 && next !== 30001)
    await assert.rejects(allocator.operation(owner('b'), false).allocate(30001), (e: Error) => e instanceof PortAllocationError && /already allocated/.test(e.message))
    await op.revert()
    assert.deepEqual([...(await allocator.claims()).keys()], [])
    const keep = allocator.operation(owner('a'), false)
    await keep.allocate(30002)
    await keep.commit()
    const other = allocator.operation(owner('b'), false)
    other.releaseDeferred(30002)
    await other.commit()
    assert.deepEqual([...(await allocator.claims()).keys()], [30002])
    await store.close()
  })

  it('a dry run checks but takes nothing, and does not hand one port out twice', async () => {
    const {store, allocator} = open()
    const dry = allocator.operation(owner('a'), true)
    await dry.allocate(30003)
    await assert.rejects(dry.allocate(30003), /already allocated/)
    const ports = new Set([await dry.allocateNext(), await dry.allocateNext()])
    assert.equal(ports.size, 2)
    assert.equal((await allocator.claims()).size, 0)
    await assert.rejects(dry.allocate(40000), /not in the valid range. The range of valid ports is 30000-30009/)
    await store.close()
  })

  it('automatic ports fill the range, then "range is full"', async () => {
    const {store, allocator} = open()
    const op = allocator.operation(owner('a'), false)
    const got = new Set<number>()
    for (let i = 0; i < 10; i++) got.add(await op.allocateNext())
    assert.equal(got.size, 10)
    await assert.rejects(op.allocateNext(), /range is full/)
    await store.close()
  })

  it('repair claims what stored Services hold (PortNotAllocated); a claim nobody holds is freed on the third run in a row that sees it leaked, a young one never', async () => {
    let clock = Date.parse('2025-01-01T00:00:00Z')
    const {store, allocator} = open(() => new Date(clock))
    await allocator.operation(owner('leaked'), false).allocate(30005)
    clock += 120_000
    await allocator.operation(owner('in-flight'), false).allocate(30006)
    await store.create(`${NODE_PORT_PREFIX}30007`, Buffer.from('not json'))
    const services = [
      service('np', {type: 'NodePort', ports: [{port: 80, nodePort: 30001}, {port: 81, nodePort: 30002}]}),
      service('lb', {type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30003, ports: [{port: 80, nodePort: 30004}]}),
    ]
    const events: string[] = []
    const repair = new NodePortRepair({
      allocator,
      services: {list: async () => ({items: services, revision: 0}), get: async (_ns, name) => services.find((s) => s.metadata.name === name)},
      events: {warning: async (o, reason, action, note) => void events.push(`${o.metadata?.name} ${reason} ${action}: ${note}`)},
      logger: createLogger({write: () => {}}),
      now: () => new Date(clock),
      graceMs: 60_000,
    })
    const ports = async () => [...(await allocator.claims()).keys()].sort()
    await repair.runOnce()
    assert.deepEqual(await ports(), [30001, 30002, 30003, 30004, 30005, 30006, 30007])
    assert.equal((await allocator.claims()).get(30003)?.claim?.uid, 'uid-lb')
    assert.deepEqual(events.sort(), [30001, 30002].map((p) => `np PortNotAllocated PortAllocation: Port ${p} is not allocated; repairing`).concat(
      [30003, 30004].map((p) => `lb PortNotAllocated PortAllocation: Port ${p} is not allocated; repairing`)).sort())
    await repair.runOnce()
    assert.deepEqual(await ports(), [30001, 30002, 30003, 30004, 30005, 30006, 30007])
    await repair.runOnce()
    assert.deepEqual(await ports(), [30001, 30002, 30003, 30004, 30006])
    assert.equal(NUM_REPAIRS_BEFORE_LEAK_CLEANUP, 3)
    await store.close()
  })

  it('repair: a port two Services hold stays with the one its claim names (PortAlreadyAllocated on the other); one out of range is PortOutOfRange', async () => {
    const {store, allocator} = open()
    await allocator.operation(owner('b'), false).allocate(30001)
    const services = [service('a', {type: 'NodePort', ports: [{port: 80, nodePort: 30001}]}), service('b', {type: 'NodePort', ports: [{port: 80, nodePort: 30001}]}), service('c', {type: 'NodePort', ports: [{port: 80, nodePort: 40000}]})]
    const events: string[] = []
    const repair = new NodePortRepair({
      allocator,
      services: {list: async () => ({items: services, revision: 0}), get: async (_ns, name) => services.find((s) => s.metadata.name === name)},
      events: {warning: async (o, reason, _action, note) => void events.push(`${o.metadata?.name} ${reason}: ${note}`)},
      logger: createLogger({write: () => {}}),
      now: () => new Date(),
      graceMs: 60_000,
    })
    await repair.runOnce()
    assert.deepEqual(events, [
      'a PortAlreadyAllocated: Port 30001 was assigned to multiple services; please recreate service',
      'c PortOutOfRange: Port 40000 is not within the port range 30000-30009; please recreate service',
    ])
    assert.equal((await allocator.claims()).get(30001)?.claim?.uid, 'uid-b')
    await store.close()
  })
})
