import {after, before, beforeEach, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {ApiStatusError, RestClient, parseWarningHeaders, resourcePath, type ResourceLocator} from '../../src/client/index.js'
import {startFakeServer, type FakeServer, type Obj} from './fake-server.js'
import {caCert, clientCert, clientKey, serverCert, serverKey} from './tls-fixtures.js'

const configmaps = (namespace?: string, name?: string): ResourceLocator => ({group: '', version: 'v1', resource: 'configmaps', namespace, name})

async function rejection(promise: Promise<unknown>): Promise<ApiStatusError> {
  try {
    await promise
  } catch (e) {
    assert.ok(e instanceof ApiStatusError, `expected an ApiStatusError, got ${String(e)}`)
    return e
  }
  assert.fail('expected the request to fail')
}

describe('resource paths', () => {
  it('the core group is /api/v1, other groups /apis/{group}/{version}', () => {
    assert.equal(resourcePath(configmaps('ns1', 'a')), '/api/v1/namespaces/ns1/configmaps/a')
    assert.equal(resourcePath(configmaps()), '/api/v1/configmaps')
    assert.equal(
      resourcePath({group: 'apps', version: 'v1', resource: 'statefulsets', namespace: 'ns', name: 'web', subresource: 'status'}),
      '/apis/apps/v1/namespaces/ns/statefulsets/web/status',
    )
    assert.equal(
      resourcePath({group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests', name: 'csr-1', subresource: 'approval'}),
      '/apis/certificates.orch.io/v1/certificatesigningrequests/csr-1/approval',
    )
    assert.equal(resourcePath({group: '', version: 'v1', resource: 'namespaces', name: 'kube-system'}), '/api/v1/namespaces/kube-system')
  })

  it('names are escaped in paths', () => {
    assert.equal(resourcePath(configmaps('ns', 'a b/c')), '/api/v1/namespaces/ns/configmaps/a%20b%2Fc')
  })
})

describe('warning header parsing', () => {
  it('RFC 7234 299 warnings are read, with escapes, several per header, dates skipped, other codes ignored', () => {
    assert.deepEqual(
      parseWarningHeaders(['299 - "one"', '299 - "say \\"hi\\"", 299 - "two, with comma" "Sat, 01 Jan 2000 00:00:00 GMT"', '199 - "ignored"']),
      ['one', 'say "hi"', 'two, with comma'],
    )
    assert.deepEqual(parseWarningHeaders(undefined), [])
    assert.deepEqual(parseWarningHeaders('not a warning'), [])
  })
})

describe('RestClient against a Kubernetes-speaking server', () => {
  let server: FakeServer
  let client: RestClient

  before(async () => {
    server = await startFakeServer({token: 's3cret'})
    client = new RestClient({server: server.url, token: 's3cret'})
  })

  after(async () => {
    await client.close()
    await server.close()
  })

  beforeEach(() => {
    server.warnings = []
    server.expireContinueTokens = false
    server.requests.length = 0
  })

  it('sends the bearer token in Authorization', async () => {
    await client.list(configmaps('none'))
    assert.equal(server.requests[0].headers.authorization, 'Bearer s3cret')
    const anonymous = new RestClient({server: server.url})
    const error = await rejection(anonymous.list(configmaps('none')))
    assert.equal(error.code, 401)
    assert.equal(error.reason, 'Unauthorized')
    await anonymous.close()
  })

  it('listAll pages with limit and continue until the last page, at the first page resourceVersion', async () => {
    for (const name of ['e', 'c', 'a', 'd', 'b']) server.put({metadata: {name, namespace: 'paging'}, data: {k: name}})
    const firstRv = server.resourceVersion
    server.requests.length = 0
    const list = await client.listAll<Obj>(configmaps('paging'), {limit: 2})
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['a', 'b', 'c', 'd', 'e'],
    )
    assert.equal(list.metadata.resourceVersion, firstRv)
    assert.equal(list.metadata.continue, undefined)
    assert.equal(server.requests.length, 3)
    assert.deepEqual(
      server.requests.map((r) => [r.query.get('limit'), r.query.has('continue')]),
      [
        ['2', false],
        ['2', true],
        ['2', true],
      ],
    )
  })

  it('list returns one page with its continue token and remaining count', async () => {
    const page = await client.list<Obj>(configmaps('paging'), {limit: 3})
    assert.equal(page.items.length, 3)
    assert.equal(page.metadata.remainingItemCount, 2)
    assert.ok(page.metadata.continue)
    const rest = await client.list<Obj>(configmaps('paging'), {limit: 3, continue: page.metadata.continue})
    assert.deepEqual(
      rest.items.map((i) => i.metadata.name),
      ['d', 'e'],
    )
    assert.equal(rest.metadata.continue, undefined)
  })

  it('listAll restarts without limit when a continue token has expired (410)', async () => {
    server.expireContinueTokens = true
    const list = await client.listAll<Obj>(configmaps('paging'), {limit: 2})
    assert.equal(list.items.length, 5)
    assert.deepEqual(
      server.requests.map((r) => [r.query.get('limit'), r.query.has('continue')]),
      [
        ['2', false],
        ['2', true],
        [null, false],
      ],
    )
  })

  it('a 404 Status body becomes an ApiStatusError with code, reason, message and details', async () => {
    const error = await rejection(client.get(configmaps('default', 'nope')))
    assert.equal(error.name, 'ApiStatusError')
    assert.equal(error.code, 404)
    assert.equal(error.reason, 'NotFound')
    assert.equal(error.message, 'configmaps "nope" not found')
    assert.deepEqual(error.details, {name: 'nope', kind: 'configmaps'})
    assert.equal(error.status.kind, 'Status')
    assert.equal(error.status.status, 'Failure')
  })

  it('a 409 AlreadyExists Status becomes an ApiStatusError', async () => {
    const body = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dup'}, data: {}}
    await client.create(configmaps('conflicts'), body)
    const error = await rejection(client.create(configmaps('conflicts'), body))
    assert.equal(error.code, 409)
    assert.equal(error.reason, 'AlreadyExists')
    assert.equal(error.message, 'configmaps "dup" already exists')
  })

  it('a 409 Conflict on a stale resourceVersion becomes an ApiStatusError', async () => {
    const created = await client.create<Obj>(configmaps('conflicts'), {metadata: {name: 'stale'}, data: {v: '1'}})
    await client.update(configmaps('conflicts', 'stale'), {...created, data: {v: '2'}})
    const error = await rejection(client.update(configmaps('conflicts', 'stale'), {...created, data: {v: '3'}}))
    assert.equal(error.code, 409)
    assert.equal(error.reason, 'Conflict')
    assert.equal(
      error.message,
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    )
  })

  it('a failure without a Status body: HTTP status text and a one-line body snippet', async () => {
    const response = await client.request({method: 'GET', path: '/broken'})
    assert.equal(response.status, 502)
    const error = ApiStatusError.fromResponse(response.status, response.body)
    assert.equal(error.code, 502)
    assert.equal(error.message, 'Bad Gateway: upstream connect error')
    const viaJson = await rejection(client.requestJson({method: 'GET', path: '/broken'}))
    assert.equal(viaJson.message, 'Bad Gateway: upstream connect error')
  })

  it('create, get, update, patch and delete send JSON with the write options as query parameters', async () => {
    const ns = 'crud'
    const created = await client.create<Obj>(configmaps(ns), {metadata: {name: 'one'}, data: {a: '1'}}, {fieldManager: 'tester', fieldValidation: 'Strict'})
    assert.equal(server.requests.at(-1)?.query.get('fieldManager'), 'tester')
    assert.equal(server.requests.at(-1)?.query.get('fieldValidation'), 'Strict')
    assert.equal(server.requests.at(-1)?.headers['content-type'], 'application/json')
    assert.equal(created.metadata.namespace, ns)

    await client.create(configmaps(ns), {metadata: {name: 'dry'}}, {dryRun: true})
    assert.equal(server.requests.at(-1)?.query.get('dryRun'), 'All')
    assert.equal((await rejection(client.get(configmaps(ns, 'dry')))).code, 404)

    const patched = await client.patch<Obj>(configmaps(ns, 'one'), 'merge', {data: {b: '2'}})
    assert.equal(server.requests.at(-1)?.headers['content-type'], 'application/merge-patch+json')
    assert.deepEqual(patched.data, {a: '1', b: '2'})

    const unsupported = await rejection(client.patch(configmaps(ns, 'one'), 'json', [{op: 'remove', path: '/data/a'}]))
    assert.equal(unsupported.code, 415)
    assert.equal(server.requests.at(-1)?.headers['content-type'], 'application/json-patch+json')

    const got = await client.get<Obj>(configmaps(ns, 'one'))
    assert.equal(got.metadata.resourceVersion, patched.metadata.resourceVersion)

    const status = await client.delete<Obj>(configmaps(ns, 'one'), {propagationPolicy: 'Background', gracePeriodSeconds: 0})
    assert.equal(status.status, 'Success')
    assert.equal(server.requests.at(-1)?.query.get('propagationPolicy'), 'Background')
    assert.equal(server.requests.at(-1)?.query.get('gracePeriodSeconds'), '0')
  })

  it('Warning headers are passed to onWarning, on success and on failure', async () => {
    const seen: string[] = []
    const warned = new RestClient({server: server.url, token: 's3cret'}, {onWarning: (w) => seen.push(w)})
    server.warnings = ['299 - "configmaps are deprecated (pretend)"', '299 - "a \\"quoted\\" word", 299 - "second in one header"']
    await warned.list(configmaps('default'))
    assert.deepEqual(seen, ['configmaps are deprecated (pretend)', 'a "quoted" word', 'second in one header'])
    seen.length = 0
    server.warnings = ['299 - "still warned"']
    await rejection(warned.get(configmaps('default', 'missing')))
    assert.deepEqual(seen, ['still warned'])
    await warned.close()
  })
})

describe('RestClient TLS from the client config', () => {
  let server: FakeServer

  before(async () => {
    server = await startFakeServer({tls: {cert: serverCert, key: serverKey, ca: caCert}})
  })

  after(async () => {
    await server.close()
  })

  it('the CA verifies the server, and the client certificate and key are presented', async () => {
    const client = new RestClient({server: server.url, ca: Buffer.from(caCert), cert: Buffer.from(clientCert), key: Buffer.from(clientKey)})
    const list = await client.list(configmaps('default'))
    assert.equal(list.kind, 'ConfigMapList')
    assert.deepEqual(server.clientCNs, ['admin'])
    await client.close()
  })

  it('without the CA the server certificate is rejected', async () => {
    const client = new RestClient({server: server.url})
    await assert.rejects(client.list(configmaps('default')), (e: Error) => /certificate/i.test(e.message) || /SELF_SIGNED|UNABLE_TO/.test(String((e as NodeJS.ErrnoException).code)))
    await client.destroy()
  })

  it('insecure-skip-tls-verify accepts an unverified server', async () => {
    const client = new RestClient({server: server.url, insecureSkipTLSVerify: true})
    const list = await client.list(configmaps('default'))
    assert.equal(list.kind, 'ConfigMapList')
    await client.close()
  })
})

describe('TLS material is checked before use, in the words of Go\'s tls.X509KeyPair and client-go\'s TLSConfigFor', () => {
  const clientFor = (config: {ca?: string; cert?: string; key?: string}) => () =>
    new RestClient({
      server: 'https://127.0.0.1:1',
      ca: config.ca === undefined ? undefined : Buffer.from(config.ca),
      cert: config.cert === undefined ? undefined : Buffer.from(config.cert),
      key: config.key === undefined ? undefined : Buffer.from(config.key),
    })

  it('"tls: failed to find any PEM data in key input" for a key that is not PEM', () => {
    assert.throws(clientFor({cert: clientCert, key: 'garbage'}), {message: 'tls: failed to find any PEM data in key input'})
  })

  it('"tls: failed to find any PEM data in certificate input" for a certificate that is not PEM (checked before the key)', () => {
    assert.throws(clientFor({cert: 'garbage', key: 'garbage'}), {message: 'tls: failed to find any PEM data in certificate input'})
  })

  it('"tls: private key does not match public key" for a key of another certificate', () => {
    assert.throws(clientFor({cert: clientCert, key: serverKey}), {message: 'tls: private key does not match public key'})
  })

  it('"tls: found a certificate rather than a key in the PEM for the private key"; a PEM key that does not parse is "tls: failed to parse private key"', () => {
    assert.throws(clientFor({cert: clientCert, key: clientCert}), {message: 'tls: found a certificate rather than a key in the PEM for the private key'})
    const broken = '-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n'
    assert.throws(clientFor({cert: clientCert, key: broken}), {message: 'tls: failed to parse private key'})
  })

  it('"unable to load root certificates: unable to parse bytes as PEM block" for CA data that is not PEM', () => {
    assert.throws(clientFor({ca: 'garbage'}), {message: 'unable to load root certificates: unable to parse bytes as PEM block'})
  })

  it('a matching pair and a good CA are accepted', async () => {
    const client = clientFor({ca: caCert, cert: clientCert, key: clientKey})()
    await client.destroy()
  })
})
