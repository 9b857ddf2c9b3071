// bench/scheduler: `npm run bench:scheduler` (add `-- --quick` for 100 nodes and 1,000 pods). Pods
// scheduled per second with 1,000 nodes and 10,000 pending pods (goal: >= 500 pods/s), against two
// baselines measured in the same run:
//   placement  the scheduler's filter + score + assume loop in process over the same nodes and pods,
//              with no API at all: what the algorithm alone costs;
//   bindings   bare POST pods/{name}/binding writes (64 at once, round-robin over the nodes) with no
//              scheduler: what the server's writes alone cost.
// The scheduler under test is the real one (src/controllers/scheduler) run in this process against an
// `orch server --controllers=` child (so the server and the scheduler each have a core, as
// kube-scheduler is a process of its own), timed from the start of its scheduling loop (informers
// synced) until every pod is bound; then the same again with the scheduler inside the server
// (`--controllers=scheduler`, restarted on the same data dir over another 10,000 pending pods), timed
// from the server's "controllers started" log line (informers synced) until a watch has seen every
// pod bound.
import {availableParallelism, loadavg} from 'node:os'
import type {AnyObject} from '../src/api/types.js'
import {configFromKubeconfig, loadKubeconfig, RestClient} from '../src/client/index.js'
import {SchedulerCache} from '../src/controllers/scheduler/cache.js'
import {podInfoOf} from '../src/controllers/scheduler/info.js'
import {Placer} from '../src/controllers/scheduler/placement.js'
import {Scheduler} from '../src/controllers/scheduler/scheduler.js'
import {silentLogger} from '../src/machinery/log.js'
import {openWatch} from '../test/support/http.js'
import {startOrchServer, type OrchServer} from '../test/support/server.js'
import {table} from './report.js'

const QUICK = process.argv.includes('--quick')
const NODES = QUICK ? 100 : 1_000
const PODS = QUICK ? 1_000 : 10_000
const BASELINE_BINDINGS = QUICK ? 500 : 2_000
/** pods per owner: the pods come in sets (like StatefulSets) so spreading has work to do */
const SET_SIZE = 10
const WRITERS = 32
/** the scheduler run in this process serves only these pods; the server's own serves the rest */
const BENCH_SCHEDULER = 'bench-scheduler'

function nodeObject(i: number): any {
  return {apiVersion: 'v1', kind: 'Node', metadata: {name: `node-${String(i).padStart(4, '0')}`, labels: {zone: `zone-${i % 3}`}}}
}

function nodeStatus(node: AnyObject): AnyObject {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
  const resources = {cpu: '32', memory: '128Gi', pods: '110'}
  return {
    ...node,
    status: {capacity: resources, allocatable: resources, conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady', lastHeartbeatTime: now, lastTransitionTime: now}]},
  }
}

function podObject(namespace: string, i: number, schedulerName?: string): any {
  const set = Math.floor(i / SET_SIZE)
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${String(i).padStart(5, '0')}`,
      namespace,
      labels: {app: `set-${set}`},
      ownerReferences: [{apiVersion: 'apps/v1', kind: 'StatefulSet', name: `set-${set}`, uid: `00000000-0000-4000-8000-${String(set).padStart(12, '0')}`, controller: true}],
    },
    spec: {
      ...(schedulerName ? {schedulerName} : {}),
      containers: [{name: 'app', image: 'registry.example/app:1', resources: {requests: {cpu: '100m', memory: '128Mi'}}}],
    },
  }
}

/** Runs fn(0..count-1) with `writers` at a time. */
async function inParallel(count: number, writers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({length: writers}, async () => {
      while (next < count) await fn(next++)
    }),
  )
}

function clientOf(server: OrchServer, connections: number): RestClient {
  return new RestClient({...configFromKubeconfig(loadKubeconfig(server.kubeconfig)), namespace: 'default'}, {connections, userAgent: 'bench-scheduler'})
}

/** The pure placement loop: filters, scores and assume, over in-memory nodes and pods. */
function placementBaseline(): {ms: number; placed: number} {
  const cache = new SchedulerCache()
  for (let i = 0; i < NODES; i++) cache.setNode(nodeStatus(nodeObject(i)))
  const pods = Array.from({length: PODS}, (_, i) => {
    const pod = podObject('bench', i)
    pod.metadata.uid = `uid-${i}`
    return podInfoOf(pod)
  })
  const placer = new Placer(cache)
  const started = performance.now()
  let placed = 0
  for (const pod of pods) {
    const result = placer.place(pod)
    if ('node' in result) {
      cache.assume(pod, result.node)
      placed++
    }
  }
  return {ms: performance.now() - started, placed}
}

async function createCluster(client: RestClient): Promise<{podMs: number}> {
  await inParallel(NODES, WRITERS, async (i) => {
    const node = await client.create<any>({group: '', version: 'v1', resource: 'nodes'}, nodeObject(i))
    await client.update({group: '', version: 'v1', resource: 'nodes', name: node.metadata.name, subresource: 'status'}, nodeStatus(node))
  })
  for (const name of ['bench', 'baseline', 'bench-in-server']) {
    await client.create({group: '', version: 'v1', resource: 'namespaces'}, {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
  }
  const started = performance.now()
  await inParallel(PODS, WRITERS, (i) => client.create({group: '', version: 'v1', resource: 'pods', namespace: 'bench'}, podObject('bench', i, BENCH_SCHEDULER)))
  const podMs = performance.now() - started
  // pods for the in-server run, and for the bare bindings (another scheduler's, so no scheduler takes them)
  await inParallel(PODS, WRITERS, (i) => client.create({group: '', version: 'v1', resource: 'pods', namespace: 'bench-in-server'}, podObject('bench-in-server', i)))
  await inParallel(BASELINE_BINDINGS, WRITERS, (i) =>
    client.create({group: '', version: 'v1', resource: 'pods', namespace: 'baseline'}, podObject('baseline', i, 'nobody')),
  )
  return {podMs}
}

async function bareBindings(client: RestClient): Promise<number> {
  const started = performance.now()
  await inParallel(BASELINE_BINDINGS, 64, (i) => {
    const name = podObject('baseline', i).metadata.name
    return client.create(
      {group: '', version: 'v1', resource: 'pods', namespace: 'baseline', name, subresource: 'binding'},
      {apiVersion: 'v1', kind: 'Binding', metadata: {name, namespace: 'baseline'}, target: {kind: 'Node', name: nodeObject(i % NODES).metadata.name}},
    )
  })
  return performance.now() - started
}

async function unboundIn(client: RestClient, namespace: string): Promise<number> {
  const list = await client.listAll({group: '', version: 'v1', resource: 'pods', namespace}, {fieldSelector: 'spec.nodeName='})
  return list.items.length
}

async function schedulerInBench(client: RestClient): Promise<{syncMs: number; ms: number; stats: Scheduler['stats']; perNode: number[]; eventsDropped: number}> {
  const scheduler = new Scheduler(client, silentLogger, {schedulerName: BENCH_SCHEDULER})
  const started = performance.now()
  await scheduler.start()
  const synced = performance.now()
  while (scheduler.stats.scheduled < PODS) await new Promise((resolve) => setTimeout(resolve, 10))
  const ms = performance.now() - synced
  const perNode = scheduler.cache.nodes().map((n) => [...n.pods.keys()].filter((key) => key.startsWith('bench/')).length)
  const eventsDropped = scheduler.eventsDropped()
  await scheduler.stop()
  return {syncMs: synced - started, ms, stats: scheduler.stats, perNode, eventsDropped}
}

/** Restarts the server with the scheduler inside; times "controllers started" to the last bind seen. */
async function schedulerInServer(dataDir: string): Promise<{ms: number; server: OrchServer}> {
  const server = await startOrchServer(['--controllers=scheduler'], {dataDir})
  const client = clientOf(server, 4)
  const list = await client.list({group: '', version: 'v1', resource: 'pods', namespace: 'bench-in-server'})
  const bound = new Set<string>(list.items.filter((p: any) => p.spec?.nodeName).map((p: any) => p.metadata.name))
  const stream = await openWatch(server.url, `/api/v1/namespaces/bench-in-server/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`)
  for (let n = 1; bound.size < PODS; n++) {
    const event = (await stream.waitFor(n))[n - 1]
    if (event.object.spec?.nodeName) bound.add(event.object.metadata.name)
  }
  const end = Date.now()
  stream.close()
  await client.close()
  const started = /^(\S+) INFO controllers started/m.exec(server.logs())
  if (!started) throw new Error(`no "controllers started" line in the server log:\n${server.logs()}`)
  return {ms: end - Date.parse(started[1]!), server}
}

async function main(): Promise<void> {
  const rate = (count: number, ms: number) => (count * 1000) / ms
  console.log(`bench/scheduler${QUICK ? ' (--quick)' : ''}: ${NODES} nodes, ${PODS} pending pods in sets of ${SET_SIZE}; node ${process.version}, ${availableParallelism()} CPUs, load ${loadavg()[0].toFixed(1)}`)
  const placement = placementBaseline()
  if (placement.placed !== PODS) throw new Error(`placement baseline placed ${placement.placed} of ${PODS}`)

  let server = await startOrchServer(['--controllers='])
  const dataDir = server.dataDir
  let inServer: {ms: number} | undefined
  try {
    const client = clientOf(server, 128)
    const {podMs} = await createCluster(client)
    const bindMs = await bareBindings(client)
    const run = await schedulerInBench(client)
    const left = await unboundIn(client, 'bench')
    if (left !== 0) throw new Error(`${left} pods left unbound`)
    await client.close()
    await server.stop()
    const restarted = await schedulerInServer(dataDir)
    server = restarted.server
    inServer = restarted
    const perNode = run.perNode
    const scheduledRate = rate(PODS, run.ms)
    const bindRate = rate(BASELINE_BINDINGS, bindMs)
    const placeRate = rate(PODS, placement.ms)
    table(
      'Pods scheduled per second',
      ['what', 'pods', 'time', 'pods/s', 'vs bare bindings', 'vs placement alone'],
      [
        ['placement alone (filter + score + assume, in process, no API)', PODS, `${(placement.ms / 1000).toFixed(2)} s`, placeRate, placeRate / bindRate, 1],
        ['bare bindings (POST pods/binding, 64 at once, no scheduler)', BASELINE_BINDINGS, `${(bindMs / 1000).toFixed(2)} s`, bindRate, 1, bindRate / placeRate],
        ['scheduler in its own process (informers synced -> all bound)', PODS, `${(run.ms / 1000).toFixed(2)} s`, scheduledRate, scheduledRate / bindRate, scheduledRate / placeRate],
        [
          'scheduler inside orch server (--controllers=scheduler)',
          PODS,
          `${(inServer.ms / 1000).toFixed(2)} s`,
          rate(PODS, inServer.ms),
          rate(PODS, inServer.ms) / bindRate,
          rate(PODS, inServer.ms) / placeRate,
        ],
      ],
    )
    table('Setup and spreading', ['figure', 'value'], [
      ['pod creates/s while setting up (32 writers)', rate(PODS, podMs)],
      ['scheduler informer sync (nodes + pods)', `${(run.syncMs / 1000).toFixed(2)} s`],
      ['bindings refused and retried', run.stats.bindFailures],
      ['Scheduled events dropped by the time all were bound (1,000 waiting, as client-go)', run.eventsDropped],
      ['pods per node (min / max)', `${Math.min(...perNode)} / ${Math.max(...perNode)}`],
    ])
    console.log(`\ngoal >= 500 pods/s: ${scheduledRate >= 500 ? 'met' : 'NOT met'} in its own process (${scheduledRate.toFixed(0)}/s), ${rate(PODS, inServer.ms) >= 500 ? 'met' : 'NOT met'} inside the server (${rate(PODS, inServer.ms).toFixed(0)}/s)`)
  } finally {
    await server.cleanup()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
