// The generic registry over HTTP: paths, operations, metadata and errors, as Kubernetes answers them.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {request as httpsRequest} from 'node:https'
import {call, tlsOptions, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const cm = (name: string, data: Record<string, string> = {k: 'v'}, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {name, ...extra},
  data,
})

function assertStatus(result: HttpResult, code: number, reason: string) {
  assert.equal(result.status, code, result.text)
  assert.equal(result.json?.kind, 'Status', result.text)
  assert.equal(result.json.code, code)
  assert.equal(result.json.reason, reason)
  assert.equal(result.json.status, 'Failure')
}

describe('API core: standard operations', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('namespace "default" exists from first start', async () => {
    const result = await api('GET', '/api/v1/namespaces/default')
    assert.equal(result.status, 200)
    assert.equal(result.json.status.phase, 'Active')
  })

  it('create answers 201 with uid, creationTimestamp, resourceVersion; get answers 200', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/configmaps', cm('crud-one'))
    assert.equal(created.status, 201, created.text)
    const meta = created.json.metadata
    assert.match(meta.uid, /^[0-9a-f-]{36}$/)
    assert.match(meta.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    assert.match(meta.resourceVersion, /^\d+$/)
    assert.equal(meta.namespace, 'default')
    const got = await api('GET', '/api/v1/namespaces/default/configmaps/crud-one')
    assert.equal(got.status, 200)
    assert.deepEqual(got.json.metadata, meta)
  })

  it('"Go\'s omitempty": an optional list or map field left empty is neither stored nor served (labels: {}, finalizers: [], data: {}), on create, update and patch; a required one stays', async () => {
    const base = '/api/v1/namespaces/default/configmaps'
    const created = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'empty-maps', labels: {}, annotations: {}, finalizers: []}, data: {}})
    assert.equal(created.status, 201, created.text)
    for (const field of ['labels', 'annotations', 'finalizers']) assert.equal(field in created.json.metadata, false, field)
    assert.equal('data' in created.json, false)
    const labelled = await api('PATCH', `${base}/empty-maps`, {metadata: {labels: {a: 'b'}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.deepEqual(labelled.json.metadata.labels, {a: 'b'})
    const unlabelled = await api('PATCH', `${base}/empty-maps`, {metadata: {labels: {a: null}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal('labels' in unlabelled.json.metadata, false, 'the last label removed leaves no labels: {}')
    assert.equal('labels' in (await api('GET', `${base}/empty-maps`)).json.metadata, false)
    // a required list is kept as given: an empty one is refused by validation, not dropped
    const pod = await api('POST', '/api/v1/namespaces/default/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'no-containers'}, spec: {containers: []}})
    assert.equal(pod.status, 422, pod.text)
  })

  it('creating a name that exists is 409 AlreadyExists', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('dup'))
    const again = await api('POST', '/api/v1/namespaces/default/configmaps', cm('dup'))
    assertStatus(again, 409, 'AlreadyExists')
    assert.equal(again.json.message, 'configmaps "dup" already exists')
  })

  it('generateName gets a random suffix', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {generateName: 'gen-'}})
    assert.equal(created.status, 201, created.text)
    assert.match(created.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
  })

  it('a generateName longer than 58 characters is cut to 58 before the suffix, so the name has at most 63 characters', async () => {
    const long = 'a'.repeat(70)
    const configMap = await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {generateName: long}})
    assert.equal(configMap.status, 201, configMap.text)
    assert.match(configMap.json.metadata.name, /^a{58}[bcdfghjklmnpqrstvwxz2456789]{5}$/)
    assert.equal(configMap.json.metadata.generateName, long)
    // a namespace's generateName must itself be a DNS label (at most 63), and the name still fits
    const sixty = 'n'.repeat(60)
    const namespace = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {generateName: sixty}})
    assert.equal(namespace.status, 201, namespace.text)
    assert.equal(namespace.json.metadata.name.length, 63)
  })

  it('a namespaced object in a missing namespace is 404', async () => {
    const result = await api('POST', '/api/v1/namespaces/nowhere/configmaps', cm('x'))
    assertStatus(result, 404, 'NotFound')
    assert.equal(result.json.message, 'namespaces "nowhere" not found')
    // NamespaceLifecycle is admission, ahead of validation and of a Service's allocation
    const invalid = await api('POST', '/api/v1/namespaces/nowhere/configmaps', {...cm('x'), data: {'not a key!': 'v'}})
    assertStatus(invalid, 404, 'NotFound')
    const service = await api('POST', '/api/v1/namespaces/nowhere/services', {apiVersion: 'v1', kind: 'Service', metadata: {name: 's'}, spec: {clusterIP: '10.96.7.7', ports: [{port: 80}]}})
    assertStatus(service, 404, 'NotFound')
    const elsewhere = await api('POST', '/api/v1/namespaces/default/services', {apiVersion: 'v1', kind: 'Service', metadata: {name: 'took-ip'}, spec: {clusterIP: '10.96.7.7', ports: [{port: 80}]}})
    assert.equal(elsewhere.status, 201, 'the refused Service allocated nothing')
  })

  it('get of a missing object is 404 NotFound with details', async () => {
    const result = await api('GET', '/api/v1/namespaces/default/configmaps/missing')
    assertStatus(result, 404, 'NotFound')
    assert.deepEqual(result.json.details, {name: 'missing', kind: 'configmaps'})
  })

  it('PUT with a stale resourceVersion is 409 Conflict', async () => {
    const created = (await api('POST', '/api/v1/namespaces/default/configmaps', cm('stale'))).json
    const first = await api('PUT', '/api/v1/namespaces/default/configmaps/stale', {...created, data: {k: 'v2'}})
    assert.equal(first.status, 200, first.text)
    assert.notEqual(first.json.metadata.resourceVersion, created.metadata.resourceVersion)
    const second = await api('PUT', '/api/v1/namespaces/default/configmaps/stale', {...created, data: {k: 'v3'}})
    assertStatus(second, 409, 'Conflict')
    assert.match(second.json.message, /the object has been modified; please apply your changes to the latest version and try again/)
  })

  it('PUT with a name different from the URL is 400', async () => {
    const result = await api('PUT', '/api/v1/namespaces/default/configmaps/one', cm('two'))
    assertStatus(result, 400, 'BadRequest')
  })

  it('PUT whose body has no metadata.name is 400 (Kubernetes\' checkName: "" does not match the URL), also on /status and for kinds that create on update', async () => {
    const created = (await api('POST', '/api/v1/namespaces/default/configmaps', cm('nameless'))).json
    const {name: _name, ...withoutName} = created.metadata
    const result = await api('PUT', '/api/v1/namespaces/default/configmaps/nameless', {...created, metadata: withoutName, data: {k: 'changed'}})
    assertStatus(result, 400, 'BadRequest')
    assert.equal(result.json.message, 'the name of the object () does not match the name on the URL (nameless)')
    assert.deepEqual((await api('GET', '/api/v1/namespaces/default/configmaps/nameless')).json.data, {k: 'v'})
    const ns = (await api('GET', '/api/v1/namespaces/default')).json
    assertStatus(await api('PUT', '/api/v1/namespaces/default/status', {...ns, metadata: {}}), 400, 'BadRequest')
    const lease = await api('PUT', '/apis/coordination.orch.io/v1/namespaces/default/leases/nameless', {spec: {}})
    assertStatus(lease, 400, 'BadRequest')
    assert.equal((await api('GET', '/apis/coordination.orch.io/v1/namespaces/default/leases/nameless')).status, 404)
  })

  it('PUT of a Namespace without metadata.resourceVersion is an unconditional update (Kubernetes\' namespaceStrategy allows it)', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'uncond'}})
    const result = await api('PUT', '/api/v1/namespaces/uncond', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'uncond', labels: {a: 'b'}}})
    assert.equal(result.status, 200, result.text)
    assert.deepEqual(result.json.metadata.labels, {a: 'b', 'orch.io/metadata.name': 'uncond'})
    // a Lease does not allow it (leaseStrategy): still 422
    await api('POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', {metadata: {name: 'uncond'}, spec: {}})
    const lease = await api('PUT', '/apis/coordination.orch.io/v1/namespaces/default/leases/uncond', {metadata: {name: 'uncond'}, spec: {holderIdentity: 'x'}})
    assertStatus(lease, 422, 'Invalid')
  })

  it('PUT of a missing ConfigMap is 404 (the kind does not create on update)', async () => {
    const result = await api('PUT', '/api/v1/namespaces/default/configmaps/absent', cm('absent'))
    assertStatus(result, 404, 'NotFound')
  })

  it('delete answers a success Status with 200 (no code, as Kubernetes); the object is gone', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('bye'))
    const deleted = await api('DELETE', '/api/v1/namespaces/default/configmaps/bye')
    assert.equal(deleted.status, 200)
    assert.equal(deleted.json.kind, 'Status')
    assert.equal(deleted.json.status, 'Success')
    assert.equal(deleted.json.details.name, 'bye')
    assert.equal(deleted.json.code, undefined)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/bye')).status, 404)
  })

  it('an object with finalizers is only marked by delete (200 with the marked object, as Kubernetes); it goes when they are removed', async () => {
    const created = (await api('POST', '/api/v1/namespaces/default/configmaps', cm('held', {k: 'v'}, {finalizers: ['example.com/hold']}))).json
    const deleted = await api('DELETE', '/api/v1/namespaces/default/configmaps/held')
    assert.equal(deleted.status, 200)
    assert.equal(deleted.json.kind, 'ConfigMap')
    assert.ok(deleted.json.metadata.deletionTimestamp)
    assert.equal(deleted.json.metadata.deletionGracePeriodSeconds, 0)
    const cascading = await api('DELETE', '/api/v1/namespaces/default/configmaps/held?orphanDependents=false')
    assert.equal(cascading.status, 202)
    const marked = (await api('GET', '/api/v1/namespaces/default/configmaps/held')).json
    assert.ok(marked.metadata.deletionTimestamp)
    assert.equal(marked.metadata.uid, created.metadata.uid)
    const released = await api('PUT', '/api/v1/namespaces/default/configmaps/held', {...marked, metadata: {...marked.metadata, finalizers: []}})
    assert.equal(released.status, 200, released.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/held')).status, 404)
  })

  it('deletecollection with a label selector deletes only the matching objects and answers a Status', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'dc'}})
    for (const [name, tier] of [['a', 'x'], ['b', 'x'], ['c', 'y']]) {
      await api('POST', '/api/v1/namespaces/dc/configmaps', cm(name, {}, {labels: {tier}}))
    }
    const result = await api('DELETE', '/api/v1/namespaces/dc/configmaps?labelSelector=tier%3Dx')
    assert.equal(result.status, 200)
    assert.equal(result.json.kind, 'Status')
    const left = (await api('GET', '/api/v1/namespaces/dc/configmaps')).json.items.map((i: any) => i.metadata.name)
    assert.deepEqual(left, ['c'])
  })

  it('an unknown resource is 404', async () => {
    assertStatus(await api('GET', '/api/v1/widgets'), 404, 'NotFound')
    assertStatus(await api('GET', '/apis/nothing.orch.io/v1/things'), 404, 'NotFound')
  })

  it('a verb the resource does not allow is 405 (Namespace has no deletecollection)', async () => {
    assertStatus(await api('DELETE', '/api/v1/namespaces'), 405, 'MethodNotAllowed')
  })

  it('a method on the wrong path shape is 405: POST to a named object, PUT or PATCH to a collection; nothing is stored', async () => {
    const post = await api('POST', '/api/v1/namespaces/default/configmaps/shape-a', cm('shape-b'))
    assertStatus(post, 405, 'MethodNotAllowed')
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/shape-b')).status, 404)
    assertStatus(await api('PUT', '/api/v1/namespaces/default/configmaps', cm('shape-c')), 405, 'MethodNotAllowed')
    assertStatus(await api('PATCH', '/api/v1/namespaces/default/configmaps', {data: {}}, {'Content-Type': 'application/merge-patch+json'}), 405, 'MethodNotAllowed')
    assertStatus(await api('PUT', '/api/v1/nodes', {metadata: {name: 'n'}}), 405, 'MethodNotAllowed')
  })

  it('malformed JSON is 400 and nothing is stored', async () => {
    const result = await api('POST', '/api/v1/namespaces/default/configmaps', '{"apiVersion": "v1", "kind": ', {'Content-Type': 'application/json'})
    assertStatus(result, 400, 'BadRequest')
  })

  it('metadata that is not an object is 400 (as decoding into ObjectMeta fails), never a 500, and nothing is stored', async () => {
    for (const metadata of ['"x"', '["a"]', '7']) {
      const result = await api('POST', '/api/v1/namespaces/default/configmaps', `{"apiVersion":"v1","kind":"ConfigMap","metadata":${metadata}}`, {'Content-Type': 'application/json'})
      assertStatus(result, 400, 'BadRequest')
      assert.match(result.json.message, /^ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal (string|array|number) into Go struct field ConfigMap\.metadata of type v1\.ObjectMeta$/)
      const put = await api('PUT', '/api/v1/namespaces/default/configmaps/x', `{"apiVersion":"v1","kind":"ConfigMap","metadata":${metadata}}`, {'Content-Type': 'application/json'})
      assertStatus(put, 400, 'BadRequest')
    }
  })

  it('malformed YAML is 400', async () => {
    const result = await api('POST', '/api/v1/namespaces/default/configmaps', 'metadata: [unclosed', {'Content-Type': 'application/yaml'})
    assertStatus(result, 400, 'BadRequest')
  })

  it('a body without apiVersion and kind takes them from the URL, as Kubernetes', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/configmaps', {metadata: {name: 'untyped'}, data: {a: 'b'}})
    assert.equal(created.status, 201, created.text)
    assert.equal(created.json.kind, 'ConfigMap')
    assert.equal(created.json.apiVersion, 'v1')
  })

  it('dryRun in the DeleteOptions body deletes nothing', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('survivor'))
    const result = await api('DELETE', '/api/v1/namespaces/default/configmaps/survivor', {kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All']})
    assert.equal(result.status, 200)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/survivor')).status, 200)
  })

  it('DeleteOptions are validated: an unknown propagationPolicy, or one set together with orphanDependents, is 422 and deletes nothing', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('kept'))
    const unknown = await api('DELETE', '/api/v1/namespaces/default/configmaps/kept?propagationPolicy=Sideways')
    assertStatus(unknown, 422, 'Invalid')
    assert.equal(unknown.json.details.kind, 'DeleteOptions')
    assert.match(unknown.json.message, /propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"/)
    const both = await api('DELETE', '/api/v1/namespaces/default/configmaps', {kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', orphanDependents: true})
    assertStatus(both, 422, 'Invalid')
    assert.match(both.json.message, /orphanDependents and deletionPropagation cannot be both set/)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/kept')).status, 200)
    const ok = await api('DELETE', '/api/v1/namespaces/default/configmaps/kept?propagationPolicy=Foreground')
    assert.equal(ok.status, 200, ok.text)
  })

  it('ValidateDeleteOptions: a bad propagationPolicy and a bad dryRun in one body are one 422 naming both, and nothing is deleted', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('both-wrong'))
    const result = await api('DELETE', '/api/v1/namespaces/default/configmaps/both-wrong', {kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Sideways', dryRun: ['Some']})
    assertStatus(result, 422, 'Invalid')
    assert.deepEqual(result.json.details.causes.map((c: any) => c.field), ['propagationPolicy', 'dryRun'])
    assert.match(result.json.message, /\[propagationPolicy: Unsupported value: "Sideways": .*, dryRun: Unsupported value: \["Some"\]: supported values: "All"\]/)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/both-wrong')).status, 200)
  })

  it('ValidateDeleteOptions over the query too: ?dryRun=Bogus&propagationPolicy=Sideways is one 422 on DeleteOptions naming both', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('query-wrong'))
    for (const path of ['/api/v1/namespaces/default/configmaps/query-wrong', '/api/v1/namespaces/default/configmaps']) {
      const result = await api('DELETE', `${path}?dryRun=Bogus&propagationPolicy=Sideways`)
      assertStatus(result, 422, 'Invalid')
      assert.equal(result.json.details.kind, 'DeleteOptions')
      assert.deepEqual(result.json.details.causes.map((c: any) => c.field), ['propagationPolicy', 'dryRun'])
      assert.match(result.json.message, /dryRun: Unsupported value: \["Bogus"\]: supported values: "All"/)
    }
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/query-wrong')).status, 200)
    const dry = await api('DELETE', '/api/v1/namespaces/default/configmaps/query-wrong?dryRun=All')
    assert.equal(dry.status, 200, dry.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/query-wrong')).status, 200, 'a dry run deletes nothing')
    const emptyBodyList = await api('DELETE', '/api/v1/namespaces/default/configmaps/query-wrong?dryRun=All', {kind: 'DeleteOptions', apiVersion: 'v1', dryRun: []})
    assert.equal(emptyBodyList.status, 200, emptyBodyList.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/query-wrong')).status, 200, 'an empty dryRun in the body leaves the query\'s say')
  })

  it('where the DeleteOptions body says how dependents go, the query is not read with it (no 422 for the pair)', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('body-wins'))
    const result = await api('DELETE', '/api/v1/namespaces/default/configmaps/body-wins?propagationPolicy=Background', {kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: false})
    assert.equal(result.status, 200, result.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/body-wins')).status, 404)
  })

  it('the body of a delete is DeleteOptions: another kind is 400 and deletes nothing', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('still-here'))
    const wrong = await api('DELETE', '/api/v1/namespaces/default/configmaps/still-here', {kind: 'ConfigMap', apiVersion: 'v1'})
    assertStatus(wrong, 400, 'BadRequest')
    assert.match(wrong.json.message, /no kind "ConfigMap" is registered for version "v1"/)
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/still-here')).status, 200)
    // any group version: client-go's typed clients send their own (apps/v1 for a StatefulSet)
    for (const apiVersion of ['v1', 'meta.orch.io/v1', 'apps/v1', undefined]) {
      await api('POST', '/api/v1/namespaces/default/configmaps', cm('still-here'))
      const ok = await api('DELETE', '/api/v1/namespaces/default/configmaps/still-here', {kind: 'DeleteOptions', ...(apiVersion ? {apiVersion} : {})})
      assert.equal(ok.status, 200, `${apiVersion}: ${ok.text}`)
    }
  })

  it('a wrong apiVersion or kind for the path is 400', async () => {
    const wrongKind = await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'Secret', metadata: {name: 'x'}})
    assertStatus(wrongKind, 400, 'BadRequest')
    const wrongVersion = await api('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: {name: 'x'}})
    assertStatus(wrongVersion, 400, 'BadRequest')
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/x')).status, 404)
  })

  it('a name that is not a DNS subdomain is 422 Invalid with a field cause', async () => {
    const result = await api('POST', '/api/v1/namespaces/default/configmaps', cm('Not_Valid'))
    assertStatus(result, 422, 'Invalid')
    assert.equal(result.json.details.causes[0].field, 'metadata.name')
    assert.match(result.json.message, /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/)
  })

  it('a 422 message names the kind qualified by its group, as Kubernetes\' NewInvalid (StatefulSet.apps "x" is invalid); core kinds have no suffix', async () => {
    const result = await api('POST', '/apis/apps/v1/namespaces/default/statefulsets', {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'Bad_Name'}, spec: {}})
    assertStatus(result, 422, 'Invalid')
    assert.match(result.json.message, /^StatefulSet\.apps "Bad_Name" is invalid: /)
    assert.equal(result.json.details.kind, 'StatefulSet')
    assert.equal(result.json.details.group, 'apps')
    const options = await api('GET', '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact')
    assert.match(options.json.message, /^ListOptions\.meta\.orch\.io "" is invalid: /)
  })

  it('a namespace name that is not a DNS label is 422', async () => {
    const result = await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'a.b'}})
    assertStatus(result, 422, 'Invalid')
  })

  it('an unsupported Content-Type is 415', async () => {
    const result = await api('POST', '/api/v1/namespaces/default/configmaps', 'x', {'Content-Type': 'text/plain'})
    assertStatus(result, 415, 'UnsupportedMediaType')
    // negotiation's UnsupportedMediaTypeError: the accepted types, not the one given
    assert.match(result.json.message, /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/)
    const patch = await api('PATCH', '/api/v1/namespaces/default/configmaps/x', '{}', {'Content-Type': 'application/xml'})
    assertStatus(patch, 415, 'UnsupportedMediaType')
    assert.match(patch.json.message, /^the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json/)
  })

  it('a body over 3 MiB is 413', async () => {
    const big = cm('huge', {k: 'x'.repeat(3 * 1024 * 1024 + 10)})
    const result = await api('POST', '/api/v1/namespaces/default/configmaps', big)
    assertStatus(result, 413, 'RequestEntityTooLarge')
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/huge')).status, 404)
  })

  it('a body over 3 MiB sent chunked, without Content-Length, is 413 too, and nothing is stored', async () => {
    const {ca, cert, key} = tlsOptions(server.url)
    const body = JSON.stringify(cm('huge-chunked', {k: 'x'.repeat(3 * 1024 * 1024 + 10)}))
    const answer = await new Promise<{status: number; text: string}>((resolve, reject) => {
      const request = httpsRequest(`${server.url}/api/v1/namespaces/default/configmaps`, {method: 'POST', ca, cert, key, headers: {'Content-Type': 'application/json'}}, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.on('end', () => resolve({status: response.statusCode ?? 0, text}))
      })
      request.on('error', reject)
      for (let at = 0; at < body.length; at += 64 * 1024) request.write(body.slice(at, at + 64 * 1024))
      request.end()
    })
    assert.equal(answer.status, 413, answer.text)
    assert.equal(JSON.parse(answer.text).reason, 'RequestEntityTooLarge')
    assert.equal(JSON.parse(answer.text).message, 'Request entity too large: limit is 3145728')
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/huge-chunked')).status, 404)
  })

  it('a request line and headers of up to 1 MiB are served, as Go\'s http.Server (DefaultMaxHeaderBytes) serves them: a long label selector works', async () => {
    const values = Array.from({length: 3000}, (_, i) => `value-${i}`).join(',')
    const selector = encodeURIComponent(`team in (${values})`)
    assert.ok(selector.length > 32 * 1024)
    const listed = await api('GET', `/api/v1/namespaces/default/configmaps?labelSelector=${selector}`)
    assert.equal(listed.status, 200, listed.text.slice(0, 200))
  })

  it('YAML in and out: application/yaml both ways', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/configmaps', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yamly\ndata:\n  a: "1"\n', {
      'Content-Type': 'application/yaml',
      Accept: 'application/yaml',
    })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.headers['content-type'], 'application/yaml')
    assert.match(created.text, /^apiVersion: v1\n/m)
    assert.match(created.text, /name: yamly/)
  })

  it('pretty=true indents JSON', async () => {
    const result = await api('GET', '/api/v1/namespaces/default?pretty=true')
    assert.ok(result.text.startsWith('{\n  "'), result.text.slice(0, 40))
  })

  it('"isPrettyPrint": without a pretty value, answers to curl, Wget and browsers are indented, errors too; a pretty value decides (pretty=false is compact for curl)', async () => {
    for (const agent of ['curl/8.5.0', 'Wget/1.21', 'Mozilla/5.0 (X11; Linux x86_64)']) {
      const result = await api('GET', '/api/v1/namespaces/default', undefined, {'User-Agent': agent})
      assert.ok(result.text.startsWith('{\n  "'), `${agent}: ${result.text.slice(0, 40)}`)
    }
    const missing = await api('GET', '/api/v1/namespaces/default/configmaps/not-there', undefined, {'User-Agent': 'curl/8.5.0'})
    assert.equal(missing.status, 404)
    assert.ok(missing.text.startsWith('{\n  "kind": "Status"'), missing.text.slice(0, 40))
    const compact = await api('GET', '/api/v1/namespaces/default?pretty=false', undefined, {'User-Agent': 'curl/8.5.0'})
    assert.ok(compact.text.startsWith('{"'), compact.text.slice(0, 40))
    const tool = await api('GET', '/api/v1/namespaces/default', undefined, {'User-Agent': 'kubectl/v1.32.0 (linux/amd64)'})
    assert.ok(tool.text.startsWith('{"'), tool.text.slice(0, 40))
  })

  it('an Accept no serializer can serve is 406, and so is one that names no media range; q only orders the ranges (q=0 or an unreadable q is still served, as goautoneg reads it), and a lone * is */*', async () => {
    assertStatus(await api('GET', '/api/v1/namespaces/default', undefined, {Accept: 'text/html'}), 406, 'NotAcceptable')
    assertStatus(await api('GET', '/api/v1/namespaces/default', undefined, {Accept: 'garbage;;;'}), 406, 'NotAcceptable')
    for (const accept of ['application/json;q=0', '*/*;q=abc', '*', 'text/html, application/yaml;q=0.5']) {
      assert.equal((await api('GET', '/api/v1/namespaces/default', undefined, {Accept: accept})).status, 200, accept)
    }
  })

  it('the main resource ignores status changes; /status changes only status', async () => {
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'st'}})
    const ns = (await api('GET', '/api/v1/namespaces/st')).json
    const viaMain = await api('PUT', '/api/v1/namespaces/st', {...ns, metadata: {...ns.metadata, labels: {a: 'b'}}, status: {phase: 'Terminating'}})
    assert.equal(viaMain.status, 200, viaMain.text)
    assert.equal(viaMain.json.status.phase, 'Active')
    assert.deepEqual(viaMain.json.metadata.labels, {a: 'b', 'orch.io/metadata.name': 'st'})
    const conditions = [{type: 'Example', status: 'True'}]
    const viaStatus = await api('PUT', '/api/v1/namespaces/st/status', {...viaMain.json, metadata: {...viaMain.json.metadata, labels: {c: 'd'}}, status: {phase: 'Active', conditions}})
    assert.equal(viaStatus.status, 200, viaStatus.text)
    assert.deepEqual(viaStatus.json.status.conditions, conditions)
    assert.deepEqual(viaStatus.json.metadata.labels, {a: 'b', 'orch.io/metadata.name': 'st'})
  })

  it('a patch that renames the object or moves it to another namespace is 400 (Kubernetes\' checkName), never silently ignored', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('fixed-name', {a: '1'}))
    const path = '/api/v1/namespaces/default/configmaps/fixed-name'
    const renamed = await api('PATCH', path, {metadata: {name: 'other-name'}, data: {a: '2'}}, {'Content-Type': 'application/merge-patch+json'})
    assertStatus(renamed, 400, 'BadRequest')
    assert.equal(renamed.json.message, 'the name of the object (other-name) does not match the name on the URL (fixed-name)')
    const unnamed = await api('PATCH', path, [{op: 'remove', path: '/metadata/name'}], {'Content-Type': 'application/json-patch+json'})
    assertStatus(unnamed, 400, 'BadRequest')
    const moved = await api('PATCH', path, {metadata: {namespace: 'orch-system'}}, {'Content-Type': 'application/strategic-merge-patch+json'})
    assertStatus(moved, 400, 'BadRequest')
    assert.equal(moved.json.message, 'the namespace of the object (orch-system) does not match the namespace on the request (default)')
    // server-side apply to the existing object too (the namespace was once silently dropped)
    const applied = await api('PATCH', `${path}?fieldManager=m1`, JSON.stringify({...cm('fixed-name', {a: '3'}), metadata: {name: 'fixed-name', namespace: 'orch-system'}}), {'Content-Type': 'application/apply-patch+yaml'})
    assertStatus(applied, 400, 'BadRequest')
    assert.equal(applied.json.message, 'the namespace of the object (orch-system) does not match the namespace on the request (default)')
    assert.deepEqual((await api('GET', path)).json.data, {a: '1'})
    assert.equal((await api('GET', '/api/v1/namespaces/default/configmaps/other-name')).status, 404)
  })

  it('JSON merge patch and JSON patch change the object; a failed JSON patch test is 422', async () => {
    await api('POST', '/api/v1/namespaces/default/configmaps', cm('patched', {a: '1'}))
    const merged = await api('PATCH', '/api/v1/namespaces/default/configmaps/patched', {data: {b: '2'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(merged.status, 200, merged.text)
    assert.deepEqual(merged.json.data, {a: '1', b: '2'})
    const jsonPatched = await api('PATCH', '/api/v1/namespaces/default/configmaps/patched', [{op: 'remove', path: '/data/a'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(jsonPatched.status, 200, jsonPatched.text)
    assert.deepEqual(jsonPatched.json.data, {b: '2'})
    const failed = await api('PATCH', '/api/v1/namespaces/default/configmaps/patched', [{op: 'test', path: '/data/b', value: 'nope'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(failed.status, 422, failed.text)
    assert.equal((await api('PATCH', '/api/v1/namespaces/default/configmaps/nothere', {data: {}}, {'Content-Type': 'application/merge-patch+json'})).status, 404)
  })
})
