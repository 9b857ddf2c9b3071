// `orch apply` (server-side apply by default), `orch patch`, the global --wire flag, `orch get --raw` and
// the server's warnings, against a real server started with CBOR serving on and no controllers (so nothing
// but the commands under test writes).
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {startOrchServer, tempDir, type RunningOrch} from '../support/server.js'
import {apiOf, lines, orchAt, serverFlags, spawnOrch, type LineStream, type OrchResult} from './support.js'

const dir = tempDir('orch-cli-patch-')

function write(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const statefulSet = (name: string, replicas: number, containers: {name: string; image: string}[] = [{name: 'main', image: 'registry.example/app:1'}]) =>
  yaml.dump({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name},
    spec: {
      replicas,
      serviceName: name,
      selector: {matchLabels: {app: name}},
      template: {metadata: {labels: {app: name}}, spec: {containers}},
    },
  })

const configMap = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) =>
  yaml.dump({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data, ...extra})

/** The managedFields entries of an object as [manager, operation] pairs. */
const managers = (object: any): [string, string][] => (object.metadata.managedFields ?? []).map((m: any) => [m.manager, m.operation])

describe('orch apply (server-side), orch patch, --wire, --raw and warnings', () => {
  let server: RunningOrch
  let orch: (args: string[], input?: string) => Promise<OrchResult>
  let api: ReturnType<typeof apiOf>
  const streams: LineStream[] = []
  const get = async (path: string) => {
    const result = await api.call('GET', path)
    assert.equal(result.status, 200, result.text)
    return result.json
  }
  const cmPath = (name: string) => `/api/v1/namespaces/default/configmaps/${name}`
  const stsPath = (name: string) => `/apis/apps/v1/namespaces/default/statefulsets/${name}`

  before(async () => {
    server = await startOrchServer(['--controllers=', '--feature-gates', 'CBORServingAndStorage=true'], {env: {HOME: tempDir('orch-cli-server-home-')}})
    orch = orchAt(server)
    api = apiOf(server)
  })
  after(async () => {
    await Promise.all(streams.map((s) => s.stop()))
    await api.close()
    await server.cleanup()
  })

  describe('orch apply', () => {
    it('is server-side apply printed as kubectl apply prints: configmap/x created|configured|unchanged, and the fields are owned by manager orch with operation Apply', async () => {
      const result = await orch(['apply', '-f', '-'], configMap('ssa', {k: 'v'}))
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/ssa created\n')
      assert.equal(result.stderr, '')
      const live = await get(cmPath('ssa'))
      assert.deepEqual(live.data, {k: 'v'})
      assert.deepEqual(managers(live), [['orch', 'Apply']])
      assert.deepEqual(live.metadata.managedFields[0].fieldsV1, {'f:data': {'f:k': {}}})

      // applying again with a field left out removes it (the manager owned it), as server-side apply does
      const again = await orch(['apply', '-f', '-'], configMap('ssa', {other: 'x'}))
      assert.equal(again.stdout, 'configmap/ssa configured\n')
      const afterAgain = await get(cmPath('ssa'))
      assert.deepEqual(afterAgain.data, {other: 'x'})
      // the same manifest again writes nothing
      const same = await orch(['apply', '-f', '-'], configMap('ssa', {other: 'x'}))
      assert.equal(same.stdout, 'configmap/ssa unchanged\n')
      assert.equal((await get(cmPath('ssa'))).metadata.resourceVersion, afterAgain.metadata.resourceVersion)
    })

    it('--field-manager names the manager', async () => {
      const result = await orch(['apply', '-f', '-', '--field-manager', 'deploy-bot'], configMap('ssa-named', {k: 'v'}))
      assert.equal(result.code, 0, result.stderr)
      assert.deepEqual(managers(await get(cmPath('ssa-named'))), [['deploy-bot', 'Apply']])
    })

    it('a conflict with another manager fails on one line, exit 1, nothing changed; --force-conflicts then takes ownership', async () => {
      const file = write('web.yaml', statefulSet('web', 1))
      const applied = await orch(['apply', '-f', file])
      assert.equal(applied.code, 0, applied.stderr)
      assert.equal(applied.stdout, 'statefulset.apps/web created\n')
      // bob changes .spec.replicas with an ordinary write: bob owns it now (an Update entry)
      const patched = await orch(['patch', 'statefulset', 'web', '--field-manager', 'bob', '-p', '{"spec":{"replicas":3}}'])
      assert.equal(patched.code, 0, patched.stderr)
      assert.deepEqual(managers(await get(stsPath('web'))), [['orch', 'Apply'], ['bob', 'Update']])

      const conflict = await orch(['apply', '-f', file])
      assert.equal(conflict.code, 1)
      assert.equal(conflict.stdout, '')
      assert.equal(lines(conflict.stderr).length, 1, conflict.stderr)
      assert.equal(conflict.stderr, 'error: Apply failed with 1 conflict: conflict with "bob" using apps/v1: .spec.replicas\n')
      assert.equal((await get(stsPath('web'))).spec.replicas, 3, 'a conflict changes nothing')

      const forced = await orch(['apply', '-f', file, '--force-conflicts'])
      assert.equal(forced.code, 0, forced.stderr)
      assert.equal(forced.stdout, 'statefulset.apps/web configured\n')
      const live = await get(stsPath('web'))
      assert.equal(live.spec.replicas, 1)
      const bob = live.metadata.managedFields.find((m: any) => m.manager === 'bob')
      assert.ok(!bob || !bob.fieldsV1?.['f:spec']?.['f:replicas'], 'bob no longer owns .spec.replicas')
      const orchEntry = live.metadata.managedFields.find((m: any) => m.manager === 'orch')
      assert.ok(orchEntry.fieldsV1['f:spec']['f:replicas'], 'orch owns .spec.replicas')
    })

    it('--force-conflicts needs server-side apply', async () => {
      const result = await orch(['apply', '-f', '-', '--server-side=false', '--force-conflicts'], configMap('never', {k: 'v'}))
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'error: --force-conflicts only works with --server-side\n')
    })

    it('--dry-run=server answers as applied but stores nothing; --dry-run=client sends nothing', async () => {
      const server = await orch(['apply', '-f', '-', '--dry-run=server'], configMap('dry', {k: 'v'}))
      assert.equal(server.code, 0, server.stderr)
      assert.equal(server.stdout, 'configmap/dry created (server dry run)\n')
      assert.equal((await api.call('GET', cmPath('dry'))).status, 404)
      const client = await orch(['apply', '-f', '-', '--dry-run=client'], configMap('dry', {k: 'v'}))
      assert.equal(client.code, 0, client.stderr)
      assert.equal(client.stdout, 'configmap/dry created (dry run)\n')
      assert.equal((await api.call('GET', cmPath('dry'))).status, 404)
      // a present object is not changed either
      const live = await get(cmPath('ssa'))
      const changed = await orch(['apply', '-f', '-', '--dry-run=server'], configMap('ssa', {other: 'changed'}))
      assert.equal(changed.code, 0, changed.stderr)
      assert.equal(changed.stdout, 'configmap/ssa configured (server dry run)\n')
      const same = await orch(['apply', '-f', '-', '--dry-run=server'], configMap('ssa', {other: 'x'}))
      assert.equal(same.stdout, 'configmap/ssa unchanged (server dry run)\n')
      const after = await get(cmPath('ssa'))
      assert.deepEqual(after.data, {other: 'x'})
      assert.equal(after.metadata.resourceVersion, live.metadata.resourceVersion)
    })

    it('--server-side=false keeps create-or-replace: created, unchanged, configured', async () => {
      const csa = (value: string) => orch(['apply', '-f', '-', '--server-side=false'], configMap('csa', {k: value}))
      assert.equal((await csa('1')).stdout, 'configmap/csa created\n')
      assert.equal((await csa('1')).stdout, 'configmap/csa unchanged\n')
      assert.equal((await csa('2')).stdout, 'configmap/csa configured\n')
      assert.ok(!managers(await get(cmPath('csa'))).some(([, operation]) => operation === 'Apply'))
      const dry = await orch(['apply', '-f', '-', '--server-side=false', '--dry-run=server'], configMap('csa', {k: '3'}))
      assert.equal(dry.stdout, 'configmap/csa configured (server dry run)\n')
      assert.deepEqual((await get(cmPath('csa'))).data, {k: '2'})
    })
  })

  describe('orch patch', () => {
    before(async () => {
      const result = await orch(['apply', '-f', '-'], configMap('p', {a: '1', b: '2'}))
      assert.equal(result.code, 0, result.stderr)
      const sts = await orch(['apply', '-f', '-'], statefulSet('pods', 1, [{name: 'app', image: 'app:1'}, {name: 'sidecar', image: 'side:1'}]))
      assert.equal(sts.code, 0, sts.stderr)
    })

    it('--type strategic (the default) merges lists by their merge key: containers by name', async () => {
      const result = await orch(['patch', 'sts', 'pods', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"side:2"}]}}}}'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'statefulset.apps/pods patched\n')
      const containers = (await get(stsPath('pods'))).spec.template.spec.containers.map((c: any) => [c.name, c.image])
      assert.deepEqual(containers, [['app', 'app:1'], ['sidecar', 'side:2']])
    })

    it('--type merge: objects merged, null deletes a key (YAML patch text)', async () => {
      const result = await orch(['patch', 'configmap', 'p', '--type', 'merge', '-p', 'data: {a: null, c: "3"}'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/p patched\n')
      assert.deepEqual((await get(cmPath('p'))).data, {b: '2', c: '3'})
    })

    it('--type json: the operations in order; KIND/NAME form; -p @FILE', async () => {
      const file = write('ops.json', JSON.stringify([{op: 'add', path: '/data/d', value: '4'}, {op: 'remove', path: '/data/b'}]))
      const result = await orch(['patch', 'cm/p', '--type', 'json', '-p', `@${file}`])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/p patched\n')
      assert.deepEqual((await get(cmPath('p'))).data, {c: '3', d: '4'})
    })

    it('a patch that changes nothing prints "patched (no change)" and leaves the resourceVersion', async () => {
      const before = await get(cmPath('p'))
      const result = await orch(['patch', 'cm', 'p', '--type', 'merge', '-p', '{"data":{"c":"3"}}'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/p patched (no change)\n')
      assert.equal((await get(cmPath('p'))).metadata.resourceVersion, before.metadata.resourceVersion)
    })

    it('--dry-run=server answers but stores nothing', async () => {
      const result = await orch(['patch', 'cm', 'p', '--type', 'merge', '-p', '{"data":{"c":"dry"}}', '--dry-run=server'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/p patched (server dry run)\n')
      assert.equal((await get(cmPath('p'))).data.c, '3')
    })

    it('--subresource scale patches the Scale; the object follows; the line names the Scale, as kubectl prints what the server returned', async () => {
      const result = await orch(['patch', 'statefulsets.apps', 'pods', '--subresource', 'scale', '--type', 'merge', '-p', '{"spec":{"replicas":4}}'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'scale.autoscaling/pods patched\n')
      assert.equal((await get(stsPath('pods'))).spec.replicas, 4)
      const again = await orch(['patch', 'sts', 'pods', '--subresource', 'scale', '--type', 'merge', '-p', '{"spec":{"replicas":4}}'])
      assert.equal(again.stdout, 'scale.autoscaling/pods patched (no change)\n')
    })

    it('--field-manager names the writer of an ordinary patch (an Update entry)', async () => {
      const result = await orch(['patch', 'cm', 'p', '--type', 'merge', '-p', '{"data":{"f":"6"}}', '--field-manager', 'editor'])
      assert.equal(result.code, 0, result.stderr)
      const entry = (await get(cmPath('p'))).metadata.managedFields.find((m: any) => m.manager === 'editor')
      assert.equal(entry?.operation, 'Update')
      assert.deepEqual(entry?.fieldsV1, {'f:data': {'f:f': {}}})
    })

    it('-o yaml prints the patched object; errors are one line, exit 1', async () => {
      const printed = await orch(['patch', 'cm', 'p', '--type', 'merge', '-p', '{"data":{"e":"5"}}', '-o', 'yaml'])
      assert.equal(printed.code, 0, printed.stderr)
      assert.deepEqual((yaml.load(printed.stdout) as any).data, {c: '3', d: '4', e: '5', f: '6'})

      const missing = await orch(['patch', 'cm', 'nope', '-p', '{"data":{"a":"1"}}'])
      assert.equal(missing.code, 1)
      assert.equal(missing.stderr, 'error: configmaps "nope" not found\n')
      const unparsable = await orch(['patch', 'cm', 'p', '-p', '{"data":'])
      assert.equal(unparsable.code, 1)
      assert.match(unparsable.stderr, /^error: unable to parse "\{"data":": /)
      assert.equal(lines(unparsable.stderr).length, 1)
      const notList = await orch(['patch', 'cm', 'p', '--type', 'json', '-p', '{"data":{}}'])
      assert.equal(notList.code, 1)
      assert.match(notList.stderr, /^error: a JSON patch \(--type json\) is a list of operations/)
      const noSubresource = await orch(['patch', 'cm', 'p', '--subresource', 'status', '-p', '{}'])
      assert.equal(noSubresource.code, 1)
      assert.equal(noSubresource.stderr, 'error: configmaps has no status subresource\n')
    })
  })

  describe('warnings', () => {
    it('every Warning header goes to stderr as "Warning: <text>"; stdout is unchanged', async () => {
      const manifest = configMap('warned', {k: 'v'}, {foo: 1, bar: {baz: 2}})
      const result = await orch(['apply', '-f', '-', '--server-side=false'], manifest)
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/warned created\n')
      assert.deepEqual(lines(result.stderr).sort(), ['Warning: unknown field "bar"', 'Warning: unknown field "foo"'])
    })

    it('a patch with an unknown field is warned about too', async () => {
      const result = await orch(['patch', 'cm', 'warned', '--type', 'strategic', '-p', '{"data":{"k":"w"},"nonsense":true}'])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'configmap/warned patched\n')
      assert.equal(result.stderr, 'Warning: unknown field "nonsense"\n')
    })
  })

  describe('--wire and --raw', () => {
    before(async () => {
      const result = await orch(['apply', '-f', '-'], configMap('wired', {b: '2', a: '1'}, {metadata: {name: 'wired', labels: {tier: 'web'}, annotations: {note: 'x'}}}))
      assert.equal(result.code, 0, result.stderr)
      const other = await orch(['apply', '-f', '-', '--field-manager', 'other'], configMap('wired-too', {z: '26'}, {metadata: {name: 'wired-too', labels: {tier: 'db'}}}))
      assert.equal(other.code, 0, other.stderr)
    })

    it('--wire protobuf and --wire cbor print the same -o json and -o yaml as JSON, for one object and for a list', async () => {
      for (const args of [['get', 'cm', 'wired', '-o', 'json'], ['get', 'cm', 'wired', '-o', 'yaml'], ['get', 'cm', '-o', 'json', '-l', 'tier'], ['get', 'cm', '-o', 'yaml', '-l', 'tier=web']]) {
        const json = await orch(args)
        assert.equal(json.code, 0, json.stderr)
        for (const wire of ['protobuf', 'cbor']) {
          const other = await orch([...args, '--wire', wire])
          assert.equal(other.code, 0, other.stderr)
          assert.equal(other.stdout, json.stdout, `${args.join(' ')} --wire ${wire}`)
        }
      }
    })

    it('--raw PATH prints the body; with --wire protobuf the decoded object as JSON', async () => {
      const path = cmPath('wired')
      const raw = await orch(['get', '--raw', path])
      assert.equal(raw.code, 0, raw.stderr)
      const fromJson = JSON.parse(raw.stdout)
      assert.equal(fromJson.metadata.name, 'wired')
      const decoded = await orch(['get', '--raw', path, '--wire', 'protobuf'])
      assert.equal(decoded.code, 0, decoded.stderr)
      assert.deepEqual(JSON.parse(decoded.stdout), fromJson)
      const missing = await orch(['get', '--raw', cmPath('nope'), '--wire', 'protobuf'])
      assert.equal(missing.code, 1)
      assert.equal(missing.stderr, 'error: configmaps "nope" not found\n')
      const withKind = await orch(['get', 'cm', '--raw', path])
      assert.equal(withKind.code, 2)
      assert.equal(withKind.stderr, 'error: arguments may not be passed when --raw is specified\n')
    })

    it('orch watch --wire protobuf and --wire cbor decode the watch stream: ADDED, MODIFIED, DELETED', async () => {
      const watches = ['protobuf', 'cbor'].map((wire) => {
        const stream = spawnOrch(['watch', 'configmaps', '-l', 'watched=yes', '--wire', wire, ...serverFlags(server)])
        streams.push(stream)
        return stream
      })
      const marker = await orch(['apply', '-f', '-'], configMap('watched', {n: '1'}, {metadata: {name: 'watched', labels: {watched: 'yes'}}}))
      assert.equal(marker.code, 0, marker.stderr)
      for (const w of watches) await w.waitFor(/^ADDED configmap\/watched \d+$/)
      const patched = await orch(['patch', 'cm', 'watched', '-p', '{"data":{"n":"2"}}', '--wire', 'protobuf'])
      assert.equal(patched.code, 0, patched.stderr)
      const deleted = await orch(['delete', 'cm', 'watched', '--wire', 'cbor'])
      assert.equal(deleted.stdout, 'configmap "watched" deleted\n', deleted.stderr)
      for (const w of watches) {
        await w.waitFor(/^DELETED configmap\/watched \d+$/)
        assert.deepEqual(
          w.lines.map((l) => l.split(' ').slice(0, 2).join(' ')),
          ['ADDED configmap/watched', 'MODIFIED configmap/watched', 'DELETED configmap/watched'],
        )
        assert.equal(w.stderr(), '')
      }
    })
  })
})
