// `orch get` against a real server: the server's Table printed as kubectl prints it, -o json|yaml|name|wide,
// -A, selectors, resource words resolved through discovery, and one-line errors.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {tempDir, type RunningOrch} from '../support/server.js'
import {adminKubeconfig, apiOf, lines, orchAt, orchPlain, startCliServer, type OrchResult} from './support.js'

const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {k: 'v'}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {name, labels},
  data,
})

describe('orch get', () => {
  let server: RunningOrch
  let orch: (args: string[], input?: string) => Promise<OrchResult>
  let api: ReturnType<typeof apiOf>
  const post = async (path: string, body: unknown) => {
    const result = await api.call('POST', path, body)
    assert.equal(result.status, 201, result.text)
    return result.json
  }

  before(async () => {
    server = await startCliServer()
    orch = orchAt(server)
    api = apiOf(server)
    await post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'get-a'}})
    await post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'get-b'}})
    await post('/api/v1/namespaces/get-a/configmaps', cm('alpha', {app: 'web'}, {one: '1', two: '2'}))
    await post('/api/v1/namespaces/get-a/configmaps', cm('beta', {app: 'db'}))
    await post('/api/v1/namespaces/get-b/configmaps', cm('gamma', {app: 'web'}))
    await post('/apis/rbac.orch.io/v1/namespaces/get-a/rolebindings', {
      apiVersion: 'rbac.orch.io/v1',
      kind: 'RoleBinding',
      metadata: {name: 'readers'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'reader'},
      subjects: [{kind: 'User', name: 'alice'}],
    })
  })
  after(async () => {
    await api.close()
    await server.cleanup()
  })

  it('prints the server Table with upper-case headers and 3-space gaps: NAME STATUS AGE for namespaces', async () => {
    const result = await orch(['get', 'namespaces'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, '')
    const out = lines(result.stdout)
    const names = out.slice(1).map((l) => l.split(/\s+/)[0])
    const width = Math.max(...names.map((n) => n.length)) + 3
    assert.equal(out[0], 'NAME'.padEnd(width) + 'STATUS'.padEnd(9) + 'AGE')
    const row = out.find((l) => l.startsWith('default '))
    assert.ok(row, result.stdout)
    assert.match(row, new RegExp(`^${'default'.padEnd(width)}Active   \\d+s$`))
    assert.ok(names.includes('get-a') && names.includes('get-b'))
  })

  it('each column is its widest cell plus 3 and the last column is not padded: NAME DATA AGE for configmaps', async () => {
    const result = await orch(['get', 'configmaps', '-n', 'get-a'])
    assert.equal(result.code, 0, result.stderr)
    const out = lines(result.stdout)
    assert.equal(out[0], 'NAME    DATA   AGE')
    // the DATA column is its widest cell (the header, 4) plus 3: 7; AGE, the last, is not padded
    assert.equal(out[1].replace(/\d+s$/, 'AGE'), 'alpha' + ' '.repeat(3) + '2' + ' '.repeat(6) + 'AGE')
    assert.equal(out[2].replace(/\d+s$/, 'AGE'), 'beta' + ' '.repeat(4) + '1' + ' '.repeat(6) + 'AGE')
  })

  it('resolves plural, singular, short name, Kind and resource.group, case-insensitively', async () => {
    for (const word of ['configmaps', 'configmap', 'cm', 'ConfigMap', 'CONFIGMAPS']) {
      const result = await orch(['get', word, 'alpha', '-n', 'get-a', '-o', 'name'])
      assert.equal(result.code, 0, `${word}: ${result.stderr}`)
      assert.equal(result.stdout, 'configmap/alpha\n', word)
    }
    const grouped = await orch(['get', 'rolebindings.rbac.orch.io', '-n', 'get-a', '-o', 'name'])
    assert.equal(grouped.stdout, 'rolebinding.rbac.orch.io/readers\n', grouped.stderr)
  })

  it('"get KIND [NAME]" in kubectl\'s other forms: KIND/NAME (one type prints plain names)', async () => {
    const one = await orch(['get', 'cm/alpha', '-n', 'get-a'])
    assert.equal(one.code, 0, one.stderr)
    assert.match(lines(one.stdout)[0], /^NAME +DATA +AGE$/)
    assert.match(lines(one.stdout)[1], /^alpha +2 +\d+s$/)
    assert.equal(lines(one.stdout).length, 2)
    const yamlOne = yaml.load((await orch(['get', 'cm/alpha', '-n', 'get-a', '-o', 'yaml'])).stdout) as any
    assert.equal(yamlOne.kind, 'ConfigMap', 'one KIND/NAME prints the object itself')
    const names = await orch(['get', 'cm/alpha', 'cm/beta', '-n', 'get-a', '-o', 'name'])
    assert.equal(names.stdout, 'configmap/alpha\nconfigmap/beta\n')
  })

  it('several types (KIND,KIND or KIND/NAME of different types): one table per type, kind/name rows, a blank line between', async () => {
    const result = await orch(['get', 'cm/alpha', 'rolebinding/readers', '-n', 'get-a'])
    assert.equal(result.code, 0, result.stderr)
    const out = result.stdout.split('\n')
    assert.match(out[0], /^NAME +DATA +AGE$/)
    assert.match(out[1], /^configmap\/alpha +2 +\d+s$/)
    assert.equal(out[2], '')
    assert.match(out[3], /^NAME +ROLE +AGE$/)
    assert.match(out[4], /^rolebinding\.rbac\.orch\.io\/readers +Role\/reader +\d+s$/)
    const listed = await orch(['get', 'configmaps,rolebindings', '-n', 'get-a', '-o', 'name'])
    assert.equal(listed.stdout, 'configmap/alpha\nconfigmap/beta\nrolebinding.rbac.orch.io/readers\n')
    const json = JSON.parse((await orch(['get', 'cm/alpha', 'rolebinding/readers', '-n', 'get-a', '-o', 'json'])).stdout)
    assert.equal(json.kind, 'List')
    assert.deepEqual(json.items.map((i: any) => `${i.kind}/${i.metadata.name}`), ['ConfigMap/alpha', 'RoleBinding/readers'])
    const empty = await orch(['get', 'cm,rolebindings', '-n', 'get-b', '-l', 'app=none'])
    assert.equal(empty.stdout, '')
    assert.equal(empty.stderr, 'No resources found in get-b namespace.\n')
  })

  it('KIND/NAME mixed with a bare KIND or NAME is one line and exit 1, as kubectl refuses it', async () => {
    for (const args of [['cm', 'cm/alpha'], ['cm/alpha', 'beta']]) {
      const result = await orch(['get', ...args, '-n', 'get-a'])
      assert.equal(result.code, 1)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /^error: there is no need to specify a resource type as a separate argument when passing arguments in resource\/name form .*\n$/)
    }
    const watch = await orch(['get', 'cm,rolebindings', '-w', '-n', 'get-a'])
    assert.equal(watch.code, 1)
    assert.equal(watch.stderr, 'error: you may only specify a single resource type\n')
  })

  it('an unknown resource type is one line on stderr and exit 1', async () => {
    const result = await orch(['get', 'widgets'])
    assert.equal(result.code, 1)
    assert.equal(result.stdout, '')
    assert.equal(result.stderr, 'error: the server doesn\'t have a resource type "widgets"\n')
  })

  it('-o name prints kind/name, with .group outside the core group', async () => {
    const result = await orch(['get', 'cm', '-n', 'get-a', '-o', 'name'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap/alpha\nconfigmap/beta\n')
    const rbac = await orch(['get', 'rolebinding', 'readers', '-n', 'get-a', '-o', 'name'])
    assert.equal(rbac.stdout, 'rolebinding.rbac.orch.io/readers\n')
  })

  it('-o json prints one named object as is and a collection as a List', async () => {
    const one = await orch(['get', 'cm', 'alpha', '-n', 'get-a', '-o', 'json'])
    assert.equal(one.code, 0, one.stderr)
    const object = JSON.parse(one.stdout)
    assert.equal(object.kind, 'ConfigMap')
    assert.equal(object.apiVersion, 'v1')
    assert.deepEqual(object.data, {one: '1', two: '2'})
    assert.match(one.stdout, /^\{\n {4}"apiVersion"/, 'kubectl indents JSON by 4 spaces')

    const many = JSON.parse((await orch(['get', 'cm', '-n', 'get-a', '-o', 'json'])).stdout)
    assert.equal(many.kind, 'List')
    assert.equal(many.apiVersion, 'v1')
    assert.deepEqual(many.items.map((i: any) => i.metadata.name), ['alpha', 'beta'])
    assert.ok(many.items.every((i: any) => i.kind === 'ConfigMap' && i.apiVersion === 'v1'))

    const two = JSON.parse((await orch(['get', 'cm', 'alpha', 'beta', '-n', 'get-a', '-o', 'json'])).stdout)
    assert.equal(two.kind, 'List', 'several names print a List')
    assert.equal(two.items.length, 2)
  })

  it('-o yaml prints the same documents as YAML', async () => {
    const one = await orch(['get', 'cm', 'alpha', '-n', 'get-a', '-o', 'yaml'])
    assert.equal(one.code, 0, one.stderr)
    const object = yaml.load(one.stdout) as any
    assert.equal(object.kind, 'ConfigMap')
    assert.equal(object.metadata.name, 'alpha')
    assert.match(one.stdout, /^apiVersion: v1\n/m)
    const list = yaml.load((await orch(['get', 'cm', '-n', 'get-a', '-o', 'yaml'])).stdout) as any
    assert.equal(list.kind, 'List')
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['alpha', 'beta'])
  })

  it('-o json|yaml leave metadata.managedFields out as kubectl does; --show-managed-fields keeps them', async () => {
    for (const format of ['json', 'yaml']) {
      const one = await orch(['get', 'cm', 'alpha', '-n', 'get-a', '-o', format])
      assert.equal(one.code, 0, one.stderr)
      assert.ok(!one.stdout.includes('managedFields'), one.stdout)
      const list = await orch(['get', 'cm', '-n', 'get-a', '-o', format])
      assert.ok(!list.stdout.includes('managedFields'), list.stdout)
      const shown = yaml.load((await orch(['get', 'cm', 'alpha', '-n', 'get-a', '-o', format, '--show-managed-fields'])).stdout) as any
      assert.ok(Array.isArray(shown.metadata.managedFields) && shown.metadata.managedFields.length > 0, JSON.stringify(shown.metadata))
    }
  })

  it('priority-1 columns appear only with -o wide', async () => {
    const plain = await orch(['get', 'rolebindings', '-n', 'get-a'])
    assert.equal(plain.code, 0, plain.stderr)
    assert.match(lines(plain.stdout)[0], /^NAME +ROLE +AGE$/)
    assert.match(lines(plain.stdout)[1], /^readers +Role\/reader +\d+s$/)
    const wide = await orch(['get', 'rolebindings', '-n', 'get-a', '-o', 'wide'])
    assert.equal(wide.code, 0, wide.stderr)
    assert.match(lines(wide.stdout)[0], /^NAME +ROLE +AGE +USERS +GROUPS +SERVICEACCOUNTS$/)
    assert.match(lines(wide.stdout)[1], /^readers +Role\/reader +\d+s +alice +$/)
  })

  it('-A lists every namespace with a leading NAMESPACE column', async () => {
    const result = await orch(['get', 'cm', '-A'])
    assert.equal(result.code, 0, result.stderr)
    const out = lines(result.stdout)
    assert.match(out[0], /^NAMESPACE +NAME +DATA +AGE$/)
    const rows = out.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join('/'))
    for (const expected of ['get-a/alpha', 'get-a/beta', 'get-b/gamma']) assert.ok(rows.includes(expected), `${expected} in\n${result.stdout}`)
    const nameColumn = out[0].indexOf('NAME ')
    assert.ok(out.slice(1).every((l) => l[nameColumn - 1] === ' ' && l[nameColumn] !== ' '), 'names line up under NAME')
  })

  it('-A on a cluster-scoped type adds no NAMESPACE column', async () => {
    const result = await orch(['get', 'ns', '-A'])
    assert.match(lines(result.stdout)[0], /^NAME +STATUS +AGE$/)
  })

  it('-l selects by label, --field-selector by field', async () => {
    const web = await orch(['get', 'cm', '-A', '-l', 'app=web', '-o', 'name'])
    assert.equal(web.stdout, 'configmap/alpha\nconfigmap/gamma\n')
    const notWeb = await orch(['get', 'cm', '-n', 'get-a', '-l', 'app!=web', '-o', 'name'])
    assert.equal(notWeb.stdout, 'configmap/beta\n')
    const byField = await orch(['get', 'cm', '-n', 'get-a', '--field-selector', 'metadata.name=beta'])
    assert.equal(lines(byField.stdout).length, 2)
    assert.match(lines(byField.stdout)[1], /^beta /)
  })

  it('an empty list prints "No resources found in <ns> namespace." on stderr, nothing on stdout', async () => {
    const result = await orch(['get', 'cm', '-n', 'get-a', '-l', 'app=none'])
    assert.equal(result.code, 0)
    assert.equal(result.stdout, '')
    assert.equal(result.stderr, 'No resources found in get-a namespace.\n')
    const cluster = await orch(['get', 'namespaces', '-l', 'app=none'])
    assert.equal(cluster.stderr, 'No resources found\n')
    const all = await orch(['get', 'cm', '-A', '-l', 'app=none'])
    assert.equal(all.stderr, 'No resources found\n')
  })

  it('a missing named object is the server message on one line, exit 1; found ones still print', async () => {
    const result = await orch(['get', 'cm', 'alpha', 'nope', '-n', 'get-a'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: configmaps "nope" not found\n')
    assert.match(lines(result.stdout)[1], /^alpha /)
  })

  it('a named object in a namespace that does not exist: the missing namespace is the error, as kubectl checks after the 404', async () => {
    const result = await orch(['get', 'cm', 'alpha', '-n', 'no-such-namespace'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: namespaces "no-such-namespace" not found\n')
  })

  it('--ignore-not-found: a missing named object is no error (exit 0, nothing on stderr), and an empty list prints no message', async () => {
    const named = await orch(['get', 'cm', 'alpha', 'nope', '-n', 'get-a', '--ignore-not-found'])
    assert.equal(named.code, 0, named.stderr)
    assert.equal(named.stderr, '')
    assert.match(lines(named.stdout)[1], /^alpha /)
    const onlyMissing = await orch(['get', 'cm', 'nope', '-n', 'get-a', '--ignore-not-found', '-o', 'json'])
    assert.equal(onlyMissing.code, 0)
    assert.equal(onlyMissing.stdout, '')
    const empty = await orch(['get', 'cm', '-n', 'get-a', '-l', 'app=none', '--ignore-not-found'])
    assert.equal(empty.code, 0)
    assert.equal(empty.stdout + empty.stderr, '')
  })

  it('--show-labels adds a last LABELS column: key=value pairs sorted by key, <none> without labels', async () => {
    await post('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'get-labels'}})
    await post('/api/v1/namespaces/get-labels/configmaps', cm('labelled', {tier: 'front', app: 'web'}))
    await post('/api/v1/namespaces/get-labels/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'plain'}})
    const result = await orch(['get', 'cm', '-n', 'get-labels', '--show-labels'])
    assert.equal(result.code, 0, result.stderr)
    const out = lines(result.stdout)
    assert.match(out[0], /^NAME\s+DATA\s+AGE\s+LABELS$/)
    assert.match(out[1], /^labelled\s+1\s+\d+s\s+app=web,tier=front$/)
    assert.match(out[2], /^plain\s+0\s+\d+s\s+<none>$/)
  })

  it('a refused connection is kubectl\'s one-line message, exit 1', async () => {
    const result = await orchPlain(['get', 'ns', '--server', 'http://127.0.0.1:1'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'error: the connection to the server http://127.0.0.1:1 was refused - did you specify the right host or port?\n')
  })

  it('--kubeconfig chooses the file; its current-context gives server and namespace, --context another', async () => {
    // a minimal kubeconfig whose cluster names the test server (with the server's CA and admin
    // credentials when it has them)
    const admin = adminKubeconfig(server)
    const adminDoc = admin ? (yaml.load(readFileSync(admin, 'utf8')) as any) : undefined
    const dir = tempDir('orch-cli-kubeconfig-')
    const file = join(dir, 'config')
    writeFileSync(
      file,
      yaml.dump({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'test',
        clusters: [
          {name: 'test', cluster: {...adminDoc?.clusters?.[0]?.cluster, server: server.url}},
          {name: 'nowhere', cluster: {server: 'http://127.0.0.1:1'}},
        ],
        contexts: [
          {name: 'test', context: {cluster: 'test', user: 'admin', namespace: 'get-b'}},
          {name: 'off', context: {cluster: 'nowhere'}},
        ],
        users: [{name: 'admin', user: adminDoc?.users?.[0]?.user ?? {}}],
      }),
    )
    const result = await orchPlain(['get', 'cm', '--kubeconfig', file, '-o', 'name'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'configmap/gamma\n', 'the context namespace get-b is used')
    const overridden = await orchPlain(['get', 'cm', '--kubeconfig', file, '-n', 'get-a', '-o', 'name'])
    assert.equal(overridden.stdout, 'configmap/alpha\nconfigmap/beta\n')
    const other = await orchPlain(['get', 'cm', '--kubeconfig', file, '--context', 'off'])
    assert.equal(other.code, 1)
    assert.match(other.stderr, /^error: the connection to the server http:\/\/127\.0\.0\.1:1 was refused/)
    const missing = await orchPlain(['get', 'cm', '--kubeconfig', join(dir, 'absent')])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^error: kubeconfig .*absent not found\n$/)
  })

  it('without --server or a kubeconfig the error says so in one line', async () => {
    const result = await orchPlain(['get', 'ns'])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /^error: no server to talk to: .*\n$/)
  })
})
