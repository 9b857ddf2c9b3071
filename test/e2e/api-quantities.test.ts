// Resource quantities are stored and served as resource.Quantity's MarshalJSON writes them: String() of
// what UnmarshalJSON parsed (a JSON number as written, a string without its quotes), whatever the
// encoding of the write and whichever write it was.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {encodeCbor} from '../../src/machinery/cbor.js'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const pods = '/api/v1/namespaces/default/pods'
const statefulSets = '/apis/apps/v1/namespaces/default/statefulsets'
const json = {'Content-Type': 'application/json'}

/** A Pod's JSON text with the container's resources as written. */
const podText = (name: string, resources: string) =>
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}"},"spec":{"containers":[{"name":"c","image":"i:1","resources":${resources}}]}}`

describe('resource quantities in their canonical form', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('"a JSON number is accepted and becomes a canonical string; strings are canonicalised": a Pod stores and serves 500m, 1024, 1e3', async () => {
    const created = await api('POST', pods, podText('numbers', '{"limits":{"cpu":"0.5","memory":1024},"requests":{"cpu":0.5,"memory":"1e3"}}'), json)
    assert.equal(created.status, 201, created.text)
    const expected = {limits: {cpu: '500m', memory: '1024'}, requests: {cpu: '500m', memory: '1e3'}}
    assert.deepEqual(created.json.spec.containers[0].resources, expected)
    const read = await api('GET', `${pods}/numbers`)
    assert.deepEqual(read.json.spec.containers[0].resources, expected)
  })

  it('a number keeps the text it was written with (1e3 stays 1e3, 0.50 is 500m), and a JSON number 1e400 is a quantity as the string "1e400" is', async () => {
    const created = await api('POST', pods, podText('literals', '{"limits":{"cpu":1.50,"memory":1e3,"ephemeral-storage":1e400},"requests":{"ephemeral-storage":"1e400"}}'), json)
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.spec.containers[0].resources, {
      limits: {cpu: '1500m', memory: '1e3', 'ephemeral-storage': '10e399'},
      requests: {'ephemeral-storage': '10e399', cpu: '1500m', memory: '1e3'},
    })
  })

  it('YAML and CBOR bodies are canonicalised too: a YAML number is a float turned into JSON (1e3 is 1k)', async () => {
    const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: yaml}\nspec:\n  containers:\n  - name: c\n    image: i:1\n    resources: {limits: {cpu: 0.25, memory: 1e3}, requests: {cpu: "250m", memory: 1024Mi}}\n'
    const fromYaml = await api('POST', pods, yaml, {'Content-Type': 'application/yaml'})
    assert.equal(fromYaml.status, 422, `1Gi of memory requested is over the limit of 1k: ${fromYaml.text}`)
    assert.match(fromYaml.json.message, /spec\.containers\[0\]\.resources\.requests: Invalid value: "1Gi": must be less than or equal to memory limit of 1k/)
    const fixed = await api('POST', pods, yaml.replace('1024Mi', '1000'), {'Content-Type': 'application/yaml'})
    assert.equal(fixed.status, 201, fixed.text)
    assert.deepEqual(fixed.json.spec.containers[0].resources, {limits: {cpu: '250m', memory: '1k'}, requests: {cpu: '250m', memory: '1k'}})
    const cbor = encodeCbor({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'cbor'}, spec: {containers: [{name: 'c', image: 'i:1', resources: {limits: {memory: '2048Ki', cpu: '1.0'}}}]}})
    const fromCbor = await api('POST', pods, cbor, {'Content-Type': 'application/cbor'})
    assert.equal(fromCbor.status, 201, fromCbor.text)
    assert.deepEqual(fromCbor.json.spec.containers[0].resources, {limits: {memory: '2Mi', cpu: '1'}, requests: {memory: '2Mi', cpu: '1'}})
  })

  it('a StatefulSet: its template and claim templates are canonical after a create, an update, a merge patch and an apply', async () => {
    const set = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'web'},
      spec: {
        serviceName: 's',
        selector: {matchLabels: {a: 'b'}},
        template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i:1', volumeMounts: [{name: 'data', mountPath: '/data'}], resources: {limits: {cpu: 1.5, memory: '1024Mi'}}}]}},
        volumeClaimTemplates: [{metadata: {name: 'data'}, spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '0.5Gi'}}}}],
      },
    }
    const created = await api('POST', statefulSets, set)
    assert.equal(created.status, 201, created.text)
    const resourcesOf = (object: any) => object.spec.template.spec.containers[0].resources
    assert.deepEqual(resourcesOf(created.json).limits, {cpu: '1500m', memory: '1Gi'})
    assert.deepEqual(created.json.spec.volumeClaimTemplates[0].spec.resources.requests, {storage: '512Mi'})

    const update = structuredClone(created.json)
    resourcesOf(update).limits = {cpu: '2000m', memory: 2 ** 30}
    const updated = await api('PUT', `${statefulSets}/web`, update)
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual(resourcesOf(updated.json).limits, {cpu: '2', memory: '1073741824'})

    const patch = '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i:1","volumeMounts":[{"name":"data","mountPath":"/data"}],"resources":{"limits":{"cpu":0.1,"memory":1e9}}}]}}}}'
    const patched = await api('PATCH', `${statefulSets}/web`, patch, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(resourcesOf(patched.json).limits, {cpu: '100m', memory: '1e9'})

    const apply = 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i:1\n        resources: {limits: {cpu: 0.75}}\n'
    const applied = await api('PATCH', `${statefulSets}/web?fieldManager=quantities&force=true`, apply, {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(applied.status, 200, applied.text)
    assert.equal(resourcesOf(applied.json).limits.cpu, '750m')
    assert.equal(resourcesOf((await api('GET', `${statefulSets}/web`)).json).limits.cpu, '750m')
  })

  it('a quantity that does not parse is still refused: 400 on a create, 422 on a patch\'s result', async () => {
    const created = await api('POST', pods, podText('bad', '{"limits":{"cpu":"5mm"}}'), json)
    assert.equal(created.status, 400, created.text)
    assert.equal(created.json.message, "Pod in version \"v1\" cannot be handled as a Pod: unable to parse quantity's suffix")
    const patched = await api('PATCH', `${pods}/numbers`, '{"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"1x"}}}]}}', {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 422, patched.text)
    assert.match(patched.json.details.causes[0].message, /quantities must match the regular expression/)
  })
})
