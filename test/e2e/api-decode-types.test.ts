// Bad input: a body whose values have the wrong type for their fields is refused as Kubernetes' decoder
// refuses it (400 on create and update, 422 on the result of a patch), with nothing stored — never a 500.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {allDeclarations, type KindDeclaration, type Schema} from '../../src/api/index.js'
import {Tag} from 'cbor-x'
import {encodeCbor} from '../../src/machinery/cbor.js'
import {call, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

/** A JSON value that is never of the schema's type. */
function wrongValueFor(schema: Schema): unknown {
  switch (schema.type) {
    case 'string':
    case 'time':
      return 5
    case 'integer':
    case 'number':
    case 'boolean':
    case 'object':
    case 'map':
    case 'quantity':
      return [1]
    case 'array':
      return 'x'
    case 'int-or-string':
      return {}
    case 'raw':
      return undefined
  }
}

function collectionPath(declaration: KindDeclaration): string {
  const root = declaration.group ? `/apis/${declaration.group}/${declaration.version}` : `/api/${declaration.version}`
  return declaration.namespaced ? `${root}/namespaces/default/${declaration.resource}` : `${root}/${declaration.resource}`
}

function apiVersionOf(declaration: KindDeclaration): string {
  return declaration.group ? `${declaration.group}/${declaration.version}` : declaration.version
}

describe('bad input: values of the wrong type', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const configmaps = '/api/v1/namespaces/default/configmaps'
  before(async () => {
    server = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  it('"a Status 4xx saying what is wrong, never a 500, and nothing stored": every field of every kind, sent with a value of another type, is 400', async () => {
    const creatable = allDeclarations.filter((d) => d.verbs.includes('create'))
    assert.ok(creatable.length > 10)
    for (const declaration of creatable) {
      for (const [field, schema] of Object.entries(declaration.schema.fields)) {
        if (field === 'metadata' || field === '') continue
        const wrong = wrongValueFor(schema)
        if (wrong === undefined) continue
        const name = `wrong-${field.toLowerCase()}`
        const body = {apiVersion: apiVersionOf(declaration), kind: declaration.kind, metadata: {name}, [field]: wrong}
        const result = await api('POST', collectionPath(declaration), body)
        const where = `${declaration.kind}.${field}`
        assert.equal(result.status, 400, `${where}: ${result.text}`)
        assert.equal(result.json.kind, 'Status')
        assert.match(result.json.message, new RegExp(`^${declaration.kind} in version "${declaration.version}" cannot be handled as a ${declaration.kind}: `), where)
        if (!declaration.virtual) assert.equal((await api('GET', `${collectionPath(declaration)}/${name}`)).status, 404, where)
      }
    }
  })

  it("a ConfigMap's data value that is not a string is 400 with Go's message, in JSON and in YAML", async () => {
    const json = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'n'}, data: {k: 5}})
    assert.equal(json.status, 400)
    assert.equal(json.json.reason, 'BadRequest')
    assert.equal(json.json.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
    const yaml = await api('POST', configmaps, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: true-cm}\ndata: {k: true}\n', {'Content-Type': 'application/yaml'})
    assert.equal(yaml.status, 400)
    assert.match(yaml.text, /cannot unmarshal bool into Go struct field ConfigMap\.data of type string/)
    // YAML 1.1, as go-yaml reads it: an unquoted yes is a boolean too
    const yes = await api('POST', configmaps, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yes-cm}\ndata: {k: yes}\n', {'Content-Type': 'application/yaml'})
    assert.equal(yes.status, 400)
    assert.match(yes.text, /cannot unmarshal bool into Go struct field ConfigMap\.data of type string/)
    assert.equal((await api('GET', `${configmaps}/n`)).status, 404)
  })

  it('a YAML body is read as go-yaml reads YAML 1.1 (defaultMode: 0644 is 420, hostNetwork: yes is true, a date is a string), and a YAML answer quotes a string that would read back as another type', async () => {
    const pods = '/api/v1/namespaces/default/pods'
    const pod =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: yaml-octal}\nspec:\n  hostNetwork: yes\n' +
      '  containers: [{name: c, image: busybox}]\n  volumes: [{name: v, configMap: {name: cm, defaultMode: 0644}}]\n'
    const created = await api('POST', pods, pod, {'Content-Type': 'application/yaml'})
    assert.equal(created.status, 201, created.text)
    assert.equal(created.json.spec.volumes[0].configMap.defaultMode, 420)
    assert.equal(created.json.spec.hostNetwork, true)
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-strings}\ndata: {released: 2001-12-14, mode: "0644", answer: "yes", k10: a, k2: b}\n'
    assert.equal((await api('POST', configmaps, cm, {'Content-Type': 'application/yaml'})).status, 201)
    const read = await api('GET', `${configmaps}/yaml-strings`, undefined, {Accept: 'application/yaml'})
    assert.match(read.text, /^data:\n {2}answer: "yes"\n {2}k2: b\n {2}k10: a\n {2}mode: "0644"\n {2}released: "2001-12-14"\n/m)
    const stored = (await api('GET', `${configmaps}/yaml-strings`)).json
    assert.deepEqual(stored.data, {released: '2001-12-14', mode: '0644', answer: 'yes', k10: 'a', k2: 'b'})
  })

  it('"binaryData ... (base64 in JSON and YAML)": a value that is not standard base64 is 400 (illegal base64 data at input byte N)', async () => {
    for (const [value, offset] of [['not base64!', 3], ['AAE', 0]] as const) {
      const result = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'bin'}, binaryData: {k: value}})
      assert.equal(result.status, 400, result.text)
      assert.equal(result.json.message, `ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte ${offset}`)
    }
    assert.equal((await api('GET', `${configmaps}/bin`)).status, 404)
    const good = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'bin'}, binaryData: {k: 'aGVsbG8='}})
    assert.equal(good.status, 201, good.text)
  })

  it('labels that are not strings, a bad time, a bool given as a string: 400, never a 500', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{labels: {a: 1}}, /Go struct field ObjectMeta\.metadata\.labels of type string/],
      [{annotations: 'x'}, /Go struct field ObjectMeta\.metadata\.annotations of type map\[string\]string/],
      [{creationTimestamp: 'yesterday'}, /parsing time "yesterday"/],
      [{ownerReferences: [{apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u', controller: 'yes'}]}, /OwnerReference\.metadata\.ownerReferences\.controller of type bool/],
      [{finalizers: 'x'}, /ObjectMeta\.metadata\.finalizers of type \[\]string/],
    ]
    for (const [metadata, message] of cases) {
      const result = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'meta', ...metadata}})
      assert.equal(result.status, 400, result.text)
      assert.match(result.json.message, message)
    }
    assert.equal((await api('GET', `${configmaps}/meta`)).status, 404)
  })

  it('a null map value or list item is its zero value, as Go decodes it: a null label is "", an empty label key 422 (was a 500)', async () => {
    const created = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'nulls', labels: {a: null}}, data: {k: null}})
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.metadata.labels, {a: ''})
    assert.deepEqual(created.json.data, {k: ''})
    const live = created.json
    const put = await api('PUT', `${configmaps}/nulls`, {...live, metadata: {...live.metadata, labels: {'': null}}})
    assert.equal(put.status, 422, put.text)
    assert.equal(put.json.details.causes[0].field, 'metadata.labels')
    const sts = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'sel'},
      spec: {serviceName: 's', selector: {matchLabels: {a: 'b'}, matchExpressions: [{}, null]}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    }
    const selector = await api('POST', '/apis/apps/v1/namespaces/default/statefulsets', sts)
    assert.equal(selector.status, 422, selector.text)
    assert.ok(selector.json.details.causes.some((c: any) => c.field === 'spec.selector.matchExpressions[0].key'), selector.text)
  })

  it('ObjectMeta as Kubernetes validates it: an ownerReference without uid, kind, name or version and a finalizer that is not a qualified name are 422', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ownerReferences: [{apiVersion: 'v1', kind: 'ConfigMap', name: 'o'}]}, 'metadata.ownerReferences.uid'],
      [{ownerReferences: [{apiVersion: 'a/b/c', kind: 'ConfigMap', name: 'o', uid: 'u'}]}, 'metadata.ownerReferences.apiVersion'],
      [{ownerReferences: [{apiVersion: 'v1', name: 'o', uid: 'u'}]}, 'metadata.ownerReferences.kind'],
      [{ownerReferences: [{apiVersion: 'v1', kind: 'Event', name: 'o', uid: 'u'}]}, 'metadata.ownerReferences'],
      [{ownerReferences: [{apiVersion: 'v1', kind: 'A', name: 'a', uid: '1', controller: true}, {apiVersion: 'v1', kind: 'B', name: 'b', uid: '2', controller: true}]}, 'metadata.ownerReferences'],
      [{finalizers: ['trailing-']}, 'metadata.finalizers'],
    ]
    for (const [metadata, field] of cases) {
      const result = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'owned', ...metadata}})
      assert.equal(result.status, 422, result.text)
      assert.ok(result.json.details.causes.some((c: any) => c.field === field), result.text)
    }
    assert.equal((await api('GET', `${configmaps}/owned`)).status, 404)
  })

  it('an associative list item naming none of its keys is 422, so that a later apply cannot fail on the stored object (was a 500 "failed to merge config")', async () => {
    const ns = (await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'conds'}})).json
    const status = await api('PUT', '/api/v1/namespaces/conds/status', {...ns, status: {phase: 'Active', conditions: [{type: 'A', status: 'True'}, {status: 'False'}]}})
    assert.equal(status.status, 422, status.text)
    assert.equal(status.json.details.causes[0].field, 'status.conditions[1].type')
    const applied = await api('PATCH', '/api/v1/namespaces/conds?fieldManager=me', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'conds', labels: {a: 'b'}}}, {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(applied.status, 200, applied.text)
  })

  it('a JSON patch moving a value into itself is 422 (was a 500: the document would contain itself)', async () => {
    await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'moved'}, data: {a: '1'}})
    const result = await api('PATCH', `${configmaps}/moved`, [{op: 'move', from: '', path: '/metadata/generateName'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(result.status, 422, result.text)
    assert.equal(result.json.message, 'the server rejected our request due to an error in our request: move operation does not apply: doc is missing from path: : missing value')
  })

  it('a Scale is decoded as Kubernetes decodes it: replicas past int32 or of another type is 400 (PUT) or 422 (PATCH), nothing stored', async () => {
    const sts = '/apis/apps/v1/namespaces/default/statefulsets'
    const created = await api('POST', sts, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'scaled'},
      spec: {replicas: 1, serviceName: 's', selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    for (const replicas of [2 ** 31, 1e20, '3']) {
      const put = await api('PUT', `${sts}/scaled/scale`, {apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'scaled', namespace: 'default'}, spec: {replicas}})
      assert.equal(put.status, 400, put.text)
      assert.match(put.json.message, /^Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal .* into Go struct field ScaleSpec\.spec\.replicas of type int32$/)
      const patch = await api('PATCH', `${sts}/scaled/scale`, {spec: {replicas}}, {'Content-Type': 'application/merge-patch+json'})
      assert.equal(patch.status, 422, patch.text)
      assert.equal(patch.json.details.causes[0].field, 'patch')
    }
    assert.equal((await api('GET', `${sts}/scaled`)).json.spec.replicas, 1)
  })

  it('a JSON number written with a fraction or an exponent (1.0, 3e0) for an integer field is 400 naming the literal, as Go parses integers; a quantity, YAML and a strategic merge patch take 1.0; a merge or JSON patch keeps the text, so its result is 422', async () => {
    const sts = '/apis/apps/v1/namespaces/default/statefulsets'
    const set = (name: string, replicas: string, extra = '') =>
      `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},"serviceName":"s","selector":{"matchLabels":{"a":"b"}},` +
      `"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i:1.25"${extra}}]}}}}`
    const json = {'Content-Type': 'application/json'}
    const whole = await api('POST', sts, set('literal-1-0', '1.0'), json)
    assert.equal(whole.status, 400, whole.text)
    assert.equal(whole.json.message, 'StatefulSet in version "v1" cannot be handled as a StatefulSet: json: cannot unmarshal number 1.0 into Go struct field StatefulSetSpec.spec.replicas of type int32')
    const exponent = await api('POST', sts, set('literal-exp', '3e0'), json)
    assert.equal(exponent.status, 400, exponent.text)
    assert.match(exponent.json.message, /json: cannot unmarshal number 3e0 into Go struct field StatefulSetSpec\.spec\.replicas of type int32$/)
    const port = await api('POST', sts, set('literal-port', '1', ',"ports":[{"containerPort":80.0}]'), json)
    assert.equal(port.status, 400, port.text)
    assert.match(port.json.message, /json: cannot unmarshal number 80\.0 into Go struct field ContainerPort\.spec\.template\.spec\.containers\.ports\.containerPort of type int32$/)
    for (const name of ['literal-1-0', 'literal-exp', 'literal-port']) assert.equal((await api('GET', `${sts}/${name}`)).status, 404, `${name}: nothing stored`)

    const quantity = await api('POST', sts, set('literal-quantity', '1', ',"resources":{"limits":{"cpu":1.5,"memory":1e9}}'), json)
    assert.equal(quantity.status, 201, `a quantity reads its own text: ${quantity.text}`)
    const yaml = await api('POST', sts, 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: literal-yaml}\nspec: {replicas: 1.0, serviceName: s, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}\n', {'Content-Type': 'application/yaml'})
    assert.equal(yaml.status, 201, `YAML numbers become JSON numbers first: ${yaml.text}`)
    assert.equal(yaml.json.spec.replicas, 1)
    const strategic = await api('PATCH', `${sts}/literal-yaml`, '{"spec":{"replicas":2.0}}', {'Content-Type': 'application/strategic-merge-patch+json'})
    assert.equal(strategic.status, 200, `a strategic merge patch is applied to decoded maps: ${strategic.text}`)
    assert.equal(strategic.json.spec.replicas, 2)
    for (const [type, body] of [
      ['application/merge-patch+json', '{"spec":{"replicas":3.0}}'],
      ['application/json-patch+json', '[{"op":"replace","path":"/spec/replicas","value":3.0}]'],
    ]) {
      const patched = await api('PATCH', `${sts}/literal-yaml`, body, {'Content-Type': type!})
      assert.equal(patched.status, 422, `${type}: ${patched.text}`)
      assert.equal(patched.json.details.causes[0].field, 'patch')
      assert.match(patched.json.details.causes[0].message, /: json: cannot unmarshal number 3\.0 into Go struct field StatefulSetSpec\.spec\.replicas of type int32$/)
      // "the patched document as the json-patch library writes it": Go's map order, the patch's number as written
      const shown = JSON.parse(patched.json.details.causes[0].message.match(/^Invalid value: ("(?:[^"\\]|\\.)*")/)[1])
      assert.match(shown, /"replicas":3\.0,/)
      assert.match(shown, /^\{"apiVersion":"apps\/v1","kind":"StatefulSet","metadata":\{"creationTimestamp":/)
    }
    const later = await api('PATCH', `${sts}/literal-yaml`, '[{"op":"replace","path":"/spec/replicas","value":3.0},{"op":"replace","path":"/spec/replicas","value":3}]', {'Content-Type': 'application/json-patch+json'})
    assert.equal(later.status, 200, `a later operation's whole number is what the result holds: ${later.text}`)
    assert.equal(later.json.spec.replicas, 3)
    const scalePatch = await api('PATCH', `${sts}/literal-yaml/scale`, '{"spec":{"replicas":5.0}}', {'Content-Type': 'application/merge-patch+json'})
    assert.equal(scalePatch.status, 422, scalePatch.text)
    assert.match(scalePatch.json.details.causes[0].message, /number 5\.0 into Go struct field ScaleSpec\.spec\.replicas of type int32$/)
    const scale = await api('PUT', `${sts}/literal-yaml/scale`, '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"literal-yaml","namespace":"default"},"spec":{"replicas":4.0}}', json)
    assert.equal(scale.status, 400, scale.text)
    assert.match(scale.json.message, /json: cannot unmarshal number 4\.0 into Go struct field ScaleSpec\.spec\.replicas of type int32$/)
  })

  it('"The allowed maximum operations in a JSON patch is 10000": a longer one is 413, nothing changed', async () => {
    assert.equal((await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'many-ops'}, data: {a: 'b'}})).status, 201)
    const ops = Array.from({length: 10_001}, () => ({op: 'test', path: '/data/a', value: 'b'}))
    const result = await api('PATCH', `${configmaps}/many-ops`, ops, {'Content-Type': 'application/json-patch+json'})
    assert.equal(result.status, 413, result.text)
    assert.equal(result.json.message, 'The allowed maximum operations in a JSON patch is 10000, got 10001')
    const within = await api('PATCH', `${configmaps}/many-ops`, [...ops.slice(2), {op: 'replace', path: '/data/a', value: 'c'}], {'Content-Type': 'application/json-patch+json'})
    assert.equal(within.status, 200, within.text)
    assert.equal(within.json.data.a, 'c')
  })

  it('numbers JSON.parse would round or overflow are quoted as written; a duplicate key leaving another type where a number was written is the 400 of that type, not a 500', async () => {
    const json = {'Content-Type': 'application/json'}
    const lease = (spec: string) => `{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"big-numbers"},"spec":${spec}}`
    const big = await api('POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', lease('{"leaseDurationSeconds":12345678901234567890}'), json)
    assert.equal(big.status, 400, big.text)
    assert.match(big.json.message, /json: cannot unmarshal number 12345678901234567890 into Go struct field LeaseSpec\.spec\.leaseDurationSeconds of type int32$/)
    const duplicate = await api('POST', configmaps, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup-number","finalizers":{"length":1.0},"finalizers":[]}}', json)
    assert.equal(duplicate.status, 201, `the last of a duplicate key is what Go keeps too: ${duplicate.text}`)
    const proto = await api('POST', configmaps, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto-number","labels":{"__proto__":{"length":1.0}},"labels":{}}}', json)
    assert.equal(proto.status, 201, proto.text)
    assert.equal(([] as unknown[]).length, 0, 'Array.prototype untouched')
  })

  it('a DELETE body is decoded as DeleteOptions: a value of the wrong type, or 1.5 for gracePeriodSeconds, is 400 and deletes nothing', async () => {
    assert.equal((await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'delete-typed'}})).status, 201)
    const wrong = await api('DELETE', `${configmaps}/delete-typed`, {kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 'soon'})
    assert.equal(wrong.status, 400, wrong.text)
    assert.equal(wrong.json.message, 'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64')
    const fraction = await api('DELETE', `${configmaps}/delete-typed`, '{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":1.5}', {'Content-Type': 'application/json'})
    assert.equal(fraction.status, 400, fraction.text)
    assert.match(fraction.json.message, /json: cannot unmarshal number 1\.5 into Go struct field DeleteOptions\.gracePeriodSeconds of type int64$/)
    assert.equal((await api('GET', `${configmaps}/delete-typed`)).status, 200)
  })

  it("a body without kind or apiVersion is named by the endpoint's (the serializer's defaults), as Kubernetes names it", async () => {
    const result = await api('POST', configmaps, {metadata: {name: 'untyped'}, data: {k: 5}})
    assert.equal(result.status, 400)
    assert.equal(result.json.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
  })

  it('times: an empty string is no time; a MicroTime has exactly six fraction digits; a wrong type names its struct field', async () => {
    const empty = await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'empty-time', creationTimestamp: ''}})
    assert.equal(empty.status, 400)
    assert.equal(empty.json.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"')
    const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases'
    const lease = (renewTime: unknown) => ({apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'micro'}, spec: {renewTime}})
    const seconds = await api('POST', leases, lease('2026-11-24T10:00:00Z'))
    assert.equal(seconds.status, 400)
    assert.equal(seconds.json.message, 'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-11-24T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"')
    const number = await api('POST', leases, lease(5))
    assert.equal(number.status, 400)
    assert.equal(number.json.message, 'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string')
    assert.equal((await api('POST', leases, lease('2026-11-24T10:00:00.000000Z'))).status, 201)
  })

  it('CBOR bodies: a 64-bit integer out of its field\'s range is 400, in range it is stored as a number; a byte string is base64 text, tag 22 encodes its bytes', async () => {
    const cbor = (value: unknown) => ({raw: encodeCbor(value), headers: {'Content-Type': 'application/cbor'}})
    // cbor-x encodes integers of 2^32 and more as 8-byte integers, which it decodes as bigint
    const replicas = cbor({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'huge'},
      spec: {replicas: 2n ** 32n, selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    const huge = await api('POST', '/apis/apps/v1/namespaces/default/statefulsets', replicas.raw, replicas.headers)
    assert.equal(huge.status, 400, huge.text)
    assert.match(huge.json.message, /cannot unmarshal number 4294967296 into Go struct field StatefulSetSpec\.spec\.replicas of type int32/)
    const deadline = cbor({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'deadline'}, spec: {terminationGracePeriodSeconds: 2n ** 33n, containers: [{name: 'c', image: 'i'}]}})
    const created = await api('POST', '/api/v1/namespaces/default/pods', deadline.raw, deadline.headers)
    assert.equal(created.status, 201, created.text)
    assert.equal((await api('GET', '/api/v1/namespaces/default/pods/deadline')).json.spec.terminationGracePeriodSeconds, 2 ** 33)
    // ByteStringExpectedBase64: a byte string holds base64 text unless tag 22 says its bytes are to be base64-encoded
    const bytes = cbor({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cbor-bytes'}, data: {text: Buffer.from('hello')}, binaryData: {bin: Buffer.from('aGVsbG8='), tagged: new Tag(Buffer.from('hello'), 22)}})
    assert.equal((await api('POST', configmaps, bytes.raw, bytes.headers)).status, 201)
    const stored = (await api('GET', `${configmaps}/cbor-bytes`)).json
    assert.deepEqual({data: stored.data, binaryData: stored.binaryData}, {data: {text: 'hello'}, binaryData: {bin: 'aGVsbG8=', tagged: 'aGVsbG8='}})
    const raw = cbor({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cbor-raw-bytes'}, binaryData: {bin: Buffer.from('hello')}})
    assert.equal((await api('POST', configmaps, raw.raw, raw.headers)).status, 400)
  })

  it('an update with a value of the wrong type is 400 and the stored object is unchanged', async () => {
    const live = (await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'upd'}, data: {a: '1'}})).json
    const result = await api('PUT', `${configmaps}/upd`, {...live, data: {a: 2}})
    assert.equal(result.status, 400, result.text)
    const after = (await api('GET', `${configmaps}/upd`)).json
    assert.deepEqual(after.data, {a: '1'})
    assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion)
  })

  it('a merge, strategic or JSON patch whose result has a value of the wrong type is 422 on field "patch", nothing changed', async () => {
    const live = (await api('POST', configmaps, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'pat'}, data: {a: '1'}})).json
    const patches: [string, unknown, RegExp][] = [
      ['application/merge-patch+json', {data: {a: true}}, /json: cannot unmarshal/],
      // the converter's error, the patch shown as Go prints a map
      ['application/strategic-merge-patch+json', {metadata: {labels: {x: 1}}}, /^Invalid value: "map\[metadata:map\[labels:map\[x:1\]\]\]": cannot convert int64 to string$/],
      ['application/json-patch+json', [{op: 'add', path: '/immutable', value: 'yes'}], /json: cannot unmarshal/],
    ]
    for (const [contentType, patch, message] of patches) {
      const result = await api('PATCH', `${configmaps}/pat`, patch, {'Content-Type': contentType})
      assert.equal(result.status, 422, `${contentType}: ${result.text}`)
      assert.equal(result.json.reason, 'Invalid')
      assert.equal(result.json.details.causes[0].field, 'patch')
      assert.match(result.json.details.causes[0].message, message)
    }
    assert.equal((await api('GET', `${configmaps}/pat`)).json.metadata.resourceVersion, live.metadata.resourceVersion)
  })

  it('"a strategic merge patch is converted from maps": its 422 shows the patch as Go prints it (map[spec:map[replicas:three]]) with runtime\'s converter error (cannot convert, cannot restore struct/slice/map from), a whole float is taken, nothing changed', async () => {
    const sts = '/apis/apps/v1/namespaces/default/statefulsets'
    const created = await api('POST', sts, {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'converted'},
      spec: {replicas: 1, serviceName: 's', selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
    })
    assert.equal(created.status, 201, created.text)
    const smp = {'Content-Type': 'application/strategic-merge-patch+json'}
    const cases: [string, string][] = [
      ['{"spec":{"replicas":"three"}}', 'Invalid value: "map[spec:map[replicas:three]]": cannot convert string to int32'],
      ['{"spec":{"replicas":3.5}}', 'Invalid value: "map[spec:map[replicas:3.5]]": cannot convert float64 to int32'],
      ['{"spec":{"selector":"x"}}', 'Invalid value: "map[spec:map[selector:x]]": cannot restore struct from: string'],
      ['{"spec":{"template":{"spec":{"containers":{"a":1}}}}}', 'Invalid value: "map[spec:map[template:map[spec:map[containers:map[a:1]]]]]": cannot restore slice from map'],
      ['{"metadata":{"labels":"x"}}', 'Invalid value: "map[metadata:map[labels:x]]": cannot restore map from string'],
      ['{"metadata":{"annotations":{"b":[1.5e7,null,true,"s"],"a":2.0}}}', 'Invalid value: "map[metadata:map[annotations:map[a:2 b:[1.5e+07 <nil> true s]]]]": cannot convert []interface {} to string'],
      ['{"metadata":{"creationTimestamp":5}}', 'Invalid value: "map[metadata:map[creationTimestamp:5]]": json: cannot unmarshal number into Go value of type string'],
    ]
    for (const [body, message] of cases) {
      const result = await api('PATCH', `${sts}/converted`, body, smp)
      assert.equal(result.status, 422, `${body}: ${result.text}`)
      assert.equal(result.json.message, ` "" is invalid: patch: ${message}`)
      assert.deepEqual(result.json.details.causes, [{reason: 'FieldValueInvalid', message, field: 'patch'}])
    }
    const scale = await api('PATCH', `${sts}/converted/scale`, '{"spec":{"replicas":"x"}}', smp)
    assert.equal(scale.status, 422, scale.text)
    assert.equal(scale.json.details.causes[0].message, 'Invalid value: "map[spec:map[replicas:x]]": cannot convert string to int32')
    assert.equal((await api('GET', `${sts}/converted`)).json.metadata.resourceVersion, created.json.metadata.resourceVersion)
    // the converter takes a whole float for an integer, and the scale subresource takes strategic patches
    assert.equal((await api('PATCH', `${sts}/converted`, '{"spec":{"replicas":2.0}}', smp)).json.spec.replicas, 2)
    assert.equal((await api('PATCH', `${sts}/converted/scale`, '{"spec":{"replicas":3}}', smp)).json.spec.replicas, 3)
  })

  it('"never a 500": a body nested deeper than 1,000 levels is 400 (invalid character \'{\' exceeded max depth), nothing stored, whatever the encoding or patch; one just within is stored and can be patched, applied, read as YAML and listed', async () => {
    const revisions = '/apis/apps/v1/namespaces/default/controllerrevisions'
    const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
    // the object, data and its nesting: data's innermost object is at level depth + 1
    const body = (name: string, depth: number) => `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"${name}"},"revision":1,"data":${nested(depth)}}`
    const deep = await api('POST', revisions, body('too-deep', 1000))
    assert.equal(deep.status, 400, deep.text)
    assert.equal(deep.json.message, "invalid character '{' exceeded max depth")
    assert.equal((await api('GET', `${revisions}/too-deep`)).status, 404)
    const yaml = await api('POST', revisions, `apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: too-deep}
revision: 1
data: ${nested(1000)}
`, {'Content-Type': 'application/yaml'})
    assert.equal(yaml.status, 400, yaml.text)
    const within = await api('POST', revisions, body('deep', 998))
    assert.equal(within.status, 201, within.text)
    for (const [type, patch] of [
      ['application/merge-patch+json', `{"data":${nested(1000)}}`],
      ['application/strategic-merge-patch+json', `{"data":${nested(1000)}}`],
      ['application/json-patch+json', `[{"op":"replace","path":"/data","value":${nested(1000)}}]`],
    ] as const) {
      const refused = await api('PATCH', `${revisions}/deep`, patch, {'Content-Type': type})
      assert.equal(refused.status, 400, `${type}: ${refused.text}`)
    }
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      assert.equal((await api('PATCH', `${revisions}/deep`, {metadata: {labels: {t: type.length.toString()}}}, {'Content-Type': type})).status, 200, type)
    }
    // a JSON patch's path and value together may nest deeper than either: the result is checked too
    const deepPath = `/data${'/a'.repeat(500)}`
    const stacked = await api('PATCH', `${revisions}/deep`, `[{"op":"add","path":"${deepPath}/b","value":${nested(600)}}]`, {'Content-Type': 'application/json-patch+json'})
    assert.equal(stacked.status, 400, stacked.text)
    assert.equal(stacked.json.message, "invalid character '{' exceeded max depth")
    // a lone surrogate escape in a body too deep is the same 400, not a 500
    const surrogate = await api('POST', revisions, body('surrogate', 20_000).replace('"a":1', '"a":"\\ud800"'))
    assert.equal(surrogate.status, 400, surrogate.text)
    const applied = await api('PATCH', `${revisions}/deep?fieldManager=deep`, {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: {name: 'deep', labels: {by: 'apply'}}}, {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(applied.status, 200, applied.text)
    assert.equal((await api('GET', `${revisions}/deep`, undefined, {Accept: 'application/yaml'})).status, 200)
    assert.equal((await api('GET', revisions, undefined, {Accept: 'application/yaml'})).status, 200)
  })

  it('"the accumulated size increase of copy": a JSON patch whose copies add more than 3 MiB is 422, nothing changed', async () => {
    const base = '/api/v1/namespaces/default/configmaps'
    assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'copies'}, data: {seed: 'x'.repeat(100_000)}})).status, 201)
    const ops = Array.from({length: 40}, (_, i) => ({op: 'copy', from: '/data/seed', path: `/data/c${i}`}))
    const result = await api('PATCH', `${base}/copies`, ops, {'Content-Type': 'application/json-patch+json'})
    assert.equal(result.status, 422, result.text)
    assert.match(result.json.message, /Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/)
    assert.equal(Object.keys((await api('GET', `${base}/copies`)).json.data).length, 1)
  })

  it('server-side apply of a configuration with a value of the wrong type is 400 (not the 500 Kubernetes answers)', async () => {
    const result = await api(
      'PATCH',
      `${configmaps}/ssa?fieldManager=test`,
      {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'ssa'}, data: {a: 7}},
      {'Content-Type': 'application/apply-patch+yaml'},
    )
    assert.equal(result.status, 400, result.text)
    assert.match(result.json.message, /failed to create typed patch object .*\.data\.a: expected string, got &value\.valueUnstructured\{Value:7\}/)
    assert.equal((await api('GET', `${configmaps}/ssa`)).status, 404)
  })
})
