// The agent's local interfaces on a real `orch agent` (process runtime) joined to a real server:
// `orch checkpoint` through nodes/{node}/proxy to the agent, and the pod-info gRPC socket (gate
// PodsAPI) — List/Get/Watch with and without masks, a restart seen before the API sees it, answers
// while the server is stopped, FAILED_PRECONDITION after an agent restart until it synced.
import assert from 'node:assert/strict'
import {readFileSync, rmSync, statSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import {encodeFieldMask, FIELD_MASK_METADATA} from '../../src/agent/podinfo/server.js'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, type OrchServer} from '../support/server.js'
import {listTar} from '../support/tar.js'

const protoDir = resolve(fileURLToPath(import.meta.url), '../../../../proto')

function podInfoClient(socket: string): any {
  const definition = protoLoader.loadSync(join(protoDir, 'podinfo', 'api.proto'), {includeDirs: [protoDir], keepCase: true, defaults: false})
  const loaded = grpc.loadPackageDefinition(definition) as any
  return new loaded.orch.agent.pods.v1alpha1.Pods(`unix://${socket}`, grpc.credentials.createInsecure())
}

function unary(client: any, method: string, request: object, mask?: string[]): Promise<any> {
  const metadata = new grpc.Metadata()
  if (mask) metadata.set(FIELD_MASK_METADATA, encodeFieldMask(mask))
  return new Promise((resolvePromise, reject) => client[method](request, metadata, (error: Error | null, value: any) => (error ? reject(error) : resolvePromise(value))))
}

describe('agent local interfaces on a real agent', {timeout: 180_000}, () => {
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>
  let client: any
  let socket: string
  let firstContainerID: string

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    api = (method, path, body) => call(server.url, method, path, body)
    agent = await startAgent({server, args: ['--feature-gates', 'PodsAPI=true']})
    socket = join(agent.rootDir, 'pods', 'agent.sock')
    client = podInfoClient(socket)
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web', labels: {app: 'web'}},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]},
    })
    assert.equal(created.status, 201, created.text)
    firstContainerID = (await waitForPod('web', (p) => p?.status?.phase === 'Running')).status.containerStatuses[0].containerID
  })
  after(async () => {
    client?.close()
    await agent?.cleanup()
    if (agent) rmSync(agent.rootDir, {recursive: true, force: true})
    await server?.cleanup()
    if (server) for (const dir of [server.dataDir, server.home]) rmSync(dir, {recursive: true, force: true})
  })

  async function waitForPod(name: string, check: (pod: any) => boolean, timeoutMs = 60_000): Promise<any> {
    const list = (await api('GET', '/api/v1/namespaces/default/pods')).json
    const found = list.items.find((p: any) => p.metadata.name === name)
    if (found && check(found)) return found
    const stream = await openWatch(server.url, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`pod ${name} never matched:\n${agent.logs().slice(-3000)}`)), timeoutMs)))
    try {
      for (let n = 1; ; n++) {
        const events = await Promise.race([stream.waitFor(n), expired])
        if (check(events[n - 1].object)) return events[n - 1].object
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  it("orch checkpoint through the server's nodes/{node}/proxy: the archive is 0600 under {root}/checkpoints, holds memory, and the process still runs", async () => {
    const result = await runOrch(['checkpoint', 'web', '-c', 'app'], {env: server.cliEnv, timeoutMs: 60_000})
    assert.equal(result.code, 0, result.stderr + agent.logs().slice(-2000))
    const path = result.stdout.trim()
    assert.match(path, new RegExp(`^${agent.rootDir}/checkpoints/checkpoint-web_default-app-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.tar$`))
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const entries = listTar(path).map((e) => e.name)
    assert.ok(entries.some((name) => /maps$/.test(name)), entries.join(' '))
    const pod = (await api('GET', '/api/v1/namespaces/default/pods/web')).json
    assert.ok(pod.status.containerStatuses[0].state.running, 'still running after the checkpoint')
    const missing = await runOrch(['checkpoint', 'web', '-c', 'nope'], {env: server.cliEnv})
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^error: container "nope" is not in pod "web"\n$/)
  })

  it('the pod-info socket is 0600; ListPods and GetPod answer the pods the agent manages, with and without a field mask', async () => {
    assert.equal(statSync(socket).mode & 0o777, 0o600)
    const listed = await unary(client, 'ListPods', {})
    const web = listed.pods.find((p: any) => p.metadata.name === 'web')
    assert.ok(web, JSON.stringify(listed.pods.map((p: any) => p.metadata.name)))
    assert.equal(web.status.phase, 'Running')
    assert.equal(web.spec.containers[0].command[0], 'sleep')
    const got = await unary(client, 'GetPod', {podUID: web.metadata.uid}, ['status.phase', 'metadata.labels'])
    assert.equal(got.pod.status.phase, 'Running')
    assert.deepEqual(got.pod.metadata.labels, {app: 'web'})
    assert.equal(got.pod.spec, undefined)
    assert.equal(got.pod.metadata.name, undefined)
    await assert.rejects(unary(client, 'GetPod', {podUID: 'no-such-uid'}), (e: any) => e.code === grpc.status.NOT_FOUND)
  })

  it('WatchPods sees a container restart before the API does', async () => {
    const stream = client.WatchPods({})
    const localSeen = new Promise<number>((resolvePromise) =>
      stream.on('data', (message: any) => {
        if (message.pod?.metadata?.name === 'crash' && (message.pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1) resolvePromise(performance.now())
      }),
    )
    stream.on('error', () => undefined)
    await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'crash'},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'sleep 0.5; exit 1']}]},
    })
    const apiSeen = waitForPod('crash', (p) => (p?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1).then(() => performance.now())
    const [local, remote] = await Promise.all([localSeen, apiSeen])
    stream.cancel()
    assert.ok(local <= remote, `the local watch (${local.toFixed(1)}) saw the restart before the API (${remote.toFixed(1)})`)
    await api('DELETE', '/api/v1/namespaces/default/pods/crash')
  })

  it('with the server stopped, ListPods still answers; after an agent restart every method is FAILED_PRECONDITION until it has synced', async () => {
    await server.stop()
    const listed = await unary(client, 'ListPods', {})
    assert.ok(listed.pods.some((p: any) => p.metadata.name === 'web'))
    // restart the agent while the server is away: its API source cannot sync, so the socket refuses
    await agent.stop()
    agent = await startAgent({rootDir: agent.rootDir, nodeName: agent.nodeName, args: ['--feature-gates', 'PodsAPI=true', '--kubeconfig', join(agent.rootDir, 'agent.kubeconfig')]})
    client.close()
    client = podInfoClient(socket)
    await assert.rejects(unary(client, 'ListPods', {}), (e: any) => e.code === grpc.status.FAILED_PRECONDITION)
    await assert.rejects(unary(client, 'GetPod', {podUID: 'x'}), (e: any) => e.code === grpc.status.FAILED_PRECONDITION)
    assert.ok(readFileSync(join(agent.rootDir, 'agent.kubeconfig'), 'utf8').includes(server.url))
  })

  it('when the server comes back the agent reconnects: it syncs, runs the pods bound to it again and the socket answers', async () => {
    const port = Number(new URL(server.url).port)
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN], {dataDir: server.dataDir, port, env: {HOME: server.home}})
    api = (method, path, body) => call(server.url, method, path, body)
    // the restarted agent (its built-in runtime restarted with it) runs the pod again: a new container
    const pod = await waitForPod('web', (p) => p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.containerID !== firstContainerID)
    const listed = await unary(client, 'ListPods', {})
    const local = listed.pods.find((p: any) => p.metadata.name === 'web')
    assert.equal(local.status.phase, 'Running')
    assert.equal(local.metadata.uid, pod.metadata.uid)
  })
})
