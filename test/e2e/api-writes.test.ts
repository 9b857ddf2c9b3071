// Write options: dryRun and fieldValidation.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('API writes: dryRun and fieldValidation', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const base = '/api/v1/namespaces/default/configmaps'
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('dryRun=All on create: validated, answered as if done, nothing stored, no resourceVersion consumed, no watch event', async () => {
    const before = (await api('GET', base)).json.metadata.resourceVersion
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${before}`)
    const result = await api('POST', `${base}?dryRun=All`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dry'}, data: {a: 'b'}})
    assert.equal(result.status, 201, result.text)
    assert.equal(result.json.metadata.name, 'dry')
    assert.ok(result.json.metadata.uid)
    assert.equal(result.json.metadata.resourceVersion, undefined)
    assert.equal((await api('GET', `${base}/dry`)).status, 404)
    // a real write afterwards gets the very next revision and is the first event the watch sees
    const real = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'wet'}})
    assert.equal(Number(real.json.metadata.resourceVersion), Number(before) + 1)
    const events = await stream.waitFor(1)
    stream.close()
    assert.equal(events[0].object.metadata.name, 'wet')
    const invalid = await api('POST', `${base}?dryRun=All`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'Bad Name'}})
    assert.equal(invalid.status, 422)
  })

  it('"a dry-run create of an object that exists is AlreadyExists" (DryRunnableStorage.Create): 409, as kubectl create --dry-run=server shows', async () => {
    assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dry-taken'}})).status, 201)
    const again = await api('POST', `${base}?dryRun=All`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dry-taken'}})
    assert.equal(again.status, 409, again.text)
    assert.equal(again.json.reason, 'AlreadyExists')
    assert.equal(again.json.message, 'configmaps "dry-taken" already exists')
  })

  it('"resourceVersion should not be set on objects to be created": a POST carrying a non-zero one is refused (400 here; Kubernetes\' storage answers 500), nothing stored', async () => {
    const refused = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'with-rv', resourceVersion: '7'}})
    assert.equal(refused.status, 400, refused.text)
    assert.equal(refused.json.message, 'resourceVersion should not be set on objects to be created')
    assert.equal((await api('GET', `${base}/with-rv`)).status, 404)
    for (const version of ['', '0', 'not-a-number']) {
      const kept = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `with-rv-${version.length}`, resourceVersion: version}})
      assert.equal(kept.status, 201, `${JSON.stringify(version)}: ${kept.text}`)
    }
    // a create through server-side apply goes through Store.Update, which drops the version
    const applied = await api('PATCH', `${base}/applied-with-rv?fieldManager=test`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-with-rv\n  resourceVersion: "7"\n', {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(applied.status, 201, applied.text)
  })

  it('"a PUT\'s uid is a precondition" (409) while a patch that changes metadata.uid is 422 "field is immutable" (ValidateObjectMetaUpdate; the patcher passes no precondition)', async () => {
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'uid-kept'}})).json
    const put = await api('PUT', `${base}/uid-kept`, {...created, metadata: {...created.metadata, uid: 'not-the-uid'}})
    assert.equal(put.status, 409, put.text)
    assert.equal(put.json.message, `Operation cannot be fulfilled on configmaps "uid-kept": StorageError: invalid object, Code: 4, Key: /registry/core/configmaps/default/uid-kept, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${created.metadata.uid}`)
    const patched = await api('PATCH', `${base}/uid-kept`, {metadata: {uid: 'not-the-uid'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.status, 422, patched.text)
    assert.equal(patched.json.message, 'ConfigMap "uid-kept" is invalid: metadata.uid: Invalid value: "not-the-uid": field is immutable')
    const same = await api('PATCH', `${base}/uid-kept`, {metadata: {uid: created.metadata.uid, labels: {a: 'b'}}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(same.status, 200, same.text)
  })

  it('"pods count no generation" (Kubernetes 1.32): none is set on create or raised by a spec change; one a client set is kept, as for every kind without one', async () => {
    const pods = '/api/v1/namespaces/default/pods'
    const pod = (name: string, generation?: number) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name, generation}, spec: {containers: [{name: 'c', image: 'registry.example/app:1'}]}})
    const created = (await api('POST', pods, pod('no-gen'))).json
    assert.equal(created.metadata.generation, undefined)
    const updated = await api('PUT', `${pods}/no-gen`, {...created, spec: {...created.spec, containers: [{...created.spec.containers[0], image: 'registry.example/app:2'}]}})
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.json.metadata.generation, undefined)
    assert.equal((await api('POST', pods, pod('client-gen', 4))).json.metadata.generation, 4)
    const cm = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'gen-kept', generation: 3}})).json
    assert.equal(cm.metadata.generation, 3)
    const cmUpdated = await api('PUT', `${base}/gen-kept`, {...cm, metadata: {...cm.metadata, generation: 9}, data: {a: 'b'}})
    assert.equal(cmUpdated.json.metadata.generation, 3, 'an update cannot change it (BeforeUpdate)')
  })

  it('dryRun=All on update, patch, delete and deletecollection changes nothing', async () => {
    const live = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'keep', labels: {dry: 'run'}}, data: {a: '1'}})).json
    const updated = await api('PUT', `${base}/keep?dryRun=All`, {...live, data: {a: '2'}})
    assert.equal(updated.status, 200)
    assert.equal(updated.json.data.a, '2')
    const patched = await api('PATCH', `${base}/keep?dryRun=All`, {data: {a: '3'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patched.json.data.a, '3')
    assert.equal((await api('DELETE', `${base}/keep?dryRun=All`)).status, 200)
    assert.equal((await api('DELETE', `${base}?dryRun=All&labelSelector=dry%3Drun`)).status, 200)
    const after = (await api('GET', `${base}/keep`)).json
    assert.equal(after.data.a, '1')
    assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion)
  })

  it('dryRun with a value other than All is refused', async () => {
    const result = await api('POST', `${base}?dryRun=Some`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'}})
    assert.equal(result.status, 422, result.text)
  })

  it('fieldValidation=Strict: unknown and duplicate fields are 400 naming each, nothing stored', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict","name":"strict"},"dataa":{"a":"b"}}'
    const result = await api('POST', `${base}?fieldValidation=Strict`, body)
    assert.equal(result.status, 400, result.text)
    assert.match(result.json.message, /strict decoding error: /)
    assert.match(result.json.message, /unknown field "dataa"/)
    assert.match(result.json.message, /duplicate field "metadata.name"/)
    assert.equal((await api('GET', `${base}/strict`)).status, 404)
  })

  it('fieldValidation=Warn (the default): stored, each problem in a Warning header of RFC 7234 form', async () => {
    const result = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'warned'}, spec: {x: 1}, data: {a: 'b'}})
    assert.equal(result.status, 201)
    assert.equal(result.headers['warning'], '299 - "unknown field \\"spec\\""')
    assert.equal(result.json.spec, undefined)
  })

  it('fieldValidation=Ignore: stored, no warning', async () => {
    const result = await api('POST', `${base}?fieldValidation=Ignore`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'ignored'}, extra: true})
    assert.equal(result.status, 201)
    assert.equal(result.headers['warning'], undefined)
  })
})

describe('API writes: the options of a write and list, as Kubernetes decodes and validates them', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const base = '/api/v1/namespaces/default/configmaps'
  const sts = '/apis/apps/v1/namespaces/default/statefulsets'
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('"ValidateCreateOptions / UpdateOptions / PatchOptions": every bad option in one 422 naming the options kind (fieldManager too long or unprintable, dryRun, fieldValidation; force on a non-apply patch)', async () => {
    const long = 'm'.repeat(129)
    const create = await api('POST', `${base}?fieldManager=${long}&dryRun=bogus&fieldValidation=bogus`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'opts'}})
    assert.equal(create.status, 422, create.text)
    assert.equal(
      create.json.message,
      'CreateOptions.meta.orch.io "" is invalid: [fieldManager: Too long: may not be more than 128 bytes, dryRun: Unsupported value: "bogus": supported values: "All", fieldValidation: Unsupported value: "bogus": supported values: "Ignore", "Strict", "Warn"]',
    )
    assert.equal((await api('GET', `${base}/opts`)).status, 404)
    assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'opts'}})).status, 201)
    const update = await api('PUT', `${base}/opts?fieldManager=%01abc`, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'opts'}})
    assert.equal(update.status, 422, update.text)
    assert.equal(update.json.message, 'UpdateOptions.meta.orch.io "" is invalid: fieldManager: Invalid value: "\\x01abc": invalid character U+0001 (at position 0)')
    const patch = await api('PATCH', `${base}/opts?force=true`, {data: {a: 'b'}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patch.status, 422, patch.text)
    assert.equal(patch.json.message, 'PatchOptions.meta.orch.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')
    // an unserved media type is 415 before the options are looked at, for a patch and a create alike
    assert.equal((await api('PATCH', `${base}/opts?force=true`, {}, {'Content-Type': 'text/plain'})).status, 415)
    assert.equal((await api('POST', `${base}?dryRun=x`, 'x', {'Content-Type': 'text/plain'})).status, 415)
  })

  it('"Convert_Slice_string_To_bool": 0 and any case of false are false, any other value true; pretty reads as strconv.ParseBool, an unreadable value being false', async () => {
    const list = await api('GET', `${base}?watch=False`)
    assert.equal(list.status, 200, 'watch=False is a list')
    assert.equal(list.json.kind, 'ConfigMapList')
    assert.equal((await api('GET', `${base}?watch=0`)).json.kind, 'ConfigMapList')
    assert.equal((await api('GET', `${base}?pretty=maybe`)).status, 200)
    assert.ok((await api('GET', `${base}?pretty=TRUE`)).text.includes('\n  '), 'pretty=TRUE is pretty')
    assert.ok(!(await api('GET', `${base}?pretty=maybe`)).text.includes('\n  '), 'an unreadable pretty is false')
  })

  it('"the list options are decoded whichever verb uses them": a bad limit or timeoutSeconds is 400 for a list, a watch and a deletecollection, and deletecollection then deletes nothing', async () => {
    for (const name of ['keep-a', 'keep-b']) assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})).status, 201)
    for (const bad of ['limit=abc', 'timeoutSeconds=abc']) {
      assert.equal((await api('GET', `${base}?${bad}`)).status, 400, `list ${bad}`)
      assert.equal((await api('GET', `${base}?watch=1&${bad}`)).status, 400, `watch ${bad}`)
      assert.equal((await api('DELETE', `${base}?${bad}`)).status, 400, `deletecollection ${bad}`)
    }
    for (const bad of ['resourceVersionMatch=bogus', 'continue=garbage']) {
      const refused = await api('DELETE', `${base}?${bad}`)
      assert.ok(refused.status >= 400 && refused.status < 500, `deletecollection ${bad}: ${refused.text}`)
    }
    const names = (await api('GET', base)).json.items.map((item: {metadata: {name: string}}) => item.metadata.name)
    assert.ok(names.includes('keep-a') && names.includes('keep-b'), names.join(','))
    // a limit makes deletecollection delete one page, as its list gives
    assert.equal((await api('DELETE', `${base}?limit=1`)).status, 200)
    assert.equal((await api('GET', base)).json.items.length, names.length - 1)
  })

  it('"the name of the object () does not match the name on the URL": a PUT of a Scale without the name is 400, replicas unchanged', async () => {
    const created = await api('POST', sts, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'named'},
      spec: {replicas: 2, serviceName: 's', selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    for (const body of [{}, {spec: {replicas: 5}}]) {
      const put = await api('PUT', `${sts}/named/scale`, body)
      assert.equal(put.status, 400, put.text)
      assert.equal(put.json.message, 'the name of the object () does not match the name on the URL (named)')
    }
    assert.equal((await api('GET', `${sts}/named`)).json.spec.replicas, 2)
  })

  it('"Go\'s decoder reads a lone surrogate escape as U+FFFD": a ConfigMap value with \\ud800 is stored with U+FFFD (201), as in Kubernetes', async () => {
    const created = await api('POST', base, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"surrogate"},"data":{"a":"x\\ud800y","pair":"\\ud83d\\ude00"}}')
    assert.equal(created.status, 201, created.text)
    assert.equal(created.json.data.a, 'x\ufffdy')
    assert.equal(created.json.data.pair, '\u{1f600}')
  })

  it('a SubjectAccessReview is decoded like any create: fieldValidation=Strict refuses an unknown field (400), Warn warns', async () => {
    const review = {apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec: {user: 'jane', resourceAttributes: {verb: 'get', resource: 'pods'}, bogus: 1}}
    const path = '/apis/authorization.orch.io/v1/subjectaccessreviews'
    const strict = await api('POST', `${path}?fieldValidation=Strict`, review)
    assert.equal(strict.status, 400, strict.text)
    assert.equal(strict.json.message, 'SubjectAccessReview in version "v1" cannot be handled as a SubjectAccessReview: strict decoding error: unknown field "spec.bogus"')
    const warn = await api('POST', path, review)
    assert.equal(warn.status, 201, warn.text)
    assert.equal(warn.headers.warning, '299 - "unknown field \\"spec.bogus\\""')
  })

  it('the scale subresource applies fieldValidation: an unknown field is 400 for a Strict PUT, the patcher\'s 422 for a Strict patch, a warning by default', async () => {
    const created = await api('POST', sts, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'scale-fields'},
      spec: {replicas: 1, serviceName: 's', selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    const scale = {apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'scale-fields', namespace: 'default'}, spec: {replicas: 2, bogus: 1}}
    const put = await api('PUT', `${sts}/scale-fields/scale?fieldValidation=Strict`, scale)
    assert.equal(put.status, 400, put.text)
    assert.equal(put.json.message, 'Scale in version "v1" cannot be handled as a Scale: strict decoding error: unknown field "spec.bogus"')
    const patch = await api('PATCH', `${sts}/scale-fields/scale?fieldValidation=Strict`, {spec: {replicas: 3, bogus: 1}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(patch.status, 422, patch.text)
    assert.match(patch.json.details.causes[0].message, /strict decoding error: unknown field "spec\.bogus"$/)
    assert.equal((await api('GET', `${sts}/scale-fields`)).json.spec.replicas, 1)
    const warned = await api('PATCH', `${sts}/scale-fields/scale`, {spec: {replicas: 3, bogus: 1}}, {'Content-Type': 'application/merge-patch+json'})
    assert.equal(warned.status, 200, warned.text)
    assert.equal(warned.headers.warning, '299 - "unknown field \\"spec.bogus\\""')
    assert.equal(warned.json.spec.replicas, 3)
  })

  it('a JSON patch with an unknown op is 422 (json-patch\'s Apply fails on it), "replace of a missing key adds it" (json-patch v4); a TokenReview without a token is 400 "token is required"', async () => {
    assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'jp'}})).status, 201)
    const unknownOp = await api('PATCH', `${base}/jp`, [{op: 'bogus', path: '/data/a'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(unknownOp.status, 422, unknownOp.text)
    assert.equal(unknownOp.json.message, 'the server rejected our request due to an error in our request: Unexpected kind: bogus')
    // json-patch v4 (Kubernetes' patcher): replace of a missing key of an existing object adds it;
    // a missing parent or an index past the end is still refused
    const upserted = await api('PATCH', `${base}/jp`, [{op: 'add', path: '/data', value: {}}, {op: 'replace', path: '/data/fresh', value: 'x'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(upserted.status, 200, upserted.text)
    assert.deepEqual(upserted.json.data, {fresh: 'x'})
    const noParent = await api('PATCH', `${base}/jp`, [{op: 'replace', path: '/metadata/annotations/a', value: 'x'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(noParent.status, 422, noParent.text)
    const review = await api('POST', '/apis/authentication.orch.io/v1/tokenreviews', {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token: ''}})
    assert.equal(review.status, 400, review.text)
    assert.equal(review.json.message, 'token is required for TokenReview in authentication.orch.io')
  })
})
