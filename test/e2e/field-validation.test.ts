// fieldValidation as Kubernetes' own field-validation integration test pins it down, on a StatefulSet:
// which problems each body and patch type reports, in which order, and how Strict and Warn word them.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const statefulsets = '/apis/apps/v1/namespaces/default/statefulsets'

/** the texts of a response's Warning headers, in order */
function warningsOf(result: HttpResult): string[] {
  const header = result.headers.warning
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '')
  return [...text.matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map((match) => JSON.parse(match[1]!) as string)
}

const invalidJson = (name: string) => `{
  "apiVersion": "apps/v1",
  "kind": "StatefulSet",
  "metadata": {
    "name": "dupename",
    "name": "${name}",
    "labels": {"app": "nginx"},
    "unknownMeta": "metaVal"
  },
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "replicas": 1,
    "replicas": 2,
    "serviceName": "s",
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "unknownNested": "val1",
          "imagePullPolicy": "Always",
          "imagePullPolicy": "Never"
        }]
      }
    }
  }
}`

const invalidYaml = (name: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: dupename
  name: ${name}
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  replicas: 1
  replicas: 2
  serviceName: s
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
`

const validBody = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {name},
  spec: {serviceName: 's', selector: {matchLabels: {app: 'nginx'}}, template: {metadata: {labels: {app: 'nginx'}}, spec: {containers: [{name: 'nginx', image: 'nginx:latest'}]}}},
})

const mergePatch = `{
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "minReadySeconds": 1,
    "minReadySeconds": 2,
    "template": {"spec": {"containers": [{
      "name": "nginx",
      "image": "nginx:latest",
      "unknownNested": "val1",
      "imagePullPolicy": "Always",
      "imagePullPolicy": "Never"
    }]}}
  }
}`

const jsonPatch = `[
  {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
  {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
  {"op": "add", "path": "/spec/unknownDupe", "value": "valDupe"},
  {"op": "add", "path": "/spec/unknownDupe", "value": "valDupe2"},
  {"op": "add", "path": "/spec/template/spec/containers/0/unknownNested", "value": "val1"},
  {"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Always"}
]`

const applyWithDuplicates = (name: string) => `{
  "apiVersion": "apps/v1",
  "kind": "StatefulSet",
  "metadata": {"name": "${name}"},
  "spec": {
    "serviceName": "s",
    "minReadySeconds": 1,
    "minReadySeconds": 2,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
      "name": "nginx",
      "image": "nginx:latest",
      "imagePullPolicy": "Never",
      "imagePullPolicy": "Always"
    }]}}
  }
}`

describe('fieldValidation: unknown and duplicate fields as Kubernetes reports them', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  const jsonBodyProblems = [
    'duplicate field "metadata.name"',
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
    'duplicate field "spec.replicas"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
  ]

  it('"a JSON body\'s problems come in the order of the text; a field both unknown and duplicated is only unknown": Strict is one 400 worded as a decode error, Warn one warning each, Ignore none', async () => {
    const strict = await api('POST', `${statefulsets}?fieldValidation=Strict`, invalidJson('post-strict'))
    assert.equal(strict.status, 400, strict.text)
    assert.equal(strict.json.message, `StatefulSet in version "v1" cannot be handled as a StatefulSet: strict decoding error: ${jsonBodyProblems.join(', ')}`)
    assert.equal((await api('GET', `${statefulsets}/post-strict`)).status, 404)
    const warn = await api('POST', `${statefulsets}?fieldValidation=Warn`, invalidJson('post-warn'))
    assert.equal(warn.status, 201, warn.text)
    assert.deepEqual(warningsOf(warn), jsonBodyProblems)
    assert.equal(warn.json.spec.replicas, 2)
    const unset = await api('POST', statefulsets, invalidJson('post-default'))
    assert.deepEqual(warningsOf(unset), jsonBodyProblems, 'Warn is the default')
    const ignore = await api('POST', `${statefulsets}?fieldValidation=Ignore`, invalidJson('post-ignore'))
    assert.equal(ignore.status, 201, ignore.text)
    assert.deepEqual(warningsOf(ignore), [])
  })

  it('"a YAML body\'s duplicate keys are go-yaml\'s lines (line 5: key \\"name\\" already set in map), then its unknown fields in sorted order"', async () => {
    const yaml = {'Content-Type': 'application/yaml'}
    const lines = [
      'line 5: key "name" already set in map',
      'line 12: key "unknownDupe" already set in map',
      'line 14: key "replicas" already set in map',
      'line 29: key "imagePullPolicy" already set in map',
    ]
    const unknown = [
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
      'unknown field "spec.unknownDupe"',
    ]
    const strict = await api('POST', `${statefulsets}?fieldValidation=Strict`, invalidYaml('yaml-strict'), yaml)
    assert.equal(strict.status, 400, strict.text)
    assert.equal(
      strict.json.message,
      `StatefulSet in version "v1" cannot be handled as a StatefulSet: strict decoding error: yaml: unmarshal errors:\n  ${lines.join('\n  ')}, ${unknown.join(', ')}`,
    )
    const warn = await api('POST', `${statefulsets}?fieldValidation=Warn`, invalidYaml('yaml-warn'), yaml)
    assert.equal(warn.status, 201, warn.text)
    assert.deepEqual(warningsOf(warn), [...lines, ...unknown])
    const ignore = await api('POST', `${statefulsets}?fieldValidation=Ignore`, invalidYaml('yaml-ignore'), yaml)
    assert.deepEqual(warningsOf(ignore), [])
  })

  it('"a merge or strategic merge patch reports its own duplicates, then its result\'s unknown fields, sorted": Strict is the patcher\'s 422 on field patch, nothing changed', async () => {
    const created = await api('POST', statefulsets, validBody('patched'))
    assert.equal(created.status, 201, created.text)
    const problems = [
      'duplicate field "spec.unknownDupe"',
      'duplicate field "spec.minReadySeconds"',
      'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
      'unknown field "spec.unknownDupe"',
    ]
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      const before = (await api('GET', `${statefulsets}/patched`)).json.metadata.resourceVersion
      const strict = await api('PATCH', `${statefulsets}/patched?fieldValidation=Strict`, mergePatch, {'Content-Type': type})
      // the patcher's 422 on field patch, its value the patched document (a strategic patch: the patch map)
      assert.equal(strict.status, 422, `${type}: ${strict.text}`)
      assert.equal(strict.json.details.causes.length, 1)
      assert.equal(strict.json.details.causes[0].field, 'patch')
      assert.ok(strict.json.details.causes[0].message.endsWith(`": strict decoding error: ${problems.join(', ')}`), `${type}: ${strict.text}`)
      const shown = type === 'application/strategic-merge-patch+json' ? 'Invalid value: "map[spec:map[minReadySeconds:2' : 'Invalid value: "{\\"apiVersion\\":\\"apps/v1\\"'
      assert.ok(strict.json.details.causes[0].message.startsWith(shown), `${type}: ${strict.json.details.causes[0].message.slice(0, 80)}`)
      assert.equal((await api('GET', `${statefulsets}/patched`)).json.metadata.resourceVersion, before)
      const warn = await api('PATCH', `${statefulsets}/patched?fieldValidation=Warn`, mergePatch, {'Content-Type': type})
      assert.equal(warn.status, 200, `${type}: ${warn.text}`)
      assert.deepEqual(warningsOf(warn), problems, type)
      assert.equal(warn.json.spec.minReadySeconds, 2)
      assert.equal(warn.json.spec.unknown1, undefined)
      const ignore = await api('PATCH', `${statefulsets}/patched?fieldValidation=Ignore`, mergePatch, {'Content-Type': type})
      assert.deepEqual(warningsOf(ignore), [], type)
    }
  })

  it('"a JSON patch\'s operations are decoded strictly: json patch unknown field \\"[0].foo\\", json patch duplicate field \\"[1].path\\"", then its result\'s unknown fields, sorted', async () => {
    assert.equal((await api('POST', statefulsets, validBody('json-patched'))).status, 201)
    const problems = [
      'json patch unknown field "[0].foo"',
      'json patch duplicate field "[1].path"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
      'unknown field "spec.unknown3"',
      'unknown field "spec.unknownDupe"',
    ]
    const headers = {'Content-Type': 'application/json-patch+json'}
    const strict = await api('PATCH', `${statefulsets}/json-patched?fieldValidation=Strict`, jsonPatch, headers)
    assert.equal(strict.status, 422, strict.text)
    assert.equal(strict.json.details.causes[0].field, 'patch')
    assert.ok(strict.json.message.startsWith(' "" is invalid: patch: Invalid value: "{'), strict.json.message.slice(0, 80))
    assert.ok(strict.json.message.endsWith(`": strict decoding error: ${problems.join(', ')}`), strict.text)
    const warn = await api('PATCH', `${statefulsets}/json-patched?fieldValidation=Warn`, jsonPatch, headers)
    assert.equal(warn.status, 200, warn.text)
    assert.deepEqual(warningsOf(warn), problems)
  })

  it('"an apply patch\'s duplicate keys are checked after the apply: error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors"; its unknown fields fail the apply itself', async () => {
    const lines = ['line 8: key "minReadySeconds" already set in map', 'line 14: key "imagePullPolicy" already set in map']
    const apply = {'Content-Type': 'application/apply-patch+yaml'}
    const strict = await api('PATCH', `${statefulsets}/applied?fieldManager=m&fieldValidation=Strict`, applyWithDuplicates('applied'), apply)
    assert.equal(strict.status, 400, strict.text)
    assert.equal(strict.json.message, `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${lines.join('\n  ')}`)
    assert.equal((await api('GET', `${statefulsets}/applied`)).status, 404)
    const warn = await api('PATCH', `${statefulsets}/applied?fieldManager=m&fieldValidation=Warn`, applyWithDuplicates('applied'), apply)
    assert.equal(warn.status, 201, warn.text)
    assert.deepEqual(warningsOf(warn), lines)
    const again = await api('PATCH', `${statefulsets}/applied?fieldManager=m`, applyWithDuplicates('applied'), apply)
    assert.equal(again.status, 200, again.text)
    assert.deepEqual(warningsOf(again), lines, 'Warn is the default, and an update reports them too')
    const unknown = await api('PATCH', `${statefulsets}/applied?fieldManager=m&fieldValidation=Strict`, {...validBody('applied'), extra: 1}, apply)
    assert.equal(unknown.status, 400, unknown.text)
    assert.match(unknown.json.message, /^failed to create typed patch object .*: \.extra: field not declared in schema$/)
  })
})
