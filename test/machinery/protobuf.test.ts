import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {apiVersionOf, type AnyObject, type KindDeclaration} from '../../src/api/types.js'
import {
  decodeObject,
  decodeWatchEvent,
  encodeListChunks,
  encodeObject,
  encodePartialObjectMetadataListChunks,
  encodeWatchEvent,
  frameWatchEvent,
  ProtobufError,
  WatchFrameReader,
} from '../../src/machinery/protobuf.js'
import {byKind, fullObject, kinds} from '../support/protobuf-samples.js'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const concat = (chunks: Iterable<Uint8Array>) => Buffer.concat([...chunks])

const configMap = byKind('ConfigMap')

describe('protobuf: every kind', () => {
  for (const d of kinds) {
    it(`${d.group || 'core'}/${d.version} ${d.kind}: every field survives JSON → protobuf → JSON`, () => {
      const object = fullObject(d)
      const bytes = encodeObject(d, object)
      assert.deepEqual(hex(bytes.subarray(0, 4)), '6b387300')
      const decoded = decodeObject(d, bytes)
      assert.deepEqual(decoded, object)
      // one encoding per content
      assert.equal(hex(encodeObject(d, decoded)), hex(bytes))
    })
  }

  it('writes fields by number and map entries by key, whatever the JSON order', () => {
    const a = encodeObject(configMap, {kind: 'ConfigMap', data: {b: '2', a: '1'}, metadata: {labels: {y: '1', x: '2'}, name: 'n'}})
    const b = encodeObject(configMap, {metadata: {name: 'n', labels: {x: '2', y: '1'}}, data: {a: '1', b: '2'}, kind: 'ConfigMap'})
    assert.equal(hex(a), hex(b))
  })

  it('pins the wrapper layout on a tiny ConfigMap, byte by byte', () => {
    const bytes = encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a'}, data: {k: 'v'}})
    const expected = [
      '6b387300', // magic
      '0a0f', // Unknown.typeMeta, 15 bytes
      '0a027631', // apiVersion "v1"
      '1209436f6e6669674d6170', // kind "ConfigMap"
      '120d', // Unknown.raw, 13 bytes
      '0a03' + '0a0161', // ConfigMap.metadata {name "a"}
      '1206' + '0a016b' + '120176', // ConfigMap.data entry {key "k", value "v"}
      '1a00', // contentEncoding ""
      '2200', // contentType ""
    ].join('')
    assert.equal(hex(bytes), expected)
    assert.deepEqual(decodeObject(configMap, bytes), {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a'}, data: {k: 'v'}})
  })

  it('writes int-or-string, quantity, times and bytes as Kubernetes does', () => {
    const service = byKind('Service')
    // ServicePort.targetPort (4): IntOrString {type 0, intVal 8080, strVal ""} / {type 1, intVal 0, strVal "http"}
    assert.match(hex(encodeObject(service, {spec: {ports: [{targetPort: 8080}]}})), /2207080010903f1a00/)
    assert.match(hex(encodeObject(service, {spec: {ports: [{targetPort: 'http'}]}})), /220a080110001a0468747470/)
    // NodeStatus.capacity (1) entry {key "cpu", value Quantity {string "4"}}
    assert.match(hex(encodeObject(byKind('Node'), {status: {capacity: {cpu: '4'}}})), /0a0a0a0363707512030a0134/)
    // ObjectMeta.creationTimestamp (8): Time {seconds, nanos 0}
    const seconds = Date.parse('2025-06-01T12:00:00Z') / 1000
    const time = hex(encodeObject(configMap, {metadata: {creationTimestamp: '2025-06-01T12:00:00Z'}}))
    assert.ok(time.includes('4208' + '08' + varintHex(seconds) + '1000'), time)
    // ConfigMap.binaryData (3): the bytes, not their base64 text
    assert.ok(hex(encodeObject(configMap, {binaryData: {b: Buffer.from([0, 255]).toString('base64')}})).includes('1a070a0162120200ff'))
    // a negative int32 is sign-extended to 10 bytes
    assert.ok(hex(encodeObject(byKind('Event'), {count: -1})).includes('40ffffffffffffffffff01'))
  })

  it('reads times with offsets and fractions, writes MicroTime to the microsecond', () => {
    const event = byKind('Event')
    const decoded = decodeObject(event, encodeObject(event, {metadata: {creationTimestamp: '2025-06-01T14:00:00+02:00'}, eventTime: '2025-06-01T12:00:00.1234567Z'}))
    assert.equal(decoded.metadata!.creationTimestamp, '2025-06-01T12:00:00Z')
    assert.equal(decoded.eventTime, '2025-06-01T12:00:00.123456Z')
  })

  it('takes the type meta from the declaration when the object has none', () => {
    const decoded = decodeObject(configMap, encodeObject(configMap, {metadata: {name: 'x'}}))
    assert.deepEqual(decoded, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}})
  })
})

function varintHex(n: number): string {
  const out: number[] = []
  while (n > 127) {
    out.push((n % 128) | 0x80)
    n = Math.floor(n / 128)
  }
  out.push(n)
  return Buffer.from(out).toString('hex')
}

describe('protobuf: ObjectMeta as Kubernetes writes it', () => {
  it('ObjectMeta strings and generation Kubernetes writes as "" and 0 (kubectl create) read back absent, as Go leaves them out of JSON; pointers keep their zero', () => {
    const sent = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {name: 'x', generateName: '', namespace: '', selfLink: '', uid: '', resourceVersion: '', generation: 0, deletionGracePeriodSeconds: 0},
      data: {k: ''},
    }
    const decoded = decodeObject(configMap, encodeObject(configMap, sent))
    assert.deepEqual(decoded.metadata, {name: 'x', deletionGracePeriodSeconds: 0})
    assert.deepEqual(decoded.data, {k: ''}, 'only ObjectMeta is touched')
    const statefulSet = byKind('StatefulSet')
    const withTemplate = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'web', namespace: ''},
      spec: {replicas: 0, serviceName: 'web', selector: {matchLabels: {app: 'web'}}, template: {metadata: {name: '', labels: {app: 'web'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    }
    const read = decodeObject(statefulSet, encodeObject(statefulSet, withTemplate))
    assert.deepEqual(read.metadata, {name: 'web'})
    assert.deepEqual(read.spec.template.metadata, {labels: {app: 'web'}}, 'a pod template\'s ObjectMeta too')
    assert.equal(read.spec.replicas, 0)
  })
})

describe('protobuf: lists', () => {
  const items = Array.from({length: 3000}, (_, i) => ({metadata: {name: `cm-${i}`, namespace: 'default'}, data: {value: 'x'.repeat(i % 200)}}))
  const listMeta = {resourceVersion: '99', continue: 'token', remainingItemCount: 5}

  it('streams a list in chunks that add up to the single-buffer encoding', () => {
    const chunks = [...encodeListChunks(configMap, listMeta, items)]
    assert.ok(chunks.length > 3, `${chunks.length} chunks`)
    assert.ok(chunks.every((c) => c.length <= 70 * 1024))
    const whole = encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMapList', metadata: listMeta, items})
    assert.equal(hex(concat(chunks)), hex(whole))
    assert.deepEqual(decodeObject(configMap, whole), {apiVersion: 'v1', kind: 'ConfigMapList', metadata: listMeta, items})
  })

  it('hands an item bigger than a chunk on by itself', () => {
    const big = [{metadata: {name: 'big'}, data: {blob: 'y'.repeat(200_000)}}, {metadata: {name: 'small'}}]
    const chunks = [...encodeListChunks(configMap, undefined, big)]
    assert.ok(chunks.some((c) => c.length > 200_000))
    assert.deepEqual(decodeObject(configMap, concat(chunks)).items, big)
  })

  it('writes an empty list with its ListMeta and reads it back with metadata and items', () => {
    const bytes = concat(encodeListChunks(configMap, undefined, []))
    assert.equal(hex(bytes), '6b387300' + '0a13' + '0a027631' + '120d436f6e6669674d61704c697374' + '1202' + '0a00' + '1a002200')
    assert.deepEqual(decodeObject(configMap, bytes), {apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: []})
  })

  it('lists every kind with full items', () => {
    for (const d of kinds) {
      const list = [fullObject(d), fullObject(d)].map(({apiVersion: _a, kind: _k, ...rest}) => rest)
      const decoded = decodeObject(d, concat(encodeListChunks(d, {resourceVersion: '1'}, list)))
      assert.deepEqual(decoded, {apiVersion: apiVersionOf(d), kind: `${d.kind}List`, metadata: {resourceVersion: '1'}, items: list}, d.kind)
    }
  })

  it('reports the item that cannot be written', () => {
    assert.throws(
      () => [...encodeListChunks(configMap, undefined, [{metadata: {name: 'a'}}, {metadata: {name: 5}}])],
      (e: unknown) => e instanceof ProtobufError && e.path === 'items[1].metadata.name' && /expected a string, got number/.test(e.message),
    )
  })
})

describe('protobuf: meta/v1 kinds', () => {
  it('Status, with details and causes', () => {
    const status = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Failure',
      message: 'ConfigMap "x" is invalid',
      reason: 'Invalid',
      details: {name: 'x', group: '', kind: 'configmaps', uid: 'u', causes: [{reason: 'FieldValueRequired', message: 'Required value', field: 'data'}], retryAfterSeconds: 3},
      code: 422,
    }
    assert.deepEqual(decodeObject(configMap, encodeObject(configMap, status)), status)
    assert.deepEqual(decodeObject(undefined, encodeObject(undefined, status)), status)
  })

  it('Table, with JSON cells (null included), conditions and row objects', () => {
    const table = {
      apiVersion: 'meta.orch.io/v1',
      kind: 'Table',
      metadata: {resourceVersion: '7'},
      columnDefinitions: [
        {name: 'Name', type: 'string', format: 'name', description: 'the name', priority: 0},
        {name: 'Data', type: 'integer', format: '', description: 'entries', priority: 1},
      ],
      rows: [
        {
          cells: ['a', 3, null, true, 1.5, {x: ['y']}],
          conditions: [{type: 'Completed', status: 'True', reason: 'r', message: 'm'}],
          object: {apiVersion: 'meta.orch.io/v1', kind: 'PartialObjectMetadata', metadata: {name: 'a'}},
        },
        {cells: ['b', 0]},
      ],
    }
    assert.deepEqual(decodeObject(configMap, encodeObject(configMap, table)), table)
  })

  it('PartialObjectMetadata and PartialObjectMetadataList (also streamed)', () => {
    const one = {apiVersion: 'meta.orch.io/v1', kind: 'PartialObjectMetadata', metadata: {name: 'a', labels: {x: 'y'}, creationTimestamp: '2025-01-02T03:04:05Z'}}
    assert.deepEqual(decodeObject(configMap, encodeObject(configMap, one)), one)
    const items = [{metadata: {name: 'a'}}, {metadata: {name: 'b', uid: 'u'}}]
    const list = {apiVersion: 'meta.orch.io/v1', kind: 'PartialObjectMetadataList', metadata: {resourceVersion: '3'}, items}
    const bytes = encodeObject(undefined, list)
    assert.equal(hex(concat(encodePartialObjectMetadataListChunks({resourceVersion: '3'}, items))), hex(bytes))
    assert.deepEqual(decodeObject(configMap, bytes), list)
  })

  it('DeleteOptions', () => {
    const options = {
      apiVersion: 'meta.orch.io/v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: {uid: 'u', resourceVersion: '5'},
      propagationPolicy: 'Foreground',
      dryRun: ['All'],
    }
    assert.deepEqual(decodeObject(configMap, encodeObject(configMap, options)), options)
  })
})

describe('protobuf: watch', () => {
  const pod = byKind('Pod')
  const events = [
    {type: 'ADDED', object: fullObject(pod)},
    {type: 'MODIFIED', object: {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p', resourceVersion: '8'}, status: {phase: 'Running'}}},
    {type: 'BOOKMARK', object: {apiVersion: 'v1', kind: 'Pod', metadata: {resourceVersion: '9', annotations: {'k8s.io/initial-events-end': 'true'}}}},
    {type: 'ERROR', object: {apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'too old', reason: 'Expired', code: 410}},
  ]

  it('frames each event with a 4-byte big-endian length; the event is unwrapped, its object wrapped', () => {
    const frame = frameWatchEvent(pod, events[1])
    const payload = encodeWatchEvent(pod, events[1])
    assert.equal(Buffer.from(frame).readUInt32BE(0), payload.length)
    assert.equal(hex(frame.subarray(4)), hex(payload))
    // WatchEvent {type = 1 "MODIFIED", object = 2 RawExtension {raw = 1 <magic + Unknown>}}
    assert.equal(hex(payload.subarray(0, 10)), '0a084d4f444946494544')
    const object = encodeObject(pod, events[1].object)
    assert.equal(hex(payload.subarray(10)), '12' + varintHex(object.length + 1 + varintHex(object.length).length / 2) + '0a' + varintHex(object.length) + hex(object))
  })

  it('reads the frames back however the stream is cut', () => {
    const stream = concat(events.map((e) => frameWatchEvent(pod, e)))
    for (const step of [1, 3, 7, 1000, stream.length]) {
      const reader = new WatchFrameReader()
      const got: unknown[] = []
      for (let i = 0; i < stream.length; i += step) {
        for (const frame of reader.push(stream.subarray(i, i + step))) got.push(decodeWatchEvent(pod, frame))
      }
      assert.deepEqual(got, events, `step ${step}`)
      assert.equal(reader.buffered, 0)
    }
  })
})

describe('protobuf: bad input', () => {
  const good = encodeObject(configMap, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a', labels: {x: 'y'}}, data: {k: 'v'}})
  const rejects = (bytes: Uint8Array, pattern: RegExp, declaration: KindDeclaration = configMap) =>
    assert.throws(() => decodeObject(declaration, bytes), (e: unknown) => e instanceof ProtobufError && pattern.test(e.message))

  it('rejects a missing or wrong prefix, and an empty body', () => {
    rejects(new Uint8Array(), /empty data/)
    rejects(good.subarray(4), /does not start with the protobuf prefix/)
    rejects(Buffer.from('{"kind":"ConfigMap"}'), /does not start with the protobuf prefix/)
    rejects(Uint8Array.of(0x6b, 0x38, 0x73, 0x01, ...good.subarray(4)), /prefix/)
    rejects(Uint8Array.of(0x6b, 0x38), /prefix/)
    rejects(good.subarray(0, 4), /empty body/)
  })

  it('rejects data cut anywhere but between the fields of the Unknown', () => {
    // magic, typeMeta (2 + 15 bytes), raw, then the optional contentEncoding and contentType (2 + 2)
    const boundaries = [4 + 2 + 15, good.length - 4, good.length - 2]
    for (let end = 5; end < good.length; end++) {
      if (boundaries.includes(end)) assert.doesNotThrow(() => decodeObject(configMap, good.subarray(0, end)))
      else rejects(good.subarray(0, end), /truncated|malformed/)
    }
  })

  it('rejects garbage', () => {
    const magic = [0x6b, 0x38, 0x73, 0x00]
    rejects(Uint8Array.of(...magic, ...new Array(20).fill(0xff)), /malformed varint|truncated/)
    rejects(Uint8Array.of(...magic, 0x0f), /invalid wire type 7/)
    rejects(Uint8Array.of(...magic, 0x00, 0x00), /invalid field number 0/)
    rejects(Uint8Array.of(...magic, 0x0a, 0x05, 0x01), /truncated/)
    // raw = ConfigMap whose data (2) arrives as a varint
    rejects(Uint8Array.of(...magic, 0x12, 0x02, 0x10, 0x01), /wire type 0 where 2 was expected \(at data\)/)
    // metadata.name (1.1) as a varint
    rejects(Uint8Array.of(...magic, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01), /wire type 0 where 2 was expected \(at metadata.name\)/)
    // an inner length that overruns its message
    rejects(Uint8Array.of(...magic, 0x12, 0x04, 0x0a, 0x02, 0x0a, 0x05), /truncated/)
    // a RawExtension that is not JSON (ControllerRevision.data)
    rejects(Uint8Array.of(...magic, 0x12, 0x05, 0x12, 0x03, 0x0a, 0x01, 0x7b), /not JSON \(at data\)/, byKind('ControllerRevision'))
  })

  it('rejects a kind it cannot read here, and a content encoding', () => {
    const pod = encodeObject(byKind('Pod'), {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}})
    rejects(pod, /kind Pod cannot be read here \(expected ConfigMap\)/)
    rejects(Buffer.concat([good.subarray(0, good.length - 4), Buffer.from([0x1a, 0x04, ...Buffer.from('gzip'), 0x22, 0x00])]), /content encoding "gzip"/)
  })

  it('skips unknown fields, wherever they are', () => {
    const magic = [0x6b, 0x38, 0x73, 0x00]
    // ObjectMeta field 99 (fixed64); ConfigMap field 15 (bytes) and group 20 (holding a varint); Unknown field 9 (varint)
    const metadata = [0x0a, 0x01, 0x61, 0x99, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]
    const raw = [0x0a, metadata.length, ...metadata, 0x7a, 0x02, 0x01, 0x02, 0xa3, 0x01, 0x08, 0x05, 0xa4, 0x01]
    const bytes = Uint8Array.of(...magic, 0x48, 0x07, 0x12, raw.length, ...raw)
    assert.deepEqual(decodeObject(configMap, bytes), {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a'}})
  })

  it('reads packed repeated scalars', () => {
    // PodSecurityContext.supplementalGroups = 4, packed [1, 300]: Pod.spec (2) .securityContext (14)
    const groups = [0x22, 0x03, 0x01, 0xac, 0x02]
    const security = [0x72, groups.length, ...groups]
    const raw = [0x12, security.length, ...security]
    const decoded = decodeObject(byKind('Pod'), Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x12, raw.length, ...raw))
    assert.deepEqual(decoded.spec, {securityContext: {supplementalGroups: [1, 300]}})
  })

  it('names the field it cannot write', () => {
    const bad = (object: AnyObject, path: string, pattern: RegExp, d = configMap) =>
      assert.throws(() => encodeObject(d, object), (e: unknown) => e instanceof ProtobufError && e.path === path && pattern.test(e.message))
    bad({data: {k: 1}}, 'data.k', /expected a string, got number/)
    bad({metadata: {generation: 1.5}}, 'metadata.generation', /expected an integer/)
    bad({metadata: {creationTimestamp: 'yesterday'}}, 'metadata.creationTimestamp', /invalid RFC 3339 time/)
    bad({metadata: {finalizers: 'x'}}, 'metadata.finalizers', /expected an array/)
    bad({spec: {containers: [{name: 'c'}, {ports: [{containerPort: 'x'}]}]}}, 'spec.containers[1].ports[0].containerPort', /expected an integer/, byKind('Pod'))
    assert.throws(() => encodeObject(configMap, {kind: 'Nope'}), /no protobuf form for kind Nope/)
  })
})
