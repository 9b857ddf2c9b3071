// Swap behaviour and seccomp choices as the agent applies them: the refusal to start with swap on,
// the swap limits of NoSwap and LimitedSwap in the CRI container configuration (the kubelet's rules:
// memory.swap.max on cgroup v2, memory+swap = memory on v1, swap only for Burstable pods), and the
// seed's seccomp precedence rules.
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

const context = (swapBehavior: 'NoSwap' | 'LimitedSwap', cgroups: {cgroupV2?: boolean; swapControllerAvailable?: boolean} = {}): ConfigContext => ({
  rootDir: dir,
  nodeName: 'n',
  hostIP: '10.0.0.1',
  swapBehavior,
  memoryBytes: 8 * GiB,
  swapBytes: 2 * GiB,
  cgroupV2: cgroups.cgroupV2 ?? true,
  swapControllerAvailable: cgroups.swapControllerAvailable ?? true,
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

  // the CRI resources of the first container of a pod (the kubelet's swap rules are per container)
  const resourcesOf = async (p: any, ctx: ConfigContext, index = 0): Promise<any> => (await containerConfig(p, p.spec.containers[index], 'app', 0, ctx)).linux!.resources!
  const container = (name: string, requests?: object, limits?: object): object => ({name, image: 'i', resources: {...(requests ? {requests} : {}), ...(limits ? {limits} : {})}})
  const burstable = (): any => pod([container('c', {memory: '1Gi'}, {memory: '2Gi'})])

  it('`NoSwap` (default): workloads running as pods cannot use swap — memory.swap.max 0 for every container, whatever its limits (cgroup v2)', async () => {
    const cases = {
      'no resources at all (BestEffort)': pod([container('c')]),
      'a memory request but no limit': pod([container('c', {memory: '1Gi'})]),
      'a cpu limit only': pod([container('c', undefined, {cpu: '1'})]),
      'request below limit (Burstable)': burstable(),
      'request = limit (Guaranteed)': pod([container('c', {memory: '1Gi', cpu: '1'}, {memory: '1Gi', cpu: '1'})]),
    }
    for (const [what, p] of Object.entries(cases)) {
      const resources = await resourcesOf(p, context('NoSwap'))
      assert.deepEqual(resources.unified, {'memory.swap.max': '0'}, what)
      assert.equal(resources.memorySwapLimitInBytes, undefined, what)
    }
    assert.equal((await resourcesOf(burstable(), context('NoSwap'))).memoryLimitInBytes, 2 * GiB)
  })

  it('`NoSwap` (default): workloads running as pods cannot use swap — on cgroup v1 the memory+swap limit is the memory limit, as the kubelet sets it', async () => {
    const v1 = context('NoSwap', {cgroupV2: false})
    const limited = await resourcesOf(burstable(), v1)
    assert.equal(limited.memorySwapLimitInBytes, 2 * GiB)
    assert.equal(limited.unified, undefined, 'no cgroup v2 files on a v1 host')
    // without a memory limit there is nothing v1 can cap (the kubelet writes 0, which the runtime ignores)
    assert.equal((await resourcesOf(pod([container('c')]), v1)).memorySwapLimitInBytes, 0)
    // LimitedSwap needs cgroup v2: on v1 every container is NoSwap
    assert.equal((await resourcesOf(burstable(), context('LimitedSwap', {cgroupV2: false}))).memorySwapLimitInBytes, 2 * GiB)
    // no swap controller: the kubelet leaves swap alone
    const none = await resourcesOf(burstable(), context('NoSwap', {swapControllerAvailable: false}))
    assert.equal(none.memorySwapLimitInBytes, undefined)
    assert.equal(none.unified, undefined)
  })

  it('`LimitedSwap`: workloads may use swap; the amount per pod is determined automatically — Burstable containers get request / node memory × node swap', async () => {
    // 1Gi of 8Gi node memory, 2Gi node swap: 256Mi of swap
    assert.deepEqual((await resourcesOf(burstable(), context('LimitedSwap'))).unified, {'memory.swap.max': String(GiB / 4)})
    assert.equal((await resourcesOf(burstable(), context('LimitedSwap'))).memorySwapLimitInBytes, undefined)
    // a Burstable pod whose second container has no memory limit: its request alone decides
    const mixed = pod([container('a', {cpu: '1'}, {cpu: '1'}), container('b', {memory: '512Mi'})])
    assert.deepEqual((await resourcesOf(mixed, context('LimitedSwap'), 1)).unified, {'memory.swap.max': String(GiB / 8)})
  })

  it('`LimitedSwap`: Guaranteed and BestEffort pods, critical pods and Burstable containers that ask no memory or request = limit get no swap', async () => {
    const ctx = context('LimitedSwap')
    const cases: Record<string, [any, number]> = {
      Guaranteed: [pod([container('c', {memory: '1Gi', cpu: '1'}, {memory: '1Gi', cpu: '1'})]), 0],
      'Guaranteed (status.qosClass recorded by the API server)': [{...burstable(), status: {qosClass: 'Guaranteed'}}, 0],
      BestEffort: [pod([container('c')]), 0],
      'Burstable, container without memory request or limit': [pod([container('a', {memory: '1Gi'}), container('b', {cpu: '1'})]), 1],
      'Burstable, container memory request = limit': [pod([container('c', {memory: '1Gi'}, {memory: '1Gi'})]), 0],
      'static pod (critical)': [{...burstable(), metadata: {name: 'p', namespace: 'ns', uid: 'u', annotations: {'orch.io/config.source': 'file'}}}, 0],
      'system-critical priority': [{...burstable(), spec: {...burstable().spec, priority: 2_000_000_000}}, 0],
      'request above node memory': [pod([container('c', {memory: '16Gi'}, {memory: '32Gi'})]), 0],
    }
    for (const [what, [p, index]] of Object.entries(cases)) {
      assert.deepEqual((await resourcesOf(p, ctx, index)).unified, {'memory.swap.max': '0'}, what)
    }
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
