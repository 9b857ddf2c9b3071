// Keys that name members of Object.prototype (__proto__, constructor, toString, hasOwnProperty, ...) are
// keys like any other: Kubernetes stores, returns, patches, applies and selects them as it does `a`.
// The bodies here are JSON text (a JavaScript literal `{__proto__: ...}` would set a prototype, not a key);
// answers are JSON.parse'd, which makes own properties of them all.
import assert from 'node:assert/strict'
import {request} from 'node:https'
import {after, before, describe, it} from 'node:test'
import {configMap} from '../../src/api/core/configmap.js'
import {decodeCbor, encodeCbor} from '../../src/machinery/cbor.js'
import {decodeObject, encodeObject} from '../../src/machinery/protobuf.js'
import {call, openWatch, tlsOptions, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const CMS = '/api/v1/namespaces/default/configmaps'
const MERGE = {'Content-Type': 'application/merge-patch+json'}
const SMP = {'Content-Type': 'application/strategic-merge-patch+json'}
const JSONPATCH = {'Content-Type': 'application/json-patch+json'}
const APPLY = {'Content-Type': 'application/apply-patch+yaml'}
/** data keys named after Object.prototype's members (a ConfigMap key may start with `_`) */
const DATA_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf']
/** label keys (a label key starts with an alphanumeric, so no __proto__) */
const LABEL_KEYS = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf']

/** A request with a binary body, answered as bytes. */
function rawCall(base: string, method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<{status: number; body: Buffer}> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, {...tlsOptions(base), method, headers}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body: Buffer.concat(chunks)}))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The own properties of an answer's map, as [key, value] pairs sorted by key. */
function own(map: unknown): [string, unknown][] {
  assert.ok(map !== null && typeof map === 'object', `not a map: ${JSON.stringify(map)}`)
  return Object.entries(map as object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

function sorted(record: Record<string, string>): [string, unknown][] {
  return own(record)
}

/** {key: value-of-key} for keys, built without assignment so that __proto__ is an own key. */
function mapOf(keys: string[], value: (key: string) => string): Record<string, string> {
  return Object.fromEntries(keys.map((key) => [key, value(key)]))
}

/** The fields a managedFields entry's fieldsV1 lists under f:<map> (without "."). */
function managedKeys(result: HttpResult, manager: string, map: string[]): string[] {
  const entry = (result.json.metadata.managedFields ?? []).find((e: any) => e.manager === manager)
  assert.ok(entry, `no managedFields entry for ${manager}: ${result.text}`)
  let set = entry.fieldsV1
  for (const step of map) {
    assert.ok(Object.hasOwn(set, `f:${step}`), `${manager} owns no f:${step}: ${JSON.stringify(entry.fieldsV1)}`)
    set = set[`f:${step}`]
  }
  return Object.keys(set)
    .filter((k) => k !== '.')
    .sort()
}

describe('"a key is a key": data and labels named __proto__, constructor, toString, hasOwnProperty are stored, returned, listed, watched, merged by merge/strategic/JSON patch and applied like any other, and apply reports no conflict for them', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const data = mapOf(DATA_KEYS, (key) => `v-${key}`)
  const labels = mapOf(LABEL_KEYS, (key) => `l-${key}`)
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('create stores them, get and list return them, and managedFields records them', async () => {
    const body = JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'keys', labels, annotations: mapOf(LABEL_KEYS, () => 'a')}, data})
    assert.ok(body.includes('"__proto__":"v-__proto__"'))
    const created = await api('POST', `${CMS}?fieldManager=creator`, body)
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(own(created.json.data), sorted(data))
    assert.deepEqual(own(created.json.metadata.labels), sorted(labels))
    assert.deepEqual(managedKeys(created, 'creator', ['data']), DATA_KEYS.map((k) => `f:${k}`).sort())
    assert.deepEqual(managedKeys(created, 'creator', ['metadata', 'labels']), LABEL_KEYS.map((k) => `f:${k}`).sort())

    const got = await api('GET', `${CMS}/keys`)
    assert.equal(got.status, 200, got.text)
    assert.deepEqual(own(got.json.data), sorted(data))
    assert.deepEqual(own(got.json.metadata.labels), sorted(labels))
    assert.deepEqual(own(got.json.metadata.annotations), sorted(mapOf(LABEL_KEYS, () => 'a')))
    assert.deepEqual(got.json.metadata.managedFields, created.json.metadata.managedFields)

    const listed = await api('GET', CMS)
    assert.equal(listed.status, 200, listed.text)
    const item = listed.json.items.find((i: any) => i.metadata.name === 'keys')
    assert.deepEqual(own(item.data), sorted(data))
    assert.deepEqual(own(item.metadata.labels), sorted(labels))

    // the table view and a PUT of what was read keep them too
    const updated = await api('PUT', `${CMS}/keys`, JSON.stringify({...got.json, data: {...got.json.data, extra: 'e'}}))
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual(own(updated.json.data), sorted({...data, extra: 'e'}))
    const reverted = await api('PUT', `${CMS}/keys`, JSON.stringify({...updated.json, data}))
    assert.equal(reverted.status, 200, reverted.text)
    assert.deepEqual(own(reverted.json.data), sorted(data))
  })

  it('a label selector matches such keys like any other, and an object without them is not matched by their presence', async () => {
    const plain = await api('POST', CMS, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'plain', labels: {tier: 'web'}}})
    assert.equal(plain.status, 201, plain.text)
    const names = async (selector: string) => {
      const listed = await api('GET', `${CMS}?labelSelector=${encodeURIComponent(selector)}`)
      assert.equal(listed.status, 200, listed.text)
      return listed.json.items.map((i: any) => i.metadata.name).sort()
    }
    assert.deepEqual(await names('constructor=l-constructor'), ['keys'])
    assert.deepEqual(await names('constructor'), ['keys'])
    assert.deepEqual(await names('!constructor'), ['plain'])
    assert.deepEqual(await names('toString in (l-toString)'), ['keys'])
    assert.deepEqual(await names('hasOwnProperty!=x'), ['keys', 'plain'])
    assert.deepEqual(await names('valueOf,tier'), [])
    assert.deepEqual(await names('tier,!isPrototypeOf'), ['plain'])
    assert.deepEqual(await names('constructor=x'), [])
  })

  it('a watch sends them, and a watch with a label selector on them filters by them', async () => {
    const rv = (await api('GET', CMS)).json.metadata.resourceVersion
    const all = await openWatch(server.url, `${CMS}?watch=1&resourceVersion=${rv}`)
    const selected = await openWatch(server.url, `${CMS}?watch=1&resourceVersion=${rv}&labelSelector=${encodeURIComponent('constructor=w')}`)
    try {
      const unselected = await api('POST', CMS, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'watched-plain'}, data: {a: 'b'}}))
      assert.equal(unselected.status, 201, unselected.text)
      const watched = await api('POST', CMS, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'watched', labels: {constructor: 'w'}}, data}))
      assert.equal(watched.status, 201, watched.text)
      const [, event] = await all.waitFor(2)
      assert.equal(event.type, 'ADDED')
      assert.deepEqual(own(event.object.data), sorted(data))
      const [only] = await selected.waitFor(1)
      assert.equal(only.object.metadata.name, 'watched')
      assert.deepEqual(own(only.object.data), sorted(data))
    } finally {
      all.close()
      selected.close()
    }
  })

  it('a merge patch sets, replaces and removes them', async () => {
    assert.equal((await api('POST', CMS, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'merged'}, data: {a: 'b'}}))).status, 201)
    const added = await api('PATCH', `${CMS}/merged`, '{"data":{"__proto__":"p","constructor":"c"},"metadata":{"labels":{"toString":"t"}}}', MERGE)
    assert.equal(added.status, 200, added.text)
    assert.deepEqual(own(added.json.data), [['__proto__', 'p'], ['a', 'b'], ['constructor', 'c']])
    assert.deepEqual(own(added.json.metadata.labels), [['toString', 't']])
    const replaced = await api('PATCH', `${CMS}/merged`, '{"data":{"__proto__":"q","constructor":null}}', MERGE)
    assert.equal(replaced.status, 200, replaced.text)
    assert.deepEqual(own(replaced.json.data), [['__proto__', 'q'], ['a', 'b']])
    const got = await api('GET', `${CMS}/merged`)
    assert.deepEqual(own(got.json.data), [['__proto__', 'q'], ['a', 'b']])
    const removed = await api('PATCH', `${CMS}/merged`, '{"data":{"__proto__":null},"metadata":{"labels":{"toString":null}}}', MERGE)
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual(own(removed.json.data), [['a', 'b']])
    assert.deepEqual(own(removed.json.metadata.labels ?? {}), [])
    // a patch that names a key the object does not have, by a prototype member's name, removes nothing
    const noop = await api('PATCH', `${CMS}/merged`, '{"data":{"hasOwnProperty":null,"toString":null}}', MERGE)
    assert.equal(noop.status, 200, noop.text)
    assert.deepEqual(own(noop.json.data), [['a', 'b']])
  })

  it('a strategic merge patch sets, replaces and removes them', async () => {
    assert.equal((await api('POST', CMS, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'strategic'}, data: {a: 'b'}}))).status, 201)
    const added = await api('PATCH', `${CMS}/strategic`, '{"data":{"__proto__":"p","constructor":"c"},"metadata":{"labels":{"toString":"t","constructor":"k"}}}', SMP)
    assert.equal(added.status, 200, added.text)
    assert.deepEqual(own(added.json.data), [['__proto__', 'p'], ['a', 'b'], ['constructor', 'c']])
    assert.deepEqual(own(added.json.metadata.labels), [['constructor', 'k'], ['toString', 't']])
    const replaced = await api('PATCH', `${CMS}/strategic`, '{"data":{"__proto__":"q","constructor":null},"metadata":{"labels":{"toString":null}}}', SMP)
    assert.equal(replaced.status, 200, replaced.text)
    assert.deepEqual(own(replaced.json.data), [['__proto__', 'q'], ['a', 'b']])
    assert.deepEqual(own(replaced.json.metadata.labels), [['constructor', 'k']])
    const removed = await api('PATCH', `${CMS}/strategic`, '{"data":{"__proto__":null,"valueOf":null}}', SMP)
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual(own(removed.json.data), [['a', 'b']])
    // $patch: replace on a map with such keys
    const replacedWhole = await api('PATCH', `${CMS}/strategic`, '{"data":{"$patch":"replace","__proto__":"r","toString":"s"}}', SMP)
    assert.equal(replacedWhole.status, 200, replacedWhole.text)
    assert.deepEqual(own(replacedWhole.json.data), [['__proto__', 'r'], ['toString', 's']])
  })

  it('a JSON patch adds, replaces, tests and removes /data/__proto__ and /metadata/labels/constructor', async () => {
    assert.equal((await api('POST', CMS, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'jsonpatched', labels: {a: 'b'}}, data: {a: 'b'}}))).status, 201)
    const added = await api(
      'PATCH',
      `${CMS}/jsonpatched`,
      JSON.stringify([
        {op: 'add', path: '/data/__proto__', value: 'p'},
        {op: 'add', path: '/data/constructor', value: 'c'},
        {op: 'add', path: '/metadata/labels/constructor', value: 'k'},
      ]),
      JSONPATCH,
    )
    assert.equal(added.status, 200, added.text)
    assert.deepEqual(own(added.json.data), [['__proto__', 'p'], ['a', 'b'], ['constructor', 'c']])
    assert.deepEqual(own(added.json.metadata.labels), [['a', 'b'], ['constructor', 'k']])
    const replaced = await api(
      'PATCH',
      `${CMS}/jsonpatched`,
      JSON.stringify([
        {op: 'test', path: '/data/__proto__', value: 'p'},
        {op: 'replace', path: '/data/__proto__', value: 'q'},
        {op: 'copy', from: '/data/__proto__', path: '/data/toString'},
        {op: 'move', from: '/data/constructor', path: '/data/hasOwnProperty'},
      ]),
      JSONPATCH,
    )
    assert.equal(replaced.status, 200, replaced.text)
    assert.deepEqual(own(replaced.json.data), [['__proto__', 'q'], ['a', 'b'], ['hasOwnProperty', 'c'], ['toString', 'q']])
    const removed = await api(
      'PATCH',
      `${CMS}/jsonpatched`,
      JSON.stringify([
        {op: 'remove', path: '/data/__proto__'},
        {op: 'remove', path: '/data/toString'},
        {op: 'remove', path: '/metadata/labels/constructor'},
      ]),
      JSONPATCH,
    )
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual(own(removed.json.data), [['a', 'b'], ['hasOwnProperty', 'c']])
    assert.deepEqual(own(removed.json.metadata.labels), [['a', 'b']])
    // a key that is not there, by a prototype member's name, cannot be removed or tested
    for (const op of [
      {op: 'remove', path: '/data/__proto__'},
      {op: 'remove', path: '/data/constructor'},
      {op: 'test', path: '/data/valueOf', value: 'x'},
    ]) {
      const refused = await api('PATCH', `${CMS}/jsonpatched`, JSON.stringify([op]), JSONPATCH)
      assert.equal(refused.status, 422, `${JSON.stringify(op)}: ${refused.text}`)
    }
    // and replacing it adds it (json-patch v4's replace of a missing object key), not the prototype's
    const upserted = await api('PATCH', `${CMS}/jsonpatched`, JSON.stringify([{op: 'replace', path: '/data/toString', value: 'x'}]), JSONPATCH)
    assert.equal(upserted.status, 200, upserted.text)
    assert.deepEqual(own(upserted.json.data), [['a', 'b'], ['hasOwnProperty', 'c'], ['toString', 'x']])
  })

  it('server-side apply by two managers: no false conflict over such a key, a real conflict on it still reported', async () => {
    const created = await api('POST', `${CMS}?fieldManager=mgrA`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"constructor":"x"}},"data":{"__proto__":"a","toString":"t"}}')
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(own(created.json.data), [['__proto__', 'a'], ['toString', 't']])
    const applied = await api('PATCH', `${CMS}/applied?fieldManager=mgrB`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    tier: web\ndata:\n  other: o\n', APPLY)
    assert.equal(applied.status, 200, applied.text)
    assert.deepEqual(own(applied.json.metadata.labels), [['constructor', 'x'], ['tier', 'web']])
    assert.deepEqual(own(applied.json.data), [['__proto__', 'a'], ['other', 'o'], ['toString', 't']])
    assert.deepEqual(managedKeys(applied, 'mgrB', ['metadata', 'labels']), ['f:tier'])
    assert.deepEqual(managedKeys(applied, 'mgrA', ['metadata', 'labels']), ['f:constructor'])
    assert.deepEqual(managedKeys(applied, 'mgrA', ['data']), ['f:__proto__', 'f:toString'])

    // the same keys with other values: real conflicts, named as Kubernetes names them
    const conflict = await api('PATCH', `${CMS}/applied?fieldManager=mgrB`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    tier: web\n    constructor: z\ndata:\n  other: o\n  __proto__: b\n', APPLY)
    assert.equal(conflict.status, 409, conflict.text)
    assert.deepEqual(conflict.json.details.causes.map((c: any) => c.field).sort(), ['.data.__proto__', '.metadata.labels.constructor'])
    // the same values are shared, not a conflict
    const shared = await api('PATCH', `${CMS}/applied?fieldManager=mgrB`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    tier: web\n    constructor: x\ndata:\n  other: o\n  __proto__: a\n', APPLY)
    assert.equal(shared.status, 200, shared.text)
    assert.deepEqual(managedKeys(shared, 'mgrB', ['data']), ['f:__proto__', 'f:other'])
    assert.deepEqual(managedKeys(shared, 'mgrB', ['metadata', 'labels']), ['f:constructor', 'f:tier'])
    // force takes them over
    const forced = await api('PATCH', `${CMS}/applied?fieldManager=mgrB&force=true`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    tier: web\n    constructor: z\ndata:\n  other: o\n  __proto__: b\n  toString: u\n', APPLY)
    assert.equal(forced.status, 200, forced.text)
    assert.deepEqual(own(forced.json.data), [['__proto__', 'b'], ['other', 'o'], ['toString', 'u']])
    assert.deepEqual(own(forced.json.metadata.labels), [['constructor', 'z'], ['tier', 'web']])
    // mgrA keeps only the maps themselves ("."), as in Kubernetes
    assert.deepEqual(managedKeys(forced, 'mgrA', ['data']), [])
    assert.deepEqual(managedKeys(forced, 'mgrA', ['metadata', 'labels']), [])
    assert.deepEqual(managedKeys(forced, 'mgrB', ['data']), ['f:__proto__', 'f:other', 'f:toString'])
    // a field the applier no longer applies, that it alone owns, is removed
    const dropped = await api('PATCH', `${CMS}/applied?fieldManager=mgrB`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    tier: web\ndata:\n  other: o\n', APPLY)
    assert.equal(dropped.status, 200, dropped.text)
    assert.deepEqual(own(dropped.json.data), [['other', 'o']])
    assert.deepEqual(own(dropped.json.metadata.labels), [['tier', 'web']])
  })

  it('server-side apply creates an object with such keys, in JSON and in YAML', async () => {
    const yaml = await api('PATCH', `${CMS}/applied-yaml?fieldManager=m`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-yaml\n  labels:\n    constructor: c\n    hasOwnProperty: h\ndata:\n  __proto__: p\n  toString: t\n', APPLY)
    assert.equal(yaml.status, 201, yaml.text)
    assert.deepEqual(own(yaml.json.data), [['__proto__', 'p'], ['toString', 't']])
    assert.deepEqual(own(yaml.json.metadata.labels), [['constructor', 'c'], ['hasOwnProperty', 'h']])
    assert.deepEqual(managedKeys(yaml, 'm', ['data']), ['f:__proto__', 'f:toString'])
    const json = await api('PATCH', `${CMS}/applied-json?fieldManager=m`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied-json","labels":{"constructor":"c"}},"data":{"__proto__":"p","valueOf":"v"}}', APPLY)
    assert.equal(json.status, 201, json.text)
    assert.deepEqual(own(json.json.data), [['__proto__', 'p'], ['valueOf', 'v']])
    const got = await api('GET', `${CMS}/applied-json`)
    assert.deepEqual(own(got.json.data), [['__proto__', 'p'], ['valueOf', 'v']])
  })

  it('an update by another manager of such a key moves its ownership, and apply then conflicts with that manager', async () => {
    const created = await api('PATCH', `${CMS}/owned?fieldManager=applier`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned"},"data":{"__proto__":"p","constructor":"c"}}', APPLY)
    assert.equal(created.status, 201, created.text)
    const updated = await api('PATCH', `${CMS}/owned?fieldManager=editor`, '{"data":{"__proto__":"q"}}', MERGE)
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual(managedKeys(updated, 'editor', ['data']), ['f:__proto__'])
    assert.deepEqual(managedKeys(updated, 'applier', ['data']), ['f:constructor'])
    const conflict = await api('PATCH', `${CMS}/owned?fieldManager=applier`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned"},"data":{"__proto__":"p","constructor":"c"}}', APPLY)
    assert.equal(conflict.status, 409, conflict.text)
    assert.deepEqual(conflict.json.details.causes.map((c: any) => c.field), ['.data.__proto__'])
  })

  it('validation sees them: an immutable ConfigMap\'s data.__proto__ cannot change, an invalid label key __proto__ (nodeSelector, labels) is refused', async () => {
    const created = await api('POST', CMS, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"frozen"},"immutable":true,"data":{"__proto__":"a"}}')
    assert.equal(created.status, 201, created.text)
    const changed = await api('PATCH', `${CMS}/frozen`, '{"data":{"__proto__":"b"}}', MERGE)
    assert.equal(changed.status, 422, changed.text)
    assert.match(changed.json.message, /data: Forbidden: field is immutable when `immutable` is set/)
    const unchanged = await api('PATCH', `${CMS}/frozen`, '{"metadata":{"labels":{"a":"b"}},"data":{"__proto__":"a"}}', MERGE)
    assert.equal(unchanged.status, 200, unchanged.text)
    const pod = await api('POST', '/api/v1/namespaces/default/pods', '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],"nodeSelector":{"__proto__":"x"}}}')
    assert.equal(pod.status, 422, pod.text)
    assert.match(pod.json.message, /spec\.nodeSelector: Invalid value: "__proto__"/)
    const labelled = await api('POST', CMS, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad-label","labels":{"__proto__":"x"}}}')
    assert.equal(labelled.status, 422, labelled.text)
  })

  it('protobuf and CBOR bodies carry them in and out', async () => {
    const object = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pb-keys', labels: mapOf(['constructor'], () => 'c')}, data}
    const PB = 'application/vnd.orch.protobuf'
    const created = await rawCall(server.url, 'POST', CMS, {'Content-Type': PB, Accept: PB}, encodeObject(configMap, object))
    assert.equal(created.status, 201, created.body.toString())
    assert.deepEqual(own(decodeObject(configMap, created.body).data), sorted(data))
    const got = await rawCall(server.url, 'GET', `${CMS}/pb-keys`, {Accept: PB})
    assert.deepEqual(own(decodeObject(configMap, got.body).data), sorted(data))
    assert.deepEqual(own((await api('GET', `${CMS}/pb-keys`)).json.data), sorted(data))

    const cbor = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'])
    try {
      const CBOR = 'application/cbor'
      const posted = await rawCall(cbor.url, 'POST', CMS, {'Content-Type': CBOR, Accept: CBOR}, encodeCbor({...object, metadata: {name: 'cbor-keys'}}))
      assert.equal(posted.status, 201, posted.body.toString())
      assert.ok(posted.body.includes('__proto__'), 'the answer holds the key __proto__ as written')
      assert.deepEqual(own((decodeCbor(posted.body) as any).data), sorted(data))
      const read = await call(cbor.url, 'GET', `${CMS}/cbor-keys`)
      assert.deepEqual(own(read.json.data), sorted(data))
      const patched = await rawCall(cbor.url, 'PATCH', `${CMS}/cbor-keys`, {'Content-Type': 'application/merge-patch+json', Accept: CBOR}, Buffer.from('{"data":{"__proto__":"changed"}}'))
      assert.equal(patched.status, 200, patched.body.toString())
      assert.equal(Object.getOwnPropertyDescriptor((decodeCbor(patched.body) as any).data, '__proto__')?.value, 'changed')
    } finally {
      await cbor.cleanup()
    }
  })
})
