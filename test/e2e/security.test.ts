// `orch server` is secure by default: HTTPS only; the first start creates the PKI and the admin
// kubeconfigs; every request but /healthz, /livez, /readyz and /version needs a client certificate of
// the client CA or a bearer token it knows, and a credential that does not authenticate is refused
// even on those paths.
import assert from 'node:assert/strict'
import {X509Certificate} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {connect as tlsConnect} from 'node:tls'
import {after, before, describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {createCA, createSignedCert, parseCertificate, verifyCertificate, type CertKeyPair} from '../../src/machinery/pki.js'
import {call, openWatch, rawGet, type Caller, type HttpResult} from '../support/http.js'
import {orchBin, runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const JANE_TOKEN = 'jane-static-token-0123456789'
const BOOTSTRAP_A = 'abcdef.0123456789abcdef'
const BOOTSTRAP_B = 'zyx987.0123456789abcdef'
const BOOTSTRAP_FILE_TOKEN = 'qrstuv.fedcba9876543210'

const mode = (path: string) => statSync(path).mode & 0o777
const unbase64 = (data: string) => Buffer.from(data, 'base64').toString('utf8')

function assertUnauthorized(result: HttpResult, what: string): void {
  assert.equal(result.status, 401, `${what}: ${result.text}`)
  assert.match(String(result.headers['content-type']), /^application\/json/, what)
  assert.deepEqual(
    result.json,
    {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401},
    what,
  )
}

/** The user the server sees, from a SelfSubjectReview (every authenticated user may create one). */
async function whoami(url: string, as: Caller): Promise<{username: string; groups: string[]; uid?: string}> {
  const result = await call(url, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', {apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview'}, {}, {as})
  assert.equal(result.status, 201, result.text)
  return result.json.status.userInfo
}

describe('orch server: secure by default', () => {
  let server: OrchServer
  let clusterCA: CertKeyPair
  const cleanups: (() => Promise<void>)[] = []

  before(async () => {
    const files = tempDir('orch-security-')
    const tokenFile = join(files, 'tokens.csv')
    writeFileSync(tokenFile, `${JANE_TOKEN},jane,uid-jane,"devs,ops"\n`)
    const bootstrapFile = join(files, 'bootstrap-tokens')
    writeFileSync(bootstrapFile, `# tokens for new nodes\n${BOOTSTRAP_FILE_TOKEN}\n`)
    server = await startOrchServer([
      '--controllers=',
      '--v=3',
      '--tls-san', 'api.orch.test',
      '--tls-san', '10.9.8.7,orch.internal',
      '--token-auth-file', tokenFile,
      '--bootstrap-token', `${BOOTSTRAP_A},${BOOTSTRAP_B}`,
      '--bootstrap-token-file', bootstrapFile,
    ])
    cleanups.push(() => server.cleanup())
    const pki = join(server.dataDir, 'pki')
    clusterCA = {certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8')}
  })
  after(async () => {
    for (const cleanup of cleanups) await cleanup()
  })

  it('serves HTTPS only: plain HTTP to its port fails, and so does a client that does not trust its CA', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
    await assert.rejects(fetch(`${server.url.replace(/^https:/, 'http:')}/healthz`))
    await assert.rejects(fetch(`${server.url}/healthz`), 'the serving certificate is signed by the cluster CA, not a public one')
    assert.equal((await call(server.url, 'GET', '/healthz')).status, 200)
  })

  it('the first start writes the CA, serving and admin certificates with 0600 keys, admin.kubeconfig and ~/.orch/config', async () => {
    const pki = join(server.dataDir, 'pki')
    for (const file of ['ca.crt', 'ca.key', 'client-ca.crt', 'client-ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key']) {
      assert.ok(existsSync(join(pki, file)), file)
      if (file.endsWith('.key')) assert.equal(mode(join(pki, file)), 0o600, file)
    }
    const servingPem = readFileSync(join(pki, 'apiserver.crt'), 'utf8')
    const serving = parseCertificate(servingPem)
    assert.ok(verifyCertificate(servingPem, clusterCA.certPem))
    assert.ok(serving.usages.includes('server auth'))
    assert.deepEqual(new Set(serving.ipAddresses), new Set(['127.0.0.1', '10.9.8.7']), 'listen address, 127.0.0.1 and --tls-san IPs')
    assert.deepEqual(new Set(serving.dnsNames), new Set(['localhost', 'api.orch.test', 'orch.internal']), 'localhost and --tls-san names')
    const admin = parseCertificate(readFileSync(join(pki, 'admin.crt'), 'utf8'))
    assert.equal(admin.commonName, 'orch-admin')
    assert.deepEqual(admin.organizations, ['system:masters'])
    assert.ok(admin.usages.includes('client auth'))

    // kubectl's kubeconfig: clusters / users / contexts by name, current-context, credentials inline as *-data
    assert.equal(mode(server.kubeconfig), 0o600)
    const doc = yaml.load(readFileSync(server.kubeconfig, 'utf8')) as any
    assert.equal(doc.apiVersion, 'v1')
    assert.equal(doc.kind, 'Config')
    const context = doc.contexts.find((c: any) => c.name === doc['current-context'])
    assert.ok(context, 'current-context names a context')
    const cluster = doc.clusters.find((c: any) => c.name === context.context.cluster)
    const user = doc.users.find((u: any) => u.name === context.context.user)
    assert.equal(cluster.cluster.server, server.url)
    assert.equal(unbase64(cluster.cluster['certificate-authority-data']), clusterCA.certPem)
    assert.equal(unbase64(user.user['client-certificate-data']), readFileSync(join(pki, 'admin.crt'), 'utf8'))
    assert.equal(unbase64(user.user['client-key-data']), readFileSync(join(pki, 'admin.key'), 'utf8'))
    assert.match(server.logs(), new RegExp(`admin kubeconfig written path=${server.kubeconfig.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))

    const home = join(server.home, '.orch', 'config')
    assert.equal(mode(home), 0o600)
    assert.equal(readFileSync(home, 'utf8'), readFileSync(server.kubeconfig, 'utf8'))
  })

  it('an existing ~/.orch/config is left alone', async () => {
    const home = tempDir('orch-home-mine-')
    const config = join(home, '.orch', 'config')
    mkdirSync(dirname(config), {recursive: true})
    writeFileSync(config, 'mine: true\n')
    const other = await startOrchServer(['--controllers='], {env: {HOME: home}})
    cleanups.push(() => other.cleanup())
    assert.equal(readFileSync(config, 'utf8'), 'mine: true\n')
    assert.ok(existsSync(other.kubeconfig))
    assert.equal((await call(other.url, 'GET', '/api/v1/namespaces')).status, 200)
  })

  it('without credentials every resource, discovery and OpenAPI path is 401 Unauthorized, reads and writes', async () => {
    const anonymous = {as: 'anonymous' as const}
    for (const path of [
      '/api/v1/namespaces',
      '/api/v1/namespaces/default',
      '/apis/apps/v1/statefulsets',
      '/apis/apps/v1/namespaces/default/statefulsets',
      '/api/v1/namespaces/default/configmaps/x',
      '/api/v1/namespaces/default/configmaps?watch=1',
      '/api',
      '/api/v1',
      '/apis',
      '/apis/apps/v1',
      '/openapi/v2',
      '/openapi/v3',
      '/openapi/v3/api/v1',
      '/',
      '/no/such/path',
      '/healthz/extra',
    ]) {
      assertUnauthorized(await call(server.url, 'GET', path, undefined, {}, anonymous), `GET ${path}`)
    }
    const configMap = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'anonymous-write'}}
    assertUnauthorized(await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap, {}, anonymous), 'POST')
    assertUnauthorized(await call(server.url, 'DELETE', '/api/v1/namespaces/default', undefined, {}, anonymous), 'DELETE')
    assertUnauthorized(
      await call(server.url, 'PATCH', '/api/v1/namespaces/default', {metadata: {labels: {a: 'b'}}}, {'Content-Type': 'application/merge-patch+json'}, anonymous),
      'PATCH',
    )
    const watch = await openWatch(server.url, '/api/v1/namespaces?watch=1', {}, anonymous)
    assert.equal(watch.status, 401)
    watch.close()
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps/anonymous-write')).status, 404, 'nothing was written')
    const gz = await rawGet(server.url, '/api/v1/namespaces', {'Accept-Encoding': 'gzip'}, anonymous)
    assert.equal(gz.status, 401)
  })

  it('/healthz, /livez, /readyz and /version answer without credentials', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const result = await call(server.url, 'GET', path, undefined, {}, {as: 'anonymous'})
      assert.equal(result.status, 200, path)
      assert.equal(result.text, 'ok', path)
    }
    const version = await call(server.url, 'GET', '/version', undefined, {}, {as: 'anonymous'})
    assert.equal(version.status, 200)
    assert.match(version.json.gitVersion, /^v\d+\.\d+/)
  })

  it('an expired client certificate, or one from another CA, is 401 even on /healthz', async () => {
    const expired = await createSignedCert({
      ca: clusterCA,
      commonName: 'orch-admin',
      organizations: ['system:masters'],
      usages: ['digital signature', 'key encipherment', 'client auth'],
      notBefore: new Date(Date.now() - 7200_000),
      validitySeconds: 3600,
    })
    const impostorCA = await createCA('orch-ca')
    const impostor = await createSignedCert({
      ca: impostorCA,
      commonName: 'orch-admin',
      organizations: ['system:masters'],
      usages: ['digital signature', 'key encipherment', 'client auth'],
      validitySeconds: 3600,
    })
    for (const [what, pair] of [['expired', expired], ['wrong CA', impostor]] as const) {
      const as: Caller = {cert: pair.certPem, key: pair.keyPem}
      assertUnauthorized(await call(server.url, 'GET', '/api/v1/namespaces', undefined, {}, {as}), `${what} /api/v1/namespaces`)
      assertUnauthorized(await call(server.url, 'GET', '/healthz', undefined, {}, {as}), `${what} /healthz`)
    }
  })

  it('a client certificate of the cluster CA authenticates as its CN', async () => {
    const alice = await createSignedCert({ca: clusterCA, commonName: 'alice', organizations: ['devs'], usages: ['client auth'], validitySeconds: 3600})
    const as: Caller = {cert: alice.certPem, key: alice.keyPem}
    assert.deepEqual(await whoami(server.url, as), {username: 'alice', groups: ['devs', 'system:authenticated']})
    const result = await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps/probe-alice', undefined, {}, {as})
    assert.equal(result.status, 403, result.text)
    assert.match(result.json.message, /User "alice" cannot get resource "configmaps"/)
    await server.waitForLog(/request method=GET path=\/api\/v1\/namespaces\/default\/configmaps\/probe-alice user=alice code=403/)
  })

  it('a forged bearer token is 401, even on /healthz', async () => {
    for (const token of ['forged', 'abcdef.ffffffffffffffff', 'qqqqqq.0123456789abcdef', `${JANE_TOKEN}x`]) {
      assertUnauthorized(await call(server.url, 'GET', '/api/v1/namespaces', undefined, {}, {as: {token}}), token)
      assertUnauthorized(await call(server.url, 'GET', '/healthz', undefined, {}, {as: {token}}), `${token} /healthz`)
    }
  })

  it('a token of --token-auth-file authenticates as the user the file names', async () => {
    const as: Caller = {token: JANE_TOKEN}
    assert.deepEqual(await whoami(server.url, as), {username: 'jane', uid: 'uid-jane', groups: ['devs', 'ops', 'system:authenticated']})
  })

  it('a bearer-token user without a binding is 403 Forbidden naming user, verb and resource; with a RoleBinding the same request works', async () => {
    const as: Caller = {token: JANE_TOKEN}
    const configMap = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'by-jane'}}
    const denied = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap, {}, {as})
    assert.equal(denied.status, 403, denied.text)
    assert.equal(denied.json.reason, 'Forbidden')
    assert.equal(denied.json.message, 'configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "default"')
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps/by-jane')).status, 404, 'nothing was stored')
    const rbac = '/apis/rbac.orch.io/v1'
    assert.equal((await call(server.url, 'POST', `${rbac}/namespaces/default/roles`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {name: 'configmap-writer'},
      rules: [{apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get']}],
    })).status, 201)
    assert.equal((await call(server.url, 'POST', `${rbac}/namespaces/default/rolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'devs-write-configmaps'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'configmap-writer'},
      subjects: [{kind: 'Group', apiGroup: 'rbac.orch.io', name: 'devs'}],
    })).status, 201)
    // the authorizer reads the RBAC watch caches: the binding takes effect once the cache has it
    const deadline = Date.now() + 5000
    let created = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap, {}, {as})
    while (created.status === 403 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      created = await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap, {}, {as})
    }
    assert.equal(created.status, 201, created.text)
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps/by-jane', undefined, {}, {as})).status, 200)
    assert.equal((await call(server.url, 'DELETE', '/api/v1/namespaces/default/configmaps/by-jane', undefined, {}, {as})).status, 403, 'delete is not granted')
    await server.waitForLog(/request method=POST path=\/api\/v1\/namespaces\/default\/configmaps user=jane code=201/)
  })

  it('bootstrap tokens (--bootstrap-token, repeated or a comma list, and --bootstrap-token-file) authenticate as system:bootstrap:<id>', async () => {
    for (const [token, id] of [[BOOTSTRAP_A, 'abcdef'], [BOOTSTRAP_B, 'zyx987'], [BOOTSTRAP_FILE_TOKEN, 'qrstuv']]) {
      assert.deepEqual(await whoami(server.url, {token}), {username: `system:bootstrap:${id}`, groups: ['system:bootstrappers', 'system:authenticated']})
      const path = '/apis/certificates.orch.io/v1/certificatesigningrequests'
      const result = await call(server.url, 'GET', path, undefined, {}, {as: {token}})
      assert.equal(result.status, 200, `system:bootstrappers may read CSRs: ${token}: ${result.text}`)
      await server.waitForLog(new RegExp(`request method=GET path=${path} user=system:bootstrap:${id} code=200`))
    }
  })

  const getCommand = join(dirname(orchBin), '..', 'dist', 'commands', 'get.js')
  const haveGet = existsSync(getCommand)
  it(
    haveGet
      ? 'after `orch server`, the CLI with no flags uses ~/.orch/config'
      : 'after `orch server`, the CLI with no flags uses ~/.orch/config (skipped: commands/get.ts does not exist yet)',
    {skip: !haveGet},
    async () => {
      const result = await runOrch(['get', 'ns', '-o', 'name'], {env: {HOME: server.home, KUBECONFIG: ''}})
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /^namespace\/default$/m)
      const viaAdmin = await runOrch(['get', 'ns', '-o', 'name'], {env: server.cliEnv})
      assert.equal(viaAdmin.code, 0, viaAdmin.stderr)
      assert.equal(viaAdmin.stdout, result.stdout)
    },
  )
})

describe('orch server with --tls-cert-file, --tls-private-key-file and --client-ca-file', () => {
  let server: OrchServer
  let servingPair: CertKeyPair
  let carol: CertKeyPair

  before(async () => {
    const files = tempDir('orch-security-external-')
    const servingCA = await createCA('external-serving-ca')
    servingPair = await createSignedCert({
      ca: servingCA,
      commonName: 'orch.example.test',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      usages: ['digital signature', 'key encipherment', 'server auth'],
      validitySeconds: 86400,
    })
    const clientsCA = await createCA('external-clients-ca')
    carol = await createSignedCert({ca: clientsCA, commonName: 'carol', organizations: ['ops'], usages: ['client auth'], validitySeconds: 3600})
    writeFileSync(join(files, 'serving.crt'), servingPair.certPem)
    writeFileSync(join(files, 'serving.key'), servingPair.keyPem, {mode: 0o600})
    writeFileSync(join(files, 'clients-ca.crt'), clientsCA.certPem)
    // the default controllers run: they reach the server although admin.crt is not of the client CA
    server = await startOrchServer(
      [
        '--v=3',
        '--tls-cert-file', join(files, 'serving.crt'),
        '--tls-private-key-file', join(files, 'serving.key'),
        '--client-ca-file', join(files, 'clients-ca.crt'),
      ],
      {ca: servingCA.certPem},
    )
  })
  after(async () => server?.cleanup())

  it('serves the given certificate and generates no serving certificate or client CA of its own', async () => {
    const port = Number(new URL(server.url).port)
    const presented = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({host: '127.0.0.1', port, ca: server.ca}, () => {
        resolve(socket.getPeerCertificate().fingerprint256)
        socket.end()
      })
      socket.on('error', reject)
    })
    assert.equal(presented, new X509Certificate(servingPair.certPem).fingerprint256)
    assert.equal(existsSync(join(server.dataDir, 'pki', 'apiserver.crt')), false)
    assert.equal(existsSync(join(server.dataDir, 'pki', 'client-ca.crt')), false)
    const doc = yaml.load(readFileSync(server.kubeconfig, 'utf8')) as any
    assert.equal(doc.clusters[0].cluster['certificate-authority-data'], undefined, 'clients use their own trust for a given certificate')
    assert.match(server.logs(), /controllers started/)
  })

  it('client certificates are verified against --client-ca-file', async () => {
    const path = '/api/v1/namespaces/default/configmaps/probe-carol'
    const result = await call(server.url, 'GET', path, undefined, {}, {as: {cert: carol.certPem, key: carol.keyPem}})
    assert.equal(result.status, 403, result.text)
    await server.waitForLog(new RegExp(`request method=GET path=${path} user=carol code=403`))
    // admin.crt is signed by the cluster CA of the data dir, which --client-ca-file replaced
    assertUnauthorized(await call(server.url, 'GET', '/api/v1/namespaces'), 'admin.crt')
    assert.match(server.logs(), /WARN .*admin\.crt is not signed by a CA of --client-ca-file/)
  })
})
