// `orch checkpoint` end to end: the CLI asks the server, whose nodes/{node}/proxy passes the request
// to the node's agent (a real AgentServer with the process runtime), which answers with the archive.
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {AgentServer} from '../../src/agent/server/server.js'
import {RestClient} from '../../src/client/index.js'
import {createSignedCert} from '../../src/machinery/pki.js'
import {call} from '../support/http.js'
import {startSleepingContainer, type SleepingContainer} from '../support/process-container.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const JANE = 'jane-token-0123456789'

describe('orch checkpoint', {timeout: 120_000}, () => {
  let server: OrchServer
  let sleeping: SleepingContainer
  let agent: AgentServer
  let dir: string
  let port: number

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-checkpoint-cli-'))
    const tokens = join(tempDir('orch-ckpt-tokens-'), 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
    sleeping = await startSleepingContainer(dir)
    const cri = sleeping.cri
    const ca = {certPem: readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(server.dataDir, 'pki', 'ca.key'), 'utf8')}
    const serving = await createSignedCert({ca, commonName: 'system:node:node-a', organizations: ['system:nodes'], usages: ['server auth'], validitySeconds: 3600, ipAddresses: ['127.0.0.1']})
    agent = new AgentServer({
      address: '127.0.0.1', port: 0, rootDir: join(dir, 'agent'), cert: serving.certPem, key: serving.keyPem, clientCA: ca.certPem, checkpointEnabled: true,
      client: new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key), namespace: 'default'}),
      nodeName: 'node-a', authorizationMode: 'Webhook', cacheAuthorizedTTLMs: 60_000, cacheUnauthorizedTTLMs: 1000, tokenCacheTTLMs: 60_000,
      findContainer: sleeping.find,
      checkpoint: (id, location, timeout) => cri.checkpointContainer(id, location, timeout),
    })
    port = (await agent.start()).port
    assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'node-a'}})).status, 201)
    const status = await call(server.url, 'PATCH', '/api/v1/nodes/node-a/status', {status: {addresses: [{type: 'InternalIP', address: '127.0.0.1'}], daemonEndpoints: {agentEndpoint: {Port: port}}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(status.status, 200, status.text)
    await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'shop'}})
    const pod = await call(server.url, 'POST', '/api/v1/namespaces/shop/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web'}, spec: {nodeName: 'node-a', containers: [{name: 'app', image: 'busybox'}]}})
    assert.equal(pod.status, 201, pod.text)
  })

  after(async () => {
    await agent?.stop()
    await sleeping?.close()
    await server?.cleanup()
    rmSync(dir, {recursive: true, force: true})
  })

  it('through the server\'s nodes/{node}/proxy: the CLI prints the archive path; the archive is 0600 under {root}/checkpoints', async () => {
    const result = await runOrch(['checkpoint', 'web', '-c', 'app', '-n', 'shop', '--timeout', '60'], {env: server.cliEnv})
    assert.equal(result.code, 0, result.stderr)
    const path = result.stdout.trim()
    assert.match(path, /\/agent\/checkpoints\/checkpoint-web_shop-app-.*\.tar$/)
    assert.equal(statSync(path).mode & 0o777, 0o600)
  })

  it('directly at the agent with --agent URL', async () => {
    const result = await runOrch(['checkpoint', 'web', '-n', 'shop', '--agent', `https://127.0.0.1:${port}`], {env: server.cliEnv})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /checkpoint-web_shop-app-/)
  })

  it('a user without nodes/proxy is refused by the server (403); an unknown container is a one-line error', async () => {
    const denied = await call(server.url, 'POST', '/api/v1/nodes/node-a/proxy/checkpoint/shop/web/app', undefined, {}, {as: {token: JANE}})
    assert.equal(denied.status, 403)
    assert.match(denied.json.message, /cannot create resource "nodes\/proxy"/)
    const unknown = await runOrch(['checkpoint', 'web', '-c', 'nope', '-n', 'shop'], {env: server.cliEnv})
    assert.equal(unknown.code, 1)
    assert.equal(unknown.stderr, 'error: container "nope" is not in pod "web"\n')
  })
})
