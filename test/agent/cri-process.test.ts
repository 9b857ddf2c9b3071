// The built-in process runtime through the real CRI client over a real UNIX socket: sandboxes,
// containers as host processes, CRI logs, stop semantics, creation errors, images, cleanup.
import assert from 'node:assert/strict'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {PassThrough} from 'node:stream'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import {CriClient, CriError} from '../../src/agent/cri/client.js'
import type {ContainerConfig, ContainerStatus, DeepPartial, PodSandboxConfig} from '../../src/agent/cri/types.js'
import {CriLogWriter, MAX_LOG_LINE_BYTES} from '../../src/agent/runtime/process/cri-log.js'
import {normalizeReference} from '../../src/agent/runtime/process/images.js'
import {readStat} from '../../src/agent/runtime/process/procfs.js'
import {ProcessRuntime} from '../../src/agent/runtime/process/runtime.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'

const CRI_LOG_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z) (stdout|stderr) ([FP]) (.*)$/

/** Polls ContainerStatus (the agent's PLEG does the same) until the predicate holds. */
async function waitForStatus(client: CriClient, id: string, predicate: (status: ContainerStatus) => boolean, timeoutMs = 10_000): Promise<ContainerStatus> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const {status} = await client.containerStatus(id)
    if (status && predicate(status)) return status
    if (Date.now() > deadline) throw new Error(`container ${id} did not reach the expected state: ${JSON.stringify(status)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Polls a file until it contains the pattern. */
async function waitForFile(path: string, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const match = existsSync(path) ? pattern.exec(readFileSync(path, 'utf8')) : null
    if (match) return match
    if (Date.now() > deadline) throw new Error(`${path} never matched ${pattern}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function alive(pid: number): boolean {
  const stat = readStat(pid)
  return stat !== null && stat.state !== 'Z'
}

async function rejectsWith(promise: Promise<unknown>, codeName: string, message?: RegExp): Promise<CriError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof CriError, `expected a CriError, got ${error}`)
    assert.equal(error.codeName, codeName, error.message)
    if (message) assert.match(error.message, message)
    return error
  }
  assert.fail(`expected ${codeName}`)
}

describe('process runtime: CRI over a UNIX socket', {timeout: 120_000}, () => {
  let dir: string
  let server: ProcessRuntimeServer
  let client: CriClient
  let counter = 0

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-cri-process-'))
    server = await startProcessRuntime({rootDir: join(dir, 'root'), imageRules: ['!*/does-not-exist*']})
    client = new CriClient({endpoint: server.endpoint, timeoutMs: 30_000})
    await client.pullImage('busybox')
  })

  after(async () => {
    client?.close()
    await server?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  function sandboxConfig(extra: DeepPartial<PodSandboxConfig> = {}): DeepPartial<PodSandboxConfig> {
    counter++
    return {metadata: {name: `pod-${counter}`, uid: `uid-${counter}`, namespace: 'default', attempt: 0}, ...extra}
  }

  async function run(command: string[], extra: DeepPartial<ContainerConfig> = {}, sandboxExtra: DeepPartial<PodSandboxConfig> = {}) {
    const config = sandboxConfig(sandboxExtra)
    const sandboxId = await client.runPodSandbox(config)
    const id = await client.createContainer(sandboxId, {metadata: {name: 'main', attempt: 0}, image: {image: 'busybox'}, command, logPath: 'main/0.log', ...extra}, config)
    await client.startContainer(id)
    const {status} = await client.containerStatus(id, true)
    return {sandboxId, id, config, logPath: status!.logPath, pid: Number(JSON.parse((await client.containerStatus(id, true)).info.info!).pid)}
  }

  it('the runtime socket is created with mode 0600', () => {
    const stat = statSync(server.socketPath)
    assert.ok(stat.isSocket())
    assert.equal(stat.mode & 0o777, 0o600)
    assert.equal(server.endpoint, `unix://${server.socketPath}`)
  })

  it('Version and Status: RuntimeReady and NetworkReady, cgroup availability as a further condition', async () => {
    const version = await client.version()
    assert.equal(version.runtimeName, 'orch-process')
    assert.equal(version.runtimeApiVersion, 'v1')
    const status = await client.status(true)
    const conditions = Object.fromEntries(status.status!.conditions.map((condition) => [condition.type, condition]))
    assert.equal(conditions.RuntimeReady!.status, true)
    assert.equal(conditions.NetworkReady!.status, true)
    assert.ok(conditions.CgroupsReady, 'cgroup availability is reported')
    if (!server.runtime.cgroups.root) assert.equal(conditions.CgroupsReady.status, false)
    assert.match(status.info.config!, /not enforced/)
  })

  it('a sandbox and a container running sleep: CONTAINER_RUNNING, listed, in its own process group', async () => {
    const {sandboxId, id, pid} = await run(['sleep', '3600'])
    const {status} = await client.containerStatus(id)
    assert.equal(status!.state, 'CONTAINER_RUNNING')
    assert.notEqual(status!.startedAt, '0')
    const stat = readStat(pid)!
    assert.equal(stat.pgid, pid, 'the command leads its own process group')
    assert.equal(stat.sid, pid, 'and its own session')
    assert.deepEqual(
      (await client.listContainers({podSandboxId: sandboxId})).map((container) => [container.id, container.state]),
      [[id, 'CONTAINER_RUNNING']],
    )
    assert.equal((await client.listContainers({id, state: {state: 'CONTAINER_EXITED'}})).length, 0)
    const sandboxes = await client.listPodSandbox({id: sandboxId})
    assert.equal(sandboxes[0]!.state, 'SANDBOX_READY')
    if (server.runtime.cgroups.root) {
      const procs = readFileSync(join(server.runtime.cgroups.root, id, 'cgroup.procs'), 'utf8')
      assert.match(procs, new RegExp(`^${pid}$`, 'm'), 'the process runs in the container cgroup')
    }
    await client.removePodSandbox(sandboxId)
    assert.equal(alive(pid), false)
  })

  it('stdout and stderr lines go to the CRI log as "<RFC3339Nano> <stream> F <line>"; the exit code is reported', async () => {
    const {id, logPath} = await run(['sh', '-c', 'echo "hello out"; echo "hello err" >&2; printf "no newline"; exit 7'])
    const status = await waitForStatus(client, id, (s) => s.state === 'CONTAINER_EXITED')
    assert.equal(status.exitCode, 7)
    assert.equal(status.reason, 'Error')
    assert.notEqual(status.finishedAt, '0')
    assert.ok(BigInt(status.finishedAt) >= BigInt(status.startedAt))
    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n')
    const parsed = lines.map((line) => CRI_LOG_LINE.exec(line))
    assert.ok(parsed.every(Boolean), lines.join('\n'))
    const entries = parsed.map((match) => `${match![3]} ${match![4]} ${match![5]}`).sort()
    assert.deepEqual(entries, ['stderr F hello err', 'stdout F hello out', 'stdout F no newline'])
    const {id: ok} = await run(['true'])
    const done = await waitForStatus(client, ok, (s) => s.state === 'CONTAINER_EXITED')
    assert.deepEqual([done.exitCode, done.reason], [0, 'Completed'])
  })

  it('a log line longer than the maximum is split into P entries ending with an F entry', async () => {
    const path = join(dir, 'long.log')
    const writer = new CriLogWriter(path)
    const source = new PassThrough()
    writer.attach(source, 'stdout')
    source.write('x'.repeat(MAX_LOG_LINE_BYTES + 10))
    source.end('\nshort\n')
    await writer.close()
    const entries = readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => CRI_LOG_LINE.exec(line)!)
    assert.deepEqual(entries.map((entry) => [entry[4], entry[5]!.length]), [['P', MAX_LOG_LINE_BYTES], ['F', 10], ['F', 5]])
  })

  it('StopContainer sends SIGTERM to the process group, then SIGKILL after the timeout', async () => {
    // both the shell and its child ignore SIGTERM (ignored signals survive exec)
    const {id, logPath} = await run(['sh', '-c', 'trap "" TERM; sleep 3600 & echo "child $!"; wait'])
    const child = Number((await waitForFile(logPath, /child (\d+)/))[1])
    assert.ok(alive(child))
    const started = Date.now()
    await client.stopContainer(id, 1)
    const elapsed = Date.now() - started
    assert.ok(elapsed >= 900, `waited the timeout (${elapsed} ms)`)
    assert.ok(elapsed < 5_000, `then killed (${elapsed} ms)`)
    const {status} = await client.containerStatus(id)
    assert.equal(status!.state, 'CONTAINER_EXITED')
    assert.equal(status!.exitCode, 137)
    assert.equal(alive(child), false, 'the whole group got SIGKILL')
  })

  it('StopContainer of a process that honours SIGTERM returns before the timeout', async () => {
    const {id} = await run(['sleep', '3600'])
    const started = Date.now()
    await client.stopContainer(id, 30)
    assert.ok(Date.now() - started < 10_000)
    const {status} = await client.containerStatus(id)
    assert.deepEqual([status!.state, status!.exitCode], ['CONTAINER_EXITED', 143])
    // stopping again is no error
    await client.stopContainer(id, 30)
  })

  it('when the main process exits, the rest of its process group is killed', async () => {
    const {id, logPath} = await run(['sh', '-c', 'sleep 3600 & echo "child $!"; read _ < /dev/null; exit 0'])
    const child = Number((await waitForFile(logPath, /child (\d+)/))[1])
    await waitForStatus(client, id, (s) => s.state === 'CONTAINER_EXITED')
    assert.equal(alive(child), false)
  })

  it('CreateContainer fails with InvalidArgument when the command is not set', async () => {
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    await rejectsWith(
      client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: 'busybox'}, args: ['3600']}, config),
      'INVALID_ARGUMENT',
      /must set command/,
    )
  })

  it('if a Localhost seccomp profile is absent at container creation, creation fails', async () => {
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    const missing = join(dir, 'seccomp', 'missing.json')
    await rejectsWith(
      client.createContainer(
        sandboxId,
        {metadata: {name: 'c'}, image: {image: 'busybox'}, command: ['true'], linux: {securityContext: {seccomp: {profileType: 'Localhost', localhostRef: missing}}}},
        config,
      ),
      'NOT_FOUND',
      /seccomp profile .*missing\.json.* does not exist/,
    )
  })

  it('a Localhost profile is checked (SCMP_ACT_NOTIFY cannot be defaultAction) and recorded, not enforced', async () => {
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    const notify = join(dir, 'notify.json')
    writeFileSync(notify, JSON.stringify({defaultAction: 'SCMP_ACT_NOTIFY'}))
    const withProfile = (path: string, privileged = false): DeepPartial<ContainerConfig> => ({
      metadata: {name: `c-${path.length}-${privileged}`},
      image: {image: 'busybox'},
      command: ['sleep', '3600'],
      linux: {securityContext: {privileged, seccomp: {profileType: 'Localhost', localhostRef: path}}},
    })
    await rejectsWith(client.createContainer(sandboxId, withProfile(notify), config), 'INVALID_ARGUMENT', /cannot be the defaultAction/)
    const good = join(dir, 'good.json')
    writeFileSync(good, JSON.stringify({defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: 1, syscalls: [{names: ['read', 'write'], action: 'SCMP_ACT_ALLOW'}]}))
    const id = await client.createContainer(sandboxId, withProfile(good), config)
    const info = JSON.parse((await client.containerStatus(id, true)).info.info!)
    assert.deepEqual([info.seccomp.type, info.seccomp.localhostRef, info.seccomp.enforced], ['Localhost', good, false])
  })

  it('a privileged container cannot have a profile and always runs Unconfined', async () => {
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    const id = await client.createContainer(
      sandboxId,
      {
        metadata: {name: 'priv'},
        image: {image: 'busybox'},
        command: ['true'],
        linux: {securityContext: {privileged: true, seccomp: {profileType: 'Localhost', localhostRef: join(dir, 'absent.json')}}},
      },
      config,
    )
    assert.equal(JSON.parse((await client.containerStatus(id, true)).info.info!).seccomp.type, 'Unconfined')
  })

  it('an image is present only once pulled; PullImage of a refused reference is NotFound', async () => {
    await rejectsWith(client.pullImage('example.org/does-not-exist:1'), 'NOT_FOUND', /refused by rule/)
    assert.equal((await client.imageStatus('example.org/app:1')).image, null)
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    await rejectsWith(client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: 'example.org/app:1'}, command: ['true']}, config), 'NOT_FOUND', /not present/)
    const ref = await client.pullImage('example.org/app:1')
    assert.match(ref, /^sha256:[0-9a-f]{64}$/)
    const image = (await client.imageStatus('example.org/app:1')).image!
    assert.equal(image.id, ref)
    assert.deepEqual(image.repoTags, ['example.org/app:1'])
    assert.ok((await client.listImages()).some((listed) => listed.id === ref))
    // the agent creates containers with the image id
    await client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: ref, userSpecifiedImage: 'example.org/app:1'}, command: ['true']}, config)
    await client.removeImage('example.org/app:1')
    assert.equal((await client.imageStatus(ref)).image, null)
    await client.removeImage('example.org/app:1')
    const fs = await client.imageFsInfo()
    assert.equal(fs.imageFilesystems.length, 1)
  })

  it('StartContainer of a missing executable fails; the container is exited with StartError and exit code 128', async () => {
    const config = sandboxConfig()
    const sandboxId = await client.runPodSandbox(config)
    const id = await client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: 'busybox'}, command: ['no-such-command-orch']}, config)
    await rejectsWith(client.startContainer(id), 'FAILED_PRECONDITION', /executable file not found in \$PATH/)
    const {status} = await client.containerStatus(id)
    assert.deepEqual([status!.state, status!.exitCode, status!.reason], ['CONTAINER_EXITED', 128, 'StartError'])
  })

  it('the container gets its env, working directory and HOSTNAME; ExecSync runs in the same environment', async () => {
    const work = mkdtempSync(join(dir, 'work-'))
    const {id, logPath} = await run(['sh', '-c', 'echo "$GREETING $(pwd) $HOSTNAME"; sleep 3600'], {envs: [{key: 'GREETING', value: 'hi'}], workingDir: work}, {hostname: 'web-0'})
    await waitForFile(logPath, new RegExp(`stdout F hi ${work} web-0`))
    const result = await client.execSync(id, ['sh', '-c', 'echo "$GREETING"; echo oops >&2; exit 3'], 10)
    assert.deepEqual([result.stdout.toString(), result.stderr.toString(), result.exitCode], ['hi\n', 'oops\n', 3])
    await rejectsWith(client.execSync(id, ['sleep', '30'], 1), 'DEADLINE_EXCEEDED')
    await client.stopContainer(id, 0)
  })

  it('ReopenContainerLog continues the log in a new file after the agent rotated it', async () => {
    const fifo = join(dir, 'reopen.fifo')
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
    const {id, logPath} = await run(['sh', '-c', `echo first; read line < ${fifo}; echo "second $line"; sleep 3600`])
    await waitForFile(logPath, /stdout F first/)
    const rotated = `${logPath}.1`
    renameSync(logPath, rotated)
    await client.reopenContainerLog(id)
    writeFileSync(fifo, 'go\n')
    await waitForFile(logPath, /stdout F second go/)
    assert.doesNotMatch(readFileSync(rotated, 'utf8'), /second/)
    await client.stopContainer(id, 0)
    await rejectsWith(client.reopenContainerLog(id), 'FAILED_PRECONDITION')
  })

  it('RemovePodSandbox kills its containers and removes the runtime-made pod log directory; remove is idempotent', async () => {
    const {sandboxId, id, pid, config} = await run(['sleep', '3600'])
    const podDir = join(server.runtime.rootDir, 'pods', config.metadata!.uid!)
    assert.ok(existsSync(podDir))
    await client.stopPodSandbox(sandboxId)
    assert.equal(alive(pid), false)
    assert.equal((await client.podSandboxStatus(sandboxId)).status!.state, 'SANDBOX_NOTREADY')
    await client.removePodSandbox(sandboxId)
    assert.equal(existsSync(podDir), false)
    await rejectsWith(client.containerStatus(id), 'NOT_FOUND')
    await rejectsWith(client.podSandboxStatus(sandboxId), 'NOT_FOUND')
    await client.removePodSandbox(sandboxId)
    await client.stopPodSandbox(sandboxId)
    await client.removeContainer(id)
    if (server.runtime.cgroups.root) assert.equal(existsSync(join(server.runtime.cgroups.root, id)), false, 'cgroup removed')
  })

  it('a host-network sandbox reports no IP of its own; other sandboxes report the node address', async () => {
    const host = await client.runPodSandbox(sandboxConfig({linux: {securityContext: {namespaceOptions: {network: 'NODE'}}}}))
    assert.equal((await client.podSandboxStatus(host)).status!.network!.ip, '')
    const pod = await client.runPodSandbox(sandboxConfig())
    assert.match((await client.podSandboxStatus(pod)).status!.network!.ip, /^\d+\.\d+\.\d+\.\d+$/)
  })

  it('memory and CPU limits go to the container cgroup, or are reported as not applied', async () => {
    const {id, pid} = await run(['sleep', '3600'], {linux: {resources: {memoryLimitInBytes: 64 * 1024 * 1024, cpuQuota: 50_000, cpuPeriod: 100_000}}})
    const info = JSON.parse((await client.containerStatus(id, true)).info.info!)
    const setup = server.runtime.cgroups
    if (!setup.root) {
      assert.equal(info.cgroupPath, '')
    } else if (setup.controllers.includes('memory')) {
      assert.equal(readFileSync(join(info.cgroupPath, 'memory.max'), 'utf8').trim(), String(64 * 1024 * 1024))
      assert.equal(readFileSync(join(info.cgroupPath, 'cpu.max'), 'utf8').trim(), '50000 100000')
    } else {
      assert.ok(info.cgroupNotes.some((note: string) => /memory\.max=67108864 not applied/.test(note)), JSON.stringify(info.cgroupNotes))
    }
    assert.ok(alive(pid))
    await client.stopContainer(id, 0)
  })
})

describe('process runtime: parts', () => {
  it('image references are normalised as Docker does (docker.io, library/, :latest)', () => {
    assert.equal(normalizeReference('busybox'), 'docker.io/library/busybox:latest')
    assert.equal(normalizeReference('orch/app:1'), 'docker.io/orch/app:1')
    assert.equal(normalizeReference('registry.local:5000/app'), 'registry.local:5000/app:latest')
    assert.equal(normalizeReference('localhost/app@sha256:abc'), 'localhost/app@sha256:abc')
  })

  it('an images file: the first matching rule wins; with an allowing rule, unmatched references are refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-cri-images-'))
    try {
      const file = join(dir, 'images')
      writeFileSync(file, '# allowed images\n!docker.io/library/busybox:bad\ndocker.io/library/*\n')
      const runtime = await ProcessRuntime.create({rootDir: join(dir, 'root'), imagesFile: file, cgroupRoot: false})
      assert.ok(runtime.images.pull({image: 'busybox'}))
      assert.throws(() => runtime.images.pull({image: 'busybox:bad'}), /refused by rule "!docker.io\/library\/busybox:bad"/)
      assert.throws(() => runtime.images.pull({image: 'quay.io/app'}), /no rule of .*images allows it/)
      await runtime.close()
      // pulled images are remembered across restarts
      const again = await ProcessRuntime.create({rootDir: join(dir, 'root'), cgroupRoot: false})
      assert.ok(again.images.find('busybox'))
      await again.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('a CRI endpoint must be a UNIX socket (unix:///path)', () => {
    assert.throws(() => new CriClient({endpoint: 'tcp://127.0.0.1:1'}), /not a UNIX socket/)
    assert.throws(() => new CriClient({endpoint: 'unix://relative.sock'}), /must be absolute/)
  })

  it('every call has a deadline: a call not answered in time fails with DEADLINE_EXCEEDED', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-cri-deadline-'))
    const server = await startProcessRuntime({rootDir: join(dir, 'root'), cgroupRoot: false})
    const client = new CriClient({endpoint: server.endpoint, timeoutMs: 300})
    try {
      const config = {metadata: {name: 'p', uid: 'u', namespace: 'default', attempt: 0}}
      const sandboxId = await client.runPodSandbox(config)
      await client.pullImage('busybox')
      const id = await client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: 'busybox'}, command: ['sleep', '3600']}, config)
      await client.startContainer(id)
      const error = await rejectsWith(client.execSync(id, ['sleep', '30']), 'DEADLINE_EXCEEDED')
      assert.equal(error.method, 'ExecSync')
    } finally {
      client.close()
      await server.close()
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('process runtime: a runtime that died without cleaning up', {timeout: 60_000}, () => {
  it('the next start kills the containers the dead runtime left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-cri-orphans-'))
    const root = join(dir, 'root')
    const serverModule = fileURLToPath(new URL('../../src/agent/runtime/process/server.js', import.meta.url))
    const script = `import {startProcessRuntime} from ${JSON.stringify(serverModule)}
const server = await startProcessRuntime({rootDir: ${JSON.stringify(root)}})
console.log(server.endpoint)`
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        child.stdout!.setEncoding('utf8')
        child.stdout!.once('data', (line: string) => resolve(line.trim()))
        child.once('exit', (code) => reject(new Error(`runtime process exited (${code})`)))
      })
      const client = new CriClient({endpoint, timeoutMs: 10_000})
      const config = {metadata: {name: 'p', uid: 'u', namespace: 'default', attempt: 0}}
      const sandboxId = await client.runPodSandbox(config)
      await client.pullImage('busybox')
      const id = await client.createContainer(sandboxId, {metadata: {name: 'c'}, image: {image: 'busybox'}, command: ['sleep', '3600']}, config)
      await client.startContainer(id)
      const pid = Number(JSON.parse((await client.containerStatus(id, true)).info.info!).pid)
      client.close()
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await gone
      assert.ok(alive(pid), 'the container outlived its runtime')
      const next = await startProcessRuntime({rootDir: root})
      try {
        assert.equal(alive(pid), false, 'and was killed by the next runtime')
      } finally {
        await next.close()
      }
    } finally {
      child.kill('SIGKILL')
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
