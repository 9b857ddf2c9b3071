import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {declarations as appsDeclarations} from '../../src/api/apps/index.js'
import {declarations as coordinationDeclarations} from '../../src/api/coordination/index.js'
import {embeddingOf, imageTag} from '../../src/api/core/container.js'
import {declarations as coreDeclarations} from '../../src/api/core/index.js'
import {quantityValue} from '../../src/api/core/pod.js'
import type {AnyObject, Field, KindDeclaration, ObjectSchema, Schema} from '../../src/api/types.js'

const all: KindDeclaration[] = [...coreDeclarations, ...appsDeclarations, ...coordinationDeclarations]
const byKind = (kind: string) => all.find((d) => d.kind === kind)!
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value))
const now = new Date('2025-06-01T12:00:00Z')
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString().replace('.000Z', 'Z')

/** Every object schema reachable from the kind's schema, with the path that reaches it. */
function objectSchemas(schema: Schema, path: string, out: Array<{path: string; schema: ObjectSchema}> = []) {
  if (schema.type === 'object') {
    out.push({path, schema})
    for (const [name, field] of Object.entries(schema.fields)) objectSchemas(field, `${path}.${name}`, out)
  } else if (schema.type === 'array') {
    objectSchemas(schema.items, `${path}[]`, out)
  } else if (schema.type === 'map') {
    objectSchemas(schema.values, `${path}{}`, out)
  }
  return out
}

/** The field at a dotted path (`[]` steps into array items). */
function fieldAt(declaration: KindDeclaration, path: string): Field | undefined {
  let schema: Schema = declaration.schema
  let field: Field | undefined
  for (const step of path.split('.')) {
    const name = step.replace(/\[\]$/, '')
    if (schema.type !== 'object') return undefined
    field = schema.fields[name]
    if (!field) return undefined
    schema = field
    if (step.endsWith('[]')) {
      if (schema.type !== 'array') return undefined
      schema = schema.items
    }
  }
  return field
}

function cells(declaration: KindDeclaration, object: AnyObject): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const column of declaration.columns ?? []) row[column.name] = column.cell(object, now)
  return row
}

describe('core, apps and coordination declarations: schemas', () => {
  it('names each kind, resource and short name once', () => {
    const kinds = all.map((d) => `${d.group}/${d.kind}`)
    assert.equal(new Set(kinds).size, kinds.length)
    const resources = all.map((d) => `${d.group}/${d.resource}`)
    assert.equal(new Set(resources).size, resources.length)
    const shorts = all.flatMap((d) => d.shortNames ?? [])
    assert.equal(new Set(shorts).size, shorts.length)
    assert.deepEqual(
      Object.fromEntries(all.map((d) => [d.kind, d.shortNames ?? []])),
      {
        Namespace: ['ns'], ConfigMap: ['cm'], Node: ['no'], Pod: ['po'], Service: ['svc'], Event: ['ev'],
        PersistentVolumeClaim: ['pvc'], StatefulSet: ['sts'], ControllerRevision: [], Lease: [],
      },
    )
  })

  for (const declaration of all) {
    it(`${declaration.kind}: protobuf numbers are unique per message, embedded structs included`, () => {
      for (const {path, schema} of objectSchemas(declaration.schema, declaration.kind)) {
        const direct = new Map<number, string>()
        const embeddings = new Map<number, string>()
        const inside = new Map<string, string>()
        for (const [name, field] of Object.entries(schema.fields)) {
          assert.ok(Number.isInteger(field.proto) && field.proto > 0, `${path}.${name}: proto ${field.proto}`)
          const embedding = embeddingOf(field)
          if (!embedding) {
            assert.ok(!direct.has(field.proto), `${path}: ${name} and ${direct.get(field.proto)} share ${field.proto}`)
            direct.set(field.proto, name)
            continue
          }
          const known = embeddings.get(embedding.proto)
          assert.ok(known === undefined || known === embedding.name, `${path}: two embeddings at ${embedding.proto}`)
          embeddings.set(embedding.proto, embedding.name)
          const key = `${embedding.proto}.${field.proto}`
          assert.ok(!inside.has(key), `${path}: ${name} and ${inside.get(key)} share ${key}`)
          inside.set(key, name)
        }
        for (const [proto, name] of embeddings) assert.ok(!direct.has(proto), `${path}: ${name} embedded at ${proto}, taken by ${direct.get(proto)}`)
      }
    })

    it(`${declaration.kind}: list map keys and merge keys name item fields`, () => {
      for (const {path, schema} of objectSchemas(declaration.schema, declaration.kind)) {
        for (const [name, field] of Object.entries(schema.fields)) {
          if (field.type !== 'array') continue
          if (field.listType === 'map') assert.ok(field.listMapKeys && field.listMapKeys.length > 0, `${path}.${name}`)
          if (field.patchMergeKey) assert.match(field.patchStrategy ?? '', /merge/, `${path}.${name}`)
          if (field.items.type !== 'object') continue
          const items = field.items
          for (const key of [...(field.listMapKeys ?? []), ...(field.patchMergeKey ? [field.patchMergeKey] : [])]) {
            assert.ok(key in items.fields, `${path}.${name}: key ${key} is no field of ${items.name}`)
          }
        }
      }
    })
  }

  it('declares the required fields of document 2 and Kubernetes as required', () => {
    const required: Record<string, string[]> = {
      Node: [
        'spec.taints[].key', 'spec.taints[].effect', 'spec.configSource.configMap.agentConfigKey', 'spec.configSource.configMap.name',
        'spec.configSource.configMap.namespace', 'status.addresses[].address', 'status.addresses[].type', 'status.conditions[].type',
        'status.conditions[].status', 'status.daemonEndpoints.agentEndpoint.Port', 'status.nodeInfo.architecture', 'status.nodeInfo.bootID',
        'status.nodeInfo.containerRuntimeVersion', 'status.nodeInfo.kernelVersion', 'status.nodeInfo.orchProxyVersion',
        'status.nodeInfo.agentVersion', 'status.nodeInfo.machineID', 'status.nodeInfo.operatingSystem', 'status.nodeInfo.osImage',
        'status.nodeInfo.systemUUID', 'status.volumesAttached[].name', 'status.volumesAttached[].devicePath',
      ],
      StatefulSet: [
        'spec.selector', 'spec.template', 'spec.template.spec.containers', 'spec.template.spec.containers[].name', 'status.replicas',
        'status.conditions[].type', 'status.conditions[].status',
      ],
      Pod: [
        'spec.containers', 'spec.containers[].name', 'spec.containers[].ports[].containerPort', 'spec.containers[].env[].name',
        'spec.containers[].volumeMounts[].mountPath', 'spec.volumes[].name', 'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].topologyKey',
        'status.conditions[].type', 'status.conditions[].status', 'status.containerStatuses[].name', 'status.podIPs[].ip',
      ],
      Service: ['spec.ports[].port'],
      Event: ['involvedObject', 'metadata'],
      ControllerRevision: ['data'],
    }
    for (const [kind, paths] of Object.entries(required)) {
      for (const path of paths) {
        const field = fieldAt(byKind(kind), path)
        assert.ok(field, `${kind} ${path} is declared`)
        assert.equal(field.required, true, `${kind} ${path} is required`)
      }
    }
  })

  it('carries Kubernetes field numbers and merge metadata (spot checks)', () => {
    const checks: Array<[string, string, Partial<Field> & Record<string, unknown>]> = [
      ['Node', 'spec.podCIDRs', {proto: 7, listType: 'set', patchStrategy: 'merge'}],
      ['Node', 'spec.taints', {proto: 5, listType: 'atomic', patchMergeKey: undefined}],
      ['Node', 'status.addresses', {proto: 5, patchMergeKey: 'type', patchStrategy: 'merge'}],
      ['Node', 'status.declaredFeatures', {proto: 14, listType: 'atomic'}],
      ['Node', 'status.nodeInfo.agentVersion', {proto: 7}],
      ['Node', 'status.nodeInfo.orchProxyVersion', {proto: 8}],
      ['Pod', 'spec.tolerations', {proto: 22, listType: 'atomic', patchMergeKey: undefined}],
      ['Pod', 'spec.nodeSelector', {proto: 7, mapType: 'atomic'}],
      ['Pod', 'spec.volumes', {proto: 1, patchStrategy: 'merge,retainKeys', patchMergeKey: 'name'}],
      ['Pod', 'spec.containers[].ports', {proto: 6, patchMergeKey: 'containerPort', listMapKeys: ['containerPort', 'protocol']}],
      ['Pod', 'spec.containers[].volumeMounts', {proto: 9, patchMergeKey: 'mountPath'}],
      ['Pod', 'spec.containers[].livenessProbe.grpc', {proto: 4}],
      ['Pod', 'spec.initContainers', {proto: 20}],
      ['Pod', 'status.podIPs', {proto: 12, patchMergeKey: 'ip', listType: 'map'}],
      ['Pod', 'status.hostIPs', {proto: 16, patchMergeKey: 'ip', listType: 'atomic'}],
      ['Service', 'spec.ports', {proto: 1, patchMergeKey: 'port', listMapKeys: ['port', 'protocol']}],
      ['Service', 'spec.selector', {proto: 2, mapType: 'atomic'}],
      ['Service', 'spec.clusterIPs', {proto: 18, listType: 'atomic'}],
      ['Event', 'eventTime', {proto: 10, micro: true}],
      ['StatefulSet', 'spec.volumeClaimTemplates', {proto: 4, listType: 'atomic', patchMergeKey: undefined}],
      ['StatefulSet', 'spec.updateStrategy.rollingUpdate.maxUnavailable', {proto: 2, type: 'int-or-string'}],
      ['StatefulSet', 'status.availableReplicas', {proto: 11}],
      ['StatefulSet', 'status.collisionCount', {proto: 9}],
      ['Lease', 'spec.renewTime', {proto: 4, micro: true}],
    ]
    for (const [kind, path, expected] of checks) {
      const field = fieldAt(byKind(kind), path) as Record<string, unknown> | undefined
      assert.ok(field, `${kind} ${path}`)
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(field[key], value, `${kind} ${path} ${key}`)
    }
    const probe = fieldAt(byKind('Pod'), 'spec.containers[].readinessProbe')!
    assert.equal(probe.type, 'object')
    const httpGet = (probe as ObjectSchema).fields.httpGet
    assert.deepEqual(embeddingOf(httpGet), {proto: 1, name: 'ProbeHandler'})
    assert.equal(httpGet.proto, 2)
    const configMapVolume = fieldAt(byKind('Pod'), 'spec.volumes[].configMap')!
    assert.deepEqual(embeddingOf(configMapVolume), {proto: 2, name: 'VolumeSource'})
    assert.equal(configMapVolume.proto, 19)
  })

  it('uses the renamed identifiers only', () => {
    const names = JSON.stringify(all.map((d) => d.schema))
    assert.doesNotMatch(names, /kubelet|kubeProxy|k8s\.io|kubernetes\.io/)
    assert.equal(byKind('Lease').group, 'coordination.orch.io')
  })
})

describe('defaults', () => {
  const pod = byKind('Pod')
  const sample = (): AnyObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name: 'web', namespace: 'default'},
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx',
          ports: [{containerPort: 80}],
          resources: {limits: {cpu: '500m', memory: '128Mi'}},
          livenessProbe: {httpGet: {port: 80}},
          env: [{name: 'NODE', valueFrom: {fieldRef: {fieldPath: 'spec.nodeName'}}}],
        },
        {name: 'sidecar', image: 'busybox:1.36', readinessProbe: {grpc: {port: 9000}, periodSeconds: 5}},
      ],
      initContainers: [{name: 'init', image: 'registry.local:5000/tools/init@sha256:' + 'a'.repeat(64)}],
      volumes: [{name: 'scratch'}, {name: 'config', configMap: {name: 'cfg'}}, {name: 'token', projected: {sources: [{serviceAccountToken: {path: 't'}}]}}],
    },
  })

  it('fills Kubernetes pod defaults', () => {
    const o = sample()
    pod.defaults!(o)
    const [nginx, sidecar] = o.spec.containers
    assert.equal(nginx.imagePullPolicy, 'Always')
    assert.equal(sidecar.imagePullPolicy, 'IfNotPresent')
    assert.equal(o.spec.initContainers[0].imagePullPolicy, 'IfNotPresent')
    assert.equal(nginx.terminationMessagePath, '/dev/termination-log')
    assert.equal(nginx.terminationMessagePolicy, 'File')
    assert.equal(nginx.ports[0].protocol, 'TCP')
    assert.equal(nginx.ports[0].hostPort, undefined)
    assert.deepEqual(nginx.resources.requests, {cpu: '500m', memory: '128Mi'})
    assert.deepEqual(nginx.livenessProbe, {
      httpGet: {port: 80, path: '/', scheme: 'HTTP'},
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    })
    assert.equal(sidecar.readinessProbe.periodSeconds, 5)
    assert.equal(sidecar.readinessProbe.grpc.service, '')
    assert.equal(nginx.env[0].valueFrom.fieldRef.apiVersion, 'v1')
    assert.equal(o.spec.restartPolicy, 'Always')
    assert.equal(o.spec.terminationGracePeriodSeconds, 30)
    assert.equal(o.spec.dnsPolicy, 'ClusterFirst')
    assert.equal(o.spec.schedulerName, 'orch-scheduler')
    assert.equal(o.spec.enableServiceLinks, true)
    assert.deepEqual(o.spec.securityContext, {})
    assert.deepEqual(o.spec.volumes[0], {name: 'scratch', emptyDir: {}})
    assert.equal(o.spec.volumes[1].configMap.defaultMode, 0o644)
    assert.equal(o.spec.volumes[2].projected.sources[0].serviceAccountToken.expirationSeconds, 3600)
  })

  it('is idempotent', () => {
    const once = sample()
    pod.defaults!(once)
    const twice = clone(once)
    pod.defaults!(twice)
    assert.deepEqual(twice, once)
    for (const declaration of all) {
      if (!declaration.defaults) continue
      const a: AnyObject = {metadata: {name: 'x'}, spec: {}, status: {capacity: {cpu: '4'}}}
      declaration.defaults(a)
      const b = clone(a)
      declaration.defaults(b)
      assert.deepEqual(b, a, declaration.kind)
    }
  })

  it('keeps what the user set', () => {
    const o = sample()
    o.spec.restartPolicy = 'Never'
    o.spec.containers[0].imagePullPolicy = 'Never'
    o.spec.enableServiceLinks = false
    o.spec.terminationGracePeriodSeconds = 0
    pod.defaults!(o)
    assert.equal(o.spec.restartPolicy, 'Never')
    assert.equal(o.spec.containers[0].imagePullPolicy, 'Never')
    assert.equal(o.spec.enableServiceLinks, false)
    assert.equal(o.spec.terminationGracePeriodSeconds, 0)
  })

  it('reads image tags as Kubernetes does', () => {
    assert.equal(imageTag('nginx'), 'latest')
    assert.equal(imageTag('nginx:1.25'), '1.25')
    assert.equal(imageTag('nginx:latest'), 'latest')
    assert.equal(imageTag('localhost:5000/team/app'), 'latest')
    assert.equal(imageTag('localhost:5000/team/app:v2'), 'v2')
    assert.equal(imageTag('nginx@sha256:' + 'b'.repeat(64)), '')
    assert.equal(imageTag('Nginx'), '')
  })

  it('gives host-network pods host ports', () => {
    const o = sample()
    o.spec.hostNetwork = true
    pod.defaults!(o)
    assert.equal(o.spec.containers[0].ports[0].hostPort, 80)
  })

  it('sets a new pod Pending with its QoS class', () => {
    const context = {now}
    const guaranteed = sample()
    guaranteed.spec.containers = [guaranteed.spec.containers[0]]
    guaranteed.spec.initContainers = []
    pod.defaults!(guaranteed)
    guaranteed.status = {phase: 'Running'}
    pod.prepareForCreate!(guaranteed, context)
    assert.deepEqual(guaranteed.status, {phase: 'Pending', qosClass: 'Guaranteed'})
    const burstable = sample()
    pod.defaults!(burstable)
    pod.prepareForCreate!(burstable, context)
    assert.equal(burstable.status.qosClass, 'Burstable')
    const bestEffort: AnyObject = {spec: {containers: [{name: 'a', image: 'a'}], schedulingGates: [{name: 'wait'}]}}
    pod.prepareForCreate!(bestEffort, context)
    assert.equal(bestEffort.status.qosClass, 'BestEffort')
    assert.equal(bestEffort.status.conditions[0].reason, 'SchedulingGated')
    assert.equal(quantityValue('1Gi'), 2 ** 30)
    assert.equal(quantityValue('250m'), 0.25)
    assert.equal(quantityValue('1e3'), 1000)
  })

  it('binds a pod to a node', () => {
    const o = sample()
    const bound = pod.prepareSubresourceUpdate!('binding', {target: {kind: 'Node', name: 'n1'}, metadata: {annotations: {a: 'b'}}}, o, {now})
    assert.equal(bound.spec.nodeName, 'n1')
    assert.equal(bound.metadata!.annotations.a, 'b')
    assert.equal(bound.status.conditions[0].type, 'PodScheduled')
    assert.equal(bound.status.conditions[0].status, 'True')
  })

  it('defaults statefulsets, their pod template and claim templates', () => {
    const sts = byKind('StatefulSet')
    const o: AnyObject = {
      spec: {
        selector: {matchLabels: {app: 'db'}},
        template: {metadata: {labels: {app: 'db'}}, spec: {containers: [{name: 'db', image: 'postgres:16'}]}},
        volumeClaimTemplates: [{metadata: {name: 'data'}, spec: {accessModes: ['ReadWriteOnce']}}],
      },
    }
    sts.defaults!(o)
    assert.equal(o.spec.replicas, 1)
    assert.deepEqual(o.spec.updateStrategy, {type: 'RollingUpdate', rollingUpdate: {partition: 0}})
    assert.equal(o.spec.podManagementPolicy, 'OrderedReady')
    assert.equal(o.spec.revisionHistoryLimit, 10)
    assert.deepEqual(o.spec.persistentVolumeClaimRetentionPolicy, {whenDeleted: 'Retain', whenScaled: 'Retain'})
    assert.equal(o.spec.minReadySeconds, undefined)
    assert.equal(o.spec.template.spec.schedulerName, 'orch-scheduler')
    assert.equal(o.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent')
    assert.equal(o.spec.template.spec.enableServiceLinks, undefined, 'a template gets no Pod-only defaults')
    assert.equal(o.spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem')
    assert.equal(o.spec.volumeClaimTemplates[0].status.phase, 'Pending')
    const onDelete: AnyObject = {spec: {updateStrategy: {type: 'OnDelete'}}}
    sts.defaults!(onDelete)
    assert.deepEqual(onDelete.spec.updateStrategy, {type: 'OnDelete'})
  })

  it('defaults services and node allocatable', () => {
    const svc: AnyObject = {spec: {ports: [{port: 80}, {port: 443, targetPort: 'https'}], selector: {app: 'web'}}}
    byKind('Service').defaults!(svc)
    assert.equal(svc.spec.type, 'ClusterIP')
    assert.equal(svc.spec.sessionAffinity, 'None')
    assert.equal(svc.spec.internalTrafficPolicy, 'Cluster')
    assert.equal(svc.spec.externalTrafficPolicy, undefined)
    assert.deepEqual(svc.spec.ports[0], {port: 80, protocol: 'TCP', targetPort: 80})
    assert.equal(svc.spec.ports[1].targetPort, 'https')
    const lb: AnyObject = {spec: {type: 'LoadBalancer', sessionAffinity: 'ClientIP'}}
    byKind('Service').defaults!(lb)
    assert.equal(lb.spec.externalTrafficPolicy, 'Cluster')
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true)
    assert.equal(lb.spec.sessionAffinityConfig.clientIP.timeoutSeconds, 10800)
    const node: AnyObject = {status: {capacity: {cpu: '4', pods: '110'}}}
    byKind('Node').defaults!(node)
    assert.deepEqual(node.status.allocatable, {cpu: '4', pods: '110'})
  })
})

describe('table cells', () => {
  const pod = byKind('Pod')
  const running = (name: string, ready: boolean) => ({name, ready, restartCount: 0, image: 'x', imageID: '', state: {running: {startedAt: ago(600)}}})

  it('pod: READY, STATUS, RESTARTS, and the wide columns', () => {
    const o: AnyObject = {
      metadata: {name: 'web', creationTimestamp: ago(3600)},
      spec: {containers: [{name: 'a'}, {name: 'b'}], nodeName: 'n1'},
      status: {
        phase: 'Running',
        podIPs: [{ip: '10.0.0.5'}],
        containerStatuses: [running('a', true), {...running('b', false), state: {waiting: {reason: 'CrashLoopBackOff'}}, restartCount: 4, lastState: {terminated: {exitCode: 1, finishedAt: ago(125)}}}],
      },
    }
    assert.deepEqual(cells(pod, o), {
      Ready: '1/2',
      Status: 'CrashLoopBackOff',
      Restarts: '4 (2m5s ago)',
      Age: '60m',
      IP: '10.0.0.5',
      Node: 'n1',
      'Nominated Node': '<none>',
      'Readiness Gates': '<none>',
    })
  })

  it('pod STATUS: waiting reason, init progress, completion, termination', () => {
    const status = (o: AnyObject) => cells(pod, o).Status
    assert.equal(status({spec: {containers: [{name: 'a'}]}, status: {phase: 'Pending', containerStatuses: [{name: 'a', state: {waiting: {reason: 'ContainerCreating'}}}]}}), 'ContainerCreating')
    assert.equal(
      status({
        spec: {containers: [{name: 'a'}], initContainers: [{name: 'i'}]},
        status: {phase: 'Pending', initContainerStatuses: [{name: 'i', state: {running: {}}}]},
      }),
      'Init:0/1',
    )
    assert.equal(
      status({
        spec: {containers: [{name: 'a'}], initContainers: [{name: 'i'}]},
        status: {phase: 'Pending', initContainerStatuses: [{name: 'i', state: {waiting: {reason: 'ImagePullBackOff'}}}]},
      }),
      'Init:ImagePullBackOff',
    )
    assert.equal(status({spec: {containers: [{name: 'a'}]}, status: {phase: 'Succeeded', containerStatuses: [{name: 'a', state: {terminated: {exitCode: 0, reason: 'Completed'}}}]}}), 'Completed')
    assert.equal(status({spec: {containers: [{name: 'a'}]}, status: {phase: 'Failed', containerStatuses: [{name: 'a', state: {terminated: {exitCode: 137}}}]}}), 'ExitCode:137')
    assert.equal(status({metadata: {deletionTimestamp: ago(1)}, spec: {containers: [{name: 'a'}]}, status: {phase: 'Running'}}), 'Terminating')
    assert.equal(status({spec: {containers: [{name: 'a'}]}, status: {phase: 'Pending', conditions: [{type: 'PodScheduled', status: 'False', reason: 'SchedulingGated'}]}}), 'SchedulingGated')
    assert.equal(cells(pod, {spec: {containers: [{name: 'a'}]}, status: {phase: 'Running', containerStatuses: [{...running('a', true), restartCount: 2}]}}).Restarts, '2')
  })

  it('pod READY counts started sidecars; readiness gates count true conditions', () => {
    const o: AnyObject = {
      spec: {containers: [{name: 'a'}], initContainers: [{name: 'proxy', restartPolicy: 'Always'}], readinessGates: [{conditionType: 'x/Ready'}, {conditionType: 'y/Ready'}]},
      status: {
        phase: 'Running',
        conditions: [{type: 'Initialized', status: 'True'}, {type: 'x/Ready', status: 'True'}],
        initContainerStatuses: [{name: 'proxy', started: true, ready: true, restartCount: 0, state: {running: {}}}],
        containerStatuses: [running('a', true)],
      },
    }
    const row = cells(pod, o)
    assert.equal(row.Ready, '2/2')
    assert.equal(row.Status, 'Running')
    assert.equal(row['Readiness Gates'], '1/2')
  })

  it('node: STATUS with SchedulingDisabled, ROLES, VERSION and the wide columns', () => {
    const o: AnyObject = {
      metadata: {name: 'n1', creationTimestamp: ago(86400 * 3), labels: {'node-role.orch.io/control-plane': '', 'node-role.orch.io/worker': '', 'orch.io/role': 'edge'}},
      spec: {unschedulable: true},
      status: {
        conditions: [{type: 'MemoryPressure', status: 'False'}, {type: 'Ready', status: 'True'}],
        addresses: [{type: 'Hostname', address: 'n1'}, {type: 'InternalIP', address: '192.168.1.10'}],
        nodeInfo: {agentVersion: 'v1.36.0', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: ''},
      },
    }
    assert.deepEqual(cells(byKind('Node'), o), {
      Status: 'Ready,SchedulingDisabled',
      Roles: 'control-plane,edge,worker',
      Age: '3d',
      Version: 'v1.36.0',
      'Internal-IP': '192.168.1.10',
      'External-IP': '<none>',
      'OS-Image': 'Debian GNU/Linux 12',
      'Kernel-Version': '6.1.0',
      'Container-Runtime': '<unknown>',
    })
    assert.equal(cells(byKind('Node'), {status: {conditions: [{type: 'Ready', status: 'Unknown'}]}}).Status, 'NotReady')
    assert.equal(cells(byKind('Node'), {}).Status, 'Unknown')
    assert.equal(cells(byKind('Node'), {}).Roles, '<none>')
  })

  it('service: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), SELECTOR', () => {
    const svc = byKind('Service')
    const row = cells(svc, {
      spec: {type: 'NodePort', clusterIPs: ['10.96.0.10'], ports: [{port: 80, nodePort: 30080, protocol: 'TCP'}, {port: 443, protocol: 'TCP'}], selector: {tier: 'web', app: 'shop'}},
    })
    assert.equal(row.Type, 'NodePort')
    assert.equal(row['Cluster-IP'], '10.96.0.10')
    assert.equal(row['External-IP'], '<none>')
    assert.equal(row['Port(s)'], '80:30080/TCP,443/TCP')
    assert.equal(row.Selector, 'app=shop,tier=web')
    const lb = cells(svc, {spec: {type: 'LoadBalancer'}, status: {}})
    assert.equal(lb['External-IP'], '<pending>')
    assert.equal(lb['Cluster-IP'], '<none>')
    assert.equal(lb['Port(s)'], '<none>')
    assert.equal(lb.Selector, '<none>')
    assert.equal(cells(svc, {spec: {type: 'LoadBalancer'}, status: {loadBalancer: {ingress: [{ip: '1.2.3.4'}]}}})['External-IP'], '1.2.3.4')
  })

  it('statefulset READY is ready/desired', () => {
    const row = cells(byKind('StatefulSet'), {
      spec: {replicas: 3, template: {spec: {containers: [{name: 'db', image: 'postgres:16'}, {name: 'exporter', image: 'exp:1'}]}}},
      status: {readyReplicas: 1},
    })
    assert.equal(row.Ready, '1/3')
    assert.equal(row.Containers, 'db,exporter')
    assert.equal(row.Images, 'postgres:16,exp:1')
    assert.equal(cells(byKind('StatefulSet'), {spec: {replicas: 2}}).Ready, '0/2')
  })

  it('event: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, …', () => {
    const row = cells(byKind('Event'), {
      involvedObject: {kind: 'Pod', name: 'web', fieldPath: 'spec.containers{a}'},
      reason: 'Pulled',
      message: ' pulled \n',
      type: 'Normal',
      source: {component: 'agent', host: 'n1'},
      firstTimestamp: ago(300),
      lastTimestamp: ago(30),
      count: 3,
    })
    assert.deepEqual(row, {
      'Last Seen': '30s',
      Type: 'Normal',
      Reason: 'Pulled',
      Object: 'pod/web',
      Subobject: 'spec.containers{a}',
      Source: 'agent, n1',
      Message: 'pulled',
      'First Seen': '5m',
      Count: 3,
    })
    const series = cells(byKind('Event'), {involvedObject: {kind: 'Node'}, eventTime: ago(90), series: {count: 7, lastObservedTime: ago(10)}, reportingComponent: 'ctl'})
    assert.equal(series['Last Seen'], '10s')
    assert.equal(series['First Seen'], '90s')
    assert.equal(series.Count, 7)
    assert.equal(series.Object, 'node')
    assert.equal(series.Source, 'ctl')
  })

  it('pvc, controllerrevision and lease', () => {
    const pvc = cells(byKind('PersistentVolumeClaim'), {
      spec: {volumeName: 'pv-1', storageClassName: 'fast', volumeMode: 'Filesystem'},
      status: {phase: 'Bound', capacity: {storage: '10Gi'}, accessModes: ['ReadWriteMany', 'ReadWriteOnce']},
    })
    assert.deepEqual(pvc, {
      Status: 'Bound',
      Volume: 'pv-1',
      Capacity: '10Gi',
      'Access Modes': 'RWO,RWX',
      StorageClass: 'fast',
      VolumeAttributesClass: '<unset>',
      Age: '<unknown>',
      VolumeMode: 'Filesystem',
    })
    const pending = cells(byKind('PersistentVolumeClaim'), {metadata: {annotations: {'volume.beta.orch.io/storage-class': 'slow'}}, spec: {}, status: {phase: 'Pending'}})
    assert.equal(pending.Capacity, '')
    assert.equal(pending.StorageClass, 'slow')
    const revision = cells(byKind('ControllerRevision'), {
      metadata: {ownerReferences: [{apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u', controller: true}]},
      revision: 2,
    })
    assert.equal(revision.Controller, 'statefulset.apps/db')
    assert.equal(revision.Revision, 2)
    assert.equal(cells(byKind('ControllerRevision'), {revision: 1}).Controller, '<none>')
    assert.equal(cells(byKind('Lease'), {spec: {holderIdentity: 'n1'}}).Holder, 'n1')
  })
})

describe('field selectors', () => {
  it('pods', () => {
    const fs = byKind('Pod').fieldSelectors!
    const o: AnyObject = {spec: {nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'orch-scheduler'}, status: {phase: 'Running', podIPs: [{ip: '10.0.0.1'}]}}
    assert.deepEqual(Object.keys(fs).sort(), [
      'spec.hostNetwork', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName',
      'status.nominatedNodeName', 'status.phase', 'status.podIP',
    ])
    assert.equal(fs['spec.nodeName'](o), 'n1')
    assert.equal(fs['spec.hostNetwork'](o), 'false')
    assert.equal(fs['status.podIP'](o), '10.0.0.1')
    assert.equal(fs['spec.serviceAccountName'](o), '')
  })

  it('nodes, events, services', () => {
    assert.equal(byKind('Node').fieldSelectors!['spec.unschedulable']({spec: {unschedulable: true}}), 'true')
    assert.equal(byKind('Node').fieldSelectors!['spec.unschedulable']({}), 'false')
    const ev = byKind('Event').fieldSelectors!
    assert.equal(Object.keys(ev).length, 11)
    assert.equal(ev['involvedObject.name']({involvedObject: {name: 'web'}}), 'web')
    assert.equal(ev.source({reportingComponent: 'ctl'}), 'ctl')
    assert.equal(ev.source({source: {component: 'agent'}, reportingComponent: 'ctl'}), 'agent')
    assert.deepEqual(Object.keys(byKind('Service').fieldSelectors!).sort(), ['spec.clusterIP', 'spec.type'])
  })
})
