// Protobuf on the wire: requests and responses, lists, watch frames, negotiation and bad input.
import assert from 'node:assert/strict'
import {createServer} from 'node:http'
import {request} from 'node:https'
import type {AddressInfo} from 'node:net'
import {after, before, describe, it} from 'node:test'
import {statefulSet} from '../../src/api/apps/statefulset.js'
import {configMap} from '../../src/api/core/configmap.js'
import {decodeResponseBody, RestClient} from '../../src/client/rest.js'
import {decodeObject, decodeWatchEvent, encodeObject, WatchFrameReader} from '../../src/machinery/protobuf.js'
import {call, tlsOptions} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const PB = 'application/vnd.orch.protobuf'

function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{status: number; headers: Record<string, any>; body: Buffer}> {
  const tls = tlsOptions(base)
  return new Promise((resolve, reject) => {
    const req = request(base + path, {method, headers: {...tls.headers, ...headers}, ca: tls.ca, cert: tls.cert, key: tls.key}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks)}))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('protobuf', () => {
  let server: RunningOrch
  const base = '/api/v1/namespaces/default/configmaps'
  before(async () => {
    server = await startOrchServer(['--controllers='])
  })
  after(async () => server.cleanup())

  it('requests in protobuf are accepted and answered in protobuf with the 0x6b 0x38 0x73 0x00 wrapper', async () => {
    const body = Buffer.from(encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pb'}, data: {k: 'v'}}))
    const created = await raw(server.url, 'POST', base, {'Content-Type': PB, Accept: PB}, body)
    assert.equal(created.status, 201, created.body.toString())
    assert.equal(created.headers['content-type'], PB)
    assert.deepEqual([...created.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00])
    const object = decodeObject(configMap, created.body)
    assert.equal(object.metadata!.name, 'pb')
    assert.deepEqual(object.data, {k: 'v'})
  })

  it('a request body in Kubernetes\' protobuf media type (application/vnd.kubernetes.protobuf, as kubectl sends) is read as protobuf; the answer falls back to JSON', async () => {
    const body = Buffer.from(encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pb-kubectl'}, data: {k: 'v'}}))
    const kubernetesType = 'application/vnd.kubernetes.protobuf'
    const created = await raw(server.url, 'POST', base, {'Content-Type': kubernetesType, Accept: `${kubernetesType}, application/json`}, body)
    assert.equal(created.status, 201, created.body.toString())
    assert.equal(created.headers['content-type'], 'application/json')
    assert.deepEqual(JSON.parse(created.body.toString()).data, {k: 'v'})
  })

  it('lists come back in protobuf', async () => {
    const listed = await raw(server.url, 'GET', base, {Accept: PB})
    const list = decodeObject(configMap, listed.body)
    assert.equal(list.kind, 'ConfigMapList')
    assert.ok(list.items.some((i: any) => i.metadata.name === 'pb'))
  })

  it('"Accept: application/vnd.orch.protobuf, application/json" falls back to JSON where protobuf is not served', async () => {
    const discovery = await call(server.url, 'GET', '/api/v1', undefined, {Accept: `${PB}, application/json`})
    assert.equal(discovery.status, 200)
    assert.equal(discovery.json.kind, 'APIResourceList')
    const object = await raw(server.url, 'GET', `${base}/pb`, {Accept: `${PB}, application/json`})
    assert.equal(object.headers['content-type'], PB)
  })

  it('a protobuf watch is length-prefixed frames of WatchEvents', async () => {
    const rv = (await call(server.url, 'GET', base)).json.metadata.resourceVersion
    const tls = tlsOptions(server.url)
    const events: any[] = []
    const done = new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}${base}?watch=1&resourceVersion=${rv}`, {headers: {...tls.headers, Accept: PB}, ca: tls.ca, cert: tls.cert, key: tls.key}, (res) => {
        assert.equal(res.headers['content-type'], `${PB};stream=watch`)
        const reader = new WatchFrameReader()
        res.on('data', (chunk: Buffer) => {
          for (const frame of reader.push(chunk)) events.push(decodeWatchEvent(configMap, frame))
          if (events.length >= 2) {
            req.destroy()
            resolve()
          }
        })
      })
      req.on('error', (e) => (events.length >= 2 ? resolve() : reject(e)))
      req.end()
    })
    await call(server.url, 'POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pbw'}})
    await call(server.url, 'DELETE', `${base}/pbw`)
    await done
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'pbw'], ['DELETED', 'pbw']])
  })

  it('truncated or garbage protobuf and a wrapper with the wrong magic are 400, nothing stored', async () => {
    const good = Buffer.from(encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'bad'}}))
    for (const body of [good.subarray(0, good.length - 5), Buffer.from('garbage garbage'), Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x01]), good.subarray(4)])]) {
      const result = await raw(server.url, 'POST', base, {'Content-Type': PB}, body)
      assert.equal(result.status, 400, result.body.toString())
      assert.match(JSON.parse(result.body.toString()).message, /^error decoding protobuf: (?!error decoding protobuf)/, 'said once')
    }
    assert.equal((await call(server.url, 'GET', `${base}/bad`)).status, 404)
  })

  it('src/client speaks protobuf', async () => {
    const tls = tlsOptions(server.url)
    const client = new RestClient({server: server.url, ca: Buffer.from(tls.ca!), cert: Buffer.from(tls.cert!), key: Buffer.from(tls.key!)}, {wire: 'protobuf'})
    const object = await client.get<any>({group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'pb'})
    assert.deepEqual(object.data, {k: 'v'})
    await client.close()
  })

  it('src/client rejects a protobuf response without the magic prefix', async () => {
    assert.throws(() => decodeResponseBody(PB, Buffer.from([0x0a, 0x02, 0x76, 0x31])), /without the expected magic prefix/)
    const fake = createServer((_req, res) => {
      res.writeHead(200, {'Content-Type': PB})
      res.end(Buffer.from([0x0a, 0x02, 0x76, 0x31]))
    })
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
    const client = new RestClient({server: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`}, {wire: 'protobuf'})
    await assert.rejects(client.get({group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'x'}), /magic prefix/)
    await client.close()
    fake.close()
  })

  it('the /scale subresource speaks protobuf: autoscaling/v1 Scale in and out', async () => {
    const sets = '/apis/apps/v1/namespaces/default/statefulsets'
    const created = await call(server.url, 'POST', sets, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'pb-scale'},
      spec: {serviceName: 's', replicas: 1, selector: {matchLabels: {app: 's'}}, template: {metadata: {labels: {app: 's'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    const got = await raw(server.url, 'GET', `${sets}/pb-scale/scale`, {Accept: PB})
    assert.equal(got.status, 200, got.body.toString())
    assert.equal(got.headers['content-type'], PB)
    const scale = decodeObject(statefulSet, got.body)
    assert.equal(scale.apiVersion, 'autoscaling/v1')
    assert.equal(scale.kind, 'Scale')
    assert.equal(scale.spec.replicas, 1)
    const body = Buffer.from(encodeObject(statefulSet, {...scale, spec: {replicas: 4}}))
    const put = await raw(server.url, 'PUT', `${sets}/pb-scale/scale`, {'Content-Type': PB, Accept: PB}, body)
    assert.equal(put.status, 200, put.body.toString())
    assert.equal(decodeObject(statefulSet, put.body).spec.replicas, 4)
    assert.equal((await call(server.url, 'GET', `${sets}/pb-scale`)).json.spec.replicas, 4)
  })
})
