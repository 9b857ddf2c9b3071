// The agent's checkpoint endpoint in front of real containerd, whose CheckpointContainer is
// UNIMPLEMENTED: the answer is a 500 carrying the runtime's message, and nothing is left behind.
import assert from 'node:assert/strict'
import {mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {request} from 'node:https'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient} from '../../src/agent/cri/client.js'
import type {DeepPartial, PodSandboxConfig} from '../../src/agent/cri/types.js'
import {AgentServer} from '../../src/agent/server/server.js'
import {createCA, createSignedCert} from '../../src/machinery/pki.js'
import {containerdMissing, removeCgroupParent, startContainerd, type RunningContainerd} from '../support/containerd.js'

const missing = containerdMissing()
if (missing) console.log(`# skipping the agent checkpoint test on containerd: ${missing}`)

describe('the agent checkpoint endpoint on containerd', {skip: missing ?? false, timeout: 180_000}, () => {
  let containerd: RunningContainerd
  let cri: CriClient
  let agent: AgentServer
  let dir: string
  let ca: string
  let port: number
  let containerId: string
  const cgroupParent = `orch-agent-test-${process.pid}`

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-agent-containerd-'))
    containerd = await startContainerd()
    cri = new CriClient({endpoint: containerd.endpoint, timeoutMs: 60_000})
    const config: DeepPartial<PodSandboxConfig> = {
      metadata: {name: 'web', uid: `uid-${process.pid}`, namespace: 'shop', attempt: 0},
      logDirectory: join(dir, 'pods', 'web'),
      linux: {cgroupParent: `/${cgroupParent}`, securityContext: {namespaceOptions: {network: 'NODE', pid: 'CONTAINER', ipc: 'POD'}}},
    }
    const sandbox = await cri.runPodSandbox(config)
    containerId = await cri.createContainer(sandbox, {metadata: {name: 'app', attempt: 0}, image: {image: containerd.image}, command: ['sleep', '3600'], logPath: 'app/0.log'}, config)
    await cri.startContainer(containerId)
    const servingCA = await createCA('agent test CA')
    ca = servingCA.certPem
    const serving = await createSignedCert({ca: servingCA, commonName: 'node-a', usages: ['server auth'], validitySeconds: 3600, ipAddresses: ['127.0.0.1']})
    agent = new AgentServer({
      address: '127.0.0.1', port: 0, rootDir: join(dir, 'agent'), cert: serving.certPem, key: serving.keyPem, clientCA: servingCA.certPem,
      checkpointEnabled: true, nodeName: 'node-a', authorizationMode: 'AlwaysAllow', cacheAuthorizedTTLMs: 0, cacheUnauthorizedTTLMs: 0, tokenCacheTTLMs: 0,
      findContainer: (ns, pod, container) => (ns === 'shop' && pod === 'web' && container === 'app' ? {containerId} : undefined),
      checkpoint: (id, location, timeout) => cri.checkpointContainer(id, location, timeout),
    })
    port = (await agent.start()).port
    const client = await createSignedCert({ca: servingCA, commonName: 'admin', usages: ['client auth'], validitySeconds: 3600})
    clientCert = client
  })
  let clientCert: {certPem: string; keyPem: string}

  after(async () => {
    await agent?.stop()
    if (containerId) await cri?.stopContainer(containerId, 1).catch(() => undefined)
    cri?.close()
    await containerd?.stop()
    removeCgroupParent(cgroupParent)
    rmSync(dir, {recursive: true, force: true})
  })

  it('a runtime without checkpointing is a 500 with the runtime message; no archive is left', async () => {
    const answer = await new Promise<{status: number; body: string}>((resolve, reject) => {
      const req = request({host: '127.0.0.1', port, path: '/checkpoint/shop/web/app', method: 'POST', ca, agent: false, cert: clientCert.certPem, key: clientCert.keyPem}, (res) => {
        let body = ''
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
      })
      req.on('error', reject)
      req.end()
    })
    assert.equal(answer.status, 500, answer.body)
    assert.match(JSON.parse(answer.body).message, /UNIMPLEMENTED/)
    assert.deepEqual(readdirSync(join(dir, 'agent', 'checkpoints')), [])
  })
})
