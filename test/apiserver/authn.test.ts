import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import {connect as http2Connect, createSecureServer, type Http2SecureServer} from 'node:http2'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Agent, request} from 'undici'
import * as yaml from 'js-yaml'
import {
  Authenticator,
  clientCertServerOptions,
  isAnonymousAllowedPath,
  loadBootstrapTokenFile,
  loadTokenFile,
  parseBootstrapTokens,
  parseCSV,
  parseTokenFile,
  type AuthenticatableRequest,
} from '../../src/apiserver/authn.js'
import {ensureServerPKI, servingNames, writeAdminKubeconfigs, writeKubeconfig, type ServerPKI} from '../../src/apiserver/pki-bootstrap.js'
import {createCA, createSignedCert, parseCertificate, verifyCertificate} from '../../src/machinery/pki.js'
import {configFromKubeconfig, loadKubeconfig} from '../../src/client/kubeconfig.js'

const roots: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-authn-'))
  roots.push(dir)
  return dir
}
after(() => {
  for (const dir of roots) rmSync(dir, {recursive: true, force: true})
})

function mode(path: string): number {
  return statSync(path).mode & 0o777
}

describe('ensureServerPKI', () => {
  it('creates the PKI on first start, keys 0600, and reuses it after', async () => {
    const dataDir = tempDir()
    const first = await ensureServerPKI({dataDir, serverAddresses: ['0.0.0.0', '10.1.2.3', 'node-a'], tlsSANs: ['api.example.com', '192.168.9.9']})
    const files = ['ca.crt', 'ca.key', 'client-ca.crt', 'client-ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key']
    for (const file of files) assert.ok(existsSync(join(dataDir, 'pki', file)), file)
    for (const file of files.filter((f) => f.endsWith('.key'))) assert.equal(mode(join(dataDir, 'pki', file)), 0o600, file)
    assert.equal(mode(join(dataDir, 'pki')), 0o700)
    assert.equal(first.generated.length, 8)
    assert.deepEqual(first.warnings, [])
    assert.equal(first.clientCA.certPem, first.ca.certPem, 'one CA for serving and clients')

    const serving = parseCertificate(first.serving.cert)
    assert.deepEqual(new Set(serving.dnsNames), new Set(['localhost', 'node-a', 'api.example.com']))
    assert.deepEqual(new Set(serving.ipAddresses), new Set(['127.0.0.1', '10.1.2.3', '192.168.9.9']))
    assert.ok(serving.usages.includes('server auth'))
    assert.ok(verifyCertificate(first.serving.cert, first.ca.certPem))
    assert.equal(first.servingCA, first.ca.certPem)

    const admin = parseCertificate(first.admin.cert)
    assert.equal(admin.commonName, 'orch-admin')
    assert.deepEqual(admin.organizations, ['system:masters'])
    assert.deepEqual(admin.usages, ['digital signature', 'key encipherment', 'client auth'])
    assert.ok(verifyCertificate(first.admin.cert, first.clientCA.certPem))

    const second = await ensureServerPKI({dataDir, serverAddresses: ['10.1.2.3', 'node-a', '0.0.0.0'], tlsSANs: ['192.168.9.9', 'API.example.com']})
    assert.deepEqual(second.generated, [])
    assert.equal(second.ca.keyPem, first.ca.keyPem)
    assert.equal(second.serving.cert, first.serving.cert)
    assert.equal(second.admin.cert, first.admin.cert)

    const third = await ensureServerPKI({dataDir, serverAddresses: ['10.1.2.3', 'node-a'], tlsSANs: ['new.example.com']})
    assert.deepEqual(third.generated.sort(), [third.paths.servingCert, third.paths.servingKey].sort())
    assert.equal(third.ca.certPem, first.ca.certPem)
    assert.ok(parseCertificate(third.serving.cert).dnsNames.includes('new.example.com'))
    assert.equal(mode(third.paths.servingKey), 0o600)
  })

  it('renews a serving certificate that is about to expire', async () => {
    const dataDir = tempDir()
    const first = await ensureServerPKI({dataDir, serverAddresses: ['127.0.0.1'], tlsSANs: []})
    const later = await ensureServerPKI({dataDir, serverAddresses: ['127.0.0.1'], tlsSANs: [], now: new Date(Date.now() + 340 * 86400_000)})
    assert.ok(later.generated.includes(later.paths.servingCert))
    assert.ok(later.generated.includes(later.paths.adminCert))
    assert.equal(later.ca.certPem, first.ca.certPem)
  })

  it('uses --tls-cert-file, --tls-private-key-file and --client-ca-file when given', async () => {
    const dataDir = tempDir()
    const externalCA = await createCA('external', 10)
    const pair = await createSignedCert({ca: externalCA, commonName: 'srv', dnsNames: ['srv'], usages: ['server auth'], validitySeconds: 86400})
    const certFile = join(dataDir, 'srv.crt')
    const keyFile = join(dataDir, 'srv.key')
    const caFile = join(dataDir, 'clients.crt')
    writeFileSync(certFile, pair.certPem)
    writeFileSync(keyFile, pair.keyPem)
    writeFileSync(caFile, externalCA.certPem)
    const pki = await ensureServerPKI({dataDir, serverAddresses: ['127.0.0.1'], tlsSANs: [], tlsCertFile: certFile, tlsKeyFile: keyFile, clientCAFile: caFile})
    assert.equal(pki.serving.cert, pair.certPem)
    assert.equal(pki.serving.key, pair.keyPem)
    assert.equal(pki.servingCA, undefined)
    assert.equal(pki.clientCA.certPem, externalCA.certPem)
    assert.equal(pki.clientCA.keyPem, undefined)
    assert.equal(existsSync(join(dataDir, 'pki', 'apiserver.crt')), false)
    assert.equal(existsSync(join(dataDir, 'pki', 'client-ca.crt')), false)
    assert.equal(pki.warnings.length, 1, 'admin.crt is not accepted by the given client CA')

    await assert.rejects(ensureServerPKI({dataDir, serverAddresses: [], tlsCertFile: certFile}), /must be given together/)
    await assert.rejects(ensureServerPKI({dataDir, serverAddresses: [], tlsCertFile: certFile, tlsKeyFile: join(dataDir, 'pki', 'ca.key')}), /is not the key of/)
  })

  it('refuses a half-present CA', async () => {
    const dataDir = tempDir()
    await ensureServerPKI({dataDir, serverAddresses: [], tlsSANs: []})
    rmSync(join(dataDir, 'pki', 'ca.key'))
    await assert.rejects(ensureServerPKI({dataDir, serverAddresses: [], tlsSANs: []}), /ca\.key is missing/)
  })

  it('servingNames splits IPs from names and drops wildcards', () => {
    assert.deepEqual(servingNames(['0.0.0.0', '::', '[::1]', 'Host.Example', '10.0.0.1'], ['10.0.0.1', 'host.example']), {
      dnsNames: ['localhost', 'host.example'],
      ipAddresses: ['127.0.0.1', '::1', '10.0.0.1'],
    })
  })
})

describe('kubeconfig', () => {
  let pki: ServerPKI
  before(async () => {
    pki = await ensureServerPKI({dataDir: tempDir(), serverAddresses: ['127.0.0.1'], tlsSANs: []})
  })

  it('writes kubectl\'s format with inline data, mode 0600', async () => {
    const path = join(tempDir(), 'sub', 'config')
    await writeKubeconfig(path, {server: 'https://127.0.0.1:6443', caPem: pki.ca.certPem, certPem: pki.admin.cert, keyPem: pki.admin.key, user: 'u', cluster: 'c', context: 'ctx'})
    assert.equal(mode(path), 0o600)
    const b64 = (s: string) => Buffer.from(s).toString('base64')
    assert.deepEqual(yaml.load(readFileSync(path, 'utf8')), {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{name: 'c', cluster: {server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64(pki.ca.certPem)}}],
      users: [{name: 'u', user: {'client-certificate-data': b64(pki.admin.cert), 'client-key-data': b64(pki.admin.key)}}],
      contexts: [{name: 'ctx', context: {cluster: 'c', user: 'u'}}],
      'current-context': 'ctx',
      preferences: {},
    })
    const config = configFromKubeconfig(loadKubeconfig(path))
    assert.equal(config.server, 'https://127.0.0.1:6443')
    assert.equal(config.ca?.toString(), pki.ca.certPem)
    assert.equal(config.cert?.toString(), pki.admin.cert)
    assert.equal(config.key?.toString(), pki.admin.key)
  })

  it('writes admin.kubeconfig always and the home config only when absent', async () => {
    const dataDir = tempDir()
    const home = tempDir()
    const homeConfigPath = join(home, '.orch', 'config')
    const opts = {dataDir, serverUrl: 'https://127.0.0.1:6443', caPem: pki.servingCA, certPem: pki.admin.cert, keyPem: pki.admin.key, homeConfigPath}
    assert.deepEqual(await writeAdminKubeconfigs(opts), [join(dataDir, 'admin.kubeconfig'), homeConfigPath])
    assert.equal(mode(homeConfigPath), 0o600)
    assert.equal(mode(join(home, '.orch')), 0o700)
    const doc = yaml.load(readFileSync(homeConfigPath, 'utf8')) as Record<string, unknown>
    assert.equal(doc['current-context'], 'orch-admin@orch')
    writeFileSync(homeConfigPath, 'mine\n')
    assert.deepEqual(await writeAdminKubeconfigs({...opts, serverUrl: 'https://127.0.0.1:7443'}), [join(dataDir, 'admin.kubeconfig')])
    assert.equal(readFileSync(homeConfigPath, 'utf8'), 'mine\n')
    assert.match(readFileSync(join(dataDir, 'admin.kubeconfig'), 'utf8'), /server: https:\/\/127\.0\.0\.1:7443/)
  })
})

describe('token files', () => {
  it('parses Kubernetes\' static token CSV', () => {
    const tokens = parseTokenFile('tok1,alice,uid-1,"system:masters,devs"\n\n tok2, bob ,uid-2\r\ntok3,carol,,ops\n,nobody,x\n')
    assert.deepEqual(tokens, [
      {token: 'tok1', user: {username: 'alice', uid: 'uid-1', groups: ['system:masters', 'devs']}},
      {token: 'tok2', user: {username: 'bob ', uid: 'uid-2', groups: []}},
      {token: 'tok3', user: {username: 'carol', groups: ['ops']}},
    ])
    assert.throws(() => parseTokenFile('tok,user\n'), /at least 3 columns/)
    assert.deepEqual(parseCSV('a,"b ""c"", d",e'), [['a', 'b "c", d', 'e']])
    assert.throws(() => parseCSV('a,"b'), /unterminated/)
  })

  it('parses bootstrap tokens', () => {
    assert.deepEqual(parseBootstrapTokens(['abcdef.0123456789abcdef']), [{id: 'abcdef', secret: '0123456789abcdef'}])
    assert.throws(() => parseBootstrapTokens(['ABCDEF.0123456789abcdef']), /must be of the form/)
    assert.throws(() => parseBootstrapTokens(['abcdef.0123']), /must be of the form/)
    const file = join(tempDir(), 'bootstrap')
    writeFileSync(file, '# tokens\nabcdef.0123456789abcdef\n\nzzzzzz.yyyyyyyyyyyyyyyy\n')
    assert.deepEqual(loadBootstrapTokenFile(file).map((t) => t.id), ['abcdef', 'zzzzzz'])
    writeFileSync(file, 'nope\n')
    assert.throws(() => loadBootstrapTokenFile(file), /line 1/)
  })

  it('isAnonymousAllowedPath', () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/version', '/version/', '/healthz?verbose']) assert.ok(isAnonymousAllowedPath(path), path)
    for (const path of ['/', '/api', '/healthz/etcd', '/apis', '/versionx', '/api/v1/namespaces']) assert.equal(isAnonymousAllowedPath(path), false, path)
  })
})

describe('authentication over TLS', () => {
  let pki: ServerPKI
  let server: Server
  let h2server: Http2SecureServer
  let base: string
  let h2base: string
  let tokenFile: string
  const agents: Agent[] = []

  before(async () => {
    const dataDir = tempDir()
    pki = await ensureServerPKI({dataDir, serverAddresses: ['127.0.0.1', 'localhost'], tlsSANs: []})
    tokenFile = join(dataDir, 'tokens.csv')
    writeFileSync(tokenFile, 'static-token-1,jane,uid-jane,"devs,ops"\n')
    const authenticator = new Authenticator({
      tokens: loadTokenFile(tokenFile),
      bootstrapTokens: parseBootstrapTokens(['abcdef.0123456789abcdef']),
    })
    const respond = (req: AuthenticatableRequest & {url?: string}, res: {writeHead(s: number, h: Record<string, string>): unknown; end(b: string): unknown}) => {
      const result = authenticator.authenticate(req)
      const path = req.url ?? '/'
      const allowed = result !== null && 'user' in result ? true : result === null && isAnonymousAllowedPath(path)
      res.writeHead(allowed ? 200 : 401, {'content-type': 'application/json'})
      res.end(JSON.stringify({result}))
    }
    const tls = {cert: pki.serving.cert, key: pki.serving.key, ...clientCertServerOptions(pki.clientCA.certPem)}
    server = createServer(tls, respond)
    h2server = createSecureServer(tls, respond)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    await new Promise<void>((resolve) => h2server.listen(0, '127.0.0.1', resolve))
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
    h2base = `https://localhost:${(h2server.address() as AddressInfo).port}`
  })

  after(async () => {
    await Promise.all(agents.map((a) => a.close()))
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await new Promise((resolve) => h2server.close(resolve))
  })

  async function call(path: string, client: {cert?: string; key?: string; token?: string} = {}): Promise<{status: number; result: unknown}> {
    const agent = new Agent({connect: {ca: pki.servingCA, cert: client.cert, key: client.key}})
    agents.push(agent)
    const headers: Record<string, string> = client.token ? {authorization: `Bearer ${client.token}`} : {}
    const res = await request(`${base}${path}`, {dispatcher: agent, headers})
    const body = (await res.body.json()) as {result: unknown}
    return {status: res.statusCode, result: body.result}
  }

  it('authenticates the admin certificate as orch-admin in system:masters', async () => {
    const {status, result} = await call('/api', {cert: pki.admin.cert, key: pki.admin.key})
    assert.equal(status, 200)
    assert.deepEqual(result, {user: {username: 'orch-admin', groups: ['system:masters', 'system:authenticated']}})
  })

  it('authenticates a certificate issued from a CSR-style signing with several groups', async () => {
    const client = await createSignedCert({ca: pki.ca, commonName: 'jane', organizations: ['a', 'b'], usages: ['client auth'], validitySeconds: 600})
    const {result} = await call('/api', {cert: client.certPem, key: client.keyPem})
    assert.deepEqual(result, {user: {username: 'jane', groups: ['a', 'b', 'system:authenticated']}})
  })

  it('does not authenticate a certificate from another CA', async () => {
    const other = await createCA('other', 1)
    const client = await createSignedCert({ca: other, commonName: 'orch-admin', organizations: ['system:masters'], usages: ['client auth'], validitySeconds: 600})
    const {status, result} = await call('/api', {cert: client.certPem, key: client.keyPem})
    assert.equal(status, 401)
    assert.match((result as {error: string}).error, /verifying certificate CN="orch-admin" failed/)
  })

  it('does not authenticate an expired certificate', async () => {
    const client = await createSignedCert({
      ca: pki.ca, commonName: 'orch-admin', organizations: ['system:masters'], usages: ['client auth'],
      notBefore: new Date(Date.now() - 7200_000), validitySeconds: 3600,
    })
    const {status, result} = await call('/api', {cert: client.certPem, key: client.keyPem})
    assert.equal(status, 401)
    assert.match((result as {error: string}).error, /expired/i)
  })

  it('does not authenticate a certificate not meant for client auth', async () => {
    const client = await createSignedCert({ca: pki.ca, commonName: 'srv', usages: ['server auth'], validitySeconds: 600})
    const {status} = await call('/api', {cert: client.certPem, key: client.keyPem})
    assert.equal(status, 401)
  })

  it('authenticates a bearer token of the token file', async () => {
    const {status, result} = await call('/api', {token: 'static-token-1'})
    assert.equal(status, 200)
    assert.deepEqual(result, {user: {username: 'jane', uid: 'uid-jane', groups: ['devs', 'ops', 'system:authenticated']}})
  })

  it('authenticates a bootstrap token', async () => {
    const {status, result} = await call('/api', {token: 'abcdef.0123456789abcdef'})
    assert.equal(status, 200)
    assert.deepEqual(result, {user: {username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated']}})
  })

  it('rejects forged tokens, even on anonymous paths', async () => {
    for (const token of ['forged', 'abcdef.0000000000000000', 'zzzzzz.0123456789abcdef']) {
      const {status, result} = await call('/healthz', {token})
      assert.equal(status, 401, token)
      assert.deepEqual(result, {error: 'invalid bearer token'}, token)
    }
  })

  it('lets anonymous callers reach /healthz only', async () => {
    assert.deepEqual(await call('/healthz'), {status: 200, result: null})
    assert.deepEqual(await call('/version'), {status: 200, result: null})
    assert.deepEqual(await call('/api/v1/pods'), {status: 401, result: null})
  })

  it('authenticates client certificates over HTTP/2', async () => {
    const session = http2Connect(h2base, {ca: pki.servingCA, cert: pki.admin.cert, key: pki.admin.key})
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({':path': '/api'})
        let text = ''
        stream.setEncoding('utf8')
        stream.on('data', (chunk: string) => (text += chunk))
        stream.on('end', () => resolve(text))
        stream.on('error', reject)
      })
      assert.deepEqual(JSON.parse(body), {result: {user: {username: 'orch-admin', groups: ['system:masters', 'system:authenticated']}}})
    } finally {
      session.close()
    }
  })
})
