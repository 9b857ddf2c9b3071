// The pod-info gRPC service through a real gRPC client (generated at run time from
// proto/podinfo/api.proto, which imports the core/v1 Pod message) over a real UNIX socket.
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import {Agent, podInfoSupport} from '../../src/agent/agent.js'
import {loadAgentConfiguration} from '../../src/agent/config/load.js'
import {settingsFrom} from '../../src/cli/agent.js'
import {createLogger} from '../../src/machinery/log.js'
import {encodeFieldMask, FIELD_MASK_METADATA, startPodInfoServer, type PodInfoServer, type PodSource} from '../../src/agent/podinfo/server.js'
import type {AnyObject} from '../../src/api/types.js'

const protoDir = resolve(fileURLToPath(import.meta.url), '../../../../proto')

function pod(name: string, uid: string, phase: string): AnyObject {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {name, namespace: 'shop', uid, labels: {app: name}},
    spec: {containers: [{name: 'app', image: 'busybox', command: ['sleep', '60']}], nodeName: 'node-a'},
    status: {phase, podIP: '10.0.0.5', podIPs: [{ip: '10.0.0.5'}]},
  }
}

class Pods implements PodSource {
  ready = false
  list: AnyObject[] = [pod('web', 'uid-web', 'Running'), pod('db', 'uid-db', 'Pending')]
  private readonly listeners = new Set<(p: AnyObject) => void>()
  synced(): boolean {
    return this.ready
  }
  pods(): AnyObject[] {
    return this.list
  }
  subscribe(listener: (p: AnyObject) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
  change(p: AnyObject): void {
    this.list = this.list.map((x) => (x.metadata?.uid === p.metadata?.uid ? p : x))
    for (const l of this.listeners) l(p)
  }
}

describe('pod-info gRPC', () => {
  let dir: string
  let server: PodInfoServer
  let client: any
  const source = new Pods()

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-podinfo-'))
    server = await startPodInfoServer(join(dir, 'pods', 'agent.sock'), source)
    const definition = protoLoader.loadSync(join(protoDir, 'podinfo', 'api.proto'), {includeDirs: [protoDir], keepCase: true, defaults: false})
    const loaded = grpc.loadPackageDefinition(definition) as any
    client = new loaded.orch.agent.pods.v1alpha1.Pods(`unix://${server.socketPath}`, grpc.credentials.createInsecure())
  })
  after(async () => {
    client?.close()
    await server?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  const unary = (method: string, request: AnyObject, metadata = new grpc.Metadata()): Promise<any> =>
    new Promise((resolve, reject) => client[method](request, metadata, (error: Error | null, value: any) => (error ? reject(error) : resolve(value))))

  it('the socket is created with mode 0600', () => {
    assert.equal(statSync(server.socketPath).mode & 0o777, 0o600)
  })

  it('every method answers FAILED_PRECONDITION until the agent has synced once', async () => {
    await assert.rejects(unary('ListPods', {}), (e: any) => e.code === grpc.status.FAILED_PRECONDITION)
    await assert.rejects(unary('GetPod', {podUID: 'uid-web'}), (e: any) => e.code === grpc.status.FAILED_PRECONDITION)
    source.ready = true
  })

  it('ListPods returns every pod as a core/v1 Pod message; GetPod by UID, NOT_FOUND when unknown', async () => {
    const listed = await unary('ListPods', {})
    assert.deepEqual(listed.pods.map((p: any) => p.metadata.name), ['web', 'db'])
    assert.equal(listed.pods[0].status.phase, 'Running')
    assert.equal(listed.pods[0].spec.containers[0].command[0], 'sleep')
    const got = await unary('GetPod', {podUID: 'uid-db'})
    assert.equal(got.pod.metadata.name, 'db')
    await assert.rejects(unary('GetPod', {podUID: 'nope'}), (e: any) => e.code === grpc.status.NOT_FOUND)
  })

  it(`a FieldMask in the "${FIELD_MASK_METADATA}" metadata entry limits the fields; a malformed mask is INVALID_ARGUMENT`, async () => {
    const metadata = new grpc.Metadata()
    metadata.set(FIELD_MASK_METADATA, encodeFieldMask(['status.phase', 'metadata.name']))
    const masked = await unary('GetPod', {podUID: 'uid-web'}, metadata)
    assert.equal(masked.pod.metadata.name, 'web')
    assert.equal(masked.pod.status.phase, 'Running')
    assert.equal(masked.pod.status.podIP, undefined)
    assert.equal(masked.pod.spec, undefined)
    const bad = new grpc.Metadata()
    bad.set(FIELD_MASK_METADATA, Buffer.from([0x0a, 0x05, 0x61]))
    await assert.rejects(unary('ListPods', {}, bad), (e: any) => e.code === grpc.status.INVALID_ARGUMENT)
    const badPath = new grpc.Metadata()
    badPath.set(FIELD_MASK_METADATA, encodeFieldMask(['status..phase']))
    await assert.rejects(unary('ListPods', {}, badPath), (e: any) => e.code === grpc.status.INVALID_ARGUMENT)
  })

  it('a FieldMask path that names no field of the Pod is INVALID_ARGUMENT ("return an INVALID_ARGUMENT error if any path is unmappable")', async () => {
    for (const path of ['spec.nosuch', 'nosuch', 'status.phase.more', 'spec.containers.name', 'metadata.labels.app']) {
      const metadata = new grpc.Metadata()
      metadata.set(FIELD_MASK_METADATA, encodeFieldMask(['metadata.name', path]))
      await assert.rejects(unary('ListPods', {}, metadata), (e: any) => e.code === grpc.status.INVALID_ARGUMENT && e.details === `invalid field mask path "${path}": no such field in message Pod`, path)
    }
    const known = new grpc.Metadata()
    known.set(FIELD_MASK_METADATA, encodeFieldMask(['metadata.labels', 'spec.containers', 'status.podIPs', 'status.containerStatuses']))
    assert.equal((await unary('GetPod', {podUID: 'uid-web'}, known)).pod.spec.containers[0].name.length > 0, true)
  })

  it('WatchPods streams each local change as it happens, with the mask applied', async () => {
    const metadata = new grpc.Metadata()
    metadata.set(FIELD_MASK_METADATA, encodeFieldMask(['metadata.uid', 'status.phase']))
    const stream = client.WatchPods({}, metadata)
    const seen: any[] = []
    const got = new Promise<void>((resolve) => stream.on('data', (message: any) => {
      seen.push(message.pod)
      if (seen.length === 2) resolve()
    }))
    stream.on('error', () => undefined)
    // the subscription is made when the call arrives: change until it has been seen
    const deadline = Date.now() + 5000
    let n = 0
    while (seen.length === 0 && Date.now() < deadline) {
      source.change(pod('db', 'uid-db', n++ % 2 ? 'Pending' : 'Running'))
      await new Promise((r) => setTimeout(r, 20))
    }
    source.change(pod('db', 'uid-db', 'Failed'))
    await got
    stream.cancel()
    assert.equal(seen[seen.length - 1].status.phase, seen.length === 2 ? 'Failed' : seen[seen.length - 1].status.phase)
    assert.equal(seen[0].metadata.uid, 'uid-db')
    assert.equal(seen[0].spec, undefined)
  })
})

describe('pod-info gRPC interface: Stage alpha (release 1.35), disabled by default; not supported on non-Linux nodes', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-podinfo-agent-'))
  })
  after(() => rmSync(dir, {recursive: true, force: true}))

  const settingsFor = (name: string, featureGates: Record<string, boolean>): any => {
    const flags = {'root-dir': join(dir, name), 'lock-file': join(dir, `${name}.lock`), 'relist-period': '1s', 'print-config': false, v: 0, 'hostname-override': 'n'}
    return {...settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0'), featureGates, registerNode: false, enableServer: false, staticPodPath: undefined, failSwapOn: false}
  }

  it('the decision: served only with gate PodsAPI on and on Linux', () => {
    assert.deepEqual(podInfoSupport(settingsFor('d', {PodsAPI: true}), 'linux'), {serve: true})
    assert.deepEqual(podInfoSupport(settingsFor('d', {}), 'linux'), {serve: false, reason: 'gate PodsAPI is disabled'})
    for (const platform of ['win32', 'darwin', 'freebsd'] as NodeJS.Platform[]) {
      const decision = podInfoSupport(settingsFor('d', {PodsAPI: true}), platform)
      assert.equal(decision.serve, false, platform)
      assert.match(decision.reason ?? '', new RegExp(`not supported on non-Linux nodes \\(this node is ${platform}\\)`))
    }
  })

  for (const [platform, served] of [['win32', false], ['linux', true]] as const) {
    it(`an agent on ${platform} with gate PodsAPI on ${served ? 'serves {root}/pods/agent.sock' : 'does not start the socket and says why in one log line'}`, async () => {
      const lines: string[] = []
      const settings = settingsFor(platform, {PodsAPI: true})
      const agent = new Agent(settings, createLogger({write: (line) => lines.push(line)}), {}, {swapEnabled: () => false, platform})
      try {
        await agent.start()
        assert.equal(existsSync(join(settings.rootDir, 'pods', 'agent.sock')), served)
        const refused = lines.filter((line) => line.includes('pod-info gRPC socket not started'))
        if (served) assert.deepEqual(refused, [])
        else {
          assert.equal(refused.length, 1, lines.join('\n'))
          assert.match(refused[0], /not supported on non-Linux nodes \(this node is win32\)/)
        }
      } finally {
        await agent.stop()
      }
    })
  }
})
