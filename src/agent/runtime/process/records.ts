// The process runtime's records of pod sandboxes and containers, and their CRI views.
import type {
  Container,
  ContainerConfig,
  ContainerStateName,
  ContainerStatus,
  DeepPartial,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxStateName,
  PodSandboxStatusResponse,
} from '../../cri/types.js'
import {nowNs} from './clock.js'
import type {CriLogWriter} from './cri-log.js'
import type {ImageRecord} from './images.js'
import type {ContainerProcess} from './launch.js'
import type {SeccompChoice} from './seccomp.js'

export interface SandboxRecord {
  id: string
  config: PodSandboxConfig
  state: PodSandboxStateName
  createdAt: bigint
  /** where container logs go: the config's log_directory, else `<root>/pods/<uid>` */
  logDirectory: string
  /** true when logDirectory is the runtime's own (removed with the last sandbox of the pod) */
  ownLogDirectory: boolean
  runtimeHandler: string
  /** the pod IP reported; '' for host-network sandboxes */
  ip: string
}

export interface ContainerRecord {
  id: string
  sandboxId: string
  config: ContainerConfig
  state: ContainerStateName
  createdAt: bigint
  startedAt: bigint
  finishedAt: bigint
  exitCode: number
  reason: string
  message: string
  image: ImageRecord
  /** absolute path of the CRI log */
  logPath: string
  seccomp: SeccompChoice
  resources: DeepPartial<LinuxContainerResources> | null
  user: {uid: number; gid: number; groups: number[]} | null
  cgroupPath: string | null
  /** limits that could not be applied (no controller, ...) */
  cgroupNotes: string[]
  process: ContainerProcess | null
  log: CriLogWriter | null
  /** resolves once an exit is fully recorded (cgroup removed, log flushed) */
  done: Promise<void> | null
}

const ns = (value: bigint): string => value.toString()

export function podSandboxView(sandbox: SandboxRecord): DeepPartial<PodSandbox> {
  return {
    id: sandbox.id,
    metadata: sandbox.config.metadata,
    state: sandbox.state,
    createdAt: ns(sandbox.createdAt),
    labels: sandbox.config.labels,
    annotations: sandbox.config.annotations,
    runtimeHandler: sandbox.runtimeHandler,
  }
}

export function podSandboxStatusView(sandbox: SandboxRecord, verbose: boolean): DeepPartial<PodSandboxStatusResponse> {
  const options = sandbox.config.linux?.securityContext?.namespaceOptions ?? null
  return {
    status: {
      ...podSandboxView(sandbox),
      network: {ip: sandbox.ip, additionalIps: []},
      linux: {namespaces: {options}},
    },
    info: verbose
      ? {
          info: JSON.stringify({
            runtime: 'orch-process',
            logDirectory: sandbox.logDirectory,
            hostname: sandbox.config.hostname,
            note: 'the process runtime runs pods as host processes: no network, PID, IPC or UTS namespace; the hostname is only exported as $HOSTNAME',
            config: sandbox.config,
          }),
        }
      : {},
    containersStatuses: [],
    timestamp: ns(nowNs()),
  }
}

export function containerView(container: ContainerRecord): DeepPartial<Container> {
  return {
    id: container.id,
    podSandboxId: container.sandboxId,
    metadata: container.config.metadata,
    image: imageSpecView(container),
    imageRef: container.image.id,
    state: container.state,
    createdAt: ns(container.createdAt),
    labels: container.config.labels,
    annotations: container.config.annotations,
    imageId: container.image.id,
  }
}

function imageSpecView(container: ContainerRecord): ContainerConfig['image'] {
  const spec = container.config.image
  return {
    image: spec?.image ?? container.image.id,
    annotations: spec?.annotations ?? {},
    userSpecifiedImage: spec?.userSpecifiedImage ?? '',
    runtimeHandler: spec?.runtimeHandler ?? '',
    imageRef: container.image.id,
  }
}

export function containerStatusView(container: ContainerRecord): DeepPartial<ContainerStatus> {
  return {
    id: container.id,
    metadata: container.config.metadata,
    state: container.state,
    createdAt: ns(container.createdAt),
    startedAt: ns(container.startedAt),
    finishedAt: ns(container.finishedAt),
    exitCode: container.exitCode,
    image: imageSpecView(container),
    imageRef: container.image.id,
    reason: container.reason,
    message: container.message,
    labels: container.config.labels,
    annotations: container.config.annotations,
    mounts: container.config.mounts,
    logPath: container.logPath,
    resources: container.resources ? {linux: container.resources} : null,
    imageId: container.image.id,
    user: {
      linux: {
        uid: container.user?.uid ?? process.getuid?.() ?? 0,
        gid: container.user?.gid ?? process.getgid?.() ?? 0,
        supplementalGroups: container.user?.groups ?? [],
      },
    },
    stopSignal: container.config.stopSignal,
  }
}

/** The runtime-specific details of verbose ContainerStatus (`info` key, a JSON document). */
export function containerInfo(container: ContainerRecord): Record<string, string> {
  return {
    info: JSON.stringify({
      sandboxID: container.sandboxId,
      pid: container.process?.pid ?? 0,
      cgroupPath: container.cgroupPath ?? '',
      cgroupNotes: container.cgroupNotes,
      seccomp: {
        ...container.seccomp,
        note: 'recorded only: the process runtime cannot install seccomp filters',
      },
      runtimeSpec: {
        args: [...container.config.command, ...container.config.args],
        cwd: container.config.workingDir || '/',
        user: container.user,
      },
      config: container.config,
    }),
  }
}
