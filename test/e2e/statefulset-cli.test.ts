// The seed's StatefulSet scenario as a user sees it through the CLI: 5 replicas OrderedReady with
// readiness set step by step, a rolling update with partition 2, a scale down to 2 with
// whenScaled: Delete — checked with `orch get` tables and the events of `orch watch`.
import assert from 'node:assert/strict'
import {spawn, type ChildProcess} from 'node:child_process'
import {after, before, describe, it} from 'node:test'
import {call} from '../support/http.js'
import {orchBin, runOrch, startOrchServer, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const NS = 'shop'
const pods = `/api/v1/namespaces/${NS}/pods`
const isReady = (pod: any) => pod.status?.phase === 'Running' && pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')

const manifest = (image: string) => `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: ${NS}
spec:
  serviceName: web
  replicas: 5
  podManagementPolicy: OrderedReady
  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete, whenDeleted: Retain}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: ${image}
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`

/** Rows of an `orch get` table, split into cells. */
function rows(stdout: string): string[][] {
  return stdout.trimEnd().split('\n').map((line) => line.trim().split(/\s{2,}/))
}

describe('StatefulSet scenario through the CLI', () => {
  let server: OrchServer
  let watcher: ChildProcess
  let watchOutput = ''

  const orch = async (...args: string[]) => {
    const result = await runOrch(args, {env: server.cliEnv})
    assert.equal(result.code, 0, `orch ${args.join(' ')}: ${result.stderr}`)
    return result.stdout
  }

  /** Polls (every 50 ms, up to 30 s) until probe gives a value. */
  /** The agent's part for one pod: Running, its container ready, condition Ready, through /status. */
  async function markReady(name: string): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const pod = (await call(server.url, 'GET', `${pods}/${name}`)).json
      const conditions = [...(pod.status?.conditions ?? []).filter((c: any) => c.type !== 'Ready'), {type: 'Ready', status: 'True'}]
      const containerStatuses = pod.spec.containers.map((c: any) => ({
        name: c.name, image: c.image, imageID: '', ready: true, started: true, restartCount: 0, state: {running: {startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z')}},
      }))
      const r = await call(server.url, 'PUT', `${pods}/${name}/status`, {...pod, status: {...pod.status, phase: 'Running', conditions, containerStatuses}})
      if (r.status === 200) return
    }
    assert.fail(`could not mark ${name} ready`)
  }

  /** Marks every pod that is not ready yet, until all `count` pods exist and are ready. */
  async function readyAll(count: number): Promise<void> {
    await until(`${count} ready pods`, async () => {
      const list = (await call(server.url, 'GET', pods)).json.items
      for (const pod of list) if (!isReady(pod) && !pod.metadata.deletionTimestamp) await markReady(pod.metadata.name)
      return list.length === count && list.every(isReady) ? true : undefined
    })
  }

  before(async () => {
    server = await startOrchServer(['--controllers=statefulset,namespace'])
    assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: NS}})).status, 201)
    watcher = spawn(process.execPath, [orchBin, 'watch', 'pods', '-n', NS], {env: {...process.env, ...server.cliEnv}, stdio: ['ignore', 'pipe', 'inherit']})
    watcher.stdout!.on('data', (chunk: Buffer) => (watchOutput += chunk.toString()))
    await until('orch watch to start', async () => (watcher.exitCode === null && (await call(server.url, 'GET', pods)).status === 200 ? true : undefined))
  })
  after(async () => {
    watcher?.kill('SIGTERM')
    await server.cleanup()
  })

  it('5 replicas OrderedReady: each pod appears only once the previous is ready, and orch get shows them coming up', {timeout: 90_000}, async () => {
    const applied = await runOrch(['apply', '-f', '-'], {env: server.cliEnv, input: manifest('app:1')})
    assert.equal(applied.code, 0, applied.stderr)
    assert.equal(applied.stdout, 'statefulset.apps/web created\n')
    for (let ordinal = 0; ordinal < 5; ordinal++) {
      const name = `web-${ordinal}`
      await until(`${name} to be created`, async () => ((await call(server.url, 'GET', `${pods}/${name}`)).status === 200 ? true : undefined))
      const list = (await call(server.url, 'GET', pods)).json.items.map((p: any) => p.metadata.name).sort()
      assert.deepEqual(list, Array.from({length: ordinal + 1}, (_, i) => `web-${i}`), 'OrderedReady: nothing ahead of a pod that is not ready')
      const table = rows(await orch('get', 'pods', '-n', NS))
      assert.deepEqual(table[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'])
      assert.equal(table.find((r) => r[0] === name)?.[1], '0/1', `${name} is not ready yet`)
      await markReady(name)
    }
    const sets = await until('5/5 ready in orch get sts', async () => {
      const table = rows(await orch('get', 'sts', '-n', NS))
      return table[1]?.[1] === '5/5' ? table : undefined
    })
    assert.deepEqual(sets[0], ['NAME', 'READY', 'AGE'])
    assert.equal(sets[1][0], 'web')
    const podTable = rows(await orch('get', 'pods', '-n', NS))
    assert.deepEqual(podTable.slice(1).map((r) => [r[0], r[1], r[2]]), [0, 1, 2, 3, 4].map((i) => [`web-${i}`, '1/1', 'Running']))
    const claims = rows(await orch('get', 'pvc', '-n', NS)).slice(1).map((r) => r[0])
    assert.deepEqual(claims, [0, 1, 2, 3, 4].map((i) => `data-web-${i}`))
  })

  it('a rolling update with partition 2 replaces web-4, web-3, web-2 (highest first) and leaves web-0 and web-1', {timeout: 90_000}, async () => {
    const patched = await orch('patch', 'sts', 'web', '-n', NS, '--type', 'merge', '-p', JSON.stringify({
      spec: {updateStrategy: {type: 'RollingUpdate', rollingUpdate: {partition: 2}}, template: {spec: {containers: [{name: 'app', image: 'app:2', volumeMounts: [{name: 'data', mountPath: '/data'}]}]}}},
    }))
    assert.equal(patched, 'statefulset.apps/web patched\n')
    const set = await until('3 updated replicas', async () => {
      const pending = (await call(server.url, 'GET', pods)).json.items
      for (const pod of pending) if (!isReady(pod) && !pod.metadata.deletionTimestamp) await markReady(pod.metadata.name)
      const current = JSON.parse(await orch('get', 'sts', 'web', '-n', NS, '-o', 'json'))
      return current.status?.updatedReplicas === 3 && current.status?.readyReplicas === 5 ? current : undefined
    })
    const images = Object.fromEntries((await call(server.url, 'GET', pods)).json.items.map((p: any) => [p.metadata.name, p.spec.containers[0].image]))
    assert.deepEqual(images, {'web-0': 'app:1', 'web-1': 'app:1', 'web-2': 'app:2', 'web-3': 'app:2', 'web-4': 'app:2'})
    assert.notEqual(set.status.currentRevision, set.status.updateRevision)
    const deleted = watchOutput.split('\n').filter((l) => l.startsWith('DELETED ')).map((l) => l.split(' ')[1])
    assert.deepEqual(deleted, ['pod/web-4', 'pod/web-3', 'pod/web-2'], 'orch watch saw the pods replaced highest ordinal first')
  })

  it('scale to 2 with whenScaled: Delete removes web-4, web-3, web-2 and their claims; orch watch saw every step', {timeout: 90_000}, async () => {
    assert.equal(await orch('patch', 'sts', 'web', '-n', NS, '--type', 'merge', '-p', '{"spec":{"replicas":2}}'), 'statefulset.apps/web patched\n')
    await readyAll(2)
    await until('2/2 in orch get sts', async () => (rows(await orch('get', 'sts', '-n', NS))[1]?.[1] === '2/2' ? true : undefined))
    await until('the claims of web-2..4 gone', async () => {
      const claims = rows(await orch('get', 'pvc', '-n', NS)).slice(1).map((r) => r[0])
      return claims.join(',') === 'data-web-0,data-web-1' ? true : undefined
    })
    const lines = watchOutput.trimEnd().split('\n')
    const added = lines.filter((l) => l.startsWith('ADDED ')).map((l) => l.split(' ')[1])
    assert.deepEqual(added.slice(0, 5), ['pod/web-0', 'pod/web-1', 'pod/web-2', 'pod/web-3', 'pod/web-4'], 'created in ordinal order')
    const deleted = lines.filter((l) => l.startsWith('DELETED ')).map((l) => l.split(' ')[1])
    assert.deepEqual(deleted.slice(3), ['pod/web-4', 'pod/web-3', 'pod/web-2'], 'scaled down highest ordinal first')
    for (const line of lines) assert.match(line, /^(ADDED|MODIFIED|DELETED) pod\/web-\d \d+$/)
  })
})
