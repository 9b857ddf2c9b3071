// The agent's HTTPS server: its own authentication (client certificates, TokenReview) and
// authorization (Webhook SubjectAccessReviews with the cached-decision TTLs), and the checkpoint
// endpoint against the real process runtime (200 and a 0600 archive) — with a real `orch server`
// answering the reviews.
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {request} from 'node:https'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {AgentServer} from '../../src/agent/server/server.js'
import {RestClient} from '../../src/client/index.js'
import {createCA, createSignedCert, type CertKeyPair} from '../../src/machinery/pki.js'
import {call} from '../support/http.js'
import {startSleepingContainer, type SleepingContainer} from '../support/process-container.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const JANE = 'jane-token-0123456789'
const NODE = 'node-a'

interface Answer {
  status: number
  body: string
}

function post(port: number, path: string, ca: string, as: {token?: string; cert?: CertKeyPair} = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {host: '127.0.0.1', port, path, method: 'POST', ca, servername: 'localhost', agent: false, cert: as.cert?.certPem, key: as.cert?.keyPem, headers: as.token ? {Authorization: `Bearer ${as.token}`} : {}},
      (res) => {
        let body = ''
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('the agent HTTPS server', {timeout: 120_000}, () => {
  let server: OrchServer
  let sleeping: SleepingContainer
  let cri: CriClient
  let agent: AgentServer
  let port: number
  let dir: string
  let servingCA: CertKeyPair
  let clusterCA: CertKeyPair
  let containerId: string

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-agent-server-'))
    const tokens = join(tempDir('orch-agent-tokens-'), 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
    clusterCA = {certPem: readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(server.dataDir, 'pki', 'ca.key'), 'utf8')}
    sleeping = await startSleepingContainer(dir)
    cri = sleeping.cri
    containerId = sleeping.containerId
    servingCA = await createCA('agent serving test CA')
    const serving = await createSignedCert({ca: servingCA, commonName: NODE, usages: ['server auth'], validitySeconds: 3600, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1']})
    const client = new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key), namespace: 'default'})
    agent = new AgentServer({
      address: '127.0.0.1',
      port: 0,
      rootDir: join(dir, 'agent'),
      cert: serving.certPem,
      key: serving.keyPem,
      clientCA: clusterCA.certPem,
      checkpointEnabled: true,
      client,
      nodeName: NODE,
      authorizationMode: 'Webhook',
      cacheAuthorizedTTLMs: 1500,
      cacheUnauthorizedTTLMs: 300,
      tokenCacheTTLMs: 60_000,
      findContainer: sleeping.find,
      checkpoint: (id, location, timeout) => cri.checkpointContainer(id, location, timeout),
    })
    port = (await agent.start()).port
  })

  after(async () => {
    await agent?.stop()
    await sleeping?.close()
    await server?.cleanup()
    rmSync(dir, {recursive: true, force: true})
  })

  it('no credentials is 401; a user without nodes/checkpoint permission is 403', async () => {
    assert.equal((await post(port, '/checkpoint/shop/web/app', servingCA.certPem)).status, 401)
    const denied = await post(port, '/checkpoint/shop/web/app', servingCA.certPem, {token: JANE})
    assert.equal(denied.status, 403, denied.body)
    assert.match(JSON.parse(denied.body).message, /user=jane, verb=create, resource=nodes, subresource=checkpoint/)
  })

  it('a client certificate of the cluster CA with the permission: 200 and a 0600 archive named checkpoint-<pod>_<namespace>-<container>-<time>.tar under {root}/checkpoints; the process keeps running', async () => {
    const admin = {certPem: server.cert, keyPem: server.key}
    const answer = await post(port, '/checkpoint/shop/web/app?timeout=60', servingCA.certPem, {cert: admin})
    assert.equal(answer.status, 200, answer.body)
    const [path] = JSON.parse(answer.body).items
    assert.match(path, new RegExp(`^${join(dir, 'agent', 'checkpoints')}/checkpoint-web_shop-app-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.tar$`))
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const status = await cri.containerStatus(containerId)
    assert.equal(status.status?.state, 'CONTAINER_RUNNING')
  })

  it('unknown namespace, pod or container is 404; a traversal or an over-long name is 404 and writes nothing', async () => {
    const admin = {certPem: server.cert, keyPem: server.key}
    for (const path of ['/checkpoint/other/web/app', '/checkpoint/shop/nope/app', '/checkpoint/shop/web/nope', '/checkpoint/shop/..%2F..%2Fetc/app', `/checkpoint/shop/${'x'.repeat(300)}/app`]) {
      assert.equal((await post(port, path, servingCA.certPem, {cert: admin})).status, 404, path)
    }
    const written = readdirSync(join(dir, 'agent', 'checkpoints'))
    assert.ok(written.every((name) => /^checkpoint-web_shop-app-.*\.tar$/.test(name)), written.join(','))
  })

  it('authorization decisions are cached: a revoked binding still allows until cacheAuthorizedTTL passes, then 403', async () => {
    const rbac = '/apis/rbac.orch.io/v1'
    await call(server.url, 'POST', `${rbac}/clusterroles`, {apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name: 'checkpointer'}, rules: [{apiGroups: [''], resources: ['nodes/checkpoint'], verbs: ['create']}]})
    await call(server.url, 'POST', `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRoleBinding', metadata: {name: 'jane-checkpoints'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'checkpointer'}, subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    })
    const until = async (want: number) => {
      const deadline = Date.now() + 10_000
      for (;;) {
        const answer = await post(port, '/checkpoint/shop/web/app', servingCA.certPem, {token: JANE})
        if (answer.status === want) return Date.now()
        if (Date.now() > deadline) assert.fail(`never ${want}: ${answer.status} ${answer.body}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    await until(200)
    assert.equal((await call(server.url, 'DELETE', `${rbac}/clusterrolebindings/jane-checkpoints`)).status, 200)
    const revoked = Date.now()
    assert.equal((await post(port, '/checkpoint/shop/web/app', servingCA.certPem, {token: JANE})).status, 200, 'still allowed from the cache')
    const deniedAt = await until(403)
    assert.ok(deniedAt - revoked >= 300, 'denied only once the cached allow expired')
  })

  it('/healthz answers without credentials; with the gate off the checkpoint path is 404', async () => {
    const healthz = await new Promise<number>((resolve, reject) => {
      request({host: '127.0.0.1', port, path: '/healthz', ca: servingCA.certPem, servername: 'localhost', agent: false}, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      }).on('error', reject).end()
    })
    assert.equal(healthz, 200)
    const off = new AgentServer({
      address: '127.0.0.1', port: 0, rootDir: join(dir, 'off'), cert: readFileSync(join(server.dataDir, 'pki', 'apiserver.crt'), 'utf8'),
      key: readFileSync(join(server.dataDir, 'pki', 'apiserver.key'), 'utf8'), clientCA: clusterCA.certPem, checkpointEnabled: false, nodeName: NODE,
      authorizationMode: 'AlwaysAllow', cacheAuthorizedTTLMs: 0, cacheUnauthorizedTTLMs: 0, tokenCacheTTLMs: 0,
      findContainer: () => ({containerId}), checkpoint: async () => {},
    })
    const offPort = (await off.start()).port
    try {
      const answer = await post(offPort, '/checkpoint/shop/web/app', server.ca, {cert: {certPem: server.cert, keyPem: server.key}})
      assert.equal(answer.status, 404)
      assert.equal(existsSync(join(dir, 'off', 'checkpoints')), true)
      assert.deepEqual(readdirSync(join(dir, 'off', 'checkpoints')), [])
    } finally {
      await off.stop()
    }
  })
})
