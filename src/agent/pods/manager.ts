// The agent's pod lifecycle, as the kubelet's pod workers, PLEG and status manager do it, small:
//  - sources (the API, static manifests) give the desired pods; each pod has one worker at a time
//    that syncs it (sandbox — a failed start is removed and retried with back-off —, init containers in
//    order, app containers, restarts with back-off) or
//    terminates it (containers stopped within the grace period, then the sandbox);
//  - a pod lifecycle event generator relists the runtime every relistPeriodMs and wakes the worker
//    of each pod whose containers changed;
//  - image pulls of all pods go through one ImagePuller: one at a time unless serializeImagePulls is false;
//  - each sync computes the pod's status from the runtime as the sync found it (what it starts is
//    reported by the sync the next relist wakes); a change goes to the subscribers (the pod-info
//    socket) at once and to statusSink (the API writer).
// Pods a previous agent started are adopted (found by their labels), not restarted.
import {join} from 'node:path'
import type {AnyObject} from '../../api/types.js'
import {objectKey} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import type {CriClient} from '../cri/client.js'
import type {Container, DeepPartial, PodSandbox, PodSandboxConfig} from '../cri/types.js'
import {podName, type AgentEvents} from '../events.js'
import {cgroupReading, hostCapacity, internalIP, type CgroupReading} from '../host.js'
import {
  ContainerConfigError,
  LABEL_CONTAINER_KIND,
  LABEL_CONTAINER_NAME,
  containerConfig,
  sandboxConfig,
  type ConfigContext,
} from './cri-config.js'
import type {ConfigMapSource} from './configmap-volume.js'
import {criMessage, ensureImage, type Backoff, type ImageDependencies} from './image-ensure.js'
import {ImagePuller} from './image-puller.js'
import {ContainerLogRotator, type LogRotationOptions} from './log-rotation.js'
import {removePodDirectories} from './pod-dirs.js'
import {byAttempt, PodViews, relistSignatures} from './pod-view.js'
import {Prober} from './prober.js'
import {isSidecar, nextInitStep, sidecarsOf} from './sidecars.js'
import {removeOrphanedPods, sandboxBackoffRemainingMs, startSandbox} from './runtime-pods.js'
import {PodResourceState, PullRecords} from './state-files.js'
import {adoptedInitialized, checkActiveDeadline, completed, gracePeriodSeconds, isTerminalPhase, type DeadlineState, restartCountFromLogDir, stopFinishedPod} from './pod-lifecycle.js'
import {podLogDirectory} from './pod-dirs.js'
import {computePodStatus, rfc3339, type ContainerInstance, type PodView, type Waiting} from './status.js'

export interface PodManagerOptions {
  cri: CriClient
  rootDir: string
  nodeName: string
  relistPeriodMs?: number
  /** container restart and image pull back-off: initialMs doubling to maxMs (kubelet: 10 s to 300 s) */
  backoff?: {initialMs: number; maxMs: number}
  swapBehavior?: 'NoSwap' | 'LimitedSwap'
  /** pull one image at a time, through a queue shared by every pod (the kubelet's default); false: in parallel */
  serializeImagePulls?: boolean
  /** gate KubeletEnsureSecretPulledImages: keep image pull records under {root}/image_manager */
  imagePullRecords?: boolean
  /** gate InPlacePodVerticalScaling: keep {root}/allocated_pods_state and {root}/actuated_pods_state */
  podResourceState?: boolean
  /** the host's cgroup mode and swap controller (default: read from the host, as the kubelet does) */
  cgroups?: CgroupReading
  seccompDefault?: boolean
  clusterDNS?: string[]
  clusterDomain?: string
  /** ConfigMaps for env, envFrom and configMap volumes (the API); none in standalone mode */
  configMaps?: ConfigMapSource
  /** container log rotation (containerLogMaxSize, ...; see log-rotation.ts); none: logs are not rotated */
  logRotation?: Pick<LogRotationOptions, 'maxSizeBytes' | 'maxFiles' | 'maxWorkers' | 'monitorIntervalMs'>
  statusSink?: (pod: AnyObject) => void
  /** the kubelet's Events about pods and containers (src/agent/events.ts); none: not recorded */
  events?: AgentEvents
  onTerminated?: (pod: AnyObject) => void
  /** true once every pod source has delivered its pods: only then are unknown runtime pods removed */
  sourcesReady?: () => boolean
  logger: Logger
  now?: () => Date
}

interface PodEntry extends DeadlineState {
  pod: AnyObject
  source: string
  /** gone from its source: terminate, then forget */
  removed: boolean
  startTime: string
  status?: AnyObject
  waiting: Map<string, Waiting>
  backoff: Map<string, Backoff>
  initialized: boolean
  failed: boolean
  terminated: boolean
  terminatedReported: boolean
  /** synced at least once since the agent started (adoption of what the runtime kept is done) */
  adopted: boolean
  view?: PodView
  dirty: boolean
  worker?: Promise<void>
  timer?: NodeJS.Timeout
}


export class PodManager {
  private readonly entries = new Map<string, PodEntry>()
  private readonly listeners = new Set<(pod: AnyObject) => void>()
  private relistSignatures = new Map<string, string>()
  private relistTimer: NodeJS.Timeout | undefined
  private started = false
  private stopped = false
  private runtimeName = 'unknown'
  private readonly context: ConfigContext
  private readonly backoffInitial: number
  private readonly backoffMax: number
  private readonly now: () => Date
  /** when the sync loop (each relist) last began, in ms; undefined before the first */
  private loopEnteredAt: number | undefined
  /** every pod's image pulls go through this one (serial or parallel, per serializeImagePulls) */
  readonly imagePuller: ImagePuller
  private readonly pullRecords: PullRecords | undefined
  private readonly imageDependencies: ImageDependencies
  private readonly allocated: PodResourceState | undefined
  private readonly actuated: PodResourceState | undefined
  /** startup, liveness and readiness probes of the pods' containers */
  private readonly prober: Prober
  /** what the runtime holds for each pod */
  private readonly views: PodViews
  /** the kubelet's ContainerLogManager: rotates the running containers' log files */
  private readonly logRotator: ContainerLogRotator | undefined

  constructor(private readonly options: PodManagerOptions) {
    if (options.logRotation) this.logRotator = new ContainerLogRotator({...options.logRotation, cri: options.cri, logger: options.logger, now: options.now})
    this.prober = new Prober({cri: options.cri, events: options.events, logger: options.logger, onChange: (uid) => this.wake(uid)})
    this.imagePuller = new ImagePuller({serialize: options.serializeImagePulls ?? true})
    if (options.imagePullRecords) this.pullRecords = new PullRecords(join(options.rootDir, 'image_manager'))
    if (options.podResourceState) {
      this.allocated = new PodResourceState(join(options.rootDir, 'allocated_pods_state'))
      this.actuated = new PodResourceState(join(options.rootDir, 'actuated_pods_state'))
    }
    const capacity = hostCapacity(options.rootDir)
    const cgroups = options.cgroups ?? cgroupReading()
    this.context = {
      rootDir: options.rootDir,
      nodeName: options.nodeName,
      hostIP: internalIP(),
      swapBehavior: options.swapBehavior ?? 'NoSwap',
      memoryBytes: capacity.memoryBytes,
      swapBytes: capacity.swapBytes,
      cgroupV2: cgroups.v2,
      swapControllerAvailable: cgroups.swapController,
      seccompDefault: options.seccompDefault ?? false,
      clusterDNS: options.clusterDNS ?? [],
      clusterDomain: options.clusterDomain ?? '',
      configMaps: options.configMaps,
    }
    this.views = new PodViews(options.cri, this.context.hostIP)
    this.backoffInitial = options.backoff?.initialMs ?? 10_000
    this.backoffMax = options.backoff?.maxMs ?? 300_000
    this.now = options.now ?? (() => new Date())
    this.imageDependencies = {
      cri: options.cri,
      puller: this.imagePuller,
      records: this.pullRecords,
      persist: (what, write) => this.persist(what, write),
      now: this.now,
      backoffInitialMs: this.backoffInitial,
      backoffMaxMs: this.backoffMax,
    }
  }

  // ------------------------------------------------------------------------------------ PodSource

  synced(): boolean {
    return this.started
  }

  pods(): AnyObject[] {
    return [...this.entries.values()].map((entry) => this.withStatus(entry))
  }

  subscribe(listener: (pod: AnyObject) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  podStatus(uid: string): AnyObject | undefined {
    return this.entries.get(uid)?.status
  }

  /** The running container `container` of pod namespace/name, for the checkpoint endpoint. */
  findContainer(namespace: string, name: string, container: string): {containerId: string} | undefined {
    for (const entry of this.entries.values()) {
      const meta = entry.pod.metadata!
      if (meta.namespace !== namespace || meta.name !== name || entry.terminated) continue
      const latest = entry.view?.latest.get(container)
      const state = latest?.status?.state ?? latest?.container.state
      if (latest && state === 'CONTAINER_RUNNING') return {containerId: latest.container.id}
    }
    return undefined
  }

  // ------------------------------------------------------------------------------------ sources

  async start(): Promise<void> {
    try {
      this.runtimeName = (await this.options.cri.version()).runtimeName
    } catch (error) {
      this.options.logger.warn('runtime version unknown', {error: (error as Error).message})
    }
    await this.relist().catch((error) => this.options.logger.warn('first relist failed', {error: (error as Error).message}))
    this.started = true
    this.scheduleRelist()
    if (!this.stopped) this.logRotator?.start()
  }

  async stop(options: {stopPods?: boolean} = {}): Promise<void> {
    await this.logRotator?.stop()
    if (options.stopPods) {
      for (const [uid, entry] of this.entries) {
        entry.removed = true
        this.wake(uid)
      }
      await Promise.all([...this.entries.values()].map((entry) => entry.worker))
    }
    this.stopped = true
    await this.prober.stop()
    if (this.relistTimer) clearTimeout(this.relistTimer)
    for (const entry of this.entries.values()) for (const timer of [entry.timer, entry.deadline?.timer]) if (timer) clearTimeout(timer)
    await Promise.all([...this.entries.values()].map((entry) => entry.worker))
  }

  /** The full set of pods of one source: new ones start, changed ones sync, missing ones terminate. */
  setPods(source: string, pods: AnyObject[]): void {
    const uids = new Set(pods.map((pod) => pod.metadata!.uid as string))
    for (const [uid, entry] of this.entries) {
      if (entry.source === source && !uids.has(uid)) this.deletePod(source, uid)
    }
    for (const pod of pods) this.upsertPod(source, pod)
  }

  upsertPod(source: string, pod: AnyObject): void {
    const uid = pod.metadata!.uid as string
    const entry = this.entries.get(uid)
    if (entry) {
      entry.pod = pod
      entry.source = source
    } else {
      // admission: the resources allocated to the pod are recorded once (kept across agent restarts)
      if (this.allocated && !this.allocated.has(uid)) this.persist('allocated_pods_state', () => this.allocated!.setPod(uid, pod))
      this.entries.set(uid, {
        pod,
        source,
        removed: false,
        startTime: pod.status?.startTime ?? rfc3339(BigInt(this.now().getTime()) * 1_000_000n)!,
        startMs: pod.status?.startTime ? Date.parse(pod.status.startTime) : this.now().getTime(),
        waiting: new Map(),
        backoff: new Map(),
        initialized: false,
        failed: false,
        terminated: false,
        terminatedReported: false,
        adopted: false,
        dirty: false,
      })
    }
    this.wake(uid)
  }

  deletePod(source: string, uid: string): void {
    const entry = this.entries.get(uid)
    if (!entry || entry.source !== source) return
    entry.removed = true
    this.wake(uid)
  }

  // ------------------------------------------------------------------------------------ workers

  private wake(uid: string): void {
    const entry = this.entries.get(uid)
    if (!entry || this.stopped) return
    entry.dirty = true
    if (!entry.worker) entry.worker = this.runWorker(uid)
  }

  private async runWorker(uid: string): Promise<void> {
    const entry = this.entries.get(uid)
    if (!entry) return
    try {
      while (entry.dirty && !this.stopped) {
        entry.dirty = false
        try {
          await this.syncPod(uid, entry)
        } catch (error) {
          this.options.logger.warn('pod sync failed', {pod: objectKey(entry.pod), error: (error as Error).message})
          this.wakeLater(uid, entry, 1000)
        }
        if (entry.removed && entry.terminated) {
          this.entries.delete(uid)
          this.forgetPodState(uid)
          // its containers are removed with its sandboxes: its volumes and logs go too
          this.persist('pod directories', () => removePodDirectories(this.options.rootDir, entry.pod))
          if (entry.timer) clearTimeout(entry.timer)
          if (entry.deadline) clearTimeout(entry.deadline.timer)
          return
        }
      }
    } finally {
      entry.worker = undefined
    }
  }

  private wakeLater(uid: string, entry: PodEntry, delayMs: number): void {
    if (this.stopped) return
    if (entry.timer) clearTimeout(entry.timer)
    entry.timer = setTimeout(() => {
      entry.timer = undefined
      this.wake(uid)
    }, Math.max(0, delayMs))
    entry.timer.unref()
  }

  private shouldTerminate(entry: PodEntry): boolean {
    return entry.removed || Boolean(entry.pod.metadata?.deletionTimestamp)
  }

  private async syncPod(uid: string, entry: PodEntry): Promise<void> {
    if (this.shouldTerminate(entry)) {
      if (!entry.terminated) await this.terminate(uid, entry)
      await this.updateStatus(uid, entry)
      if (!entry.terminatedReported) {
        entry.terminatedReported = true
        this.options.onTerminated?.(this.withStatus(entry))
      }
      return
    }
    const {sandboxes, containers} = await this.runtimeOf(uid)
    const view = await this.viewOf(entry, sandboxes, containers)
    if (!entry.adopted) {
      // what a previous agent left in the runtime (containerd keeps it): past the init containers?
      entry.adopted = true
      if (!entry.initialized && adoptedInitialized(entry.pod, view)) entry.initialized = true
    }
    // a pod in a terminal phase (in the API or in the agent's status) never runs again
    const terminal = isTerminalPhase(entry.pod.status?.phase) || isTerminalPhase(entry.status?.phase)
    if (!terminal) checkActiveDeadline(entry, this.now().getTime(), this.options.events, () => this.wake(uid))
    const finished = terminal || entry.evicted !== undefined || entry.failed || completed(entry.pod, entry.initialized, view)
    if (!finished) {
      await this.reconcile(uid, entry, sandboxes, view)
      // the kubelet's generateAPIPodStatus: a sync reports the runtime as it found it. What it started is
      // reported by a later sync from what the runtime says then (the relist sees the new container and
      // wakes the pod), so a container that exits at once is never seen running, nor ready.
      await this.updateStatus(uid, entry, view)
      return
    }
    // a finished pod keeps its containers (their exit codes) but not its sandbox: as the kubelet's SyncPod
    // then SyncTerminatingPod, reported as found, then as left once stopped; found with containers still
    // running it is not reported (a terminal phase is never written while a container may run)
    if (!containers.some((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED')) await this.updateStatus(uid, entry, view)
    if (await stopFinishedPod(this.options.cri, this.options.events, entry.pod, sandboxes, containers, gracePeriodSeconds(entry.pod))) {
      await this.viewOf(entry, sandboxes, (await this.runtimeOf(uid)).containers)
    }
    entry.view!.sandboxReady = false
    await this.updateStatus(uid, entry)
  }

  private runtimeOf(uid: string): Promise<{sandboxes: PodSandbox[]; containers: Container[]}> {
    return this.views.runtimeOf(uid)
  }

  private async viewOf(entry: PodEntry, sandboxes: PodSandbox[], containers: Container[]): Promise<PodView> {
    entry.view = await this.views.viewOf(entry, sandboxes, containers, this.runtimeName)
    return entry.view
  }

  // ------------------------------------------------------------------------------------ running

  private async reconcile(uid: string, entry: PodEntry, sandboxes: PodSandbox[], view: PodView): Promise<void> {
    const cri = this.options.cri
    let sandbox = sandboxes.find((s) => s.state === 'SANDBOX_READY')
    const attempt = sandboxes.length > 0 ? Math.max(...sandboxes.map((s) => s.metadata?.attempt ?? 0)) + 1 : 0
    const podSandboxConfig = sandboxConfig(entry.pod, sandbox?.metadata?.attempt ?? attempt, this.context)
    if (!sandbox) {
      // backing off after a failed start: nothing is killed or re-created (nor announced) before it ends
      const backingOff = sandboxBackoffRemainingMs(entry)
      if (backingOff > 0) {
        this.wakeLater(uid, entry, backingOff)
        return
      }
      // a new sandbox means the old containers are gone with the old one
      for (const instance of view.latest.values()) {
        if ((instance.status?.state ?? instance.container.state) === 'CONTAINER_RUNNING') await cri.stopContainer(instance.container.id, 0).catch(() => undefined)
      }
      if (sandboxes.length > 0) this.options.events?.sandboxChanged(entry.pod)
      const started = await startSandbox({cri, logger: this.options.logger, backoffPeriodMs: this.backoffInitial, events: this.options.events}, uid, entry, podSandboxConfig)
      if ('retryInMs' in started) {
        this.wakeLater(uid, entry, started.retryInMs)
        return
      }
      entry.initialized = false
      sandbox = started
      await this.viewOf(entry, [sandbox], (await this.runtimeOf(uid)).containers)
    }
    const current = entry.view!
    const policy = entry.pod.spec?.restartPolicy ?? 'Always'
    // init containers, one after another, each to a zero exit
    if (!entry.initialized) {
      const step = nextInitStep(entry.pod, current, this.prober.update(uid, entry.pod, current))
      if (step.action === 'fail') entry.failed = true
      else if (step.action === 'start') await this.startCreated(entry, step.spec, step.instance)
      else if (step.action === 'restart') await this.restart(uid, entry, step.spec, 'init', step.instance, sandbox.id, podSandboxConfig)
      else if (step.action === 'create') await this.createAndStart(uid, entry, step.spec, 'init', this.firstAttempt(entry, step.spec), sandbox.id, podSandboxConfig)
      if (step.action !== 'done') return
      entry.initialized = true
      current.initialized = true
    }
    // the sidecars keep running beside the app containers: restarted whenever they exit
    for (const spec of [...sidecarsOf(entry.pod), ...(entry.pod.spec?.containers ?? [])]) {
      const instance = current.latest.get(spec.name)
      const state = instance?.status?.state ?? instance?.container.state
      const [kind, restartPolicy] = isSidecar(spec) ? (['init', 'Always'] as const) : (['app', policy] as const)
      if (!instance) await this.createAndStart(uid, entry, spec, kind, this.firstAttempt(entry, spec), sandbox.id, podSandboxConfig)
      else if (state === 'CONTAINER_CREATED') await this.startCreated(entry, spec, instance)
      else if (state === 'CONTAINER_EXITED') {
        const exitCode = instance.status?.exitCode ?? 0
        if (restartPolicy === 'Always' || (restartPolicy === 'OnFailure' && exitCode !== 0)) await this.restart(uid, entry, spec, kind, instance, sandbox.id, podSandboxConfig)
      } else if (state === 'CONTAINER_RUNNING') {
        entry.waiting.delete(spec.name)
        // a failed liveness or startup probe: stopped now, restarted (per restartPolicy) by the next round
        if (await this.prober.killIfUnhealthy(uid, spec, instance.container.id)) this.wake(uid)
      }
    }
  }

  /** The attempt of a container the runtime has no instance of: its restart count from its log directory. */
  private firstAttempt(entry: PodEntry, spec: AnyObject): number {
    return restartCountFromLogDir(join(podLogDirectory(this.options.rootDir, entry.pod), spec.name))
  }

  private async startCreated(entry: PodEntry, spec: AnyObject, instance: ContainerInstance): Promise<void> {
    try {
      await this.options.cri.startContainer(instance.container.id)
      entry.waiting.delete(spec.name)
      this.options.events?.started(entry.pod, spec.name)
    } catch (error) {
      entry.waiting.set(spec.name, {reason: 'RunContainerError', message: criMessage(error)})
      this.options.events?.failed(entry.pod, spec.name, criMessage(error))
    }
  }

  /** Restarts an exited container, unless it is backing off (CrashLoopBackOff until the back-off ends). */
  private async restart(uid: string, entry: PodEntry, spec: AnyObject, kind: 'init' | 'app', instance: ContainerInstance, sandboxId: string, podSandboxConfig: DeepPartial<PodSandboxConfig>): Promise<void> {
    const now = Date.now()
    const key = `restart/${spec.name}`
    const backoff = entry.backoff.get(key)
    if (backoff && now - backoff.until > 2 * this.backoffMax) entry.backoff.delete(key)
    const current = entry.backoff.get(key)
    if (current && now < current.until) {
      entry.waiting.set(spec.name, {reason: 'CrashLoopBackOff', message: `back-off ${Math.round(current.delay / 1000)}s restarting failed container=${spec.name} pod=${podName(entry.pod)}`})
      this.options.events?.restartBackOff(entry.pod, spec.name)
      this.wakeLater(uid, entry, current.until - now)
      return
    }
    const delay = current ? Math.min(current.delay * 2, this.backoffMax) : this.backoffInitial
    entry.backoff.set(key, {delay, until: now + delay})
    await this.createAndStart(uid, entry, spec, kind, (instance.container.metadata?.attempt ?? 0) + 1, sandboxId, podSandboxConfig)
  }

  private async createAndStart(uid: string, entry: PodEntry, spec: AnyObject, kind: 'init' | 'app', attempt: number, sandboxId: string, podSandboxConfig: DeepPartial<PodSandboxConfig>): Promise<void> {
    const cri = this.options.cri
    const image = await ensureImage(this.imageDependencies, entry, spec, this.options.events?.forContainer(entry.pod, spec.name))
    if (image !== true) {
      if (image.retryInMs !== undefined) this.wakeLater(uid, entry, image.retryInMs)
      return
    }
    let config
    try {
      config = await containerConfig(entry.pod, spec, kind, attempt, {...this.context, podIP: entry.view?.podIP})
    } catch (error) {
      if (!(error instanceof ContainerConfigError)) throw error
      entry.waiting.set(spec.name, {reason: error.reason, message: error.message})
      this.options.events?.failed(entry.pod, spec.name, error.message)
      this.wakeLater(uid, entry, this.backoffInitial)
      return
    }
    let id: string
    try {
      id = await cri.createContainer(sandboxId, config, podSandboxConfig)
      // the runtime accepted these resources for the container
      if (this.actuated) this.persist('actuated_pods_state', () => this.actuated!.setContainer(uid, spec))
    } catch (error) {
      entry.waiting.set(spec.name, {reason: 'CreateContainerError', message: criMessage(error)})
      this.options.events?.failed(entry.pod, spec.name, criMessage(error))
      this.wakeLater(uid, entry, this.backoffInitial)
      return
    }
    this.options.events?.created(entry.pod, spec.name)
    try {
      await cri.startContainer(id)
      entry.waiting.delete(spec.name)
      this.options.logger.info('started container', {pod: objectKey(entry.pod), container: spec.name, attempt})
      this.options.events?.started(entry.pod, spec.name)
    } catch (error) {
      entry.waiting.set(spec.name, {reason: 'RunContainerError', message: criMessage(error)})
      this.options.events?.failed(entry.pod, spec.name, criMessage(error))
    }
    // older exited instances than the one before are of no use any more
    const {sandboxes, containers} = await this.runtimeOf(uid)
    const mine = containers.filter((c) => c.labels?.[LABEL_CONTAINER_NAME] === spec.name).sort(byAttempt)
    for (const old of mine.slice(0, -2)) {
      if (old.state !== 'CONTAINER_EXITED') continue
      await cri.removeContainer(old.id).catch(() => undefined)
      this.views.forget([old.id])
    }
    await this.viewOf(entry, sandboxes, containers.filter((c) => !mine.slice(0, -2).includes(c) || c.state !== 'CONTAINER_EXITED'))
  }

  // ------------------------------------------------------------------------------------ stopping

  private async terminate(uid: string, entry: PodEntry): Promise<void> {
    const cri = this.options.cri
    const grace = gracePeriodSeconds(entry.pod)
    this.prober.removePod(uid)
    const {sandboxes, containers} = await this.runtimeOf(uid)
    const running = containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED')
    const isInit = (c: Container): boolean => c.labels?.[LABEL_CONTAINER_KIND] === 'init'
    this.options.logger.info('stopping pod', {pod: objectKey(entry.pod), gracePeriodSeconds: grace})
    for (const c of running) this.options.events?.killing(entry.pod, c.labels?.[LABEL_CONTAINER_NAME] ?? c.metadata?.name ?? '')
    await Promise.all(running.filter((c) => !isInit(c)).map((c) => cri.stopContainer(c.id, grace).catch(() => undefined)))
    await Promise.all(running.filter(isInit).map((c) => cri.stopContainer(c.id, grace).catch(() => undefined)))
    await this.viewOf(entry, sandboxes, (await this.runtimeOf(uid)).containers)
    entry.terminated = true
    entry.view!.terminated = true
    for (const sandbox of sandboxes) {
      await cri.stopPodSandbox(sandbox.id).catch(() => undefined)
      await cri.removePodSandbox(sandbox.id).catch(() => undefined)
    }
    entry.waiting.clear()
    this.views.forget(containers.map((container) => container.id))
  }

  // ------------------------------------------------------------------------------------ status

  private withStatus(entry: PodEntry): AnyObject {
    return {...entry.pod, status: entry.status ?? entry.pod.status ?? {}}
  }

  /** The pod's status from `view` (default: the latest look at the runtime); subscribers and the sink get a change. */
  private async updateStatus(uid: string, entry: PodEntry, view?: PodView): Promise<void> {
    view ??= entry.view ?? (await this.viewOf(entry, [], []))
    view.initialized = entry.initialized
    view.failed = entry.failed
    view.terminated = entry.terminated
    view.evicted = entry.evicted
    view.probed = this.prober.update(uid, entry.pod, view)
    const status = computePodStatus(entry.pod, view, entry.status ?? entry.pod.status, entry.startTime, this.context.hostIP, this.now())
    if (JSON.stringify(status) === JSON.stringify(entry.status)) return
    entry.status = status
    const pod = this.withStatus(entry)
    for (const listener of this.listeners) listener(pod)
    this.options.statusSink?.(pod)
  }

  // ------------------------------------------------------------------------------------ PLEG

  private scheduleRelist(): void {
    if (this.stopped) return
    this.relistTimer = setTimeout(() => {
      void this.relist()
        .catch((error) => this.options.logger.v(1, 'relist failed', {error: (error as Error).message}))
        .finally(() => this.scheduleRelist())
    }, this.options.relistPeriodMs ?? 1000)
    this.relistTimer.unref()
  }

  /**
   * The kubelet's SyncLoopHealthCheck: a problem when the sync loop (the relist) has not begun a round
   * for longer than maxAgeMs (the agent gives max(2 × syncFrequency, 5 min)); none before the first round.
   */
  syncLoopProblem(maxAgeMs: number): string | undefined {
    if (this.loopEnteredAt === undefined) return undefined
    const age = this.now().getTime() - this.loopEnteredAt
    return age > maxAgeMs ? `sync loop took longer than expected: last round began ${Math.round(age / 1000)} s ago (limit ${Math.round(maxAgeMs / 1000)} s)` : undefined
  }

  /** Drops a pod's entries from the resource state files (it is gone). */
  private forgetPodState(uid: string): void {
    if (this.allocated) this.persist('allocated_pods_state', () => this.allocated!.removePod(uid))
    if (this.actuated) this.persist('actuated_pods_state', () => this.actuated!.removePod(uid))
  }

  /** Writes a state file; a failure is logged, never fatal to the pod (as the kubelet logs it). */
  private persist(what: string, write: () => void): void {
    try {
      write()
    } catch (error) {
      this.options.logger.warn(`could not write ${what}`, {error: (error as Error).message})
    }
  }

  /** Lists the runtime; wakes each pod whose sandboxes or containers changed; removes pods no source has. */
  private async relist(): Promise<void> {
    this.loopEnteredAt = this.now().getTime()
    const [sandboxes, containers] = await Promise.all([this.options.cri.listPodSandbox(), this.options.cri.listContainers()])
    const signatures = relistSignatures(sandboxes, containers)
    for (const [uid, signature] of signatures) {
      if (this.relistSignatures.get(uid) !== signature) this.wake(uid)
    }
    for (const uid of this.relistSignatures.keys()) if (!signatures.has(uid)) this.wake(uid)
    this.relistSignatures = signatures
    if (this.started && (this.options.sourcesReady?.() ?? true)) {
      // the kubelet's RemoveOrphanedPods: state of pods no source has any more
      for (const uid of new Set([...(this.allocated?.uids() ?? []), ...(this.actuated?.uids() ?? [])])) if (!this.entries.has(uid)) this.forgetPodState(uid)
      await removeOrphanedPods(this.options.cri, this.options.rootDir, sandboxes, containers, (uid) => this.entries.has(uid), this.options.logger)
    }
  }
}


