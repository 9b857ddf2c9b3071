// Admission bench: `npm run bench:admission` (`-- --quick` for a smoke run). ConfigMap creates/s on a
// real `orch server` child (HTTPS, 16 keep-alive connections) with 0, 10 and 100 ValidatingAdmissionPolicy
// bindings that match every create and pass (a label check and a size check each), measured in one
// run and printed as ratios to the run without bindings. Goal: 10 bindings cost < 20% of the create rate.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {Pool} from 'undici'
import {startOrchServer, type OrchServer} from '../test/support/server.js'
import {median, table, type Cell} from './report.js'

const QUICK = process.argv.includes('--quick')
const CREATES = QUICK ? 500 : 3_000
const TRIALS = QUICK ? 1 : 3
const CONCURRENCY = 16
const ADM = '/apis/admissionregistration.orch.io/v1'

function pool(server: OrchServer): Pool {
  const pki = join(server.dataDir, 'pki')
  return new Pool(server.url, {
    connections: CONCURRENCY,
    connect: {ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key'))},
  })
}

async function call(p: Pool, method: 'POST' | 'GET', path: string, body?: unknown): Promise<any> {
  const response = await p.request({method, path, headers: {'content-type': 'application/json'}, body: body === undefined ? undefined : JSON.stringify(body)})
  const text = await response.body.text()
  if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`)
  return JSON.parse(text)
}

/** Creates/s for `count` ConfigMaps at CONCURRENCY in flight. */
async function createRate(p: Pool, namespace: string, prefix: string, count: number): Promise<number> {
  let next = 0
  const data = {payload: 'x'.repeat(800)}
  const started = performance.now()
  await Promise.all(
    Array.from({length: CONCURRENCY}, async () => {
      while (next < count) {
        const i = next++
        await call(p, 'POST', `/api/v1/namespaces/${namespace}/configmaps`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `${prefix}-${i}`, labels: {team: 'bench'}}, data})
      }
    }),
  )
  return count / ((performance.now() - started) / 1000)
}

async function addBindings(p: Pool, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    await call(p, 'POST', `${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: {name: `bench-${i}`},
      spec: {
        matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps']}]},
        validations: [
          {expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"},
          {expression: `!has(object.data) || size(object.data) < ${100 + i}`},
        ],
      },
    })
    await call(p, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: `bench-${i}`},
      spec: {policyName: `bench-${i}`, validationActions: ['Deny']},
    })
  }
  // the bindings reach the server's caches a moment after they are stored: wait until listed
  for (;;) {
    const listed = await call(p, 'GET', `${ADM}/validatingadmissionpolicybindings?resourceVersion=0`)
    if (listed.items.length >= to) return
  }
}

async function main(): Promise<void> {
  console.log(`admission bench${QUICK ? ' (--quick)' : ''}: ConfigMap creates/s, ${CONCURRENCY} connections, ${CREATES.toLocaleString('en-US')} creates per measurement, median of ${TRIALS}`)
  const server = await startOrchServer(['--controllers='])
  const p = pool(server)
  const rows: Cell[][] = []
  let baseline = 0
  try {
    await call(p, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'bench'}})
    await createRate(p, 'bench', 'warmup', 300)
    let bindings = 0
    for (const count of [0, 10, 100]) {
      await addBindings(p, bindings, count)
      bindings = count
      await createRate(p, 'bench', `warm-${count}`, 100)
      const rates: number[] = []
      for (let trial = 0; trial < TRIALS; trial++) rates.push(await createRate(p, 'bench', `b${count}-t${trial}`, CREATES))
      const rate = median(rates)
      if (count === 0) baseline = rate
      rows.push([count, rate, rate / baseline, `${((1 - rate / baseline) * 100).toFixed(1)} %`])
    }
  } finally {
    await p.close()
    await server.cleanup()
  }
  table('creates/s by matching ValidatingAdmissionPolicy bindings (each: 2 validations, both pass)', ['bindings', 'creates/s', 'x no bindings', 'cost'], rows)
  const ten = rows[1][2] as number
  table('goal', ['goal', 'target', 'measured', 'verdict'], [['10 bindings cost', '< 20 %', `${((1 - ten) * 100).toFixed(1)} %`, 1 - ten < 0.2 ? 'met' : 'NOT met']])
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    process.exit(1)
  },
)
