// The node agent: ties the pieces together in the kubelet's order — lock, swap check, root-dir layout,
// container runtime (a CRI endpoint, or the built-in process runtime), credentials (kubeconfig,
// bootstrap CSR, or none = standalone), the pod manager and its sources (the API's pods bound to this
// node, static pod manifests), Node registration + status + Lease, the HTTPS server (checkpoint) and
// the pod-info socket, then READY=1 to the init system.
import {mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {SIGNER_AGENT_SERVING} from '../api/certificates/certificatesigningrequest.js'
import type {AnyObject} from '../api/types.js'
import {RestClient, type ClientConfig} from '../client/index.js'
import {defaultGates, type FeatureName} from '../machinery/features.js'
import type {Logger} from '../machinery/log.js'
import {CriClient} from './cri/client.js'
import {AgentEvents} from './events.js'
import {ApiConfigMaps, ConfigMapRefresher} from './api-configmaps.js'
import {ApiPods} from './api-pods.js'
import {ClientCertificateManager, SERVER_PAIR_FILE, readPair, requestCertificate, selfSignedServing, writePrivate} from './certificates.js'
import {internalIP, swapEnabled} from './host.js'
import {LeaseRenewer} from './lease.js'
import {acquireLock, type AgentLock} from './lock.js'
import {NodeStatusManager, type RuntimeReport} from './node-status.js'
import {startNotifier, type Notifier} from './notify.js'
import {startPodInfoServer, type PodInfoServer} from './podinfo/server.js'
import {PodManager} from './pods/manager.js'
import {startProcessRuntime, type ProcessRuntimeServer} from './runtime/process/server.js'
import {AgentServer} from './server/server.js'
import {StaticPodSource} from './static-pods.js'

/** The agent's settings, resolved from its configuration file(s) and flags. */
export interface AgentSettings {
  nodeName: string
  /** the Hostname address (the host's name, or --hostname-override) */
  hostnameAddress: string
  rootDir: string
  certDir: string
  lockFile?: string
  kubeconfig?: string
  bootstrapKubeconfig?: string
  address: string
  port: number
  enableServer: boolean
  clientCAFile?: string
  authorizationMode: 'AlwaysAllow' | 'Webhook'
  cacheAuthorizedTTLMs: number
  cacheUnauthorizedTTLMs: number
  authenticationCacheTTLMs: number
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  rotateCertificates: boolean
  serverTLSBootstrap: boolean
  staticPodPath?: string
  fileCheckFrequencyMs: number
  /** '' = the built-in process runtime */
  containerRuntimeEndpoint: string
  imageServiceEndpoint: string
  runtimeRequestTimeoutMs: number
  /** image rules for the built-in process runtime */
  processRuntimeImages?: string
  featureGates: Record<string, boolean>
  nodeStatusUpdateFrequencyMs: number
  nodeStatusReportFrequencyMs: number
  nodeLeaseDurationSeconds: number
  maxPods: number
  nodeLabels: Record<string, string>
  registerNode: boolean
  registerWithTaints: AnyObject[]
  providerID?: string
  failSwapOn: boolean
  swapBehavior: 'NoSwap' | 'LimitedSwap'
  seccompDefault: boolean
  /** pull one image at a time (a queue shared by all pods); false: in parallel */
  serializeImagePulls: boolean
  /** the kubelet's syncFrequency: the sync loop is unhealthy after max(2 × it, 5 min) without a round */
  syncFrequencyMs: number
  clusterDNS: string[]
  clusterDomain: string
  /** container log rotation: containerLogMaxSize in bytes (negative: none), containerLogMaxFiles, -MaxWorkers, -MonitorInterval */
  containerLogMaxSizeBytes: number
  containerLogMaxFiles: number
  containerLogMaxWorkers: number
  containerLogMonitorIntervalMs: number
  relistPeriodMs: number
  agentVersion: string
}

const RUNTIME_HEALTH_TIMEOUT_MS = 5000

function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

/** A gate as the configuration sets it, else its default by stage (machinery/features.ts). */
export function gateEnabled(settings: AgentSettings, gate: FeatureName): boolean {
  return settings.featureGates[gate] ?? defaultGates()[gate]
}

/** The kubelet's SyncLoopHealthCheck: the loop is stuck after max(2 × syncFrequency, 5 minutes) without a round. */
export function syncLoopMaxAgeMs(syncFrequencyMs: number): number {
  return Math.max(2 * syncFrequencyMs, 5 * 60_000)
}

/**
 * Whether the pod-info gRPC socket is served: gate PodsAPI (alpha, off by default), and only on
 * Linux (the seed: "not supported on non-Linux nodes"). `reason` says why not.
 */
export function podInfoSupport(settings: AgentSettings, platform: NodeJS.Platform): {serve: boolean; reason?: string} {
  if (!gateEnabled(settings, 'PodsAPI')) return {serve: false, reason: 'gate PodsAPI is disabled'}
  if (platform !== 'linux') return {serve: false, reason: `not supported on non-Linux nodes (this node is ${platform})`}
  return {serve: true}
}

/**
 * The directories of `{root}` (the seed's table of the agent's local files). `image_manager/{pulling,pulled}`
 * come with gate KubeletEnsureSecretPulledImages and the pod resource state files with
 * InPlacePodVerticalScaling (both made by the pod manager).
 */
export const ROOT_DIRS = ['pki', 'pods', 'checkpoints', 'seccomp', 'plugins', 'plugins_registry', 'device-plugins', 'pod-resources']

export class Agent {
  private lock: AgentLock | undefined
  private processRuntime: ProcessRuntimeServer | undefined
  private cri: CriClient | undefined
  private client: RestClient | undefined
  private certificates: ClientCertificateManager | undefined
  private pods: PodManager | undefined
  private apiPods: ApiPods | undefined
  private configMapRefresher: ConfigMapRefresher | undefined
  private staticPods: StaticPodSource | undefined
  private nodeStatus: NodeStatusManager | undefined
  private lease: LeaseRenewer | undefined
  private server: AgentServer | undefined
  private podInfo: PodInfoServer | undefined
  private notifier: Notifier | undefined
  /** the kubelet's Events (only logged without an API) */
  private events: AgentEvents | undefined
  private readonly abort = new AbortController()
  /** the port the HTTPS server listens on (resolved when port 0 was asked) */
  port = 0

  constructor(
    readonly settings: AgentSettings,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv = process.env,
    /** readings of the host (replaceable to test what the agent does with them) */
    private readonly host: {swapEnabled: () => boolean; platform?: NodeJS.Platform} = {swapEnabled},
  ) {}

  /**
   * The agent's health, as the kubelet's watchdog checks it: a problem, or undefined when healthy.
   * The check is the kubelet's "syncloop": the pod manager's sync loop began a round recently.
   */
  healthProblem(): string | undefined {
    return this.pods?.syncLoopProblem(syncLoopMaxAgeMs(this.settings.syncFrequencyMs))
  }

  get standalone(): boolean {
    return this.client === undefined
  }

  /** The kubelet's "sources ready": every pod source has delivered its pods once (standalone: the files, read at start). */
  private sourcesReady(): boolean {
    return this.standalone || (this.apiPods?.synced ?? false)
  }

  async start(): Promise<void> {
    const s = this.settings
    if (s.lockFile) this.lock = acquireLock(s.lockFile)
    try {
      if (s.failSwapOn && this.host.swapEnabled()) {
        throw new Error('running with swap on is not supported: turn swap off, or set failSwapOn: false (and memorySwap.swapBehavior) in the agent configuration')
      }
      for (const dir of ROOT_DIRS) mkdirSync(join(s.rootDir, dir), {recursive: true, mode: 0o700})
      mkdirSync(s.certDir, {recursive: true, mode: 0o700})
      // credentials first, as the kubelet builds its clients (and bootstraps) before the runtime: a
      // missing --kubeconfig stops the agent before anything is started
      await this.connect()
      await this.startRuntime()
      this.events = new AgentEvents({client: () => this.client, nodeName: s.nodeName, logger: this.logger.child({component: 'events'})})
      this.events.starting()
      if (s.enableServer) await this.startServer()
      else this.port = s.port
      if (this.client && s.registerNode) await this.startNode()
      await this.startPods()
      this.notifier = startNotifier(this.env, this.logger, {watchdog: gateEnabled(s, 'SystemdWatchdog'), healthCheck: () => this.healthProblem()})
      await this.notifier?.ready()
      this.logger.info('agent started', {node: s.nodeName, mode: this.standalone ? 'standalone' : 'cluster', runtime: this.cri!.endpoint})
    } catch (error) {
      await this.stop()
      throw error
    }
  }

  private async startRuntime(): Promise<void> {
    const s = this.settings
    let endpoint = s.containerRuntimeEndpoint
    if (endpoint === '') {
      this.processRuntime = await startProcessRuntime({
        rootDir: join(s.rootDir, 'process-runtime'),
        imagesFile: s.processRuntimeImages,
        onError: (method, error) => this.logger.v(2, 'process runtime call failed', {method, error: error.message}),
      })
      endpoint = this.processRuntime.endpoint
    }
    this.cri = new CriClient({endpoint, imageEndpoint: s.imageServiceEndpoint || undefined, timeoutMs: s.runtimeRequestTimeoutMs})
    try {
      const version = await this.cri.version()
      this.logger.info('container runtime', {endpoint, name: version.runtimeName, version: version.runtimeVersion})
    } catch (error) {
      // a runtime that is down is reported in the Ready condition; the agent keeps going
      this.logger.warn('container runtime not answering', {endpoint, error: (error as Error).message})
    }
  }

  private async connect(): Promise<void> {
    const s = this.settings
    this.certificates = new ClientCertificateManager({
      nodeName: s.nodeName,
      certDir: s.certDir,
      kubeconfigPath: s.kubeconfig,
      bootstrapKubeconfigPath: s.bootstrapKubeconfig,
      rotate: s.rotateCertificates,
      logger: this.logger,
      onRotated: (config) => this.useClient(config),
    })
    const config = await this.certificates.load(this.abort.signal)
    if (config) this.useClient(config)
    else this.logger.info('no kubeconfig: standalone mode, running static pods only')
  }

  private useClient(config: ClientConfig): void {
    const previous = this.client
    this.client = new RestClient(config, {userAgent: `orch-agent/${this.settings.agentVersion}`})
    if (previous) setTimeout(() => void previous.close(), 60_000).unref()
  }

  private async startPods(): Promise<void> {
    const s = this.settings
    const cri = this.cri!
    // one ConfigMap source for containers and the volume refresher; standalone: none (a pod that
    // references one waits with CreateContainerConfigError)
    const configMaps = this.client ? new ApiConfigMaps(() => this.client!) : undefined
    this.pods = new PodManager({
      cri,
      rootDir: s.rootDir,
      nodeName: s.nodeName,
      relistPeriodMs: s.relistPeriodMs,
      swapBehavior: s.swapBehavior,
      serializeImagePulls: s.serializeImagePulls,
      imagePullRecords: gateEnabled(s, 'KubeletEnsureSecretPulledImages'),
      podResourceState: gateEnabled(s, 'InPlacePodVerticalScaling'),
      seccompDefault: s.seccompDefault,
      clusterDNS: s.clusterDNS,
      clusterDomain: s.clusterDomain,
      logRotation: {maxSizeBytes: s.containerLogMaxSizeBytes, maxFiles: s.containerLogMaxFiles, maxWorkers: s.containerLogMaxWorkers, monitorIntervalMs: s.containerLogMonitorIntervalMs},
      configMaps,
      logger: this.logger.child({component: 'pods'}),
      events: this.events,
      // runtime pods no source has are removed only once every source delivered its pods
      sourcesReady: () => this.sourcesReady(),
      statusSink: (pod: AnyObject) => this.apiPods?.writeStatus(pod),
      onTerminated: (pod: AnyObject) =>
        void this.apiPods?.terminated(pod).catch((error) => this.logger.warn('could not delete a terminated pod', {pod: pod.metadata?.name, error: (error as Error).message})),
    })
    const podInfo = podInfoSupport(s, this.host.platform ?? process.platform)
    if (!podInfo.serve && gateEnabled(s, 'PodsAPI')) this.logger.warn(`pod-info gRPC socket not started: ${podInfo.reason}`, {socket: join(s.rootDir, 'pods', 'agent.sock')})
    if (podInfo.serve) {
      // served from the start: until the runtime is reconciled and every source has delivered its
      // pods once (the kubelet's "sources ready"), each call is FAILED_PRECONDITION
      const pods = this.pods
      this.podInfo = await startPodInfoServer(join(s.rootDir, 'pods', 'agent.sock'), {
        synced: () => pods.synced() && this.sourcesReady(),
        pods: () => pods.pods(),
        subscribe: (listener) => pods.subscribe(listener),
      })
      this.logger.info('serving pod-info gRPC', {socket: this.podInfo.socketPath})
    }
    await this.pods.start()
    if (this.client) {
      this.apiPods = new ApiPods({
        client: () => this.client!,
        nodeName: s.nodeName,
        nodeUID: () => this.nodeStatus?.uid,
        waitForNode: s.registerNode,
        sink: this.pods,
        logger: this.logger.child({component: 'api-pods'}),
      })
      this.apiPods.start()
      const pods = this.pods
      this.configMapRefresher = new ConfigMapRefresher({
        rootDir: s.rootDir,
        source: configMaps!,
        pods: () => pods.pods(),
        periodMs: s.syncFrequencyMs,
        logger: this.logger.child({component: 'configmaps'}),
      })
      this.configMapRefresher.start()
    }
    if (s.staticPodPath) {
      this.staticPods = new StaticPodSource({
        path: s.staticPodPath,
        nodeName: s.nodeName,
        checkIntervalMs: s.fileCheckFrequencyMs,
        logger: this.logger.child({component: 'static-pods'}),
        onPods: (pods) => {
          this.pods!.setPods('file', pods)
          this.apiPods?.setStaticPods(pods)
        },
      })
      this.staticPods.start()
    }
  }

  private async startNode(): Promise<void> {
    const s = this.settings
    this.nodeStatus = new NodeStatusManager({
      client: () => this.client!,
      nodeName: s.nodeName,
      hostnameAddress: s.hostnameAddress,
      rootDir: s.rootDir,
      port: this.port,
      agentVersion: s.agentVersion,
      maxPods: s.maxPods,
      labels: s.nodeLabels,
      taints: s.registerWithTaints,
      providerID: s.providerID,
      updateIntervalMs: s.nodeStatusUpdateFrequencyMs,
      reportIntervalMs: s.nodeStatusReportFrequencyMs,
      logger: this.logger.child({component: 'node-status'}),
      runtime: () => this.runtimeReport(),
      events: this.events,
    })
    await this.nodeStatus.start()
    this.lease = new LeaseRenewer({
      client: () => this.client!,
      nodeName: s.nodeName,
      leaseDurationSeconds: s.nodeLeaseDurationSeconds,
      // as the kubelet: a quarter of the lease duration (40 s → every 10 s)
      renewIntervalMs: s.nodeLeaseDurationSeconds * 250,
      nodeUID: () => this.nodeStatus?.uid,
      logger: this.logger.child({component: 'lease'}),
    })
    this.lease.start()
  }

  /** The runtime's version, health and handlers, for the Node's status. */
  async runtimeReport(): Promise<RuntimeReport> {
    const cri = this.cri!
    // a runtime that stopped answering must show in Ready soon, not after the CRI call timeout
    const [version, status] = await withDeadline(Promise.all([cri.version(), cri.status()]), RUNTIME_HEALTH_TIMEOUT_MS, 'the runtime did not answer within 5 s')
    const notReady = (status.status?.conditions ?? []).filter((c) => c.type === 'RuntimeReady' && !c.status)
    return {
      version: `${version.runtimeName}://${version.runtimeVersion}`,
      problem: notReady.length > 0 ? `container runtime not ready: ${notReady.map((c) => `${c.reason} ${c.message}`.trim()).join('; ')}` : undefined,
      handlers: (status.runtimeHandlers ?? []).map((h) => ({
        name: h.name,
        features: {recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts ?? false, userNamespaces: h.features?.userNamespaces ?? false},
      })),
    }
  }

  private async servingCertificate(): Promise<{certPem: string; keyPem: string; issued: boolean}> {
    const s = this.settings
    if (s.tlsCertFile && s.tlsPrivateKeyFile) {
      return {certPem: readFileSync(s.tlsCertFile, 'utf8'), keyPem: readFileSync(s.tlsPrivateKeyFile, 'utf8'), issued: true}
    }
    const existing = readPair(join(s.certDir, SERVER_PAIR_FILE))
    if (existing && this.client) return {...existing, issued: true}
    return {...(await selfSignedServing(s.nodeName, [s.hostnameAddress], [internalIP()])), issued: false}
  }

  private async startServer(): Promise<void> {
    const s = this.settings
    const serving = await this.servingCertificate()
    const clientCA = s.clientCAFile ? readFileSync(s.clientCAFile, 'utf8') : this.client?.config.ca?.toString('utf8')
    const cri = this.cri!
    this.server = new AgentServer({
      address: s.address,
      port: s.port,
      rootDir: s.rootDir,
      cert: serving.certPem,
      key: serving.keyPem,
      clientCA,
      client: this.client,
      nodeName: s.nodeName,
      authorizationMode: s.authorizationMode,
      cacheAuthorizedTTLMs: s.cacheAuthorizedTTLMs,
      cacheUnauthorizedTTLMs: s.cacheUnauthorizedTTLMs,
      tokenCacheTTLMs: s.authenticationCacheTTLMs,
      checkpointEnabled: gateEnabled(s, 'ContainerCheckpoint'),
      findContainer: (namespace, pod, container) => this.pods!.findContainer(namespace, pod, container),
      checkpoint: (containerId, location, timeout) => cri.checkpointContainer(containerId, location, timeout),
      findPod: (namespace, name) => this.pods!.pods().find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name),
      containerLog: async (containerId) => {
        const {status} = await cri.containerStatus(containerId)
        return {logPath: status?.logPath ?? '', running: status?.state === 'CONTAINER_RUNNING'}
      },
    })
    const address = await this.server.start()
    this.port = address.port
    this.logger.info('serving', {address: `https://${s.address}:${address.port}`, certificate: serving.issued ? 'issued' : 'self-signed'})
    if (!serving.issued && this.client && s.serverTLSBootstrap) void this.requestServingCertificate()
  }

  /** Asks for an orch.io/agent-serving certificate; serves with it once someone approves and it is issued. */
  private async requestServingCertificate(): Promise<void> {
    const s = this.settings
    try {
      const pair = await requestCertificate({
        client: this.client!,
        signerName: SIGNER_AGENT_SERVING,
        commonName: `system:node:${s.nodeName}`,
        organizations: ['system:nodes'],
        usages: ['digital signature', 'server auth'],
        dnsNames: [s.hostnameAddress],
        ipAddresses: [internalIP()],
        signal: this.abort.signal,
      })
      writePrivate(join(s.certDir, SERVER_PAIR_FILE), pair.certPem + pair.keyPem)
      this.server?.updateCertificate(pair.certPem, pair.keyPem)
      this.logger.info('serving with the issued agent-serving certificate')
    } catch (error) {
      if (!this.abort.signal.aborted) this.logger.warn('no serving certificate issued; keeping the self-signed one', {error: (error as Error).message})
    }
  }

  /** Stops everything the agent started. Pods keep running unless the agent owns the runtime. */
  async stop(): Promise<void> {
    this.abort.abort()
    this.notifier?.close()
    this.lease?.stop()
    await this.nodeStatus?.stop()
    this.staticPods?.stop()
    this.configMapRefresher?.stop()
    await this.apiPods?.stop()
    await this.podInfo?.close()
    await this.server?.stop()
    await this.pods?.stop()
    // what the pods' stop recorded (Killing) still goes out, for a moment
    await this.events?.flush(2000)
    await this.events?.shutdown()
    this.certificates?.stop()
    this.cri?.close()
    await this.processRuntime?.close()
    await this.client?.close()
    this.lock?.release()
  }
}
