// $(VAR) expansion with the rules of Kubernetes' expansion package, the env a container gets from
// values, fieldRefs and ConfigMaps (envFrom with prefix, configMapKeyRef, optional, missing), command
// and args expanded against the final env, and configMap volumes written as the atomic writer lays
// them out (..data, per-key symlinks, modes, items, optional, refresh on change) — with a fake ConfigMap source.
import assert from 'node:assert/strict'
import {lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {refreshConfigMapVolumes} from '../../src/agent/api-configmaps.js'
import {configMapVolumeDirectory, type ConfigMapSource} from '../../src/agent/pods/configmap-volume.js'
import {ContainerConfigError, containerConfig, envFor, type ConfigContext} from '../../src/agent/pods/cri-config.js'
import {expand, mappingFor} from '../../src/agent/pods/expansion.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-configmap-env-'))
after(() => rmSync(dir, {recursive: true, force: true}))

class FakeConfigMaps implements ConfigMapSource {
  readonly maps = new Map<string, AnyObject>()
  gets = 0
  private version = 100
  set(name: string, data: Record<string, string>, extra: AnyObject = {}): void {
    this.maps.set(`ns/${name}`, {metadata: {name, namespace: 'ns', resourceVersion: String(++this.version)}, data, ...extra})
  }
  async get(namespace: string, name: string): Promise<AnyObject | undefined> {
    this.gets++
    return this.maps.get(`${namespace}/${name}`)
  }
}

const base = (configMaps?: ConfigMapSource): ConfigContext => ({
  rootDir: dir, nodeName: 'n', hostIP: '10.0.0.1', swapBehavior: 'NoSwap', memoryBytes: 0, swapBytes: 0, cgroupV2: true,
  swapControllerAvailable: false, seccompDefault: false, clusterDNS: [], clusterDomain: '', configMaps,
})

let uids = 0
const pod = (container: AnyObject, volumes: AnyObject[] = []): any => ({
  metadata: {name: 'p', namespace: 'ns', uid: `u${++uids}`},
  spec: {containers: [{name: 'app', image: 'busybox', ...container}], volumes},
})
const envOf = async (p: AnyObject, context: ConfigContext): Promise<Record<string, string>> =>
  Object.fromEntries((await envFor(p, p.spec.containers[0], context)).map((e) => [e.key, e.value]))
const configError = async (promise: Promise<unknown>): Promise<{reason: string; message: string}> => {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof ContainerConfigError, String(error))
    return {reason: error.reason, message: error.message}
  }
  assert.fail('no error')
}

describe('$(VAR) expansion (the expansion package rules)', () => {
  const vars = new Map([['A', 'a'], ['B', 'b'], ['EMPTY', '']])
  const cases: [string, string][] = [
    ['$(A)', 'a'],
    ['x$(A)y$(B)z', 'xaybz'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$a'],
    ['$$', '$'],
    ['$(A', '$(A'],
    ['$(UNDEFINED)', '$(UNDEFINED)'],
    ['$()', '$()'],
    ['$(EMPTY)x', 'x'],
    ['$A', '$A'],
    ['a$', 'a$'],
    ['$', '$'],
    ['$(A)$(A', 'a$(A'],
    ['$(A$(B))', '$(A$(B))'],
    ['$($(A))', '$($(A))'],
    ['', ''],
  ]
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} expands to ${JSON.stringify(want)}`, () => assert.equal(expand(input, mappingFor(vars)), want))
  }

  it('a replacement is not expanded again, and the first map that knows a name wins', () => {
    assert.equal(expand('$(X)', mappingFor(new Map([['X', '$(A)']]), vars)), '$(A)')
    assert.equal(expand('$(A)', mappingFor(new Map([['A', 'first']]), vars)), 'first')
  })
})

describe('env from values, ConfigMaps and $(VAR) references', () => {
  it('envFrom comes first (keys with the prefix, not filtered: RelaxedEnvironmentVariableValidation is on in 1.32), env after it wins; a value refers to what is defined before it', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {HOST: 'db', PORT: '5432', 'dotted.key': 'd', '1st': 'one'})
    const p = pod({
      envFrom: [{configMapRef: {name: 'cfg'}}, {prefix: 'P_', configMapRef: {name: 'cfg'}}],
      env: [
        {name: 'PORT', value: '6543'},
        {name: 'URL', value: 'pg://$(HOST):$(PORT)/$(LATER)'},
        {name: 'LATER', value: 'x'},
        {name: 'ESCAPED', value: '$$(HOST)'},
        {name: 'KEY', valueFrom: {configMapKeyRef: {name: 'cfg', key: 'HOST'}}},
        {name: 'NOT_EXPANDED', valueFrom: {fieldRef: {fieldPath: "metadata.annotations['a']"}}},
      ],
    })
    p.metadata.annotations = {a: '$(HOST)'}
    assert.deepEqual(await envOf(p, base(configMaps)), {
      HOST: 'db', PORT: '6543', 'dotted.key': 'd', '1st': 'one', P_HOST: 'db', P_PORT: '5432', 'P_dotted.key': 'd', P_1st: 'one',
      URL: 'pg://db:6543/$(LATER)', LATER: 'x', ESCAPED: '$(HOST)', KEY: 'db', NOT_EXPANDED: '$(HOST)',
    })
    assert.equal(configMaps.gets, 1, 'each ConfigMap is read once per container')
  })

  it('a missing ConfigMap or key that is not optional is CreateContainerConfigError with the kubelet message; optional ones are skipped', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {A: 'a'})
    const context = base(configMaps)
    assert.deepEqual(await configError(envFor(pod({envFrom: [{configMapRef: {name: 'gone'}}]}), pod({envFrom: [{configMapRef: {name: 'gone'}}]}).spec.containers[0], context)), {
      reason: 'CreateContainerConfigError', message: 'configmap "gone" not found',
    })
    const missingKey = pod({env: [{name: 'X', valueFrom: {configMapKeyRef: {name: 'cfg', key: 'k'}}}]})
    assert.deepEqual(await configError(envFor(missingKey, missingKey.spec.containers[0], context)), {reason: 'CreateContainerConfigError', message: "couldn't find key k in ConfigMap ns/cfg"})
    const missingMap = pod({env: [{name: 'X', valueFrom: {configMapKeyRef: {name: 'x', key: 'k'}}}]})
    assert.equal((await configError(envFor(missingMap, missingMap.spec.containers[0], context))).message, 'configmap "x" not found')
    const optional = pod({
      envFrom: [{configMapRef: {name: 'gone', optional: true}}, {configMapRef: {name: 'cfg'}}],
      env: [
        {name: 'A', valueFrom: {configMapKeyRef: {name: 'cfg', key: 'nope', optional: true}}},
        {name: 'B', valueFrom: {configMapKeyRef: {name: 'gone', key: 'k', optional: true}}},
      ],
    })
    // a skipped optional entry leaves what envFrom set for that name
    assert.deepEqual(await envOf(optional, context), {A: 'a'})
  })

  it('secretKeyRef and secretRef are CreateContainerConfigError (orch has no Secrets); standalone mode has no ConfigMaps', async () => {
    const secret = pod({env: [{name: 'S', valueFrom: {secretKeyRef: {name: 's', key: 'k'}}}]})
    assert.match((await configError(envFor(secret, secret.spec.containers[0], base(new FakeConfigMaps())))).message, /^env S: orch has no Secrets/)
    const secretRef = pod({envFrom: [{secretRef: {name: 's'}}]})
    assert.match((await configError(envFor(secretRef, secretRef.spec.containers[0], base(new FakeConfigMaps())))).message, /^envFrom secretRef "s": orch has no Secrets/)
    const standalone = pod({envFrom: [{configMapRef: {name: 'cfg'}}]})
    assert.deepEqual(await configError(envFor(standalone, standalone.spec.containers[0], base())), {
      reason: 'CreateContainerConfigError', message: "couldn't get configMap ns/cfg, no API client defined (standalone mode)",
    })
  })

  it('command and args are expanded against the final env (ExpandContainerCommandAndArgs)', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {GREETING: 'hello'})
    const p = pod({envFrom: [{configMapRef: {name: 'cfg'}}], env: [{name: 'WHO', value: 'world'}], command: ['echo', '$(GREETING)'], args: ['$(WHO)', '$$(WHO)', '$(NOPE)']})
    const config = await containerConfig(p, p.spec.containers[0], 'app', 0, base(configMaps))
    assert.deepEqual(config.command, ['echo', 'hello'])
    assert.deepEqual(config.args, ['world', '$(WHO)', '$(NOPE)'])
  })
})

describe('configMap volumes', () => {
  const volumePod = (source: AnyObject, mount: AnyObject = {}): any =>
    pod({volumeMounts: [{name: 'cfg', mountPath: '/etc/cfg', ...mount}]}, [{name: 'cfg', configMap: {name: 'cfg', ...source}}])

  it('every key is a file mode 0644 (defaultMode) reached through ..data, a symlink to a timestamped directory; the mount is read-only', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {'app.conf': 'a=1\n', other: 'o'}, {binaryData: {'bin.dat': Buffer.from([0, 1, 2]).toString('base64')}})
    const p = volumePod({})
    const [mount] = (await containerConfig(p, p.spec.containers[0], 'app', 0, base(configMaps))).mounts!
    const target = configMapVolumeDirectory(dir, p.metadata.uid, 'cfg')
    assert.deepEqual(mount, {containerPath: '/etc/cfg', hostPath: target, readonly: true})
    assert.equal(target, join(dir, 'pods', p.metadata.uid, 'volumes', 'configmap', 'cfg'))
    assert.match(readlinkSync(join(target, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\w+$/)
    assert.equal(readlinkSync(join(target, 'app.conf')), '..data/app.conf')
    assert.deepEqual(readdirSync(target).filter((n) => !n.startsWith('..')).sort(), ['app.conf', 'bin.dat', 'other'])
    assert.equal(readFileSync(join(target, 'app.conf'), 'utf8'), 'a=1\n')
    assert.deepEqual([...readFileSync(join(target, 'bin.dat'))], [0, 1, 2])
    assert.equal(statSync(join(target, 'app.conf')).mode & 0o7777, 0o644)
    assert.equal(statSync(join(target, readlinkSync(join(target, '..data')))).mode & 0o777, 0o755)
  })

  it('items put chosen keys at their paths with their own mode (else defaultMode); a missing key fails unless optional', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {a: 'A', b: 'B'})
    const p = volumePod({defaultMode: 0o600, items: [{key: 'a', path: 'sub/dir/a.txt'}, {key: 'b', path: 'b.sh', mode: 0o755}]})
    await containerConfig(p, p.spec.containers[0], 'app', 0, base(configMaps))
    const target = configMapVolumeDirectory(dir, p.metadata.uid, 'cfg')
    assert.deepEqual(readdirSync(target).filter((n) => !n.startsWith('..')).sort(), ['b.sh', 'sub'])
    assert.equal(readlinkSync(join(target, 'sub')), '..data/sub')
    assert.equal(readFileSync(join(target, 'sub/dir/a.txt'), 'utf8'), 'A')
    assert.equal(statSync(join(target, 'sub/dir/a.txt')).mode & 0o7777, 0o600)
    assert.equal(statSync(join(target, 'b.sh')).mode & 0o7777, 0o755)
    const missing = volumePod({items: [{key: 'nope', path: 'x'}]})
    assert.deepEqual(await configError(containerConfig(missing, missing.spec.containers[0], 'app', 0, base(configMaps))), {
      reason: 'ContainerCreating', message: 'MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: nope',
    })
    const optional = volumePod({optional: true, items: [{key: 'nope', path: 'x'}, {key: 'a', path: 'a'}]})
    await containerConfig(optional, optional.spec.containers[0], 'app', 0, base(configMaps))
    assert.deepEqual(readdirSync(configMapVolumeDirectory(dir, optional.metadata.uid, 'cfg')).filter((n) => !n.startsWith('..')), ['a'])
  })

  it('a missing ConfigMap: the container waits ContainerCreating with the FailedMount message; optional gives an empty volume; standalone is refused', async () => {
    const configMaps = new FakeConfigMaps()
    const p = volumePod({})
    assert.deepEqual(await configError(containerConfig(p, p.spec.containers[0], 'app', 0, base(configMaps))), {
      reason: 'ContainerCreating', message: 'MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found',
    })
    const optional = volumePod({optional: true})
    await containerConfig(optional, optional.spec.containers[0], 'app', 0, base(configMaps))
    assert.deepEqual(readdirSync(configMapVolumeDirectory(dir, optional.metadata.uid, 'cfg')).filter((n) => !n.startsWith('..')), [])
    assert.match((await configError(containerConfig(p, p.spec.containers[0], 'app', 0, base()))).message, /standalone mode/)
  })

  it('a changed ConfigMap is written as a new version (the old one removed, gone keys unlinked); an unchanged one is left alone; a deleted one keeps the files', async () => {
    const configMaps = new FakeConfigMaps()
    configMaps.set('cfg', {a: '1', b: '2'})
    const p = volumePod({})
    await containerConfig(p, p.spec.containers[0], 'app', 0, base(configMaps))
    const target = configMapVolumeDirectory(dir, p.metadata.uid, 'cfg')
    const first = readlinkSync(join(target, '..data'))
    const quiet = createLogger({write: () => undefined})
    const refresh = (): Promise<number> => refreshConfigMapVolumes({rootDir: dir, source: configMaps, pods: () => [p], logger: quiet})
    assert.equal(await refresh(), 0)
    assert.equal(readlinkSync(join(target, '..data')), first)
    configMaps.set('cfg', {a: 'changed'})
    assert.equal(await refresh(), 1)
    const second = readlinkSync(join(target, '..data'))
    assert.notEqual(second, first)
    assert.equal(readFileSync(join(target, 'a'), 'utf8'), 'changed')
    assert.deepEqual(readdirSync(target).sort(), ['..data', second, 'a'].sort())
    assert.ok(lstatSync(join(target, 'a')).isSymbolicLink())
    configMaps.maps.delete('ns/cfg')
    assert.equal(await refresh(), 0)
    assert.equal(readFileSync(join(target, 'a'), 'utf8'), 'changed')
    // volumes of pods not started yet are not written by the refresh
    const later = volumePod({})
    configMaps.set('cfg', {a: '1'})
    await refreshConfigMapVolumes({rootDir: dir, source: configMaps, pods: () => [later], logger: quiet})
    assert.throws(() => statSync(configMapVolumeDirectory(dir, later.metadata.uid, 'cfg')))
  })
})
