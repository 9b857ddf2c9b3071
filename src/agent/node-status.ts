// The agent's Node: registered at start (labels, taints from registerWithTaints) and its status kept
// current — addresses, capacity/allocatable, nodeInfo read from the host, daemonEndpoints, runtime
// handlers, and the conditions Ready/MemoryPressure/DiskPressure/PIDPressure from real readings.
// The status is computed every nodeStatusUpdateFrequency and written when it changed, or when
// nodeStatusReportFrequency (default 5 min) passed since the last write. Ready is False, not an
// exit, while the container runtime does not answer or reports RuntimeReady false. Once written, a
// condition that is new or changed status is an Event, as the kubelet's setters record them
// (NodeHasSufficientMemory, NodeReady, ...).
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import type {AgentEvents} from './events.js'
import {hostCapacity, hostIdentity, hostPressure, internalIP} from './host.js'

export const NODES = {group: '', version: 'v1', resource: 'nodes'}

export interface RuntimeReport {
  /** `<runtimeName>://<runtimeVersion>` */
  version: string
  /** undefined when healthy; else why the runtime is not ready */
  problem?: string
  handlers: {name: string; features: {recursiveReadOnlyMounts: boolean; userNamespaces: boolean}}[]
}

export interface NodeStatusOptions {
  client: () => RestClient
  nodeName: string
  hostnameAddress: string
  rootDir: string
  port: number
  agentVersion: string
  maxPods: number
  labels: Record<string, string>
  taints: AnyObject[]
  providerID?: string
  updateIntervalMs: number
  reportIntervalMs: number
  logger: Logger
  runtime: () => Promise<RuntimeReport>
  events?: AgentEvents
}

/** Status without heartbeat times: what "changed" compares. */
function comparable(status: AnyObject): string {
  return JSON.stringify({...status, conditions: (status.conditions ?? []).map((c: AnyObject) => ({...c, lastHeartbeatTime: undefined}))})
}

export class NodeStatusManager {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private lastWritten: AnyObject | undefined
  private lastWriteAt = 0
  private running: Promise<void> | undefined
  node: AnyObject | undefined

  constructor(private readonly options: NodeStatusOptions) {}

  get uid(): string | undefined {
    return this.node?.metadata?.uid
  }

  /** Creates the Node, or adopts the existing one (keeping its spec, adding our labels). */
  async register(): Promise<AnyObject> {
    const client = this.options.client()
    const identity = hostIdentity()
    const labels = {
      'orch.io/hostname': this.options.hostnameAddress,
      'orch.io/os': identity.operatingSystem,
      'orch.io/arch': identity.architecture,
      ...this.options.labels,
    }
    const body: AnyObject = {apiVersion: 'v1', kind: 'Node', metadata: {name: this.options.nodeName, labels}, spec: {}}
    if (this.options.taints.length > 0) body.spec.taints = this.options.taints
    if (this.options.providerID) body.spec.providerID = this.options.providerID
    try {
      this.node = await client.create(NODES, body)
      this.options.logger.info('registered node', {node: this.options.nodeName})
    } catch (error) {
      if (!isApiStatusError(error) || error.status.code !== 409) throw error
      const existing = await client.get<AnyObject>({...NODES, name: this.options.nodeName})
      const missing = Object.entries(labels).filter(([key, value]) => existing.metadata?.labels?.[key] !== value)
      this.node =
        missing.length === 0
          ? existing
          : await client.patch({...NODES, name: this.options.nodeName}, 'merge', {metadata: {labels: Object.fromEntries(missing)}})
      this.options.logger.info('node already registered', {node: this.options.nodeName})
    }
    return this.node!
  }

  /** Computes the status the node should show now; conditions keep their transition times when unchanged. */
  async computeStatus(): Promise<AnyObject> {
    const now = formatTime(new Date())
    const identity = hostIdentity()
    const capacity = hostCapacity(this.options.rootDir)
    const pressure = hostPressure(this.options.rootDir)
    let runtime: RuntimeReport
    try {
      runtime = await this.options.runtime()
    } catch (error) {
      runtime = {version: 'unknown://unknown', problem: `container runtime is down: ${(error as Error).message}`, handlers: []}
    }
    const previous: AnyObject[] = this.lastWritten?.conditions ?? this.node?.status?.conditions ?? []
    const condition = (type: string, status: string, reason: string, message: string): AnyObject => {
      const before = previous.find((c) => c.type === type)
      return {
        type,
        status,
        lastHeartbeatTime: now,
        lastTransitionTime: before && before.status === status ? before.lastTransitionTime : now,
        reason,
        message,
      }
    }
    const resources = {
      cpu: String(capacity.cpu),
      memory: `${Math.floor(capacity.memoryBytes / 1024)}Ki`,
      pods: String(this.options.maxPods),
      'ephemeral-storage': `${Math.floor(capacity.diskBytes / 1024)}Ki`,
    }
    const ready = runtime.problem
      ? condition('Ready', 'False', 'AgentNotReady', runtime.problem)
      : condition('Ready', 'True', 'AgentReady', 'agent is posting ready status')
    const status: AnyObject = {
      capacity: resources,
      allocatable: {...resources},
      conditions: [
        condition('MemoryPressure', pressure.memory.status, pressure.memory.reason, pressure.memory.message),
        condition('DiskPressure', pressure.disk.status, pressure.disk.reason, pressure.disk.message),
        condition('PIDPressure', pressure.pid.status, pressure.pid.reason, pressure.pid.message),
        ready,
      ],
      addresses: [
        {type: 'InternalIP', address: internalIP()},
        {type: 'Hostname', address: this.options.hostnameAddress},
      ],
      daemonEndpoints: {agentEndpoint: {Port: this.options.port}},
      nodeInfo: {
        machineID: identity.machineID,
        systemUUID: identity.systemUUID,
        bootID: identity.bootID,
        kernelVersion: identity.kernelVersion,
        osImage: identity.osImage,
        containerRuntimeVersion: runtime.version,
        agentVersion: this.options.agentVersion,
        orchProxyVersion: '',
        operatingSystem: identity.operatingSystem,
        architecture: identity.architecture,
        ...(capacity.swapBytes > 0 ? {swap: {capacity: capacity.swapBytes}} : {}),
      },
      runtimeHandlers: runtime.handlers,
    }
    return status
  }

  /** Writes the status when it changed or the report interval passed. */
  async sync(): Promise<void> {
    const status = await this.computeStatus()
    const due = Date.now() - this.lastWriteAt >= this.options.reportIntervalMs
    if (!due && this.lastWritten && comparable(status) === comparable(this.lastWritten)) return
    const previous: AnyObject[] | undefined = this.lastWritten?.conditions ?? this.node?.status?.conditions
    this.node = await this.options.client().patch({...NODES, name: this.options.nodeName, subresource: 'status'}, 'merge', {status})
    this.options.events?.nodeConditions(previous, status.conditions)
    this.lastWritten = status
    this.lastWriteAt = Date.now()
  }

  /** Starts the status loop; resolves after the first attempt (registration and status), failed or not. */
  start(): Promise<void> {
    const loop = async (): Promise<void> => {
      try {
        if (!this.node) await this.register()
        await this.sync()
      } catch (error) {
        this.options.logger.warn('could not update node status', {error: (error as Error).message})
      }
      if (this.stopped) return
      this.timer = setTimeout(() => (this.running = loop()), this.options.updateIntervalMs)
      this.timer.unref()
    }
    this.running = loop()
    return this.running
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
