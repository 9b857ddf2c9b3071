// The codec against an independent decoder: protobufjs, loading the .proto files under proto/ at test time.
import {describe, it, before} from 'node:test'
import assert from 'node:assert/strict'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative, resolve} from 'node:path'
import protobuf from 'protobufjs'
import {apiVersionOf, type AnyObject, type KindDeclaration} from '../../src/api/types.js'
import {protoSource} from '../../src/machinery/proto-source.js'
import {decodeObject, encodeListChunks, encodeObject, frameWatchEvent} from '../../src/machinery/protobuf.js'
import {byKind, fullObject, kinds} from '../support/protobuf-samples.js'

const protoDir = resolve(import.meta.dirname, '../../../proto')
const sources = protoSource(kinds)
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00])
const toObject = {longs: Number, bytes: String, defaults: false}

let root: protobuf.Root
const type = (name: string) => root.lookupType(name)
const packageOf = (d: KindDeclaration) => `orch.io.api.${d.group === '' ? 'core' : d.group.split('.')[0]}.${d.version}`
const typeOf = (d: KindDeclaration, name = d.schema.name) => type(`${packageOf(d)}.${name}`)

/** our bytes: the Unknown, decoded by protobufjs */
function unwrap(bytes: Uint8Array): {typeMeta: {apiVersion: string; kind: string}; raw: Uint8Array} {
  assert.equal(hex(bytes.subarray(0, 4)), hex(MAGIC))
  return type('orch.io.apimachinery.pkg.runtime.Unknown').decode(bytes.subarray(4)) as any
}

/** protobufjs' bytes, wrapped by protobufjs */
function wrap(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const Unknown = type('orch.io.apimachinery.pkg.runtime.Unknown')
  return Buffer.concat([MAGIC, Unknown.encode(Unknown.create({typeMeta: {apiVersion, kind}, raw})).finish()])
}

/** Time as protobufjs sees it */
const t = (iso: string) => ({seconds: Date.parse(iso) / 1000, nanos: 0})
const q = (value: string) => ({string: value})

const configMapJson = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'default',
    uid: '6f1c-uid',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2025-06-01T12:00:00Z',
    labels: {app: 'web', tier: 'front'},
    annotations: {note: 'ünïcödé ✓'},
    finalizers: ['example.com/keep'],
    ownerReferences: [{apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'o-uid', controller: true}],
  },
  data: {'config.yaml': 'a: 1\nb: [x, y]\n', empty: ''},
  binaryData: {'blob.bin': Buffer.from([0, 1, 2, 255]).toString('base64')},
  immutable: true,
}

const configMapProto = {
  metadata: {...configMapJson.metadata, creationTimestamp: t('2025-06-01T12:00:00Z')},
  data: configMapJson.data,
  binaryData: configMapJson.binaryData,
  immutable: true,
}

const nodeJson = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {name: 'node-1', uid: 'n-uid', resourceVersion: '10', creationTimestamp: '2025-06-01T12:00:00Z', labels: {'orch.io/hostname': 'node-1'}},
  spec: {
    podCIDR: '10.0.1.0/24',
    podCIDRs: ['10.0.1.0/24', 'fd00::/64'],
    providerID: 'orch://node-1',
    unschedulable: true,
    taints: [{key: 'node.orch.io/unreachable', effect: 'NoExecute', timeAdded: '2025-06-01T12:05:00Z'}],
  },
  status: {
    capacity: {cpu: '4', memory: '16Gi', pods: '110'},
    allocatable: {cpu: '3800m', memory: '15Gi', pods: '110'},
    phase: 'Running',
    conditions: [
      {type: 'Ready', status: 'True', lastHeartbeatTime: '2025-06-01T12:10:00Z', lastTransitionTime: '2025-06-01T12:00:00Z', reason: 'AgentReady', message: 'ready'},
    ],
    addresses: [
      {type: 'InternalIP', address: '192.168.1.10'},
      {type: 'Hostname', address: 'node-1'},
    ],
    daemonEndpoints: {agentEndpoint: {Port: 10250}},
    nodeInfo: {
      machineID: 'm',
      systemUUID: 's',
      bootID: 'b',
      kernelVersion: '6.1.0',
      osImage: 'Debian GNU/Linux 12',
      containerRuntimeVersion: 'containerd://2.0.0',
      agentVersion: 'v0.1.0',
      orchProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
      swap: {capacity: 8589934592},
    },
    images: [{names: ['registry.example/app@sha256:abc', 'registry.example/app:1'], sizeBytes: 123456789012}],
    volumesInUse: ['vol-a'],
    volumesAttached: [{name: 'vol-a', devicePath: '/dev/xvdb'}],
  },
}

const nodeProto = {
  metadata: {...nodeJson.metadata, creationTimestamp: t('2025-06-01T12:00:00Z')},
  spec: {...nodeJson.spec, taints: [{key: 'node.orch.io/unreachable', effect: 'NoExecute', timeAdded: t('2025-06-01T12:05:00Z')}]},
  status: {
    ...nodeJson.status,
    capacity: {cpu: q('4'), memory: q('16Gi'), pods: q('110')},
    allocatable: {cpu: q('3800m'), memory: q('15Gi'), pods: q('110')},
    conditions: [{...nodeJson.status.conditions[0], lastHeartbeatTime: t('2025-06-01T12:10:00Z'), lastTransitionTime: t('2025-06-01T12:00:00Z')}],
  },
}

describe('protobuf golden: the .proto files and protobufjs', () => {
  before(async () => {
    root = new protobuf.Root()
    root.resolvePath = (_origin, target) => join(protoDir, target)
    await root.load([...sources.keys()], {keepCase: true})
    root.resolveAll()
  })

  it('proto/ holds what scripts/gen-proto.mjs writes from the declarations', () => {
    const onDisk: string[] = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry)
        if (statSync(path).isDirectory()) walk(path)
        else onDisk.push(relative(protoDir, path).split('\\').join('/'))
      }
    }
    // proto/orch.io holds the generated API protos; proto/cri is the hand-written CRI api.proto
    walk(join(protoDir, 'orch.io'))
    assert.deepEqual(onDisk.sort(), [...sources.keys()].sort())
    for (const [file, text] of sources) assert.equal(readFileSync(join(protoDir, file), 'utf8'), text, `proto/${file} is stale: run node scripts/gen-proto.mjs`)
  })

  it('our ConfigMap and Node decode with protobufjs to the same values', () => {
    for (const [d, json, expected] of [
      [byKind('ConfigMap'), configMapJson, configMapProto],
      [byKind('Node'), nodeJson, nodeProto],
    ] as const) {
      const unknown = unwrap(encodeObject(d, json))
      assert.deepEqual({...unknown.typeMeta}, {apiVersion: 'v1', kind: d.kind})
      const T = typeOf(d)
      assert.deepEqual(T.toObject(T.decode(unknown.raw), toObject), expected)
    }
  })

  it('protobufjs bytes of a ConfigMap and a Node decode with our codec', () => {
    for (const [d, json, proto] of [
      [byKind('ConfigMap'), configMapJson, configMapProto],
      [byKind('Node'), nodeJson, nodeProto],
    ] as const) {
      const T = typeOf(d)
      const raw = T.encode(T.fromObject(proto)).finish()
      assert.deepEqual(decodeObject(d, wrap('v1', d.kind, raw)), json)
    }
  })

  it('every kind: protobufjs reads our bytes and writes them back identically', () => {
    for (const d of kinds) {
      const object = fullObject(d)
      const unknown = unwrap(encodeObject(d, object))
      assert.deepEqual({...unknown.typeMeta}, {apiVersion: apiVersionOf(d), kind: d.kind})
      const T = typeOf(d)
      const again = T.encode(T.decode(unknown.raw)).finish()
      assert.equal(hex(again), hex(unknown.raw), d.kind)
      assert.deepEqual(decodeObject(d, wrap(apiVersionOf(d), d.kind, again)), object, d.kind)
    }
  })

  it('lists: protobufjs reads a streamed list', () => {
    const d = byKind('ConfigMap')
    const items = [configMapJson, {...configMapJson, metadata: {name: 'second'}}].map(({apiVersion: _a, kind: _k, ...rest}) => rest as AnyObject)
    const unknown = unwrap(Buffer.concat([...encodeListChunks(d, {resourceVersion: '5', continue: 'c'}, items)]))
    assert.deepEqual({...unknown.typeMeta}, {apiVersion: 'v1', kind: 'ConfigMapList'})
    const List = typeOf(d, 'ConfigMapList')
    const list = List.toObject(List.decode(unknown.raw), toObject)
    assert.deepEqual(list.metadata, {resourceVersion: '5', continue: 'c'})
    assert.deepEqual(list.items, [configMapProto, {...configMapProto, metadata: {name: 'second'}}])
  })

  it('embedded structs are nested messages: probes, volumes, references, admission rules (two deep)', () => {
    const pod = byKind('Pod')
    const json = {
      spec: {
        containers: [
          {
            name: 'app',
            envFrom: [{configMapRef: {name: 'settings'}}],
            livenessProbe: {httpGet: {path: '/healthz', port: 'http'}, periodSeconds: 10},
            readinessProbe: {tcpSocket: {port: 8080}},
          },
        ],
        volumes: [{name: 'cfg', configMap: {name: 'settings', defaultMode: 420}}],
      },
    }
    const T = typeOf(pod)
    const spec = (T.toObject(T.decode(unwrap(encodeObject(pod, json)).raw), toObject) as any).spec
    assert.deepEqual(spec.containers[0], {
      name: 'app',
      envFrom: [{configMapRef: {localObjectReference: {name: 'settings'}}}],
      livenessProbe: {probeHandler: {httpGet: {path: '/healthz', port: {type: 1, intVal: 0, strVal: 'http'}}}, periodSeconds: 10},
      readinessProbe: {probeHandler: {tcpSocket: {port: {type: 0, intVal: 8080, strVal: ''}}}},
    })
    assert.deepEqual(spec.volumes[0], {name: 'cfg', volumeSource: {configMap: {localObjectReference: {name: 'settings'}, defaultMode: 420}}})

    const policy = byKind('ValidatingAdmissionPolicy')
    const rule = {resourceNames: ['a'], operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*'}
    const policyJson = {spec: {matchConstraints: {resourceRules: [rule]}}}
    const P = typeOf(policy)
    const constraints = (P.toObject(P.decode(unwrap(encodeObject(policy, policyJson)).raw), toObject) as any).spec.matchConstraints
    assert.deepEqual(constraints.resourceRules, [
      {resourceNames: ['a'], ruleWithOperations: {operations: ['CREATE'], rule: {apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*'}}},
    ])
    assert.deepEqual(decodeObject(policy, encodeObject(policy, policyJson)).spec, policyJson.spec)
  })

  it('Status and a watch frame, read by protobufjs', () => {
    const d = byKind('ConfigMap')
    const status = {apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'gone', reason: 'NotFound', details: {name: 'x', kind: 'configmaps'}, code: 404}
    const unknown = unwrap(encodeObject(d, status))
    assert.deepEqual({...unknown.typeMeta}, {apiVersion: 'v1', kind: 'Status'})
    const Status = type('orch.io.apimachinery.pkg.apis.meta.v1.Status')
    assert.deepEqual(Status.toObject(Status.decode(unknown.raw), toObject), {
      metadata: {},
      status: 'Failure',
      message: 'gone',
      reason: 'NotFound',
      details: {name: 'x', kind: 'configmaps'},
      code: 404,
    })

    const frame = frameWatchEvent(d, {type: 'ADDED', object: configMapJson})
    assert.equal(Buffer.from(frame).readUInt32BE(0), frame.length - 4)
    const WatchEvent = type('orch.io.apimachinery.pkg.apis.meta.v1.WatchEvent')
    const event = WatchEvent.decode(frame.subarray(4)) as any
    assert.equal(event.type, 'ADDED')
    const inner = unwrap(event.object.raw)
    assert.deepEqual({...inner.typeMeta}, {apiVersion: 'v1', kind: 'ConfigMap'})
    const T = typeOf(d)
    assert.deepEqual(T.toObject(T.decode(inner.raw), toObject), configMapProto)
  })
})
