// The agent configuration: --config, --config-dir drop-ins merged by the seed's table, flags over
// files, --print-config, and one-line errors naming the file for bad input.
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {goDuration} from '../../src/machinery/duration.js'
import {AgentConfigError, applyFlagOverrides, loadAgentConfiguration, parseAgentConfiguration, printAgentConfiguration, validateAgentConfiguration} from '../../src/agent/config/load.js'
import {settingsFrom} from '../../src/cli/agent.js'
import {runOrch} from '../support/server.js'

const HEAD = 'apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\n'
const root = mkdtempSync(join(tmpdir(), 'orch-agent-config-'))
after(() => rmSync(root, {recursive: true, force: true}))
let counter = 0

/** A main file and drop-ins (name -> body without the header), in a fresh directory. */
function setup(main: string, dropIns: Record<string, string> = {}): {configFile: string; configDir: string} {
  const dir = join(root, `case-${counter++}`)
  mkdirSync(join(dir, 'conf.d'), {recursive: true})
  writeFileSync(join(dir, 'main.yaml'), HEAD + main)
  for (const [name, body] of Object.entries(dropIns)) writeFileSync(join(dir, 'conf.d', name), HEAD + body)
  return {configFile: join(dir, 'main.yaml'), configDir: join(dir, 'conf.d')}
}

describe('agent configuration directory merge', () => {
  it('Scalar field, or scalar inside an embedded structure: overridden individually; unmentioned fields keep the main value', () => {
    const {config} = loadAgentConfiguration(
      setup('port: 10250\naddress: 10.0.0.1\nauthorization:\n  mode: Webhook\n  webhook:\n    cacheAuthorizedTTL: 1m\n    cacheUnauthorizedTTL: 20s\nnftables:\n  skipKernelVersionCheck: false\n', {
        '10-a.conf': 'port: 10251\nauthorization:\n  webhook:\n    cacheUnauthorizedTTL: 45s\nnftables:\n  skipKernelVersionCheck: true\n',
      }),
    )
    assert.equal(config.port, 10251)
    assert.equal(config.address, '10.0.0.1')
    assert.equal(config.authorization.mode, 'Webhook')
    assert.equal(config.authorization.webhook.cacheAuthorizedTTL, '1m0s')
    assert.equal(config.authorization.webhook.cacheUnauthorizedTTL, '45s')
    assert.equal(config.nftables.skipKernelVersionCheck, true)
  })

  it('List (slice): the whole list is replaced by the overriding list', () => {
    const {config} = loadAgentConfiguration(setup('clusterDNS: [10.0.0.10, 10.0.0.11]\n', {'10-dns.conf': 'clusterDNS: [10.0.0.99]\n'}))
    assert.deepEqual(config.clusterDNS, ['10.0.0.99'])
    const kept = loadAgentConfiguration(setup('clusterDNS: [10.0.0.10, 10.0.0.11]\n', {'10-other.conf': 'port: 1\n'})).config
    assert.deepEqual(kept.clusterDNS, ['10.0.0.10', '10.0.0.11'])
  })

  it('Map with scalar values (for example `featureGates`): entries overridden or added per key; unmentioned keys kept', () => {
    const {config} = loadAgentConfiguration(setup('featureGates:\n  A: true\n  B: false\n', {'10-gates.conf': 'featureGates:\n  B: true\n  C: true\n'}))
    assert.deepEqual(config.featureGates, {A: true, B: true, C: true})
  })

  it('Map of string to list of strings (for example `staticPodURLHeader`): per key the whole list is replaced; keys not mentioned are kept', () => {
    const {config} = loadAgentConfiguration(
      setup('staticPodURLHeader:\n  X-A: ["a: 1", "a: 2"]\n  X-B: ["b: 1"]\n', {'10-h.conf': 'staticPodURLHeader:\n  X-A: ["a: 9"]\n'}),
    )
    assert.deepEqual(config.staticPodURLHeader, {'X-A': ['a: 9'], 'X-B': ['b: 1']})
  })

  it('drop-ins apply in lexical file-name order (the later wins); only *.conf files are read', () => {
    const paths = setup('port: 1\n', {'20-b.conf': 'port: 20\n', '10-a.conf': 'port: 10\n', '30-c.yaml': 'port: 30\n'})
    const {config, sources} = loadAgentConfiguration(paths)
    assert.equal(config.port, 20)
    assert.deepEqual(sources.map((s) => s.split('/').pop()), ['main.yaml', '10-a.conf', '20-b.conf'])
  })

  it('drop-ins in subdirectories are read too, in the order of the kubelet\'s filepath.WalkDir: each directory\'s names in byte order, a subdirectory where its name sorts; `.conf` files only', () => {
    const paths = setup('port: 1\n', {'10-a.conf': 'port: 10\n', '30-c.conf': 'port: 30\n'})
    mkdirSync(join(paths.configDir, '20-sub.d', 'deeper'), {recursive: true})
    writeFileSync(join(paths.configDir, '20-sub.d', '50-x.conf'), HEAD + 'port: 50\nclusterDomain: sub\n')
    writeFileSync(join(paths.configDir, '20-sub.d', 'deeper', '01.conf'), HEAD + 'port: 1\n')
    writeFileSync(join(paths.configDir, '20-sub.d', 'ignored.yaml'), HEAD + 'port: 99\n')
    mkdirSync(join(paths.configDir, '40-dir.conf'))
    writeFileSync(join(paths.configDir, '40-dir.conf', 'z.conf'), HEAD + 'port: 40\n')
    const {config, sources} = loadAgentConfiguration(paths)
    assert.deepEqual(
      sources.slice(1).map((s) => s.slice(paths.configDir.length + 1)),
      ['10-a.conf', '20-sub.d/50-x.conf', '20-sub.d/deeper/01.conf', '30-c.conf', '40-dir.conf/z.conf'],
    )
    assert.equal(config.port, 40)
    assert.equal(config.clusterDomain, 'sub')
    // a name that is a prefix of another sorts first, whatever follows it: "a" before "a-b.conf"
    const order = setup('port: 1\n', {'a-b.conf': 'port: 2\n'})
    mkdirSync(join(order.configDir, 'a'))
    writeFileSync(join(order.configDir, 'a', 'x.conf'), HEAD + 'port: 3\n')
    assert.equal(loadAgentConfiguration(order).config.port, 2)
  })

  it('drop-ins are merge patches (the kubelet\'s jsonpatch.MergePatch): a null removes what earlier drop-ins set, so the main file\'s value (or the default) holds', () => {
    const {config} = loadAgentConfiguration(
      setup('port: 7\nfeatureGates: {ContainerCheckpoint: false}\nclusterDNS: [10.0.0.10]\n', {
        '10-a.conf': 'port: 8\naddress: 10.1.1.1\nfeatureGates: {ContainerCheckpoint: true, PodsAPI: true}\nclusterDNS: [10.0.0.99]\nauthorization: {webhook: {cacheAuthorizedTTL: 1m}}\n',
        '20-b.conf': 'port: null\naddress: null\nfeatureGates: {ContainerCheckpoint: null, PodsAPI: null}\nclusterDNS: null\nauthorization: {webhook: {cacheAuthorizedTTL: null}}\nstaticPodURLHeader: {X-A: null}\n',
      }),
    )
    assert.equal(config.port, 7)
    assert.equal(config.address, '0.0.0.0')
    assert.deepEqual(config.featureGates, {ContainerCheckpoint: false})
    assert.deepEqual(config.clusterDNS, ['10.0.0.10'])
    assert.equal(config.authorization.webhook.cacheAuthorizedTTL, '5m0s')
    // a later drop-in may set the key again
    const again = loadAgentConfiguration(setup('port: 7\n', {'10.conf': 'featureGates: {PodsAPI: true}\n', '20.conf': 'featureGates: {PodsAPI: null}\n', '30.conf': 'featureGates: {PodsAPI: true}\n'}))
    assert.deepEqual(again.config.featureGates, {PodsAPI: true})
  })

  it('in the main file a null field is unset (defaulted) and a null map entry is its zero value, as Go decodes them', () => {
    const {config} = loadAgentConfiguration(setup('port: null\nfeatureGates: {ContainerCheckpoint: null}\nnodeLabels: {a: null}\n'))
    assert.equal(config.port, 10250)
    assert.deepEqual(config.featureGates, {ContainerCheckpoint: false})
    assert.deepEqual(config.nodeLabels, {a: ''})
  })

  it('fields nobody sets take the defaults (Kubernetes values renamed)', () => {
    const {config} = loadAgentConfiguration({})
    assert.equal(config.port, 10250)
    assert.equal(config.authorization.mode, 'Webhook')
    assert.equal(config.authorization.webhook.cacheAuthorizedTTL, '5m0s')
    assert.equal(config.authorization.webhook.cacheUnauthorizedTTL, '30s')
    assert.equal(config.nodeStatusReportFrequency, '5m0s')
    assert.equal(config.staticPodPath, '/etc/orch/manifests')
    assert.equal(config.failSwapOn, true)
    assert.equal(config.memorySwap.swapBehavior, 'NoSwap')
    assert.equal(config.containerRuntimeEndpoint, '')
  })

  it('flags win over files', () => {
    const {config} = loadAgentConfiguration(setup('port: 1\nfeatureGates: {A: true}\n', {'10.conf': 'port: 2\n'}))
    const merged = applyFlagOverrides(config, {port: 3, featureGates: {B: true}})
    assert.equal(merged.port, 3)
    assert.deepEqual(merged.featureGates, {A: true, B: true})
  })

  it('`serializeImagePulls` reaches the agent: true by default, false from a drop-in; syncFrequency too', () => {
    const flags = {'root-dir': join(root, 'agent'), 'lock-file': '', 'relist-period': '1s', 'print-config': false, v: 0, 'hostname-override': 'n'}
    assert.equal(settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0').serializeImagePulls, true)
    const {config} = loadAgentConfiguration(setup('serializeImagePulls: true\n', {'10-pulls.conf': 'serializeImagePulls: false\nsyncFrequency: 3m\n'}))
    const settings = settingsFrom(config, flags, '0.1.0')
    assert.equal(settings.serializeImagePulls, false)
    assert.equal(settings.syncFrequencyMs, 180_000)
  })

  it('durations print in Go form and the printed configuration loads back to the same', () => {
    assert.deepEqual(['0s', '200ms', '30s', '5m0s', '1h0m0s', '1.5s', '1h30m0s'], [0, 200, 30_000, 300_000, 3_600_000, 1500, 5_400_000].map(goDuration))
    const {config} = loadAgentConfiguration(setup('clusterDNS: [1.1.1.1]\nfeatureGates: {PodsAPI: true}\nregisterWithTaints:\n- {key: k, value: v, effect: NoSchedule}\n'))
    const printed = printAgentConfiguration(config)
    assert.match(printed, /^apiVersion: agent\.config\.orch\.io\/v1beta1\nkind: AgentConfiguration\n/)
    assert.deepEqual(parseAgentConfiguration(printed, 'printed'), config)
  })
})

describe('agent configuration: bad input', () => {
  const cases: [string, string, RegExp][] = [
    ['an unknown field, with its full path', 'authorization:\n  webhook:\n    cacheTTL: 1m\n', /main\.yaml: unknown field "authorization\.webhook\.cacheTTL"$/],
    ['a wrong type', 'port: "10250"\n', /main\.yaml: port: must be an integer, not string "10250"$/],
    ['a port out of range', 'port: 70000\n', /main\.yaml: port: must be at most 65535, not 70000$/],
    ['a bad duration', 'nodeStatusUpdateFrequency: soon\n', /main\.yaml: nodeStatusUpdateFrequency: invalid duration "soon"/],
    ['a bad enum value', 'authorization:\n  mode: Sometimes\n', /main\.yaml: authorization\.mode: must be one of Webhook, AlwaysAllow/],
    ['a list where a scalar belongs', 'featureGates: [A]\n', /main\.yaml: featureGates: must be a map, not a list$/],
  ]
  for (const [what, body, message] of cases) {
    it(`${what}: one line naming the file`, () => {
      assert.throws(() => loadAgentConfiguration(setup(body)), (error: Error) => error instanceof AgentConfigError && message.test(error.message) && !error.message.includes('\n'))
    })
  }

  it('a wrong apiVersion or kind, or malformed YAML, in a drop-in names that drop-in', () => {
    const dir = setup('port: 1\n').configDir
    writeFileSync(join(dir, '10-bad.conf'), 'apiVersion: v1\nkind: ConfigMap\n')
    assert.throws(() => loadAgentConfiguration({configDir: dir}), /10-bad\.conf: apiVersion\/kind must be agent\.config\.orch\.io\/v1beta1\/AgentConfiguration, not v1\/ConfigMap/)
    writeFileSync(join(dir, '10-bad.conf'), HEAD + 'port: [\n')
    assert.throws(() => loadAgentConfiguration({configDir: dir}), (error: Error) => /10-bad\.conf: /.test(error.message) && !error.message.includes('\n'))
    assert.throws(() => loadAgentConfiguration({configFile: join(root, 'missing.yaml')}), /missing\.yaml: does not exist/)
  })
})

describe('agent configuration: defaulting and validation (the kubelet\'s SetDefaults_KubeletConfiguration and ValidateKubeletConfiguration)', () => {
  const ZEROS = 'syncFrequency: 0s\nfileCheckFrequency: 0s\nruntimeRequestTimeout: 0s\nnodeStatusUpdateFrequency: 0s\nnodeStatusReportFrequency: 0s\nauthentication: {webhook: {cacheTTL: 0s}}\nauthorization: {webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s}}\n'

  it('a duration the kubelet defaults with `== zeroDuration` is unset when 0s in the main file and takes its default', () => {
    const {config} = loadAgentConfiguration(setup(ZEROS))
    assert.equal(config.syncFrequency, '1m0s')
    assert.equal(config.fileCheckFrequency, '20s')
    assert.equal(config.runtimeRequestTimeout, '2m0s')
    assert.equal(config.nodeStatusUpdateFrequency, '10s')
    assert.equal(config.nodeStatusReportFrequency, '5m0s')
    assert.equal(config.authentication.webhook.cacheTTL, '2m0s')
    assert.equal(config.authorization.webhook.cacheAuthorizedTTL, '5m0s')
    assert.equal(config.authorization.webhook.cacheUnauthorizedTTL, '30s')
    assert.doesNotThrow(() => validateAgentConfiguration(config))
  })

  it('nodeStatusReportFrequency, unset or 0s, is nodeStatusUpdateFrequency when that is set explicitly, else 5m', () => {
    assert.equal(loadAgentConfiguration(setup('nodeStatusUpdateFrequency: 20s\n')).config.nodeStatusReportFrequency, '20s')
    assert.equal(loadAgentConfiguration(setup('nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 0s\n')).config.nodeStatusReportFrequency, '20s')
    assert.equal(loadAgentConfiguration(setup('nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 1m\n')).config.nodeStatusReportFrequency, '1m0s')
    assert.equal(loadAgentConfiguration(setup('nodeStatusUpdateFrequency: 0s\n')).config.nodeStatusReportFrequency, '5m0s')
    // a drop-in is not defaulted again: its update frequency does not move the report frequency
    assert.equal(loadAgentConfiguration(setup('port: 1\n', {'10.conf': 'nodeStatusUpdateFrequency: 20s\n'})).config.nodeStatusReportFrequency, '5m0s')
  })

  it('drop-ins and flags come after defaulting: a 0s from them reaches validation, "invalid configuration: <field> must be greater than 0"', () => {
    const {config} = loadAgentConfiguration(setup('port: 1\n', {'10.conf': 'runtimeRequestTimeout: 0s\n'}))
    assert.equal(config.runtimeRequestTimeout, '0s')
    assert.throws(() => validateAgentConfiguration(config), (error: Error) => error instanceof AgentConfigError && error.message === 'invalid configuration: runtimeRequestTimeout 0s must be greater than 0')
    const both = applyFlagOverrides(config, {nodeStatusUpdateFrequency: '0s'})
    assert.throws(
      () => validateAgentConfiguration(both),
      (error: Error) => error.message === '[invalid configuration: nodeStatusUpdateFrequency (--node-status-update-frequency) 0s must be greater than 0, invalid configuration: runtimeRequestTimeout 0s must be greater than 0]',
    )
  })

  it('a feature gate nobody knows is refused, "unrecognized feature gate: NoSuchGate", from the files or --feature-gates, one line and exit 1', async () => {
    const {config} = loadAgentConfiguration(setup('featureGates: {PodsAPI: true, NoSuchGate: true}\n'))
    assert.throws(() => validateAgentConfiguration(config), (error: Error) => error instanceof AgentConfigError && error.message === 'invalid configuration: unrecognized feature gate: NoSuchGate')
    assert.doesNotThrow(() => validateAgentConfiguration(loadAgentConfiguration(setup('featureGates: {PodsAPI: true, ContainerCheckpoint: false, SystemdWatchdog: true}\n')).config))
    const file = await runOrch(['agent', '--config', setup('featureGates: {NoSuchGate: true}\n').configFile, '--print-config'])
    assert.equal(file.code, 1)
    assert.equal(file.stderr, 'error: invalid configuration: unrecognized feature gate: NoSuchGate\n')
    const dropIn = await runOrch(['agent', '--config-dir', setup('port: 1\n', {'10.conf': 'featureGates: {NoSuchGate: false}\n'}).configDir, '--print-config'])
    assert.equal(dropIn.code, 1)
    assert.equal(dropIn.stderr, 'error: invalid configuration: unrecognized feature gate: NoSuchGate\n')
    const flag = await runOrch(['agent', '--feature-gates', 'PodsAPI=true,NoSuchGate=true', '--print-config'])
    assert.equal(flag.code, 1)
    assert.equal(flag.stderr, 'error: invalid argument "PodsAPI=true,NoSuchGate=true" for "--feature-gates" flag: unrecognized feature gate: NoSuchGate\n')
  })

  it('orch agent: zero durations in --config print as their defaults; --node-status-update-frequency 0s is one line and exit 1', async () => {
    const paths = setup(ZEROS)
    const result = await runOrch(['agent', '--config', paths.configFile, '--print-config'])
    assert.equal(result.code, 0, result.stderr)
    const printed = yaml.load(result.stdout) as any
    assert.deepEqual([printed.runtimeRequestTimeout, printed.syncFrequency, printed.fileCheckFrequency, printed.nodeStatusUpdateFrequency], ['2m0s', '1m0s', '20s', '10s'])
    const bad = await runOrch(['agent', '--config', paths.configFile, '--node-status-update-frequency', '0s', '--print-config'])
    assert.equal(bad.code, 1)
    assert.equal(bad.stderr, 'error: invalid configuration: nodeStatusUpdateFrequency (--node-status-update-frequency) 0s must be greater than 0\n')
  })
})

describe('orch agent --print-config', () => {
  it('prints the merged result as YAML and exits; a bad file is one line and exit 1', async () => {
    const paths = setup('port: 10250\nfeatureGates: {PodsAPI: true}\n', {'10-a.conf': 'featureGates: {ContainerCheckpoint: false}\nclusterDNS: [10.96.0.10]\n'})
    const result = await runOrch(['agent', '--config', paths.configFile, '--config-dir', paths.configDir, '--print-config', '--port', '9999'])
    assert.equal(result.code, 0, result.stderr)
    const printed = yaml.load(result.stdout) as any
    assert.equal(printed.kind, 'AgentConfiguration')
    assert.equal(printed.port, 9999)
    assert.deepEqual(printed.featureGates, {PodsAPI: true, ContainerCheckpoint: false})
    assert.deepEqual(printed.clusterDNS, ['10.96.0.10'])
    const bad = await runOrch(['agent', '--config', setup('bogus: 1\n').configFile, '--print-config'])
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^error: agent configuration \S+main\.yaml: unknown field "bogus"\n$/)
  })
})
