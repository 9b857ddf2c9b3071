// The built-in process runtime: the CRI's RuntimeService and ImageService, implemented for real with
// containers as host processes (like Nomad's raw_exec). server.ts serves it over gRPC; this file
// holds the behaviour. Sandboxes are records plus a log directory: pods share the host's network,
// PID and IPC namespaces and filesystem; mounts are recorded, not applied.
import {randomBytes} from 'node:crypto'
import {mkdirSync, readFileSync, rmSync} from 'node:fs'
import {networkInterfaces} from 'node:os'
import {join, resolve} from 'node:path'
import type {
  ContainerConfig,
  ContainerFilter,
  DeepPartial,
  LinuxContainerResources,
  PodSandboxConfig,
  PodSandboxFilter,
  RuntimeCondition,
} from '../../cri/types.js'
import {applyResources, createCgroup, killCgroup, oomKilled, removeCgroup, setupCgroups, type CgroupSetup} from './cgroup.js'
import {writeCheckpoint, type CheckpointSummary} from './checkpoint.js'
import {nowNs} from './clock.js'
import {CriLogWriter} from './cri-log.js'
import {alreadyExists, deadlineExceeded, failedPrecondition, invalidArgument, notFound} from './errors.js'
import {execSync, type ExecResult} from './exec.js'
import {ImageStore, parseImageRules} from './images.js'
import {DEFAULT_PATH, launch, type LaunchSpec} from './launch.js'
import {forgetProcess, reapOrphans, recordProcess} from './orphans.js'
import {containerInfo, containerStatusView, containerView, podSandboxStatusView, podSandboxView, type ContainerRecord, type SandboxRecord} from './records.js'
import {chooseSeccomp} from './seccomp.js'

export const RUNTIME_NAME = 'orch-process'
export const RUNTIME_VERSION = '0.1.0'
/** Checkpoint timeout when the request gives none (the agent's runtime request timeout). */
export const DEFAULT_CHECKPOINT_TIMEOUT_SECONDS = 120
/** How long cleanup may wait for killed processes to leave a cgroup. */
const CLEANUP_MS = 10_000

export interface ProcessRuntimeOptions {
  /** the runtime's state: image records, pod log directories, process records */
  rootDir: string
  /** a directory inside the cgroup2 hierarchy for container cgroups; false: no cgroups; default `<cgroup2>/orch-process` */
  cgroupRoot?: string | false
  /** image rules (see images.ts); default: every reference may be pulled */
  imageRules?: string[]
  /** a file of image rules (`--process-runtime-images`), read once at start; added after imageRules */
  imagesFile?: string
  /** the IP reported for sandboxes not on the host network; default the host's first non-internal IPv4 */
  podIP?: string
  /** checkpoint timeout when a request has none; default 120 s */
  defaultCheckpointTimeoutSeconds?: number
}

const SIGNALS: Record<string, NodeJS.Signals> = {}
for (const name of ['SIGABRT', 'SIGALRM', 'SIGBUS', 'SIGCHLD', 'SIGCONT', 'SIGFPE', 'SIGHUP', 'SIGILL', 'SIGINT', 'SIGIO', 'SIGIOT', 'SIGKILL', 'SIGPIPE', 'SIGPOLL', 'SIGPROF', 'SIGPWR', 'SIGQUIT', 'SIGSEGV', 'SIGSTKFLT', 'SIGSTOP', 'SIGSYS', 'SIGTERM', 'SIGTRAP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGUSR1', 'SIGUSR2', 'SIGVTALRM', 'SIGWINCH', 'SIGXCPU', 'SIGXFSZ'] as const) {
  SIGNALS[`SIGNAL_${name}`] = name
}
SIGNALS.SIGNAL_SIGCLD = 'SIGCHLD'

function hostIPv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address
  }
  return '127.0.0.1'
}

const newId = (): string => randomBytes(32).toString('hex')

function matchesLabels(labels: Record<string, string>, selector: Record<string, string> | undefined | null): boolean {
  return Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value)
}

export class ProcessRuntime {
  readonly rootDir: string
  readonly cgroups: CgroupSetup
  readonly images: ImageStore
  private readonly sandboxes = new Map<string, SandboxRecord>()
  private readonly containers = new Map<string, ContainerRecord>()
  /** per container: the tail of its checkpoint queue (concurrent checkpoints run one after the other) */
  private readonly checkpoints = new Map<string, Promise<unknown>>()
  private readonly podIP: string
  private readonly checkpointTimeoutSeconds: number
  private closed = false

  private constructor(options: ProcessRuntimeOptions, rules: string[], rulesSource: string) {
    this.rootDir = resolve(options.rootDir)
    this.cgroups = setupCgroups(options.cgroupRoot)
    this.images = new ImageStore(this.rootDir, rules, rulesSource)
    this.podIP = options.podIP ?? hostIPv4()
    this.checkpointTimeoutSeconds = options.defaultCheckpointTimeoutSeconds ?? DEFAULT_CHECKPOINT_TIMEOUT_SECONDS
  }

  /** Prepares the root directory, reads the image rules and kills what an earlier run left behind. */
  static async create(options: ProcessRuntimeOptions): Promise<ProcessRuntime> {
    mkdirSync(options.rootDir, {recursive: true, mode: 0o700})
    const rules = [...(options.imageRules ?? [])]
    const sources: string[] = []
    if (options.imageRules?.length) sources.push('the image rules')
    if (options.imagesFile) {
      rules.push(...parseImageRules(readFileSync(options.imagesFile, 'utf8')))
      sources.push(options.imagesFile)
    }
    await reapOrphans(resolve(options.rootDir), Date.now() + CLEANUP_MS)
    return new ProcessRuntime(options, rules, sources.join(' and ') || 'the image rules')
  }

  // ---- runtime information ----

  version(): {version: string; runtimeName: string; runtimeVersion: string; runtimeApiVersion: string} {
    return {version: '0.1.0', runtimeName: RUNTIME_NAME, runtimeVersion: RUNTIME_VERSION, runtimeApiVersion: 'v1'}
  }

  status(verbose: boolean): object {
    const conditions: RuntimeCondition[] = [
      {type: 'RuntimeReady', status: true, reason: '', message: ''},
      {type: 'NetworkReady', status: true, reason: '', message: 'pods use the host network'},
      // informative: the agent acts on the two above only
      {type: 'CgroupsReady', status: this.cgroups.reason === '', reason: this.cgroups.reason, message: this.cgroups.message},
    ]
    return {
      status: {conditions},
      info: verbose
        ? {
            config: JSON.stringify({
              rootDir: this.rootDir,
              cgroupRoot: this.cgroups.root,
              cgroupControllers: this.cgroups.controllers,
              seccomp: 'profiles are checked and recorded, not enforced',
              checkpoint: 'memory dump archive for inspection; not restorable',
            }),
          }
        : {},
      runtimeHandlers: [{name: '', features: {recursiveReadOnlyMounts: false, userNamespaces: false}}],
      features: {supplementalGroupsPolicy: false, userNamespacesHostNetwork: false, mountOptions: false},
    }
  }

  // ---- pod sandboxes ----

  runPodSandbox(config: PodSandboxConfig | null, runtimeHandler: string): {podSandboxId: string} {
    this.assertOpen()
    if (!config?.metadata?.name || !config.metadata.uid) throw invalidArgument('RunPodSandbox: config.metadata with name and uid is required')
    if (runtimeHandler && runtimeHandler !== 'process') throw invalidArgument(`runtime handler ${JSON.stringify(runtimeHandler)} is not supported by the process runtime`)
    for (const sandbox of this.sandboxes.values()) {
      const other = sandbox.config.metadata!
      if (other.uid === config.metadata.uid && other.attempt === config.metadata.attempt && other.name === config.metadata.name) {
        throw alreadyExists(`sandbox for pod ${config.metadata.namespace}/${config.metadata.name} attempt ${config.metadata.attempt} already exists: ${sandbox.id}`)
      }
    }
    const ownLogDirectory = !config.logDirectory
    const logDirectory = config.logDirectory || join(this.rootDir, 'pods', config.metadata.uid)
    mkdirSync(logDirectory, {recursive: true, mode: 0o755})
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE'
    const sandbox: SandboxRecord = {
      id: newId(),
      config,
      state: 'SANDBOX_READY',
      createdAt: nowNs(),
      logDirectory,
      ownLogDirectory,
      runtimeHandler,
      ip: hostNetwork ? '' : this.podIP,
    }
    this.sandboxes.set(sandbox.id, sandbox)
    return {podSandboxId: sandbox.id}
  }

  /** Kills the sandbox's containers; idempotent, also for an unknown sandbox. */
  async stopPodSandbox(id: string): Promise<object> {
    const sandbox = this.sandboxes.get(id)
    if (!sandbox) return {}
    await Promise.all(this.containersOf(id).map((container) => this.stopContainer(container.id, 0)))
    sandbox.state = 'SANDBOX_NOTREADY'
    return {}
  }

  /** Stops and removes the sandbox and its containers; idempotent. */
  async removePodSandbox(id: string): Promise<object> {
    const sandbox = this.sandboxes.get(id)
    if (!sandbox) return {}
    await Promise.all(this.containersOf(id).map((container) => this.removeContainer(container.id)))
    this.sandboxes.delete(id)
    const uid = sandbox.config.metadata!.uid
    if (sandbox.ownLogDirectory && ![...this.sandboxes.values()].some((other) => other.config.metadata!.uid === uid)) {
      rmSync(sandbox.logDirectory, {recursive: true, force: true})
    }
    return {}
  }

  podSandboxStatus(id: string, verbose: boolean): object {
    return podSandboxStatusView(this.sandbox(id), verbose)
  }

  listPodSandbox(filter: PodSandboxFilter | null): object {
    const items = [...this.sandboxes.values()].filter(
      (sandbox) =>
        (!filter?.id || sandbox.id.startsWith(filter.id)) &&
        (!filter?.state || sandbox.state === filter.state.state) &&
        matchesLabels(sandbox.config.labels, filter?.labelSelector),
    )
    return {items: items.map(podSandboxView)}
  }

  private sandbox(id: string): SandboxRecord {
    const sandbox = this.sandboxes.get(id)
    if (!sandbox) throw notFound(`pod sandbox ${JSON.stringify(id)} not found`)
    return sandbox
  }

  private containersOf(sandboxId: string): ContainerRecord[] {
    return [...this.containers.values()].filter((container) => container.sandboxId === sandboxId)
  }

  // ---- containers ----

  createContainer(podSandboxId: string, config: ContainerConfig | null): {containerId: string} {
    this.assertOpen()
    const sandbox = this.sandbox(podSandboxId)
    if (sandbox.state !== 'SANDBOX_READY') throw failedPrecondition(`pod sandbox ${podSandboxId} is not ready`)
    const name = config?.metadata?.name
    if (!config || !name) throw invalidArgument('CreateContainer: config.metadata.name is required')
    const attempt = config.metadata!.attempt
    for (const other of this.containersOf(podSandboxId)) {
      if (other.config.metadata!.name === name && other.config.metadata!.attempt === attempt) {
        throw alreadyExists(`container name ${JSON.stringify(name)} attempt ${attempt} is already in use by ${other.id} in sandbox ${podSandboxId}`)
      }
    }
    if (config.command.length === 0) {
      throw invalidArgument(
        `container ${JSON.stringify(name)}: the process runtime runs host commands and has no image entrypoint: ` +
          `the container must set command (args alone are appended to it)`,
      )
    }
    if (config.tty || config.stdin) throw invalidArgument(`container ${JSON.stringify(name)}: the process runtime supports neither stdin nor tty`)
    const reference = config.image?.image ?? ''
    const image = this.images.find(reference)
    if (!image) throw notFound(`image ${JSON.stringify(reference)} is not present: pull it first`)
    const seccomp = chooseSeccomp(config.linux?.securityContext)
    const logPath = resolve(sandbox.logDirectory, config.logPath || join(name, `${attempt}.log`))
    const context = config.linux?.securityContext
    const uid = context?.runAsUser ? Number(context.runAsUser.value) : null
    const gid = context?.runAsGroup ? Number(context.runAsGroup.value) : null
    const groups = (context?.supplementalGroups ?? []).map(Number)
    const container: ContainerRecord = {
      id: newId(),
      sandboxId: podSandboxId,
      config,
      state: 'CONTAINER_CREATED',
      createdAt: nowNs(),
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      image,
      logPath,
      seccomp,
      resources: config.linux?.resources ?? null,
      user: uid !== null || gid !== null || groups.length > 0 ? {uid: uid ?? process.getuid?.() ?? 0, gid: gid ?? (uid !== null ? uid : (process.getgid?.() ?? 0)), groups} : null,
      cgroupPath: null,
      cgroupNotes: [],
      process: null,
      log: null,
      done: null,
    }
    this.containers.set(container.id, container)
    return {containerId: container.id}
  }

  private container(id: string): ContainerRecord {
    const container = this.containers.get(id)
    if (!container) throw notFound(`container ${JSON.stringify(id)} not found`)
    return container
  }

  private launchSpec(container: ContainerRecord): Omit<LaunchSpec, 'log'> {
    const sandbox = this.sandbox(container.sandboxId)
    const env: Record<string, string> = {}
    for (const {key, value} of container.config.envs) env[key] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value)
    env.PATH ??= DEFAULT_PATH
    if (sandbox.config.hostname) env.HOSTNAME ??= sandbox.config.hostname
    const oom = Number(container.resources?.oomScoreAdj ?? 0)
    return {
      argv: [...container.config.command, ...container.config.args],
      env,
      cwd: container.config.workingDir || '/',
      cgroupPath: container.cgroupPath,
      oomScoreAdj: oom !== 0 ? oom : null,
      user: container.user,
    }
  }

  async startContainer(id: string): Promise<object> {
    this.assertOpen()
    const container = this.container(id)
    if (container.state !== 'CONTAINER_CREATED' || container.process) {
      throw failedPrecondition(`container ${id} is in state ${container.state}, only a created container can be started`)
    }
    if (this.sandbox(container.sandboxId).state !== 'SANDBOX_READY') throw failedPrecondition(`pod sandbox ${container.sandboxId} is not ready`)
    let log: CriLogWriter | undefined
    let started
    try {
      if (this.cgroups.root) {
        const {path, notes} = createCgroup(this.cgroups, id, container.resources)
        container.cgroupPath = path
        container.cgroupNotes = notes
      }
      log = new CriLogWriter(container.logPath)
      started = await launch({...this.launchSpec(container), log})
    } catch (error) {
      await log?.close()
      if (container.cgroupPath) await removeCgroup(container.cgroupPath, Date.now() + CLEANUP_MS).catch(() => {})
      container.cgroupPath = null
      // as containerd does: the container is done, with exit code 128 and reason StartError
      container.state = 'CONTAINER_EXITED'
      container.finishedAt = nowNs()
      container.exitCode = 128
      container.reason = 'StartError'
      container.message = (error as Error).message
      throw error
    }
    container.process = started
    container.log = log
    container.startedAt = started.startedAt
    container.state = 'CONTAINER_RUNNING'
    recordProcess(this.rootDir, id, started.pid, container.cgroupPath)
    container.done = started.exited.then(async (exit) => {
      const oom = container.cgroupPath ? oomKilled(container.cgroupPath) : false
      if (container.cgroupPath) await removeCgroup(container.cgroupPath, Date.now() + CLEANUP_MS).catch(() => {})
      forgetProcess(this.rootDir, id)
      container.exitCode = exit.exitCode
      container.finishedAt = exit.finishedAt
      container.reason = oom ? 'OOMKilled' : exit.exitCode === 0 ? 'Completed' : 'Error'
      container.state = 'CONTAINER_EXITED'
    })
    return {}
  }

  /** Sends the stop signal, then SIGKILL after timeoutSeconds; waits for the exit. Idempotent. */
  async stopContainer(id: string, timeoutSeconds: number): Promise<object> {
    const container = this.container(id)
    const running = container.process
    if (!running || container.state !== 'CONTAINER_RUNNING') {
      await container.done
      return {}
    }
    if (timeoutSeconds > 0) {
      const signal = SIGNALS[container.config.stopSignal] ?? 'SIGTERM'
      running.signal(signal)
      let timer: NodeJS.Timeout | undefined
      const graceOver = new Promise<boolean>((resolveGrace) => {
        timer = setTimeout(() => resolveGrace(true), timeoutSeconds * 1000)
      })
      const over = await Promise.race([container.done!.then(() => false), graceOver])
      clearTimeout(timer)
      if (!over) return {}
    }
    running.signal('SIGKILL')
    if (container.cgroupPath) killCgroup(container.cgroupPath)
    await container.done
    return {}
  }

  /** Removes the container, killing it first when it runs; idempotent. */
  async removeContainer(id: string): Promise<object> {
    const container = this.containers.get(id)
    if (!container) return {}
    await this.stopContainer(id, 0)
    // a checkpoint in progress fails (its processes are gone); wait for it to clean up
    await this.checkpoints.get(id)?.catch(() => {})
    this.containers.delete(id)
    return {}
  }

  listContainers(filter: ContainerFilter | null): object {
    const list = [...this.containers.values()].filter(
      (container) =>
        (!filter?.id || container.id.startsWith(filter.id)) &&
        (!filter?.podSandboxId || container.sandboxId.startsWith(filter.podSandboxId)) &&
        (!filter?.state || container.state === filter.state.state) &&
        matchesLabels(container.config.labels, filter?.labelSelector),
    )
    return {containers: list.map(containerView)}
  }

  containerStatus(id: string, verbose: boolean): object {
    const container = this.container(id)
    return {status: containerStatusView(container), info: verbose ? containerInfo(container) : {}}
  }

  updateContainerResources(id: string, linux: DeepPartial<LinuxContainerResources> | null): object {
    const container = this.container(id)
    if (!linux) return {}
    container.resources = linux
    if (container.cgroupPath && container.state === 'CONTAINER_RUNNING') container.cgroupNotes = applyResources(this.cgroups, container.cgroupPath, linux)
    return {}
  }

  reopenContainerLog(id: string): object {
    const container = this.container(id)
    if (container.state !== 'CONTAINER_RUNNING' || !container.log) throw failedPrecondition(`container ${id} is not running`)
    container.log.reopen()
    return {}
  }

  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult> {
    const container = this.container(id)
    if (container.state !== 'CONTAINER_RUNNING') throw failedPrecondition(`container ${id} is not running`)
    if (cmd.length === 0) throw invalidArgument('ExecSync: cmd is empty')
    return execSync({...this.launchSpec(container), argv: cmd}, timeoutSeconds)
  }

  /**
   * Writes a checkpoint archive (checkpoint.ts). Checkpoints of one container run one at a time: a
   * second request waits for the first to finish, then dumps the container as it is then.
   */
  async checkpointContainer(id: string, location: string, timeoutSeconds: number): Promise<CheckpointSummary> {
    this.container(id)
    const deadline = Date.now() + (timeoutSeconds > 0 ? timeoutSeconds : this.checkpointTimeoutSeconds) * 1000
    const previous = this.checkpoints.get(id) ?? Promise.resolve()
    const run = previous.catch(() => {}).then(() => {
      const container = this.container(id)
      if (container.state !== 'CONTAINER_RUNNING' || !container.process) throw failedPrecondition(`container ${id} is not running (${container.state})`)
      if (Date.now() > deadline) throw deadlineExceeded(`checkpoint of container ${id} timed out waiting for an earlier checkpoint`)
      return writeCheckpoint(
        {
          containerId: id,
          config: {runtime: RUNTIME_NAME, sandbox: podSandboxView(this.sandbox(container.sandboxId)), ...containerStatusView(container), config: container.config},
          pid: container.process.pid,
          cgroupPath: container.cgroupPath,
          logPath: container.logPath,
        },
        location,
        deadline,
      )
    })
    this.checkpoints.set(id, run)
    try {
      return await run
    } finally {
      if (this.checkpoints.get(id) === run) this.checkpoints.delete(id)
    }
  }

  // ---- images ----

  imageFsInfo(): object {
    const usage = {
      timestamp: String(nowNs()),
      fsId: {mountpoint: this.rootDir},
      usedBytes: {value: 0},
      inodesUsed: {value: this.images.list().length},
    }
    return {imageFilesystems: [usage], containerFilesystems: []}
  }

  // ---- shutdown ----

  private assertOpen(): void {
    if (this.closed) throw failedPrecondition('the process runtime is shutting down')
  }

  /** Kills every container (SIGKILL to its group and cgroup) and waits for them; records are dropped. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.containers.keys()].map((id) => this.stopContainer(id, 0).catch(() => {})))
    await Promise.all([...this.checkpoints.values()].map((run) => run.catch(() => {})))
    this.containers.clear()
    this.sandboxes.clear()
  }
}
