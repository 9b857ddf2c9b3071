// `GET pods/{name}/log` (kubectl logs) end to end: a real `orch server` and `orch agent` on the process
// runtime; the server asks the pod's agent (`/containerLogs/...`, authorized as nodes/proxy) which reads
// the CRI log file. Lines, tailLines, timestamps, previous after a restart, follow until the container
// exits, the 400s (container choice, previous not found, waiting to start), 422 on PodLogOptions, 403
// without pods/log, and `orch logs`.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {request as httpsRequest} from 'node:https'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call, tlsOptions, waitForCollection, type HttpResult} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const TIMEOUT = {timeout: 120_000}
const PODS = '/api/v1/namespaces/default/pods'

describe('pods/log through the node agent (process runtime)', TIMEOUT, () => {
  let server: OrchServer
  let agent: RunningAgent
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const triggers = tempDir('orch-logs-triggers-')

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    const configDir = tempDir('orch-agent-config-')
    const config = join(configDir, 'agent.yaml')
    writeFileSync(config, ['apiVersion: agent.config.orch.io/v1beta1', 'kind: AgentConfiguration', 'nodeStatusUpdateFrequency: 1s', 'authorization:', '  mode: Webhook', ''].join('\n'))
    agent = await startAgent({server, args: ['--config', config]})
    await waitForCollection(server.url, '/api/v1/nodes', (nodes) => nodes.some((n) => n.metadata.name === agent.nodeName && n.status?.daemonEndpoints?.agentEndpoint?.Port), 'the node with its agent port')
  })
  after(async () => {
    await agent?.cleanup()
    await server?.cleanup()
  })

  async function createPod(name: string, spec: object): Promise<void> {
    const created = await api('POST', PODS, {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {terminationGracePeriodSeconds: 1, ...spec}})
    assert.equal(created.status, 201, created.text)
  }

  const podWhere = (name: string, check: (pod: any) => boolean, what: string) =>
    waitForCollection(server.url, PODS, (pods) => pods.find((p) => p.metadata.name === name && check(p)), what, 60_000)

  /** Polls the log until it contains `text` (the process may not have written it yet). */
  async function logContaining(path: string, text: string, timeoutMs = 20_000): Promise<HttpResult> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const answer = await api('GET', path)
      if (answer.status === 200 && answer.text.includes(text)) return answer
      if (Date.now() > deadline) throw new Error(`${path}: ${text} not seen; last answer ${answer.status} ${answer.text}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('GET pods/{name}/log returns what the container printed, as text/plain; tailLines and timestamps as the kubelet applies them', async () => {
    await createPod('printer', {nodeName: agent.nodeName, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; exec sleep 600']}]})
    await podWhere('printer', (p) => p.status?.containerStatuses?.[0]?.state?.running, 'printer running')
    const all = await logContaining(`${PODS}/printer/log`, 'three')
    assert.equal(all.text, 'one\ntwo\nthree\n')
    assert.match(String(all.headers['content-type']), /^text\/plain/)
    const tail = await api('GET', `${PODS}/printer/log?tailLines=2`)
    assert.equal(tail.text, 'two\nthree\n')
    const stamped = await api('GET', `${PODS}/printer/log?timestamps=true&limitBytes=200`)
    const lines = stamped.text.trimEnd().split('\n')
    assert.equal(lines.length, 3)
    for (const [i, line] of lines.entries()) assert.match(line, new RegExp(`^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z ${['one', 'two', 'three'][i]}$`))
    const limited = await api('GET', `${PODS}/printer/log?limitBytes=5`)
    assert.equal(limited.text, 'one\nt')
  })

  it('the options are validated (422 on PodLogOptions) and the container chosen as Kubernetes does (400s)', async () => {
    const negative = await api('GET', `${PODS}/printer/log?tailLines=-1`)
    assert.equal(negative.status, 422)
    assert.equal(negative.json.details.kind, 'PodLogOptions')
    assert.match(negative.json.message, /tailLines: Invalid value: -1: must be greater than or equal to 0/)
    const both = await api('GET', `${PODS}/printer/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z`)
    assert.equal(both.status, 422)
    const unknown = await api('GET', `${PODS}/printer/log?container=nope`)
    assert.equal(unknown.status, 400)
    assert.equal(unknown.json.message, 'container nope is not valid for pod printer')
    await createPod('pair', {nodeName: agent.nodeName, containers: ['a', 'b'].map((name) => ({name, image: 'busybox', command: ['sh', '-c', `echo from-${name}; exec sleep 600`]}))})
    const unnamed = await api('GET', `${PODS}/pair/log`)
    assert.equal(unnamed.status, 400)
    assert.equal(unnamed.json.message, 'a container name must be specified for pod pair, choose one of: [a b]')
    await podWhere('pair', (p) => p.status?.containerStatuses?.every((c: any) => c.state?.running), 'pair running')
    assert.equal((await logContaining(`${PODS}/pair/log?container=b`, 'from-b')).text, 'from-b\n')
    const previous = await api('GET', `${PODS}/printer/log?previous=true`)
    assert.equal(previous.status, 400)
    assert.equal(previous.json.message, 'previous terminated container "app" in pod "printer" not found')
    const missing = await api('GET', `${PODS}/nobody/log`)
    assert.equal(missing.status, 404)
  })

  it('a container waiting to start has no log yet (400 with its reason); an unscheduled pod an empty one', async () => {
    await createPod('waiting', {
      nodeName: agent.nodeName,
      containers: [{name: 'app', image: 'busybox', command: ['sleep', '600'], volumeMounts: [{name: 'cfg', mountPath: '/cfg'}]}],
      volumes: [{name: 'cfg', configMap: {name: 'does-not-exist'}}],
    })
    await podWhere('waiting', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating', 'waiting in ContainerCreating')
    const waiting = await api('GET', `${PODS}/waiting/log`)
    assert.equal(waiting.status, 400)
    assert.equal(waiting.json.message, 'container "app" in pod "waiting" is waiting to start: ContainerCreating')
    // Kubernetes' LogLocation gives no location for a pod without a node: an empty answer
    await createPod('unscheduled', {schedulingGates: [{name: 'hold'}], containers: [{name: 'app', image: 'busybox'}]})
    const unscheduled = await api('GET', `${PODS}/unscheduled/log`)
    assert.equal(unscheduled.status, 200)
    assert.equal(unscheduled.text, '')
  })

  it('previous reads the log of the instance before the last restart', async () => {
    await createPod('restarter', {nodeName: agent.nodeName, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'echo started-at-$(date +%s%N); sleep 0.3; exit 1']}]})
    const pod = await podWhere('restarter', (p) => p.status?.containerStatuses?.[0]?.lastState?.terminated?.containerID, 'a restart')
    const previous = await logContaining(`${PODS}/restarter/log?previous=true`, 'started-at-')
    assert.match(previous.text, /^started-at-\d+\n$/)
    assert.ok(pod.status.containerStatuses[0].restartCount >= 1)
  })

  it('follow streams a line printed later and ends when the container exits', async () => {
    const trigger = join(triggers, 'go')
    await createPod('follower', {
      nodeName: agent.nodeName,
      restartPolicy: 'Never',
      containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `echo first; while [ ! -f ${trigger} ]; do sleep 0.05; done; echo later; exit 0`]}],
    })
    await podWhere('follower', (p) => p.status?.containerStatuses?.[0]?.state?.running, 'follower running')
    await logContaining(`${PODS}/follower/log`, 'first')
    const {headers, ...tls} = tlsOptions(server.url)
    let received = ''
    let firstSeen: () => void = () => {}
    const sawFirst = new Promise<void>((resolve) => (firstSeen = resolve))
    const ended = new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${server.url}${PODS}/follower/log?follow=true`, {...tls, headers}, (res) => {
        res.on('data', (chunk) => {
          received += chunk
          if (received.includes('first')) firstSeen()
        })
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
    await sawFirst
    assert.equal(received, 'first\n', 'nothing more before the trigger')
    writeFileSync(trigger, '')
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`follow did not end; received ${JSON.stringify(received)}`)), 30_000).unref())
    assert.equal(await Promise.race([ended, deadline]), 200)
    assert.equal(received, 'first\nlater\n')
  })

  it('a user without pods/log is refused (403); one with it reads the log', async () => {
    const role = await api('POST', '/apis/rbac.orch.io/v1/namespaces/default/roles', {
      metadata: {name: 'pod-reader'},
      rules: [{apiGroups: [''], resources: ['pods'], verbs: ['get', 'list']}],
    })
    assert.equal(role.status, 201, role.text)
    const binding = await api('POST', '/apis/rbac.orch.io/v1/namespaces/default/rolebindings', {
      metadata: {name: 'jane-reads-pods'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: 'pod-reader'},
      subjects: [{kind: 'User', name: 'jane', apiGroup: 'rbac.orch.io'}],
    })
    assert.equal(binding.status, 201, binding.text)
    const asJane = {'Impersonate-User': 'jane'}
    assert.equal((await api('GET', `${PODS}/printer`, undefined, asJane)).status, 200)
    const refused = await api('GET', `${PODS}/printer/log`, undefined, asJane)
    assert.equal(refused.status, 403)
    assert.match(refused.json.message, /cannot get resource "pods\/log" in API group "" in the namespace "default"/)
    const grant = await api('PUT', '/apis/rbac.orch.io/v1/namespaces/default/roles/pod-reader', {
      metadata: {name: 'pod-reader'},
      rules: [{apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list']}],
    })
    assert.equal(grant.status, 200, grant.text)
    const deadline = Date.now() + 10_000
    let allowed = await api('GET', `${PODS}/printer/log`, undefined, asJane)
    while (allowed.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      allowed = await api('GET', `${PODS}/printer/log`, undefined, asJane)
    }
    assert.equal(allowed.text, 'one\ntwo\nthree\n')
  })

  it('discovery lists pods/log (kind Pod, verb get) and OpenAPI has readCoreV1NamespacedPodLog answering text', async () => {
    const resources = (await api('GET', '/api/v1')).json.resources
    assert.deepEqual(resources.find((r: any) => r.name === 'pods/log'), {name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get']})
    const openapi = (await api('GET', '/openapi/v3/api/v1')).json
    const read = openapi.paths['/api/v1/namespaces/{namespace}/pods/{name}/log'].get
    assert.equal(read.operationId, 'readCoreV1NamespacedPodLog')
    assert.deepEqual(read.responses['200'].content['text/plain'].schema, {type: 'string'})
    assert.ok(read.parameters.some((p: any) => p.name === 'tailLines'))
  })

  it('orch logs prints the log (-c, --tail, --timestamps, --previous) and one error line with exit 1', async () => {
    const printed = await runOrch(['logs', 'printer'], {env: server.cliEnv})
    assert.equal(printed.code, 0, printed.stderr)
    assert.equal(printed.stdout, 'one\ntwo\nthree\n')
    const tail = await runOrch(['logs', 'printer', '--tail', '1', '-n', 'default'], {env: server.cliEnv})
    assert.equal(tail.stdout, 'three\n')
    const stamped = await runOrch(['logs', 'printer', '--timestamps', '--since', '1h'], {env: server.cliEnv})
    assert.match(stamped.stdout, /^\d{4}-\d{2}-\d{2}T\S+Z one\n/)
    const named = await runOrch(['logs', 'pair', '-c', 'a'], {env: server.cliEnv})
    assert.equal(named.stdout, 'from-a\n')
    const previous = await runOrch(['logs', 'restarter', '--previous'], {env: server.cliEnv})
    assert.match(previous.stdout, /^started-at-\d+\n$/)
    const unnamed = await runOrch(['logs', 'pair'], {env: server.cliEnv})
    assert.equal(unnamed.code, 1)
    assert.equal(unnamed.stderr, 'error: a container name must be specified for pod pair, choose one of: [a b]\n')
    const badSince = await runOrch(['logs', 'printer', '--since', 'soon'], {env: server.cliEnv})
    assert.equal(badSince.code, 1)
    assert.match(badSince.stderr, /^error: invalid argument "soon" for "--since" flag/)
  })
})
