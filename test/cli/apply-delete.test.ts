// `orch apply` and `orch delete` against a real server: server-side apply (the default) and
// create-or-replace (--server-side=false: created / configured / unchanged) per object from multi-document
// files, directories and stdin; one-line errors; kubectl's `configmap "x" deleted`. Server-side apply's own
// rules (managers, conflicts, dry run) are in patch-apply.test.ts.
import assert from 'node:assert/strict'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {tempDir, type RunningOrch} from '../support/server.js'
import {apiOf, lines, orchAt, startCliServer, type OrchResult} from './support.js'

const dir = tempDir('orch-cli-manifests-')

function write(name: string, text: string): string {
  const path = join(dir, name)
  mkdirSync(join(path, '..'), {recursive: true})
  writeFileSync(path, text)
  return path
}

const manifest = (value: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: apply-ns
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: apply-ns
data:
  key: ${value}
---
# an empty document is skipped
---
apiVersion: rbac.orch.io/v1
kind: RoleBinding
metadata:
  name: binding
  namespace: apply-ns
roleRef: {apiGroup: rbac.orch.io, kind: Role, name: reader}
subjects:
- {kind: User, name: alice}
`

describe('orch apply and orch delete', () => {
  let server: RunningOrch
  let orch: (args: string[], input?: string) => Promise<OrchResult>
  let api: ReturnType<typeof apiOf>
  const get = (path: string) => api.call('GET', path)

  before(async () => {
    server = await startCliServer()
    orch = orchAt(server)
    api = apiOf(server)
  })
  after(async () => {
    await api.close()
    await server.cleanup()
  })

  it('apply --server-side=false of a multi-document file creates each object, then reports unchanged, then configured', async () => {
    const file = write('multi.yaml', manifest('one'))
    const created = await orch(['apply', '-f', file, '--server-side=false'])
    assert.equal(created.code, 0, created.stderr)
    assert.equal(created.stdout, 'namespace/apply-ns created\nconfigmap/first created\nrolebinding.rbac.orch.io/binding created\n')
    const live = await get('/api/v1/namespaces/apply-ns/configmaps/first')
    assert.equal(live.status, 200)
    assert.deepEqual(live.json.data, {key: 'one'})

    const again = await orch(['apply', '-f', file, '--server-side=false'])
    assert.equal(again.code, 0, again.stderr)
    assert.equal(again.stdout, 'namespace/apply-ns unchanged\nconfigmap/first unchanged\nrolebinding.rbac.orch.io/binding unchanged\n')
    assert.equal((await get('/api/v1/namespaces/apply-ns/configmaps/first')).json.metadata.resourceVersion, live.json.metadata.resourceVersion)

    write('multi.yaml', manifest('two'))
    const changed = await orch(['apply', '-f', file, '--server-side=false'])
    assert.equal(changed.code, 0, changed.stderr)
    assert.equal(changed.stdout, 'namespace/apply-ns unchanged\nconfigmap/first configured\nrolebinding.rbac.orch.io/binding unchanged\n')
    const updated = await get('/api/v1/namespaces/apply-ns/configmaps/first')
    assert.deepEqual(updated.json.data, {key: 'two'})
    assert.equal(updated.json.metadata.uid, live.json.metadata.uid, 'updated in place, not re-created')
  })

  it('"apply twice (unchanged)" holds for a cluster-scoped object whose manifest names a namespace: the namespace is dropped, as kubectl drops it', async () => {
    const file = write('cluster-scoped.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: apply-scoped, namespace: default, labels: {a: b}}\n')
    const created = await orch(['apply', '-f', file, '--server-side=false'])
    assert.equal(created.stdout, 'namespace/apply-scoped created\n', created.stderr)
    const live = await get('/api/v1/namespaces/apply-scoped')
    const again = await orch(['apply', '-f', file, '--server-side=false'])
    assert.equal(again.code, 0, again.stderr)
    assert.equal(again.stdout, 'namespace/apply-scoped unchanged\n')
    assert.equal((await get('/api/v1/namespaces/apply-scoped')).json.metadata.resourceVersion, live.json.metadata.resourceVersion)
    const applied = await orch(['apply', '-f', file])
    assert.equal(applied.stdout, 'namespace/apply-scoped configured\n', 'server-side apply takes ownership of the fields: managedFields change')
  })

  it('"IgnoreManagedFieldsTimestampsTransformer": applying again a manifest with empty maps and nulls (labels: {}, data: {}, creationTimestamp: null) writes nothing and says unchanged, the managedFields times kept', async () => {
    const file = write('empties.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empties\n  namespace: apply-ns\n  labels: {}\n  creationTimestamp: null\ndata: {}\n')
    const created = await orch(['apply', '-f', file])
    assert.equal(created.stdout, 'configmap/empties created\n', created.stderr)
    const live = await get('/api/v1/namespaces/apply-ns/configmaps/empties')
    const again = await orch(['apply', '-f', file])
    assert.equal(again.code, 0, again.stderr)
    assert.equal(again.stdout, 'configmap/empties unchanged\n')
    const after = await get('/api/v1/namespaces/apply-ns/configmaps/empties')
    assert.equal(after.json.metadata.resourceVersion, live.json.metadata.resourceVersion)
    assert.deepEqual(after.json.metadata.managedFields, live.json.metadata.managedFields)
  })

  it('apply -f - reads JSON from stdin; an object without a namespace goes to -n', async () => {
    const input = JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'from-stdin'}, data: {a: 'b'}})
    const result = await orch(['apply', '-f', '-', '-n', 'apply-ns', '--server-side=false'], input)
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap/from-stdin created\n')
    assert.equal((await get('/api/v1/namespaces/apply-ns/configmaps/from-stdin')).status, 200)
    const again = await orch(['apply', '-f', '-', '-n', 'apply-ns', '--server-side=false'], input)
    assert.equal(again.stdout, 'configmap/from-stdin unchanged\n')
    const applied = await orch(['apply', '-f', '-', '-n', 'apply-ns'], input)
    assert.equal(applied.stdout, 'configmap/from-stdin configured\n', 'server-side apply takes ownership of the fields: managedFields change')
  })

  it('apply -f - reads multi-document YAML from stdin', async () => {
    const input = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s2}\ndata: {x: z}\n'
    const result = await orch(['apply', '-f', '-', '-n', 'apply-ns'], input)
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap/s1 created\nconfigmap/s2 created\n')
    assert.deepEqual((await get('/api/v1/namespaces/apply-ns/configmaps/s2')).json.data, {x: 'z'})
  })

  it('apply of a directory takes its .yaml, .yml and .json files in name order', async () => {
    write('dir/b.yml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dir-b}\n')
    write('dir/a.json', JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'dir-a'}}))
    write('dir/c.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dir-c}\n')
    write('dir/notes.txt', 'not a manifest')
    const result = await orch(['apply', '-f', join(dir, 'dir'), '-n', 'apply-ns'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap/dir-a created\nconfigmap/dir-b created\nconfigmap/dir-c created\n')
  })

  for (const mode of [[], ['--server-side=false']]) {
    const label = mode.length === 0 ? 'server-side' : 'create-or-replace'
    const suffix = mode.length === 0 ? 'ssa' : 'cor'

    it(`kubectl's ContinueOnError builder (${label}): every object of a directory that could be read is applied, then "error parsing" per broken file, exit 1`, async () => {
      write(`cont-${suffix}/1.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one-${suffix}}\n`)
      write(`cont-${suffix}/2.yaml`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n')
      write(`cont-${suffix}/3.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: three-${suffix}}\n`)
      const result = await orch(['apply', '-f', join(dir, `cont-${suffix}`), '-n', 'apply-ns', ...mode])
      assert.equal(result.code, 1)
      assert.equal(result.stdout, `configmap/one-${suffix} created\nconfigmap/three-${suffix} created\n`)
      assert.equal(lines(result.stderr).length, 1, result.stderr)
      assert.match(result.stderr, new RegExp(`^error: error parsing .*cont-${suffix}/2\\.yaml: error converting YAML to JSON: yaml: line \\d+: `))
      for (const name of [`one-${suffix}`, `three-${suffix}`]) assert.equal((await get(`/api/v1/namespaces/apply-ns/configmaps/${name}`)).status, 200)
    })

    it(`kubectl's StreamVisitor (${label}): the documents of a file before a broken one are applied, the ones after it are not read`, async () => {
      const file = write(
        `broken-${suffix}.yaml`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before-broken-${suffix}\n---\nkind: [unclosed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after-broken-${suffix}}\n`,
      )
      const result = await orch(['apply', '-f', file, '-n', 'apply-ns', ...mode])
      assert.equal(result.code, 1)
      assert.equal(result.stdout, `configmap/before-broken-${suffix} created\n`)
      assert.equal(lines(result.stderr).length, 1, result.stderr)
      assert.match(result.stderr, /^error: error parsing .*broken-\w+\.yaml: error converting YAML to JSON: yaml: line \d+: /)
      assert.equal((await get(`/api/v1/namespaces/apply-ns/configmaps/before-broken-${suffix}`)).status, 200)
      assert.equal((await get(`/api/v1/namespaces/apply-ns/configmaps/after-broken-${suffix}`)).status, 404)
    })
  }

  it('apply of only unreadable manifests is their errors, one line each, exit 1 (not "no objects passed to apply")', async () => {
    const noKind = await orch(['apply', '-f', '-'], 'apiVersion: v1\nmetadata: {name: x}\n')
    assert.equal(noKind.code, 1)
    assert.equal(noKind.stdout, '')
    assert.equal(noKind.stderr, 'error: error validating STDIN: the document: kind not set\n')
    const broken = write('only-broken/a.yaml', 'kind: [a\n')
    write('only-broken/b.json', '{"kind": ')
    const both = await orch(['apply', '-f', join(broken, '..')])
    assert.equal(both.code, 1)
    assert.equal(both.stdout, '')
    assert.deepEqual(
      lines(both.stderr).map((line) => line.replace(/ (error parsing) .*\/(\w\.\w+):.*/, ' $1 $2')),
      ['error: error parsing a.yaml', 'error: error parsing b.json'],
    )
  })

  it('an object the server refuses is one line with its message; the other documents are still applied, exit 1', async () => {
    const file = write(
      'partly.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after-bad}\n',
    )
    const result = await orch(['apply', '-f', file, '-n', 'apply-ns'])
    assert.equal(result.code, 1)
    assert.equal(result.stdout, 'configmap/after-bad created\n')
    assert.equal(lines(result.stderr).length, 1, result.stderr)
    assert.match(result.stderr, /^error: ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value/)

    const replaced = await orch(['apply', '-f', file, '-n', 'apply-ns', '--server-side=false'])
    assert.equal(replaced.code, 1)
    assert.equal(replaced.stdout, 'configmap/after-bad unchanged\n')
    assert.equal(lines(replaced.stderr).length, 1, replaced.stderr)
    assert.match(replaced.stderr, /^error: error when creating ".*partly\.yaml": ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value/)
  })

  it('apply of an unknown kind names the object and the kind, exit 1', async () => {
    const result = await orch(['apply', '-f', '-'], 'apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w}\n')
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: resource mapping not found for name: "w" namespace: "" from "STDIN": no matches for kind "Widget" in version "example.io/v1"\n')
  })

  it('apply refuses an object whose namespace differs from an explicit -n', async () => {
    const result = await orch(['apply', '-f', '-', '-n', 'default'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: apply-ns}\n')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /^error: the namespace from the provided object "apply-ns" does not match the namespace "default"/)
  })

  it('apply reads YAML as kubectl does (YAML 1.1): defaultMode: 0644 is 420, a date stays a string, `yes` in a string field is refused; get -o yaml quotes "0644"', async () => {
    const pod = write('yaml11/pod.yaml', `apiVersion: v1
kind: Pod
metadata: {name: yaml11, namespace: apply-ns}
spec:
  hostNetwork: yes
  containers: [{name: c, image: busybox, volumeMounts: [{name: v, mountPath: /v}]}]
  volumes: [{name: v, configMap: {name: cm, defaultMode: 0644}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: yaml11, namespace: apply-ns}
data: {released: 2001-12-14, mode: "0644"}
`)
    const applied = await orch(['apply', '-f', pod])
    assert.equal(applied.code, 0, applied.stderr)
    const stored = (await get('/api/v1/namespaces/apply-ns/pods/yaml11')).json
    assert.equal(stored.spec.volumes[0].configMap.defaultMode, 420)
    assert.equal(stored.spec.hostNetwork, true)
    assert.deepEqual((await get('/api/v1/namespaces/apply-ns/configmaps/yaml11')).json.data, {released: '2001-12-14', mode: '0644'})
    const printed = await orch(['get', 'configmap', 'yaml11', '-n', 'apply-ns', '-o', 'yaml'])
    assert.match(printed.stdout, /^ {2}mode: "0644"$/m)
    const refused = await orch(['apply', '-f', write('yaml11/bool.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml11-bool, namespace: apply-ns}\ndata: {enabled: yes}\n')])
    assert.equal(refused.code, 1)
    // server-side apply's words for it (kubectl apply --server-side says the same)
    assert.match(refused.stderr, /\.data\.enabled: expected string, got &value\.valueUnstructured\{Value:true\}/)
  })

  it('delete prints kubectl\'s `configmap "x" deleted` and the object is gone', async () => {
    const result = await orch(['delete', 'configmap', 's1', 's2', '-n', 'apply-ns'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap "s1" deleted\nconfigmap "s2" deleted\n')
    assert.equal((await get('/api/v1/namespaces/apply-ns/configmaps/s1')).status, 404)
  })

  it('delete of a missing object is the server message, exit 1; --ignore-not-found makes it no error', async () => {
    const missing = await orch(['delete', 'cm', 'nope', '-n', 'apply-ns'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stdout, '')
    assert.equal(missing.stderr, 'error: configmaps "nope" not found\n')
    const ignored = await orch(['delete', 'cm', 'nope', '-n', 'apply-ns', '--ignore-not-found'])
    assert.equal(ignored.code, 0, ignored.stderr)
    assert.equal(ignored.stdout, '')
    assert.equal(ignored.stderr, '')
  })

  it('delete --now with --grace-period is a usage error, exit 1 as kubectl: --now and --grace-period cannot be specified together', async () => {
    const both = await orch(['delete', 'cm', 'nope', '-n', 'apply-ns', '--now', '--grace-period=5'])
    assert.equal(both.code, 1)
    assert.equal(both.stderr, 'error: --now and --grace-period cannot be specified together\n')
  })

  it('delete KIND/NAME names objects of several types; non-core kinds carry their group', async () => {
    const result = await orch(['delete', 'cm/dir-a', 'rolebindings/binding', '-n', 'apply-ns'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap "dir-a" deleted\nrolebinding.rbac.orch.io "binding" deleted\n')
  })

  it('delete -l deletes only the objects the selector chooses; --all deletes the rest; "No resources found" goes to stdout as kubectl delete prints it', async () => {
    for (const [name, app] of [['l1', 'web'], ['l2', 'web'], ['l3', 'db']]) {
      const created = await api.call('POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels: {app}}})
      assert.equal(created.status, 201, created.text)
    }
    const selected = await orch(['delete', 'cm', '-l', 'app=web'])
    assert.equal(selected.code, 0, selected.stderr)
    assert.equal(selected.stdout, 'configmap "l1" deleted\nconfigmap "l2" deleted\n')
    const none = await orch(['delete', 'cm', '-l', 'app=web'])
    assert.equal(none.code, 0)
    // kubectl delete (unlike kubectl get) writes "No resources found" to stdout
    assert.equal(none.stdout, 'No resources found\n')
    assert.equal(none.stderr, '')
    const all = await orch(['delete', 'cm', '--all'])
    assert.equal(all.stdout, 'configmap "l3" deleted\n')
  })

  it('delete -f deletes the objects of a manifest', async () => {
    const file = write('del.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dir-b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: dir-c}\n')
    const result = await orch(['delete', '-f', file, '-n', 'apply-ns'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap "dir-b" deleted\nconfigmap "dir-c" deleted\n')
    const again = await orch(['delete', '-f', file, '-n', 'apply-ns', '--ignore-not-found'])
    assert.equal(again.code, 0, again.stderr)
    assert.equal(again.stdout, '')
  })

  it('delete -f as kubectl\'s ContinueOnError builder: the objects of the files that could be read are deleted, then "error parsing" per broken file, exit 1', async () => {
    for (const name of ['del-one', 'del-three']) {
      const created = await api.call('POST', '/api/v1/namespaces/apply-ns/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}})
      assert.equal(created.status, 201, created.text)
    }
    write('del-cont/1.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: del-one}\n')
    write('del-cont/2.yaml', 'apiVersion: v1\nkind: [unclosed\n')
    write('del-cont/3.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: del-three}\n')
    const result = await orch(['delete', '-f', join(dir, 'del-cont'), '-n', 'apply-ns'])
    assert.equal(result.code, 1)
    assert.equal(result.stdout, 'configmap "del-one" deleted\nconfigmap "del-three" deleted\n')
    assert.equal(lines(result.stderr).length, 1, result.stderr)
    assert.match(result.stderr, /^error: error parsing .*del-cont\/2\.yaml: error converting YAML to JSON: yaml: line \d+: /)
    assert.equal((await get('/api/v1/namespaces/apply-ns/configmaps/del-three')).status, 404)
  })

  it('delete without a name, selector or --all is a one-line usage error', async () => {
    const result = await orch(['delete', 'configmaps'])
    assert.equal(result.code, 1)
    assert.equal(lines(result.stderr).length, 1)
    assert.match(result.stderr, /^error: resource\(s\) were provided, but no name was specified/)
  })
})
