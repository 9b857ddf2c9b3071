// Server + agent (process runtime): a pod gets env from a ConfigMap (configMapKeyRef, envFrom with a
// prefix), $(VAR) references expanded in env and args, and a configMap volume with items and modes
// (defaultMode written as unquoted YAML 0644) laid out under the pod's volumes directory; a pod whose
// ConfigMap does not exist yet waits (CreateContainerConfigError for env, ContainerCreating with the
// FailedMount message for a volume) and runs once it is created; a changed ConfigMap is rewritten in
// the volume. The process runtime applies no mounts, so the pod reads its volume at the host path.
import assert from 'node:assert/strict'
import {readdirSync, readFileSync, readlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {BOOTSTRAP_TOKEN, startAgent, type RunningAgent} from '../support/agent.js'
import {call} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

describe('ConfigMaps in env and volumes (orch agent, process runtime)', {timeout: 120_000}, () => {
  let server: OrchServer
  let agent: RunningAgent
  let dir: string

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    dir = tempDir('orch-agent-configmaps-')
    const config = join(dir, 'agent.yaml')
    // syncFrequency: how often configMap volumes are brought up to date
    writeFileSync(config, ['apiVersion: agent.config.orch.io/v1beta1', 'kind: AgentConfiguration', 'syncFrequency: 1s', ''].join('\n'))
    agent = await startAgent({server, args: ['--config', config]})
  })
  after(async () => {
    await agent?.cleanup()
    await server?.cleanup()
  })

  const apply = async (yaml: string): Promise<void> => {
    const file = join(dir, `manifest-${Math.random().toString(36).slice(2)}.yaml`)
    writeFileSync(file, yaml)
    const result = await runOrch(['apply', '-f', file], {env: server.cliEnv})
    assert.equal(result.code, 0, result.stderr)
  }
  const getPod = async (name: string): Promise<any> => (await call(server.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).json
  const untilSeen = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> =>
    until(what, probe, {timeoutMs, intervalMs: 200, detail: () => agent.logs().slice(-3000)})
  const waiting = (pod: any): any => pod?.status?.containerStatuses?.[0]?.state?.waiting
  const running = (pod: any): boolean => Boolean(pod?.status?.containerStatuses?.[0]?.state?.running)
  const logOf = (pod: any): string => {
    try {
      return readFileSync(join(agent.rootDir, 'pods', `default_${pod.metadata.name}_${pod.metadata.uid}`, 'app', '0.log'), 'utf8')
    } catch {
      return ''
    }
  }

  it('env from configMapKeyRef and envFrom with a prefix, $(VAR) in env and args, and a configMap volume with items, defaultMode 0644 and an item mode', async () => {
    await apply(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  greeting: hello
  LEVEL: debug
  app.conf: |
    port=8080
---
apiVersion: v1
kind: Pod
metadata:
  name: reader
spec:
  nodeName: ${agent.nodeName}
  terminationGracePeriodSeconds: 1
  volumes:
  - name: cfg
    configMap:
      name: app-config
      defaultMode: 0644
      items:
      - key: app.conf
        path: conf/app.conf
      - key: greeting
        path: greeting.txt
        mode: 0600
  containers:
  - name: app
    image: busybox
    volumeMounts:
    - name: cfg
      mountPath: /etc/cfg
    envFrom:
    - prefix: CM_
      configMapRef:
        name: app-config
    env:
    - name: POD_UID
      valueFrom:
        fieldRef:
          fieldPath: metadata.uid
    - name: ROOT
      value: ${agent.rootDir}
    - name: VOL
      value: $(ROOT)/pods/$(POD_UID)/volumes/configmap/cfg
    - name: GREETING
      valueFrom:
        configMapKeyRef:
          name: app-config
          key: greeting
    - name: MESSAGE
      value: $(GREETING) at $(CM_LEVEL), $(UNDEFINED) and $$(ESCAPED)
    command: [sh, -c]
    args:
    - 'echo "msg=$1|prefixed=$CM_LEVEL|greeting=$GREETING"; echo "conf=$$(cat "$2/conf/app.conf")|greeting.txt=$$(cat "$2/greeting.txt")"; echo "modes=$$(stat -L -c %a "$2/conf/app.conf") $$(stat -L -c %a "$2/greeting.txt")"; exec sleep 600'
    - sh
    - $(MESSAGE)
    - $(VOL)
`)
    const pod = await untilSeen('reader running', async () => {
      const p = await getPod('reader')
      return running(p) ? p : undefined
    })
    const log = await untilSeen('the log', async () => (/modes=/.test(logOf(pod)) ? logOf(pod) : undefined))
    assert.match(log, /msg=hello at debug, \$\(UNDEFINED\) and \$\(ESCAPED\)\|prefixed=debug\|greeting=hello/)
    assert.match(log, /conf=port=8080\|greeting\.txt=hello/)
    assert.match(log, /modes=644 600/)
    const volume = join(agent.rootDir, 'pods', pod.metadata.uid, 'volumes', 'configmap', 'cfg')
    assert.match(readlinkSync(join(volume, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./)
    assert.equal(readlinkSync(join(volume, 'conf')), '..data/conf')
    assert.deepEqual(readdirSync(volume).filter((n) => !n.startsWith('..')).sort(), ['conf', 'greeting.txt'])

    // a changed ConfigMap reaches the files (syncFrequency 1s here)
    await apply('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  greeting: hi\n  LEVEL: debug\n  app.conf: "port=9090\\n"\n')
    await untilSeen('the new file content', async () => (readFileSync(join(volume, 'conf', 'app.conf'), 'utf8') === 'port=9090\n' ? true : undefined), 20_000)
    assert.equal(readFileSync(join(volume, 'greeting.txt'), 'utf8'), 'hi')
  })

  it('a missing ConfigMap: CreateContainerConfigError (env) and ContainerCreating with the FailedMount message (volume) until it is created, then the pods run', async () => {
    await apply(`apiVersion: v1
kind: Pod
metadata:
  name: env-waiter
spec:
  nodeName: ${agent.nodeName}
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: busybox
    command: [sleep, '600']
    env:
    - name: LATE
      valueFrom:
        configMapKeyRef:
          name: late-config
          key: value
---
apiVersion: v1
kind: Pod
metadata:
  name: volume-waiter
spec:
  nodeName: ${agent.nodeName}
  terminationGracePeriodSeconds: 1
  volumes:
  - name: late
    configMap:
      name: late-config
  containers:
  - name: app
    image: busybox
    command: [sleep, '600']
    volumeMounts:
    - name: late
      mountPath: /late
`)
    const envWaiting = await untilSeen('env-waiter waiting', async () => waiting(await getPod('env-waiter'))?.message ? waiting(await getPod('env-waiter')) : undefined)
    assert.deepEqual(envWaiting, {reason: 'CreateContainerConfigError', message: 'configmap "late-config" not found'})
    const volumeWaiting = await untilSeen('volume-waiter waiting', async () => waiting(await getPod('volume-waiter'))?.message ? waiting(await getPod('volume-waiter')) : undefined)
    assert.deepEqual(volumeWaiting, {reason: 'ContainerCreating', message: 'MountVolume.SetUp failed for volume "late" : configmap "late-config" not found'})
    assert.equal((await getPod('env-waiter')).status.phase, 'Pending')
    await apply('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late-config\ndata:\n  value: here\n')
    for (const name of ['env-waiter', 'volume-waiter']) await untilSeen(`${name} running`, async () => (running(await getPod(name)) ? true : undefined), 40_000)
  })
})
