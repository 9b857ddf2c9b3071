import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {controllerRevision} from '../../src/api/apps/controllerrevision.js'
import {statefulSet} from '../../src/api/apps/statefulset.js'
import {node} from '../../src/api/core/node.js'
import {pod} from '../../src/api/core/pod.js'
import type {AnyObject} from '../../src/api/types.js'
import {ApiError} from '../../src/machinery/status.js'
import {strategicMergePatch} from '../../src/machinery/strategic.js'

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value))

function podWith(spec: AnyObject, metadata: AnyObject = {}): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p', namespace: 'default', ...metadata}, spec}
}

const twoContainers = podWith({
  containers: [
    {name: 'app', image: 'app:1', ports: [{containerPort: 8080, protocol: 'TCP'}], env: [{name: 'A', value: '1'}]},
    {name: 'sidecar', image: 'sidecar:1'},
  ],
})

function patchError(original: unknown, patch: unknown, schema = pod.schema): ApiError {
  try {
    strategicMergePatch(original, patch, schema)
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`)
    return e
  }
  assert.fail('the patch applied but should not have')
}

const names = (list: AnyObject[]) => list.map((c) => c.name)

describe('strategic merge patch: maps and structs', () => {
  it('maps merge key by key and null deletes a field', () => {
    const original = podWith({containers: [{name: 'app', image: 'app:1'}], nodeName: 'n1'}, {labels: {a: '1', b: '2'}})
    const result = strategicMergePatch(original, {metadata: {labels: {b: null, c: '3'}}, spec: {nodeName: null}}, pod.schema)
    assert.deepEqual(result.metadata.labels, {a: '1', c: '3'})
    assert.equal('nodeName' in result.spec, false)
    assert.deepEqual(result.spec.containers, [{name: 'app', image: 'app:1'}])
  })

  it('leaves its inputs untouched', () => {
    const original = clone(twoContainers)
    const patch = {spec: {containers: [{name: 'app', image: 'app:2'}]}}
    const patchCopy = clone(patch)
    strategicMergePatch(original, patch, pod.schema)
    assert.deepEqual(original, twoContainers)
    assert.deepEqual(patch, patchCopy)
  })

  it('a new map is taken from the patch without its nulls and directives', () => {
    const result = strategicMergePatch(podWith({containers: []}), {metadata: {annotations: {a: 'x', b: null}}}, pod.schema)
    assert.deepEqual(result.metadata.annotations, {a: 'x'})
  })

  it('a body that is not an object is a 400', () => {
    const error = patchError(twoContainers, [{op: 'add'}])
    assert.equal(error.code, 400)
    assert.equal(error.message, 'json: cannot unmarshal array into Go value of type map[string]interface {}')
  })
})

describe('strategic merge patch: lists', () => {
  it('containers are merged by name', () => {
    const result = strategicMergePatch(twoContainers, {spec: {containers: [{name: 'app', image: 'app:2'}]}}, pod.schema)
    assert.deepEqual(result.spec.containers, [
      {name: 'app', image: 'app:2', ports: [{containerPort: 8080, protocol: 'TCP'}], env: [{name: 'A', value: '1'}]},
      {name: 'sidecar', image: 'sidecar:1'},
    ])
  })

  it('lists inside merged items merge by their own keys (env by name, ports by containerPort)', () => {
    const patch = {spec: {containers: [{name: 'app', env: [{name: 'B', value: '2'}, {name: 'A', value: 'one'}], ports: [{containerPort: 9090}]}]}}
    const app = strategicMergePatch(twoContainers, patch, pod.schema).spec.containers[0]
    assert.deepEqual(app.env, [{name: 'B', value: '2'}, {name: 'A', value: 'one'}])
    assert.deepEqual(app.ports, [{containerPort: 9090}, {containerPort: 8080, protocol: 'TCP'}])
  })

  it("items a patch adds come before the existing ones, as Kubernetes' patch without $setElementOrder orders them", () => {
    const result = strategicMergePatch(twoContainers, {spec: {containers: [{name: 'new', image: 'new:1'}, {name: 'sidecar', image: 'sidecar:2'}]}}, pod.schema)
    assert.deepEqual(names(result.spec.containers), ['new', 'app', 'sidecar'])
    assert.equal(result.spec.containers[2].image, 'sidecar:2')
  })

  it("a Node's spec.taints (atomic, replaced whole on merge) is replaced whole", () => {
    const original = {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}, spec: {taints: [{key: 'a', effect: 'NoSchedule'}, {key: 'b', effect: 'NoExecute'}]}}
    const result = strategicMergePatch(original, {spec: {taints: [{key: 'c', effect: 'NoSchedule'}]}}, node.schema)
    assert.deepEqual(result.spec.taints, [{key: 'c', effect: 'NoSchedule'}])
  })

  it('status conditions are merged by type', () => {
    const original = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {name: 'n1'},
      status: {
        conditions: [
          {type: 'Ready', status: 'False', reason: 'Starting'},
          {type: 'MemoryPressure', status: 'False'},
        ],
      },
    }
    const result = strategicMergePatch(original, {status: {conditions: [{type: 'Ready', status: 'True', reason: 'AgentReady'}]}}, node.schema)
    assert.deepEqual(result.status.conditions, [
      {type: 'Ready', status: 'True', reason: 'AgentReady'},
      {type: 'MemoryPressure', status: 'False'},
    ])
  })

  it('finalizers are merged as a set', () => {
    const original = podWith({containers: []}, {finalizers: ['a', 'b']})
    assert.deepEqual(strategicMergePatch(original, {metadata: {finalizers: ['c']}}, pod.schema).metadata.finalizers, ['c', 'a', 'b'])
    assert.deepEqual(strategicMergePatch(original, {metadata: {finalizers: ['b', 'c', 'c']}}, pod.schema).metadata.finalizers, ['a', 'b', 'c'])
  })

  it('a list without a merge strategy (command) is replaced whole', () => {
    const original = podWith({containers: [{name: 'app', command: ['a', 'b']}]})
    const result = strategicMergePatch(original, {spec: {containers: [{name: 'app', command: ['c']}]}}, pod.schema)
    assert.deepEqual(result.spec.containers[0].command, ['c'])
  })

  it('an item without the merge key is a 400 with Kubernetes\' message', () => {
    const error = patchError(twoContainers, {spec: {containers: [{image: 'x'}]}})
    assert.equal(error.code, 400)
    assert.equal(error.message, 'map: map[image:x] does not contain declared merge key: name')
  })

  it('a list of lists is a 422', () => {
    const error = patchError(podWith({containers: []}, {finalizers: []}), {metadata: {finalizers: [['a']]}})
    assert.equal(error.code, 422)
    assert.equal(error.reason, 'Invalid')
    assert.equal(error.message, 'the server rejected our request due to an error in our request')
  })

  it('free-form (raw) fields merge as JSON merge patch', () => {
    const original = {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: {name: 'r'}, revision: 1, data: {spec: {a: 1, list: [1, 2]}, keep: true}}
    const result = strategicMergePatch(original, {data: {spec: {a: null, b: 2, list: [3]}}}, controllerRevision.schema)
    assert.deepEqual(result.data, {spec: {list: [3], b: 2}, keep: true})
  })
})

describe('strategic merge patch: $patch', () => {
  it('$patch: replace on a map replaces the whole map', () => {
    const original = podWith({containers: []}, {labels: {a: '1', b: '2'}})
    const result = strategicMergePatch(original, {metadata: {labels: {$patch: 'replace', c: '3'}}}, pod.schema)
    assert.deepEqual(result.metadata.labels, {c: '3'})
  })

  it('$patch: replace in a list item replaces the whole list', () => {
    const result = strategicMergePatch(twoContainers, {spec: {containers: [{name: 'only', image: 'only:1'}, {$patch: 'replace'}]}}, pod.schema)
    assert.deepEqual(result.spec.containers, [{name: 'only', image: 'only:1'}])
  })

  it('$patch: delete in a list item deletes the item with that key', () => {
    const result = strategicMergePatch(twoContainers, {spec: {containers: [{name: 'sidecar', $patch: 'delete'}]}}, pod.schema)
    assert.deepEqual(names(result.spec.containers), ['app'])
  })

  it('$patch: delete without the merge key is a 400', () => {
    const error = patchError(twoContainers, {spec: {containers: [{$patch: 'delete'}]}})
    assert.equal(error.message, 'map: map[$patch:delete] does not contain declared merge key: name')
  })

  it('$patch: delete on a map empties it, as Kubernetes does', () => {
    const original = podWith({containers: [], securityContext: {runAsUser: 1000}}, {labels: {a: '1'}})
    const result = strategicMergePatch(original, {metadata: {labels: {$patch: 'delete'}}, spec: {securityContext: {$patch: 'delete'}}}, pod.schema)
    assert.deepEqual(result.metadata.labels, {})
    assert.deepEqual(result.spec.securityContext, {})
  })

  it('a $patch map for a field the original lacks adds nothing', () => {
    const result = strategicMergePatch(podWith({containers: []}), {spec: {securityContext: {$patch: 'replace', runAsUser: 1}}}, pod.schema)
    assert.equal('securityContext' in result.spec, false)
  })

  it('$patch: merge is refused as Kubernetes refuses it, in a list and on a map', () => {
    assert.equal(patchError(twoContainers, {spec: {containers: [{$patch: 'merge'}]}}).message, 'merging lists cannot yet be specified in the patch')
    const original = podWith({containers: []}, {labels: {a: '1'}})
    const error = patchError(original, {metadata: {labels: {$patch: 'merge', b: '2'}}})
    assert.equal(error.code, 400)
    assert.equal(error.message, 'unknown patch type: merge in map: map[$patch:merge b:2]')
  })

  it('an unknown $patch is a 400', () => {
    const error = patchError(twoContainers, {spec: {containers: [{name: 'app', $patch: 'frobnicate'}]}})
    assert.equal(error.code, 400)
    assert.equal(error.message, 'unknown patch type: frobnicate in map: map[$patch:frobnicate name:app]')
  })
})

describe('strategic merge patch: $retainKeys', () => {
  const withVolume = podWith({containers: [], volumes: [{name: 'data', hostPath: {path: '/data'}}, {name: 'cache', emptyDir: {}}]})

  it('$retainKeys clears the fields it does not list', () => {
    const patch = {spec: {volumes: [{name: 'data', $retainKeys: ['name', 'emptyDir'], emptyDir: {medium: 'Memory'}}]}}
    const result = strategicMergePatch(withVolume, patch, pod.schema)
    assert.deepEqual(result.spec.volumes, [
      {name: 'data', emptyDir: {medium: 'Memory'}},
      {name: 'cache', emptyDir: {}},
    ])
  })

  it('a patch field missing from $retainKeys is a 400', () => {
    const error = patchError(withVolume, {spec: {volumes: [{name: 'data', $retainKeys: ['name'], emptyDir: {}}]}})
    assert.equal(error.code, 400)
    assert.equal(error.message, 'invalid patch format of retainKeys')
  })

  it('$retainKeys that is not a list is a 400', () => {
    assert.equal(patchError(withVolume, {spec: {volumes: [{name: 'data', $retainKeys: 'name'}]}}).message, 'invalid patch format of retainKeys')
  })
})

describe('strategic merge patch: $deleteFromPrimitiveList', () => {
  it('removes the listed values from a primitive list', () => {
    const original = podWith({containers: []}, {finalizers: ['a', 'b', 'c']})
    const result = strategicMergePatch(original, {metadata: {'$deleteFromPrimitiveList/finalizers': ['b', 'x']}}, pod.schema)
    assert.deepEqual(result.metadata.finalizers, ['a', 'c'])
  })

  it('works on a primitive list without a merge strategy too, and never adds the list', () => {
    const original = podWith({containers: [{name: 'app', args: ['--a', '--b']}]})
    const result = strategicMergePatch(original, {spec: {containers: [{name: 'app', '$deleteFromPrimitiveList/args': ['--a'], '$deleteFromPrimitiveList/command': ['x']}]}}, pod.schema)
    assert.deepEqual(result.spec.containers, [{name: 'app', args: ['--b']}])
  })

  it('a directive without a list name is a 400', () => {
    const error = patchError(podWith({containers: []}, {finalizers: ['a']}), {metadata: {$deleteFromPrimitiveListfinalizers: ['a']}})
    assert.equal(error.message, 'invalid patch format of primitive list')
  })
})

describe('strategic merge patch: $setElementOrder', () => {
  it('orders a merged list as the directive says, server-only items keeping their place', () => {
    const original = podWith({containers: [{name: 'a'}, {name: 'b'}, {name: 'c'}]})
    const patch = {spec: {containers: [{name: 'd', image: 'd'}], '$setElementOrder/containers': [{name: 'c'}, {name: 'd'}, {name: 'a'}]}}
    const result = strategicMergePatch(original, patch, pod.schema)
    assert.deepEqual(names(result.spec.containers), ['b', 'c', 'd', 'a'])
  })

  it('appends where the directive puts the new item last', () => {
    const patch = {spec: {containers: [{name: 'new'}], '$setElementOrder/containers': [{name: 'app'}, {name: 'sidecar'}, {name: 'new'}]}}
    assert.deepEqual(names(strategicMergePatch(twoContainers, patch, pod.schema).spec.containers), ['app', 'sidecar', 'new'])
  })

  it('orders as Kubernetes does when the patch deletes and adds items in one go', () => {
    // Kubernetes' "add map and delete map from merging list" case: the result depends on patch.go
    // shifting the live list in place when it deletes
    const original = podWith({containers: [{name: 'c1'}, {name: 'c2', image: 'b'}, {name: 'c4', image: 'c'}]})
    const patch = {spec: {'$setElementOrder/containers': [{name: 'c2'}, {name: 'c3'}], containers: [{name: 'c3'}, {name: 'c1', $patch: 'delete'}]}}
    assert.deepEqual(strategicMergePatch(original, patch, pod.schema).spec.containers, [{name: 'c2', image: 'b'}, {name: 'c4', image: 'c'}, {name: 'c3'}])
  })

  it('orders a primitive list, with $deleteFromPrimitiveList in the same patch', () => {
    const original = podWith({containers: []}, {finalizers: ['a', 'b', 'c']})
    const patch = {metadata: {'$setElementOrder/finalizers': ['c', 'a'], '$deleteFromPrimitiveList/finalizers': ['b']}}
    assert.deepEqual(strategicMergePatch(original, patch, pod.schema).metadata.finalizers, ['c', 'a'])
  })

  it('a patch list out of the directive\'s order is a 400', () => {
    const patch = {spec: {containers: [{name: 'sidecar'}, {name: 'app'}], '$setElementOrder/containers': [{name: 'app'}, {name: 'sidecar'}]}}
    const error = patchError(twoContainers, patch)
    assert.equal(error.code, 400)
    assert.equal(
      error.message,
      "The order in patch list:\n[map[name:sidecar] map[name:app]]\n doesn't match $setElementOrder list:\n[map[name:app] map[name:sidecar]]\n",
    )
  })

  it('a directive for a field the schema lacks is a 400', () => {
    const error = patchError(twoContainers, {spec: {'$setElementOrder/nothing': ['a']}})
    assert.equal(error.message, 'unable to find api field in struct PodSpec for the json field "nothing"')
  })
})

describe('strategic merge patch: a StatefulSet', () => {
  const sts: AnyObject = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name: 'web', namespace: 'default'},
    spec: {
      replicas: 2,
      selector: {matchLabels: {app: 'web'}},
      template: {
        metadata: {labels: {app: 'web'}},
        spec: {
          containers: [
            {name: 'nginx', image: 'nginx:1.25', ports: [{containerPort: 80, protocol: 'TCP'}], resources: {limits: {cpu: '1'}}},
            {name: 'log', image: 'busybox'},
          ],
        },
      },
    },
  }

  it('a template change is merged into the containers', () => {
    const patch = {spec: {template: {metadata: {annotations: {restartedAt: 'now'}}, spec: {containers: [{name: 'nginx', image: 'nginx:1.27', resources: {limits: {memory: '1Gi'}}}]}}}}
    const result = strategicMergePatch(sts, patch, statefulSet.schema)
    assert.deepEqual(result.spec.template, {
      metadata: {labels: {app: 'web'}, annotations: {restartedAt: 'now'}},
      spec: {
        containers: [
          {name: 'nginx', image: 'nginx:1.27', ports: [{containerPort: 80, protocol: 'TCP'}], resources: {limits: {cpu: '1', memory: '1Gi'}}},
          {name: 'log', image: 'busybox'},
        ],
      },
    })
    assert.equal(result.spec.replicas, 2)
  })

  it('volumeClaimTemplates (atomic) are replaced whole', () => {
    const original = {...sts, spec: {...sts.spec, volumeClaimTemplates: [{metadata: {name: 'a'}}, {metadata: {name: 'b'}}]}}
    const result = strategicMergePatch(original, {spec: {volumeClaimTemplates: [{metadata: {name: 'c'}}]}}, statefulSet.schema)
    assert.deepEqual(result.spec.volumeClaimTemplates, [{metadata: {name: 'c'}}])
  })
})
