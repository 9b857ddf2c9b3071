// A pod's status from what the runtime reports, as the kubelet's status manager computes it: phase,
// conditions (PodScheduled, Initialized, ContainersReady, Ready — transition times kept while the
// status stays), container statuses (state, lastState, restartCount, ready, started), IPs, startTime.
import type {AnyObject} from '../../api/types.js'
import {formatTime} from '../../machinery/managed-fields.js'
import type {Container, ContainerStatus} from '../cri/types.js'
import {isTerminalPhase, mergePhase} from './pod-lifecycle.js'
import {isSidecar} from './sidecars.js'

/** One instance of a container as the runtime has it, with its detailed status when fetched. */
export interface ContainerInstance {
  container: Container
  status?: ContainerStatus
}

export interface Waiting {
  reason: string
  message?: string
}

export interface PodView {
  /** the latest instance per container name, and the one before it */
  latest: Map<string, ContainerInstance>
  previous: Map<string, ContainerInstance>
  podIP?: string
  /** the pod has a ready sandbox (the kubelet's PodReadyToStartContainers) */
  sandboxReady?: boolean
  /** waiting reasons the agent set (image pulls, create errors, back-off) */
  waiting: Map<string, Waiting>
  initialized: boolean
  /** a container will not run again (restartPolicy) and one failed: the pod failed */
  failed: boolean
  /** the pod's deletion stopped everything */
  terminated: boolean
  /** a pod sync handler says the pod is Failed (activeDeadlineSeconds: reason DeadlineExceeded) */
  evicted?: {phase: 'Failed'; reason: string; message: string}
  runtimeName: string
  /** the probes' say on a running container (src/agent/pods/prober.ts); none: started and ready once it runs */
  probed?: (name: string, containerId: string) => {started: boolean; ready: boolean}
}

export function rfc3339(nanoseconds: string | number | bigint | undefined): string | undefined {
  if (nanoseconds === undefined) return undefined
  const ns = BigInt(nanoseconds)
  if (ns <= 0n) return undefined
  return formatTime(new Date(Number(ns / 1_000_000n)))
}

function terminatedState(instance: ContainerInstance, runtimeName: string): AnyObject {
  const status = instance.status
  const exitCode = status?.exitCode ?? 0
  return {
    terminated: {
      exitCode,
      reason: status?.reason || (exitCode === 0 ? 'Completed' : 'Error'),
      ...(status?.message ? {message: status.message} : {}),
      startedAt: rfc3339(status?.startedAt),
      finishedAt: rfc3339(status?.finishedAt),
      containerID: `${runtimeName}://${instance.container.id}`,
    },
  }
}

function containerStatus(spec: AnyObject, view: PodView, initPending: boolean, isInit: boolean, old: AnyObject | undefined): AnyObject {
  const latest = view.latest.get(spec.name)
  const previous = view.previous.get(spec.name)
  const waiting = view.waiting.get(spec.name)
  // the runtime has no instance (it lost them: an agent restart on the process runtime): the kubelet's
  // convertToAPIContainerStatuses keeps a terminated old status, else its restartCount and lastState
  if (!latest && old?.containerID) {
    if (old.state?.terminated && !waiting) return structuredClone(old)
  }
  const out: AnyObject = {name: spec.name, image: spec.image, imageID: '', ready: false, started: false, restartCount: latest?.container.metadata?.attempt ?? (old?.restartCount ?? 0)}
  if (latest) {
    out.containerID = `${view.runtimeName}://${latest.container.id}`
    out.imageID = latest.status?.imageRef || latest.container.imageRef || ''
  }
  const state = latest?.status?.state ?? latest?.container.state
  if (latest && state === 'CONTAINER_RUNNING' && !view.terminated) {
    out.state = {running: {startedAt: rfc3339(latest.status?.startedAt)}}
    // a sidecar (restartable init container) is probed, and is ready, as an app container is
    const probed = isInit && !isSidecar(spec) ? undefined : view.probed?.(spec.name, latest.container.id)
    out.ready = (!isInit || isSidecar(spec)) && (probed?.ready ?? true)
    out.started = probed?.started ?? true
    if (previous) out.lastState = terminatedState(previous, view.runtimeName)
  } else if (latest && (state === 'CONTAINER_EXITED' || view.terminated) && !waiting) {
    out.state = terminatedState(latest, view.runtimeName)
    if (previous) out.lastState = terminatedState(previous, view.runtimeName)
  } else {
    const reason = waiting?.reason ?? (initPending && !isInit ? 'PodInitializing' : 'ContainerCreating')
    out.state = {waiting: {reason, ...(waiting?.message ? {message: waiting.message} : {})}}
    // waiting to restart: the exited instance is the last state
    if (latest && state === 'CONTAINER_EXITED') out.lastState = terminatedState(latest, view.runtimeName)
    else if (previous) out.lastState = terminatedState(previous, view.runtimeName)
    else if (!latest && old?.lastState?.terminated) out.lastState = structuredClone(old.lastState)
  }
  if (!out.lastState) out.lastState = {}
  return out
}

/** Kubernetes' getPhase: from the containers' states and the restart policy. */
function phaseOf(pod: AnyObject, statuses: AnyObject[], view: PodView): string {
  if (view.failed) return 'Failed'
  if (!view.initialized) return 'Pending'
  const policy = pod.spec?.restartPolicy ?? 'Always'
  let running = 0
  let waiting = 0
  let succeeded = 0
  let failed = 0
  for (const status of statuses) {
    if (status.state.running) running++
    else if (status.state.terminated) {
      if (status.state.terminated.exitCode === 0) succeeded++
      else failed++
    } else if (status.state.waiting) {
      // waiting after having run (back-off) counts as running for Always/OnFailure
      if (status.lastState?.terminated) running++
      else waiting++
    }
  }
  if (waiting > 0) return 'Pending'
  if (running > 0) return 'Running'
  if (statuses.length > 0 && succeeded + failed === statuses.length) {
    if (policy === 'Always') return 'Running'
    if (failed > 0 && policy === 'Never') return 'Failed'
    if (failed > 0) return 'Running'
    return 'Succeeded'
  }
  return 'Pending'
}

function condition(previous: AnyObject[] | undefined, type: string, status: boolean, now: string, reason?: string, message?: string): AnyObject {
  const value = status ? 'True' : 'False'
  const before = previous?.find((c) => c.type === type)
  return {
    type,
    status: value,
    lastProbeTime: null,
    lastTransitionTime: before && before.status === value ? before.lastTransitionTime : now,
    ...(reason && !status ? {reason} : {}),
    ...(message && !status ? {message} : {}),
  }
}

/** Go's %s of a []string, as the kubelet's condition messages print the container names: [a b] */
const goList = (names: string[]): string => `[${names.join(' ')}]`

export function computePodStatus(pod: AnyObject, view: PodView, previous: AnyObject | undefined, startTime: string, hostIP: string, now: Date): AnyObject {
  const nowText = formatTime(now)
  const old = (list: AnyObject[] | undefined, name: string): AnyObject | undefined => list?.find((s) => s.name === name)
  const initContainers: AnyObject[] = pod.spec?.initContainers ?? []
  const initStatuses = initContainers.map((c) => containerStatus(c, view, !view.initialized, true, old(previous?.initContainerStatuses, c.name)))
  const statuses = (pod.spec?.containers ?? []).map((c: AnyObject) => containerStatus(c, view, !view.initialized, false, old(previous?.containerStatuses, c.name)))
  const phase = mergePhase({phase: phaseOf(pod, statuses, view)}, previous, pod.status)
  if (view.evicted) Object.assign(phase, view.evicted)
  const sidecarStatuses = initStatuses.filter((s, i) => isSidecar(initContainers[i]))
  const allReady = statuses.length > 0 && [...sidecarStatuses, ...statuses].every((s: AnyObject) => s.ready)
  const finished = isTerminalPhase(phase.phase)
  // the kubelet's Generate*Condition: Initialized is True without init containers; not ready names the containers
  const incomplete = initStatuses.filter((s, i) => (isSidecar(initContainers[i]) ? !s.started : !(s.state.terminated && s.state.terminated.exitCode === 0))).map((s) => s.name as string)
  const initialized = initContainers.length === 0 || view.initialized || incomplete.length === 0
  const unready = [...sidecarStatuses, ...statuses].filter((s: AnyObject) => !s.ready).map((s: AnyObject) => s.name as string)
  const readyMessage = finished || unready.length === 0 ? undefined : `containers with unready status: ${goList(unready)}`
  const conditions = [
    condition(previous?.conditions, 'PodReadyToStartContainers', view.sandboxReady === true && !view.terminated, nowText),
    condition(previous?.conditions, 'Initialized', initialized, nowText, 'ContainersNotInitialized', `containers with incomplete status: ${goList(incomplete)}`),
    condition(previous?.conditions, 'Ready', allReady && !finished, nowText, finished ? 'PodCompleted' : 'ContainersNotReady', readyMessage),
    condition(previous?.conditions, 'ContainersReady', allReady && !finished, nowText, finished ? 'PodCompleted' : 'ContainersNotReady', readyMessage),
    condition(previous?.conditions, 'PodScheduled', true, nowText),
  ]
  const status: AnyObject = {
    phase: phase.phase,
    ...(phase.reason ? {reason: phase.reason} : {}),
    ...(phase.message ? {message: phase.message} : {}),
    conditions,
    hostIP,
    hostIPs: [{ip: hostIP}],
    startTime,
    containerStatuses: statuses,
    qosClass: pod.status?.qosClass,
  }
  if (view.podIP) {
    status.podIP = view.podIP
    status.podIPs = [{ip: view.podIP}]
  } else if (finished && previous?.podIP) {
    // a finished pod keeps the IPs it ran with once its sandbox is gone, as the kubelet's status does
    // (the runtime still reports a stopped sandbox's address)
    status.podIP = previous.podIP
    status.podIPs = structuredClone(previous.podIPs ?? [{ip: previous.podIP}])
  }
  if (initStatuses.length > 0) status.initContainerStatuses = initStatuses
  if (status.qosClass === undefined) delete status.qosClass
  return status
}
