// Server + agent on real containerd (started by the test with its own config and a hand-built busybox
// image): a pod assigned to the agent runs as a runc container and turns Running+Ready; a checkpoint
// through the server's proxy is a 500 carrying containerd's UNIMPLEMENTED message; the agent's own
// endpoint answers 401 without credentials and 404 for an unknown container; deletion stops it.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {request} from 'node:https'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient} from '../../src/agent/cri/client.js'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {containerdMissing, startContainerd, type RunningContainerd} from '../support/containerd.js'
import {call, openWatch, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const missing = containerdMissing()
if (missing) console.log(`# skipping the agent on containerd: ${missing}`)

function agentRequest(port: number, method: string, path: string, options: {cert?: string; key?: string} = {}): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, method, path, rejectUnauthorized: false, ...options}, (res) => {
      let body = ''
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('orch agent on containerd', {skip: missing ?? false, timeout: 240_000}, () => {
  let containerd: RunningContainerd
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown) => Promise<HttpResult>
  let config: string

  before(async () => {
    containerd = await startContainerd()
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    api = (method, path, body) => call(server.url, method, path, body)
    // the endpoint goes in a configuration file, not on the command line: the containerd harness
    // kills whatever names its socket in its argv (the shims) when containerd stops
    config = join(tempDir('orch-agent-containerd-'), 'agent.yaml')
    writeFileSync(config, `apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\ncontainerRuntimeEndpoint: ${containerd.endpoint}\nnodeStatusUpdateFrequency: 1s\n`)
    agent = await startAgent({server, args: ['--config', config]})
  })
  after(async () => {
    if (agent) {
      await api('DELETE', '/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0').catch(() => undefined)
      await agent.cleanup()
    }
    await server?.cleanup()
    await containerd?.stop()
  })

  async function waitForPod(name: string, check: (pod: any) => boolean, timeoutMs = 90_000): Promise<any> {
    const list = (await api('GET', '/api/v1/namespaces/default/pods')).json
    const found = list.items.find((p: any) => p.metadata.name === name)
    if (found && check(found)) return found
    if (!found && check(undefined)) return undefined
    const stream = await openWatch(server.url, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`pod ${name} never matched:\n${agent.logs().slice(-3000)}\n${containerd.log().slice(-2000)}`)), timeoutMs)))
    try {
      for (let n = 1; ; n++) {
        const event = (await Promise.race([stream.waitFor(n), expired]))[n - 1]
        if (check(event.type === 'DELETED' ? undefined : event.object)) return event.object
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  it('the Node reports containerd as its runtime', async () => {
    const node = (await api('GET', `/api/v1/nodes/${agent.nodeName}`)).json
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\//)
  })

  it('a pod assigned to the agent runs as a runc container and reaches Running+Ready', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web'},
      spec: {
        nodeName: agent.nodeName,
        hostNetwork: true,
        terminationGracePeriodSeconds: 2,
        containers: [{name: 'app', image: containerd.image, imagePullPolicy: 'Never', command: ['sleep', '3600']}],
      },
    })
    assert.equal(created.status, 201, created.text)
    const pod = await waitForPod('web', (p) => p?.status?.phase === 'Running' && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
    assert.match(pod.status.containerStatuses[0].containerID, /^containerd:\/\//)
    assert.ok(pod.status.containerStatuses[0].state.running)
  })

  it('the app container has its own PID namespace: its command is PID 1, the sandbox process is not seen', async () => {
    const cri = new CriClient({endpoint: containerd.endpoint, timeoutMs: 30_000})
    try {
      const [app] = await cri.listContainers({labelSelector: {'io.orch.pod.name': 'web', 'io.orch.container.name': 'app'}, state: {state: 'CONTAINER_RUNNING'}})
      assert.ok(app, 'the app container runs')
      const pid1 = await cri.execSync(app.id, ['sh', '-c', '/bin/busybox tr "\\0" " " < /proc/1/cmdline; echo; set -- /proc/[0-9]*; echo $#'], 10)
      assert.equal(pid1.exitCode, 0, Buffer.from(pid1.stderr).toString())
      const [cmdline, count] = Buffer.from(pid1.stdout).toString().trim().split('\n')
      assert.equal(cmdline.trim(), 'sleep 3600', 'PID 1 is the container command')
      // PID 1 and this shell; the sandbox's process would be a third
      assert.equal(count, '2', 'only the container processes are seen')
    } finally {
      cri.close()
    }
  })

  it('a checkpoint on containerd (CheckpointContainer UNIMPLEMENTED) is a 500 with the runtime message; unknown container 404; no credentials 401', async () => {
    const result = await runOrch(['checkpoint', 'web', '-c', 'app'], {env: server.cliEnv, timeoutMs: 60_000})
    assert.equal(result.code, 1)
    assert.match(result.stderr, /^error: .*(unimplemented|not implemented)/i)
    const anonymous = await agentRequest(agent.port, 'POST', '/checkpoint/default/web/app')
    assert.equal(anonymous.status, 401, anonymous.body)
    const admin = {cert: server.cert, key: server.key}
    const unknown = await agentRequest(agent.port, 'POST', '/checkpoint/default/web/nope', admin)
    assert.equal(unknown.status, 404, unknown.body)
    const failed = await agentRequest(agent.port, 'POST', '/checkpoint/default/web/app', admin)
    assert.equal(failed.status, 500, failed.body)
    assert.match(JSON.parse(failed.body).message, /unimplemented|not implemented/i)
  })

  it('deleting the pod stops the container and the pod goes from the API', async () => {
    assert.equal((await api('DELETE', '/api/v1/namespaces/default/pods/web')).status, 200)
    await waitForPod('web', (p) => p === undefined, 60_000)
  })

  it('After an agent restart on containerd, a Succeeded restartPolicy Never pod is not synced to run again: no SandboxChanged, no new sandbox, the same container', async () => {
    const created = await api('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'once'},
      spec: {nodeName: agent.nodeName, hostNetwork: true, restartPolicy: 'Never', terminationGracePeriodSeconds: 2, containers: [{name: 'app', image: containerd.image, imagePullPolicy: 'Never', command: ['sleep', '0']}]},
    })
    assert.equal(created.status, 201, created.text)
    const done = await waitForPod('once', (p) => p?.status?.phase === 'Succeeded')
    const cri = new CriClient({endpoint: containerd.endpoint, timeoutMs: 10_000})
    try {
      const sandboxes = async (): Promise<string[]> => (await cri.listPodSandbox({labelSelector: {'io.orch.pod.uid': created.json.metadata.uid}})).map((s) => s.id).sort()
      const before = await sandboxes()
      await agent.stop()
      agent = await startAgent({rootDir: agent.rootDir, nodeName: agent.nodeName, server, args: ['--config', config]})
      // a pod created after the restart runs: the restarted agent has synced the pods bound to it
      await api('POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: 'later'},
        spec: {nodeName: agent.nodeName, hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [{name: 'app', image: containerd.image, imagePullPolicy: 'Never', command: ['sleep', '3600']}]},
      })
      await waitForPod('later', (p) => p?.status?.phase === 'Running')
      assert.doesNotMatch(agent.logs(), /started pod sandbox.*pod=default\/once\b/)
      assert.deepEqual(await sandboxes(), before, 'no new sandbox')
      const events = (await api('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent('involvedObject.name=once')}`)).json.items
      assert.deepEqual(events.filter((e: any) => e.reason === 'SandboxChanged'), [])
      const now = (await api('GET', '/api/v1/namespaces/default/pods/once')).json
      assert.equal(now.status.phase, 'Succeeded')
      assert.equal(now.status.containerStatuses[0].containerID, done.status.containerStatuses[0].containerID)
      await api('DELETE', '/api/v1/namespaces/default/pods/later?gracePeriodSeconds=0')
    } finally {
      cri.close()
    }
  })

  it('a crashed runtime is reported in the Ready condition, not by exiting', async () => {
    await containerd.stop()
    const list = (await api('GET', '/api/v1/nodes')).json
    const ready = (node: any) => node?.status?.conditions?.find((c: any) => c.type === 'Ready')
    let node = list.items.find((n: any) => n.metadata.name === agent.nodeName)
    if (ready(node)?.status !== 'False') {
      const stream = await openWatch(server.url, `/api/v1/nodes?watch=1&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=metadata.name%3D${agent.nodeName}`)
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Ready never turned False:\n${agent.logs().slice(-4000)}`)), 60_000)))
      try {
        for (let n = 1; ready(node)?.status !== 'False'; n++) node = (await Promise.race([stream.waitFor(n), expired]))[n - 1].object
      } finally {
        clearTimeout(timer)
        stream.close()
      }
    }
    assert.equal(ready(node).reason, 'AgentNotReady')
    assert.match(ready(node).message, /container runtime is down/)
    assert.equal(agent.child.exitCode, null, 'the agent is still running')
  })
})
