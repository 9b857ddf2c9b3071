// Swap behaviour and seccomp choices as the agent applies them: the refusal to start with swap on,
// the swap limits of NoSwap and LimitedSwap in the CRI container configuration, and the seed's
// seccomp precedence rules.
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {Agent} from '../../src/agent/agent.js'
import {loadAgentConfiguration} from '../../src/agent/config/load.js'
import {containerConfig, seccompFor, type ConfigContext} from '../../src/agent/pods/cri-config.js'
import {settingsFrom} from '../../src/cli/agent.js'
import {createLogger} from '../../src/machinery/log.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-agent-swap-'))
after(() => rmSync(dir, {recursive: true, force: true}))
const GiB = 1024 ** 3

const context = (swapBehavior: 'NoSwap' | 'LimitedSwap'): ConfigContext => ({
  rootDir: dir,
  nodeName: 'n',
  hostIP: '10.0.0.1',
  swapBehavior,
  memoryBytes: 8 * GiB,
  swapBytes: 2 * GiB,
  seccompDefault: false,
  clusterDNS: [],
  clusterDomain: '',
})

const pod = (containers: object[], securityContext?: object): any => ({metadata: {name: 'p', namespace: 'ns', uid: 'u'}, spec: {containers, securityContext}})

describe('swap behaviour on nodes', () => {
  it('the agent refuses to start when swap is detected unless failSwapOn is false', async () => {
    const flags = {'root-dir': join(dir, 'root'), 'lock-file': join(dir, 'agent.lock'), 'relist-period': '1s', 'print-config': false, v: 0, 'hostname-override': 'n'}
    const settings = settingsFrom(loadAgentConfiguration({}).config, flags, '0.1.0')
    const quiet = createLogger({write: () => undefined})
    await assert.rejects(new Agent(settings, quiet, {}, {swapEnabled: () => true}).start(), /running with swap on is not supported: turn swap off, or set failSwapOn: false/)
    const allowed = new Agent({...settings, failSwapOn: false, registerNode: false, enableServer: false, staticPodPath: undefined}, quiet, {}, {swapEnabled: () => true})
    await allowed.start()
    await allowed.stop()
  })

  it('NoSwap (default): workloads running as pods cannot use swap (swap limit = memory limit)', () => {
    const config = containerConfig(pod([{name: 'c', image: 'i', resources: {limits: {memory: '2Gi'}, requests: {memory: '1Gi'}}}]), {name: 'c', image: 'i', resources: {limits: {memory: '2Gi'}, requests: {memory: '1Gi'}}}, 'app', 0, context('NoSwap'))
    assert.equal(config.linux!.resources!.memoryLimitInBytes, 2 * GiB)
    assert.equal(config.linux!.resources!.memorySwapLimitInBytes, 2 * GiB)
  })

  it('LimitedSwap: workloads may use swap; the amount per pod is determined automatically (request / node memory x swap)', () => {
    const spec = {name: 'c', image: 'i', resources: {limits: {memory: '2Gi'}, requests: {memory: '1Gi'}}}
    const config = containerConfig(pod([spec]), spec, 'app', 0, context('LimitedSwap'))
    assert.equal(config.linux!.resources!.memorySwapLimitInBytes, 2 * GiB + GiB / 4)
  })
})

describe('seccomp settings on pods and containers', () => {
  const ctx = context('NoSwap')
  it("A container without its own setting inherits the pod's; a container's own setting takes precedence", () => {
    const p = pod([], {seccompProfile: {type: 'RuntimeDefault'}})
    assert.deepEqual(seccompFor(p, {name: 'a'}, ctx), {profileType: 'RuntimeDefault'})
    assert.deepEqual(seccompFor(p, {name: 'b', securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: 'x/audit.json'}}}, ctx), {
      profileType: 'Localhost',
      localhostRef: join(dir, 'seccomp', 'x', 'audit.json'),
    })
  })

  it('A pod or container with `privileged: true` cannot have a profile and always runs `Unconfined`', () => {
    const p = pod([], {seccompProfile: {type: 'RuntimeDefault'}})
    assert.deepEqual(seccompFor(p, {name: 'a', securityContext: {privileged: true, seccompProfile: {type: 'Localhost', localhostProfile: 'a.json'}}}, ctx), {profileType: 'Unconfined'})
  })

  it('`Localhost` profiles are relative to {agent_root_dir}/seccomp: a path that leaves it is refused (CreateContainerError)', () => {
    assert.throws(() => seccompFor(pod([]), {name: 'a', securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: '../../etc/passwd'}}}, ctx), (e: any) => e.reason === 'CreateContainerError')
    assert.throws(() => seccompFor(pod([]), {name: 'a', securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: '/etc/x.json'}}}, ctx), (e: any) => e.reason === 'CreateContainerError')
  })

  it('no setting is Unconfined, or RuntimeDefault with seccompDefault', () => {
    assert.deepEqual(seccompFor(pod([]), {name: 'a'}, ctx), {profileType: 'Unconfined'})
    assert.deepEqual(seccompFor(pod([]), {name: 'a'}, {...ctx, seccompDefault: true}), {profileType: 'RuntimeDefault'})
  })
})
