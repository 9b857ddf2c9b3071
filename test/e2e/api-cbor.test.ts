// CBOR under gate CBORServingAndStorage (alpha, off by default).
import assert from 'node:assert/strict'
import {request} from 'node:https'
import {after, before, describe, it} from 'node:test'
import {decodeCbor, encodeCbor} from '../../src/machinery/cbor.js'
import {call, tlsOptions} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{status: number; headers: Record<string, any>; body: Buffer}> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, {...tlsOptions(base), method, headers}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks)}))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('CBOR', () => {
  let off: RunningOrch
  let on: RunningOrch
  before(async () => {
    off = await startOrchServer(['--controllers='])
    on = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'])
  })
  after(async () => {
    await off.cleanup()
    await on.cleanup()
  })

  it('with the gate off (the default), a CBOR Accept is 406 and a CBOR Content-Type is 415', async () => {
    const get = await call(off.url, 'GET', '/api/v1/namespaces/default', undefined, {Accept: 'application/cbor'})
    assert.equal(get.status, 406)
    const body = encodeCbor({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'c'}})
    const post = await raw(off.url, 'POST', '/api/v1/namespaces/default/configmaps', {'Content-Type': 'application/cbor'}, body)
    assert.equal(post.status, 415)
  })

  it('with the gate on, application/cbor in and out: one data item, self-described with tag 55799', async () => {
    const body = encodeCbor({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cbor'}, data: {a: 'b'}})
    const post = await raw(on.url, 'POST', '/api/v1/namespaces/default/configmaps', {'Content-Type': 'application/cbor', Accept: 'application/cbor'}, body)
    assert.equal(post.status, 201, post.body.toString())
    assert.equal(post.headers['content-type'], 'application/cbor')
    assert.deepEqual([...post.body.subarray(0, 3)], [0xd9, 0xd9, 0xf7])
    const created = decodeCbor(post.body) as any
    assert.equal(created.metadata.name, 'cbor')
    assert.deepEqual(created.data, {a: 'b'})
  })

  it('a CBOR watch is application/cbor-seq with one event per item', async () => {
    const rv = (await call(on.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion
    const events: any[] = []
    const done = new Promise<void>((resolve, reject) => {
      const req = request(`${on.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=5`, {...tlsOptions(on.url), headers: {Accept: 'application/cbor'}}, (res) => {
        assert.equal(res.headers['content-type'], 'application/cbor-seq')
        let buffer = Buffer.alloc(0)
        res.on('data', (chunk: Buffer) => {
          buffer = Buffer.concat([buffer, chunk])
          // items are self-described; split on the tag head
          const parts: Buffer[] = []
          let start = 0
          for (let i = 3; i <= buffer.length - 3; i++) {
            if (buffer[i] === 0xd9 && buffer[i + 1] === 0xd9 && buffer[i + 2] === 0xf7) {
              parts.push(buffer.subarray(start, i))
              start = i
            }
          }
          parts.push(buffer.subarray(start))
          try {
            const decoded = parts.map((p) => decodeCbor(p))
            events.splice(0, events.length, ...decoded)
            if (events.length >= 2) {
              req.destroy()
              resolve()
            }
          } catch {
            // an item split across chunks: wait for more
          }
        })
        res.on('end', () => resolve())
      })
      req.on('error', (e) => (events.length >= 2 ? resolve() : reject(e)))
      req.end()
    })
    await call(on.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'seq-1'}})
    await call(on.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'seq-2'}})
    await done
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'seq-1'], ['ADDED', 'seq-2']])
  })

  it('there is no CBOR form of JSON patch, merge patch or strategic merge patch: 415', async () => {
    for (const type of ['application/json-patch+cbor', 'application/merge-patch+cbor', 'application/strategic-merge-patch+cbor']) {
      const result = await raw(on.url, 'PATCH', '/api/v1/namespaces/default', {'Content-Type': type}, encodeCbor({}))
      assert.equal(result.status, 415, type)
    }
  })

  it('bodies Kubernetes\' CBOR decoder refuses (duplicate keys, invalid UTF-8, over 1024 pairs, over 64 levels) are a 400 Status in its words, and nothing is stored', async () => {
    const text = (value: Buffer | string) => {
      const bytes = Buffer.from(value)
      return Buffer.concat([bytes.length < 24 ? Buffer.from([0x60 | bytes.length]) : Buffer.from([0x78, bytes.length]), bytes])
    }
    const mapHead = (pairs: number) => (pairs < 24 ? Buffer.from([0xa0 | pairs]) : Buffer.from([0xb9, pairs >> 8, pairs & 0xff]))
    const configMap = (name: string, ...extra: Buffer[]) =>
      Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), mapHead(3 + extra.length / 2), text('apiVersion'), text('v1'), text('kind'), text('ConfigMap'), text('metadata'), mapHead(1), text('name'), text(name), ...extra])
    let deep = text('x')
    for (let i = 0; i < 65; i++) deep = Buffer.concat([mapHead(1), text('a'), deep])
    const manyPairs = Buffer.concat([mapHead(1025), ...Array.from({length: 1025}, (_, i) => [text(`k${i}`), text('v')]).flat()])
    const unrecognized = 'the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: '
    const cases: [string, Buffer, string][] = [
      ['bad-dup', configMap('bad-dup', text('kind'), text('Secret')), `${unrecognized}cbor: found duplicate map key "kind" at map element index 3 (`],
      ['bad-dup-data', configMap('bad-dup-data', text('data'), Buffer.concat([mapHead(2), text('a'), text('1'), text('a'), text('2')])), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: found duplicate map key "a" at map element index 1'],
      ['bad-utf8', configMap('bad-utf8', text('data'), Buffer.concat([mapHead(1), text('a'), text(Buffer.from([0x61, 0xff]))])), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: invalid UTF-8 string'],
      ['bad-pairs', configMap('bad-pairs', text('data'), manyPairs), `${unrecognized}cbor: exceeded max number of key-value pairs 1024 for CBOR map (`],
      ['bad-deep', configMap('bad-deep', text('data'), deep), `${unrecognized}cbor: exceeded max nested level 64 (`],
      ['bad-undefined', configMap('bad-undefined', text('data'), Buffer.concat([mapHead(1), text('a'), Buffer.from([0xf7])])), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized'],
    ]
    for (const [name, body, message] of cases) {
      const post = await raw(on.url, 'POST', '/api/v1/namespaces/default/configmaps', {'Content-Type': 'application/cbor'}, body)
      assert.equal(post.status, 400, `${name}: ${post.body.toString()}`)
      const status = JSON.parse(post.body.toString())
      assert.equal(status.kind, 'Status')
      assert.equal(status.reason, 'BadRequest')
      assert.ok(status.message.startsWith(message), `${name}: ${status.message}`)
      assert.equal((await call(on.url, 'GET', `/api/v1/namespaces/default/configmaps/${name}`)).status, 404, name)
    }
  })

  it('garbage CBOR is 400, never 500', async () => {
    const result = await raw(on.url, 'POST', '/api/v1/namespaces/default/configmaps', {'Content-Type': 'application/cbor'}, Buffer.from([0xd9, 0xd9, 0xf7, 0xbf, 0x61]))
    assert.equal(result.status, 400, result.body.toString())
  })
})
