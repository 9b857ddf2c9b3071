// bench/statefulset: a StatefulSet of 100 replicas (Parallel) whose pods are marked Ready, as an
// agent would, the moment each appears. Prints the time until the StatefulSet reports all replicas
// ready and the number of API writes it took, against a baseline measured in the same run: the same
// 100 pods created and marked Ready directly, with no controller in between.
import {call, openWatch} from '../test/support/http.js'
import {startOrchServer, type RunningOrch} from '../test/support/server.js'

const REPLICAS = Number(process.env.REPLICAS ?? 100)

function readyStatus(pod: any) {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
  return {
    ...pod,
    status: {
      ...pod.status,
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [
        {type: 'Ready', status: 'True', lastTransitionTime: now},
        {type: 'ContainersReady', status: 'True', lastTransitionTime: now},
      ],
    },
  }
}

async function revision(server: RunningOrch): Promise<number> {
  return Number((await call(server.url, 'GET', '/api/v1/namespaces')).json.metadata.resourceVersion)
}

/** Marks each pod of the namespace Ready as soon as it is ADDED; resolves after `count` pods. */
async function actAsAgent(server: RunningOrch, namespace: string, count: number): Promise<{done: Promise<void>; stop(): void}> {
  const rv = (await call(server.url, 'GET', `/api/v1/namespaces/${namespace}/pods`)).json.metadata.resourceVersion
  const stream = await openWatch(server.url, `/api/v1/namespaces/${namespace}/pods?watch=1&resourceVersion=${rv}`)
  const marked = new Set<string>()
  const pending: Promise<unknown>[] = []
  const done = (async () => {
    for (let seen = 1; marked.size < count; seen++) {
      const events = await stream.waitFor(seen)
      const event = events[seen - 1]
      const name = event.object.metadata.name
      if (event.type !== 'ADDED' || marked.has(name)) continue
      marked.add(name)
      pending.push(call(server.url, 'PUT', `/api/v1/namespaces/${namespace}/pods/${name}/status`, readyStatus(event.object)))
    }
    await Promise.all(pending)
  })()
  return {done, stop: () => stream.close()}
}

async function baseline(server: RunningOrch): Promise<{ms: number; writes: number}> {
  await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'baseline'}})
  const agent = await actAsAgent(server, 'baseline', REPLICAS)
  const before = await revision(server)
  const started = performance.now()
  await Promise.all(
    Array.from({length: REPLICAS}, (_, i) =>
      call(server.url, 'POST', '/api/v1/namespaces/baseline/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: `direct-${i}`, labels: {app: 'direct'}},
        spec: {containers: [{name: 'web', image: 'nginx'}]},
      }),
    ),
  )
  await agent.done
  const ms = performance.now() - started
  agent.stop()
  return {ms, writes: (await revision(server)) - before}
}

async function statefulSet(server: RunningOrch): Promise<{ms: number; writes: number}> {
  await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'sts'}})
  const agent = await actAsAgent(server, 'sts', REPLICAS)
  const stsRv = (await call(server.url, 'GET', '/apis/apps/v1/namespaces/sts/statefulsets')).json.metadata.resourceVersion
  const watch = await openWatch(server.url, `/apis/apps/v1/namespaces/sts/statefulsets?watch=1&resourceVersion=${stsRv}`)
  const before = await revision(server)
  const started = performance.now()
  const created = await call(server.url, 'POST', '/apis/apps/v1/namespaces/sts/statefulsets', {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name: 'web'},
    spec: {
      replicas: REPLICAS,
      serviceName: 'web',
      podManagementPolicy: 'Parallel',
      selector: {matchLabels: {app: 'web'}},
      template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx'}]}},
    },
  })
  if (created.status !== 201) throw new Error(`creating the StatefulSet failed: ${created.text}`)
  for (let seen = 1; ; seen++) {
    const events = await watch.waitFor(seen)
    if (process.env.DEBUG) console.error('sts event', events[seen - 1].type, JSON.stringify(events[seen - 1].object.status))
    if ((events[seen - 1].object.status?.readyReplicas ?? 0) >= REPLICAS) break
  }
  const ms = performance.now() - started
  watch.close()
  await agent.done
  agent.stop()
  return {ms, writes: (await revision(server)) - before}
}

async function main(): Promise<void> {
  const server = await startOrchServer(['--controllers=statefulset'])
  try {
    const direct = await baseline(server)
    if (process.env.DEBUG) console.error('baseline done', direct)
    const sts = await statefulSet(server)
    const rows = [
      ['', 'time to all Ready', 'API writes'],
      [`baseline: ${REPLICAS} pods created + marked Ready directly`, `${(direct.ms / 1000).toFixed(2)} s`, String(direct.writes)],
      [`StatefulSet ${REPLICAS} replicas, Parallel`, `${(sts.ms / 1000).toFixed(2)} s`, String(sts.writes)],
      ['ratio StatefulSet / baseline', `${(sts.ms / direct.ms).toFixed(2)}x`, `${(sts.writes / direct.writes).toFixed(2)}x`],
    ]
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
    console.log('bench/statefulset (P6 goal: all Ready in <= 10 s)')
    for (const row of rows) console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('   '))
    console.log(`P6 goal ${sts.ms <= 10_000 ? 'met' : 'NOT met'}: ${(sts.ms / 1000).toFixed(2)} s`)
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
