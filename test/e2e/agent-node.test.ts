// Server + agent (process runtime) as child processes: joining with a bootstrap token, the Node turning
// Ready with real host values, the Lease renewing, pods running as real processes (Running+Ready,
// restarts counted, deletion within the grace period), a StatefulSet of 3 coming up in order, and the
// node controller marking the node Unknown and tainting it once the agent stops.
import assert from 'node:assert/strict'
import {mkdirSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {connect as tlsConnect, type PeerCertificate} from 'node:tls'
import * as yaml from 'js-yaml'
import {readStat} from '../../src/agent/runtime/process/procfs.js'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const TIMEOUT = {timeout: 120_000}

describe('orch agent joined to orch server (process runtime)', TIMEOUT, () => {
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN, '--node-monitor-grace-period', '4s'])
    api = (method, path, body) => call(server.url, method, path, body)
    const configDir = tempDir('orch-agent-config-')
    const config = join(configDir, 'agent.yaml')
    writeFileSync(
      config,
      ['apiVersion: agent.config.orch.io/v1beta1', 'kind: AgentConfiguration', 'nodeLeaseDurationSeconds: 4', 'nodeStatusUpdateFrequency: 1s', 'authorization:', '  mode: Webhook', ''].join('\n'),
    )
    const manifests = join(configDir, 'manifests')
    mkdirSync(manifests)
    writeFileSync(join(manifests, 'static.yaml'), JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'static'}, spec: {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}]}}))
    const images = join(configDir, 'images')
    writeFileSync(images, '# the process runtime refuses these references\n!*/no-such-image*\n')
    agent = await startAgent({server, args: ['--config', config, '--pod-manifest-path', manifests, '--process-runtime-images', images]})
  })
  after(async () => {
    await agent?.cleanup()
    await server?.cleanup()
  })

  /** Lists then watches `path` until check(object) holds for the named object. */
  async function waitFor(collection: string, name: string, check: (object: any) => boolean, what: string, timeoutMs = 60_000): Promise<any> {
    const list = (await api('GET', collection)).json
    const found = list.items.find((o: any) => o.metadata.name === name)
    if (found && check(found)) return found
    if (!found && check(undefined)) return undefined
    const stream = await openWatch(server.url, `${collection}?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not seen within ${timeoutMs} ms\nagent log:\n${agent.logs().slice(-4000)}`)), timeoutMs)
    })
    try {
      for (let n = 1; ; n++) {
        const events = await Promise.race([stream.waitFor(n), expired])
        const event = events[n - 1]
        if (event.type !== 'DELETED' && check(event.object)) return event.object
        if (event.type === 'DELETED' && check(undefined)) return undefined
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  /** Lists then watches a collection until an item satisfies check. */
  async function waitForItem(collection: string, check: (object: any) => boolean, what: string, timeoutMs = 30_000): Promise<any> {
    const list = (await api('GET', collection)).json
    const found = list.items.find(check)
    if (found) return found
    const stream = await openWatch(server.url, `${collection}?watch=1&resourceVersion=${list.metadata.resourceVersion}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not seen`)), timeoutMs)))
    try {
      for (let n = 1; ; n++) {
        const event = (await Promise.race([stream.waitFor(n), expired]))[n - 1]
        if (event.type !== 'DELETED' && check(event.object)) return event.object
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  const condition = (object: any, type: string): string | undefined => object?.status?.conditions?.find((c: any) => c.type === type)?.status

  it('joining: the agent obtains a client certificate through a CSR (CN system:node:<name>, O system:nodes) and writes key and kubeconfig 0600', async () => {
    const csrs = (await api('GET', '/apis/certificates.orch.io/v1/certificatesigningrequests')).json.items
    const mine = csrs.find((c: any) => c.spec.signerName === 'orch.io/apiserver-client-agent' && c.spec.username === 'system:bootstrap:abcdef')
    assert.ok(mine, 'the bootstrap CSR exists')
    assert.ok(mine.status.certificate, 'and was issued')
    assert.equal(statSync(join(agent.rootDir, 'pki', 'agent-client-current.pem')).mode & 0o777, 0o600)
    assert.equal(statSync(join(agent.rootDir, 'agent.kubeconfig')).mode & 0o777, 0o600)
    assert.match(readFileSync(join(agent.rootDir, 'agent.kubeconfig'), 'utf8'), /agent-client-current\.pem/)
  })

  it('orch config bootstrap-kubeconfig prints the server, its CA and the bootstrap token for the agent', async () => {
    const result = await runOrch(['config', 'bootstrap-kubeconfig', '--token', BOOTSTRAP_TOKEN], {env: server.cliEnv})
    assert.equal(result.code, 0, result.stderr)
    const printed = yaml.load(result.stdout) as any
    assert.equal(printed.clusters[0].cluster.server, server.url)
    assert.equal(Buffer.from(printed.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), server.ca)
    assert.equal(printed.users[0].user.token, BOOTSTRAP_TOKEN)
    const bad = await runOrch(['config', 'bootstrap-kubeconfig', '--token', 'nope'], {env: server.cliEnv})
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^error: --token must be a bootstrap token/)
  })

  it('the agent asks for an orch.io/agent-serving certificate and, once an administrator approves it, serves with it without a restart', async () => {
    const serving = await waitForItem(
      '/apis/certificates.orch.io/v1/certificatesigningrequests',
      (c) => c.spec.signerName === 'orch.io/agent-serving' && c.spec.username === `system:node:${agent.nodeName}`,
      'the agent-serving CSR',
    )
    const before = await peerCertificate(agent.port)
    assert.notEqual(before.issuer.CN, 'orch-ca')
    const approved = await runOrch(['certificate', 'approve', serving.metadata.name], {env: server.cliEnv})
    assert.equal(approved.code, 0, approved.stderr)
    await agent.waitForLog(/serving with the issued agent-serving certificate/)
    const after = await peerCertificate(agent.port)
    assert.equal(after.subject.CN, `system:node:${agent.nodeName}`)
    assert.notEqual(after.fingerprint256, before.fingerprint256)
  })

  it('the Node turns Ready with addresses, capacity, nodeInfo from the host and daemonEndpoints.agentEndpoint.Port', async () => {
    const node = await waitFor('/api/v1/nodes', agent.nodeName, (n) => condition(n, 'Ready') === 'True', 'node Ready')
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) assert.equal(condition(node, type), 'False', type)
    assert.equal(node.status.daemonEndpoints.agentEndpoint.Port, agent.port)
    assert.deepEqual(node.status.addresses.map((a: any) => a.type).sort(), ['Hostname', 'InternalIP'])
    for (const field of ['architecture', 'bootID', 'containerRuntimeVersion', 'kernelVersion', 'agentVersion', 'machineID', 'operatingSystem', 'osImage', 'systemUUID']) {
      assert.ok(typeof node.status.nodeInfo[field] === 'string', field)
    }
    assert.match(node.status.nodeInfo.containerRuntimeVersion, /^orch-process:\/\//)
    assert.equal(node.status.nodeInfo.kernelVersion, readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim())
    assert.ok(Number(node.status.capacity.cpu) >= 1)
    assert.match(node.status.capacity.memory, /^\d+Ki$/)
    assert.ok(Array.isArray(node.status.runtimeHandlers))
  })

  it('orch get nodes shows the agent Ready with its version', async () => {
    const result = await runOrch(['get', 'nodes'], {env: server.cliEnv})
    const line = result.stdout.split('\n').find((l) => l.startsWith(agent.nodeName))
    assert.ok(line, result.stdout + result.stderr)
    assert.match(line!, /\bReady\b/)
    assert.match(line!, /v\d+\.\d+\.\d+/)
  })

  it('Lease heartbeat: the Lease in orch-node-lease is renewed (every nodeLeaseDurationSeconds / 4)', async () => {
    const path = `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases`
    const first = await waitFor(path, agent.nodeName, (l) => Boolean(l?.spec?.renewTime), 'lease')
    assert.equal(first.spec.holderIdentity, agent.nodeName)
    assert.equal(first.spec.leaseDurationSeconds, 4)
    assert.equal(first.metadata.ownerReferences?.[0]?.kind, 'Node')
    const renewed = await waitFor(path, agent.nodeName, (l) => l?.spec?.renewTime > first.spec.renewTime, 'lease renewal')
    assert.ok(Date.parse(renewed.spec.renewTime) > Date.parse(first.spec.renewTime))
  })

  it('a pod assigned to the node runs a real process, reaches Running+Ready, and deleting it stops the process within its grace period', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'sleeper'},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 2, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'trap "" TERM; exec sleep 6061']}]},
    })
    assert.equal(created.status, 201, created.text)
    const running = await waitFor('/api/v1/namespaces/default/pods', 'sleeper', (p) => p?.status?.phase === 'Running' && condition(p, 'Ready') === 'True', 'pod Running+Ready')
    for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) assert.equal(condition(running, type), 'True', type)
    assert.ok(running.status.podIP && running.status.startTime)
    const status = running.status.containerStatuses[0]
    assert.ok(status.state.running, JSON.stringify(status))
    assert.match(status.containerID, /^orch-process:\/\//)
    const pids = findProcesses('sleep 6061')
    assert.ok(pids.length > 0, 'a sleep process runs')
    const started = Date.now()
    assert.equal((await api('DELETE', '/api/v1/namespaces/default/pods/sleeper')).status, 200)
    await waitFor('/api/v1/namespaces/default/pods', 'sleeper', (p) => p === undefined, 'pod deleted', 30_000)
    const took = Date.now() - started
    assert.ok(took < 2000 + 5000, `the pod went within its grace period (+ slack): ${took} ms`)
    for (const pid of pids) assert.ok(readStat(pid) === null || readStat(pid)!.state === 'Z', `process ${pid} stopped`)
  })

  it('a container that exits is restarted (restartPolicy Always) and its restarts are counted', async () => {
    await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'crasher'},
      spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'sleep 0.3; exit 3']}]},
    })
    const restarted = await waitFor('/api/v1/namespaces/default/pods', 'crasher', (p) => (p?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 'restart counted')
    const status = restarted.status.containerStatuses[0]
    assert.equal(status.lastState.terminated.exitCode, 3)
    await api('DELETE', '/api/v1/namespaces/default/pods/crasher')
  })

  it('a static pod gets a mirror pod in the API (annotation orch.io/config.mirror) that shows its status', async () => {
    const name = `static-${agent.nodeName}`
    const mirror = await waitFor('/api/v1/namespaces/default/pods', name, (p) => p?.status?.phase === 'Running', 'mirror pod Running')
    assert.ok(mirror.metadata.annotations['orch.io/config.mirror'])
    assert.equal(mirror.spec.nodeName, agent.nodeName)
    assert.equal(mirror.metadata.ownerReferences?.[0]?.kind, 'Node')
    // deleting the mirror pod does not stop the static pod: the agent recreates the mirror
    const before = mirror.metadata.uid
    await api('DELETE', `/api/v1/namespaces/default/pods/${name}?gracePeriodSeconds=0`)
    const again = await waitFor('/api/v1/namespaces/default/pods', name, (p) => p !== undefined && p.metadata.uid !== before, 'mirror pod recreated')
    assert.ok(again.metadata.annotations['orch.io/config.mirror'])
  })

  it('a pod with an image the runtime lacks reports ErrImagePull/ImagePullBackOff; a missing Localhost seccomp profile ends in CreateContainerError', async () => {
    const create = (name: string, container: object) =>
      api('POST', '/api/v1/namespaces/default/pods', {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {nodeName: agent.nodeName, terminationGracePeriodSeconds: 1, containers: [{name: 'app', command: ['sleep', '600'], ...container}]}})
    await create('no-image', {image: 'example.com/no-such-image:1'})
    await create('no-profile', {image: 'busybox', securityContext: {seccompProfile: {type: 'Localhost', localhostProfile: 'profiles/absent.json'}}})
    const reason = (p: any) => p?.status?.containerStatuses?.[0]?.state?.waiting?.reason
    const pulled = await waitFor('/api/v1/namespaces/default/pods', 'no-image', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(reason(p)), 'image pull failure')
    assert.match(pulled.status.containerStatuses[0].state.waiting.message, /no-such-image/)
    assert.equal(pulled.status.phase, 'Pending')
    const refused = await waitFor('/api/v1/namespaces/default/pods', 'no-profile', (p) => reason(p) === 'CreateContainerError', 'CreateContainerError')
    assert.match(refused.status.containerStatuses[0].state.waiting.message, /absent\.json/)
    await api('DELETE', '/api/v1/namespaces/default/pods/no-image')
    await api('DELETE', '/api/v1/namespaces/default/pods/no-profile')
  })

  it('a StatefulSet of 3 on the agent comes up in order', async () => {
    await api('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {name: 'web'},
      spec: {
        replicas: 3,
        serviceName: 'web',
        selector: {matchLabels: {app: 'web'}},
        template: {metadata: {labels: {app: 'web'}}, spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'web', image: 'busybox', command: ['sleep', '600']}]}},
      },
    })
    const set = await waitFor('/apis/apps/v1/namespaces/default/statefulsets', 'web', (s) => s?.status?.readyReplicas === 3, 'statefulset ready', 90_000)
    assert.equal(set.status.readyReplicas, 3)
    const pods = (await api('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')).json.items
    const byName = new Map(pods.map((p: any) => [p.metadata.name, p]))
    const readyAt = (name: string): number => Date.parse((byName.get(name) as any).status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime)
    const createdAt = (name: string): number => Date.parse((byName.get(name) as any).metadata.creationTimestamp)
    // OrderedReady: web-1 is created only once web-0 is Ready, web-2 once web-1 is
    assert.ok(createdAt('web-1') >= readyAt('web-0'), 'web-1 after web-0 Ready')
    assert.ok(createdAt('web-2') >= readyAt('web-1'), 'web-2 after web-1 Ready')
    for (const pod of pods) assert.equal(pod.spec.nodeName, agent.nodeName)
    await api('DELETE', '/apis/apps/v1/namespaces/default/statefulsets/web')
  })

  it('stopping the agent makes the node controller mark the node Unknown and taint it unreachable', async () => {
    await agent.stop()
    const node = await waitFor('/api/v1/nodes', agent.nodeName, (n) => condition(n, 'Ready') === 'Unknown' && (n.spec.taints ?? []).some((t: any) => t.key === 'node.orch.io/unreachable'), 'node Unknown', 60_000)
    assert.equal(condition(node, 'Ready'), 'Unknown')
  })
})

/** The certificate the agent's HTTPS server presents. */
function peerCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({host: '127.0.0.1', port, rejectUnauthorized: false}, () => {
      resolve(socket.getPeerCertificate())
      socket.end()
    })
    socket.on('error', reject)
  })
}

/** pids of processes whose command line contains the text. */
function findProcesses(text: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ')
      if (cmdline.includes(text)) pids.push(Number(entry))
    } catch {
      // gone
    }
  }
  return pids
}
