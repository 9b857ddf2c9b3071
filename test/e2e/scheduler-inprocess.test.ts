// The scheduler run in this process against a real `orch server --controllers=` (so a test can make
// the API fail under it), and the CLI views of its work: `orch get pods -o wide` and `orch describe pod`.
import assert from 'node:assert/strict'
import {after, afterEach, before, describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {configFromKubeconfig, loadKubeconfig, RestClient, type CallOptions, type ResourceLocator} from '../../src/client/index.js'
import {Scheduler} from '../../src/controllers/scheduler/scheduler.js'
import {silentLogger} from '../../src/machinery/log.js'
import {runOrch, startOrchServer, type OrchServer} from '../support/server.js'
import {Cluster, pod} from './scheduler-support.js'

const TIMEOUT = {timeout: 60_000}

/** A client whose first `failures` bindings fail as a dropped connection would. */
class FlakyBindings extends RestClient {
  failures = 0
  override create<T = AnyObject>(locator: ResourceLocator, body: unknown, options?: CallOptions): Promise<T> {
    if (locator.subresource === 'binding' && this.failures > 0) {
      this.failures--
      return Promise.reject(new Error('socket hang up (injected)'))
    }
    return super.create<T>(locator, body, options)
  }
}

describe('scheduler in process', () => {
  let server: OrchServer
  let cluster: Cluster
  let client: FlakyBindings
  let scheduler: Scheduler
  let nodes: string[] = []
  const namespaces: string[] = []

  before(async () => {
    server = await startOrchServer(['--controllers='])
    cluster = new Cluster(server.url)
    client = new FlakyBindings({...configFromKubeconfig(loadKubeconfig(server.kubeconfig)), namespace: 'default'}, {connections: 32})
    scheduler = new Scheduler(client, silentLogger)
    await scheduler.start()
  })
  after(async () => {
    await scheduler.stop()
    await client.close()
    await server.cleanup()
  })
  afterEach(async () => {
    await cluster.clean(nodes, namespaces)
    nodes = []
  })

  async function setup(ns: string, ...names: string[]): Promise<string> {
    namespaces.push(await cluster.namespace(ns))
    nodes.push(...names)
    return ns
  }

  it('a failed binding is retried after a back-off: FailedScheduling "binding rejected: ...", then bound', TIMEOUT, async () => {
    const ns = await setup('flaky', 'flaky-node')
    await cluster.createNode('flaky-node')
    client.failures = 1
    const failuresBefore = scheduler.stats.bindFailures
    await cluster.createPod(ns, pod('retried'))
    assert.deepEqual(await cluster.waitForBound(ns, ['retried']), {retried: 'flaky-node'})
    assert.equal(scheduler.stats.bindFailures - failuresBefore, 1)
    const failed = await cluster.waitForEvent(ns, 'retried', 'FailedScheduling')
    assert.equal(failed.message, 'binding rejected: socket hang up (injected)')
    await cluster.waitForEvent(ns, 'retried', 'Scheduled')
  })

  it('pods placed while their bindings are in flight count at once: 1-cpu pods over 10 nodes of 4 cpu fill them exactly', TIMEOUT, async () => {
    const names = Array.from({length: 10}, (_, i) => `fill-${i}`)
    const ns = await setup('fill', ...names)
    for (const name of names) await cluster.createNode(name, {allocatable: {cpu: '4', memory: '16Gi', pods: '110'}})
    const pods = Array.from({length: 41}, (_, i) => `p-${String(i).padStart(2, '0')}`)
    await Promise.all(pods.map((name) => cluster.createPod(ns, pod(name, {requests: {cpu: '1'}}))))
    const bound = await cluster.waitUntil(
      `/api/v1/namespaces/${ns}/pods`,
      (items) => {
        const placed = items.filter((p) => p.spec.nodeName)
        const refused = items.filter((p) => p.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'))
        return placed.length === 40 && refused.length === 1 ? placed : undefined
      },
      '40 bound and 1 unschedulable',
    )
    const perNode = new Map<string, number>()
    for (const p of bound) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1)
    assert.deepEqual([...perNode.values()], Array(10).fill(4))
  })

  describe('CLI', () => {
    const ns = 'cli'
    const orch = (args: string[]) => runOrch(args, {env: server.cliEnv})

    before(async () => {
      await cluster.namespace(ns)
      await cluster.createNode('cli-node', {allocatable: {cpu: '1', memory: '1Gi', pods: '10'}, taints: [{key: 'team', value: 'blue', effect: 'NoSchedule'}]})
      await cluster.createPod(ns, pod('placed', {labels: {app: 'web'}, requests: {cpu: '100m'}, spec: {tolerations: [{key: 'team', operator: 'Equal', value: 'blue', effect: 'NoSchedule'}]}}))
      await cluster.createPod(ns, pod('stuck', {requests: {cpu: '2'}, spec: {nodeSelector: {disk: 'ssd'}}}))
      await cluster.waitForBound(ns, ['placed'])
      await cluster.waitForEvent(ns, 'stuck', 'FailedScheduling')
    })

    it('orch get pods -o wide shows kubectl\'s wide columns, NODE among them', TIMEOUT, async () => {
      const result = await orch(['get', 'pods', '-n', ns, '-o', 'wide'])
      assert.equal(result.code, 0, result.stderr)
      const [header, ...rows] = result.stdout.trimEnd().split('\n')
      assert.deepEqual(header!.split(/\s{2,}/), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'])
      const cells = Object.fromEntries(rows.map((row) => [row.split(/\s+/)[0], row.split(/\s{2,}/)]))
      assert.equal(cells.placed![6], 'cli-node')
      assert.equal(cells.stuck![2], 'Pending')
      assert.equal(cells.stuck![6], '<none>')
    })

    it('orch describe pod NAME -n NS shows the pod and the events about it: why it is Pending', TIMEOUT, async () => {
      const result = await orch(['describe', 'pod', 'stuck', '-n', ns])
      assert.equal(result.code, 0, result.stderr)
      const out = result.stdout
      assert.match(out, /^Name: +stuck$/m)
      assert.match(out, /^Namespace: +cli$/m)
      assert.match(out, /^Node: +<none>$/m)
      assert.match(out, /^Status: +Pending$/m)
      assert.match(out, /^ {6}cpu: +2$/m)
      assert.match(out, /^ {2}PodScheduled +False $/m)
      assert.match(out, /^Node-Selectors: +disk=ssd$/m)
      assert.match(out, /^Events:\n {2}Type +Reason +Age +From +Message\n {2}---- +------ +---- +---- +-------\n/m)
      assert.match(out, /^ {2}Warning +FailedScheduling +\S+ +orch-scheduler +0\/1 nodes are available: 1 node\(s\) had untolerated taint \{team: blue\}\.$/m)

      const placed = await orch(['describe', 'pods', 'placed', '-n', ns])
      assert.equal(placed.code, 0, placed.stderr)
      assert.match(placed.stdout, /^Node: +cli-node$/m)
      assert.match(placed.stdout, /^Labels: +app=web$/m)
      assert.match(placed.stdout, /^Tolerations: +team=blue:NoSchedule$/m)
      assert.match(placed.stdout, new RegExp(`^ {2}Normal +Scheduled +\\S+ +orch-scheduler +Successfully assigned ${ns}/placed to cli-node$`, 'm'))

      const missing = await orch(['describe', 'pod', 'nobody', '-n', ns])
      assert.equal(missing.code, 1)
      assert.equal(missing.stderr, 'error: pods "nobody" not found\n')
    })
  })
})
