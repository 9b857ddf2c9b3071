// Rules of the kubelet's pod workers and status manager about a pod's life as a whole (pod-wide, not
// per container), kept out of manager.ts:
//  - a pod whose phase is terminal (Succeeded or Failed) in the API or in the agent's own status never
//    runs again: its containers are stopped, never started (podWorkers: a terminal pod is only
//    terminated; the status's phase never goes back from terminal — generateAPIPodStatus' merge);
//  - a container the runtime no longer has keeps its status from the old one (the kubelet's
//    convertToAPIContainerStatuses: a terminated state as it was, else restartCount and lastState), and
//    a container created anew counts its restarts from its log directory (calcRestartCountByLogDir);
//  - a pod adopted from a runtime that kept its containers (an agent restart on containerd) is initialized
//    when an app container runs or every init container completed (findNextInitContainerToRun);
//  - activeDeadlineSeconds: once startTime + activeDeadlineSeconds has passed the pod is Failed,
//    reason DeadlineExceeded (the kubelet's activeDeadlineHandler).
import {readdirSync} from 'node:fs'
import type {AnyObject} from '../../api/types.js'
import type {CriClient} from '../cri/client.js'
import type {Container, PodSandbox} from '../cri/types.js'
import type {AgentEvents} from '../events.js'
import {LABEL_CONTAINER_KIND, LABEL_CONTAINER_NAME} from './cri-config.js'
import type {PodView} from './status.js'

export const isTerminalPhase = (phase: unknown): boolean => phase === 'Succeeded' || phase === 'Failed'

/** The activeDeadlineHandler's reason and message. */
export const DEADLINE_REASON = 'DeadlineExceeded'
export const DEADLINE_MESSAGE = 'Pod was active on the node longer than the specified deadline'

/** When the pod's active deadline passes (ms since the epoch): its start + activeDeadlineSeconds; none without one. */
export function activeDeadlineAt(pod: AnyObject, startMs: number): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds
  if (seconds === undefined || seconds === null || Number.isNaN(startMs)) return undefined
  return startMs + Number(seconds) * 1000
}

/** The pod's grace period for stopping its containers: the deletion's, else terminationGracePeriodSeconds (30). */
export function gracePeriodSeconds(pod: AnyObject): number {
  const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30
  return Math.max(0, Number(grace))
}

/** What of a pod the active deadline check keeps. */
export interface DeadlineState {
  pod: AnyObject
  /** the pod's start in ms, as precise as known (the kubelet's status manager keeps it in full) */
  startMs: number
  /** the pod is past its active deadline: Failed, DeadlineExceeded */
  evicted?: PodView['evicted']
  /** the sync due at the active deadline */
  deadline?: {at: number; timer: NodeJS.Timeout}
}

/**
 * The kubelet's activeDeadlineHandler (ShouldEvict, ShouldSync): past the deadline the pod is to be
 * Failed (the event is recorded once); before it, a sync (wake) is due at the deadline.
 */
export function checkActiveDeadline(state: DeadlineState, nowMs: number, events: AgentEvents | undefined, wake: () => void): void {
  const at = activeDeadlineAt(state.pod, state.startMs)
  if (at === undefined || state.evicted) return
  if (nowMs >= at) {
    state.evicted = {phase: 'Failed', reason: DEADLINE_REASON, message: DEADLINE_MESSAGE}
    // as active_deadline.go records it: type Normal
    events?.pod(state.pod, 'Normal', DEADLINE_REASON, DEADLINE_MESSAGE)
    return
  }
  if (state.deadline?.at === at) return
  if (state.deadline) clearTimeout(state.deadline.timer)
  // a timer can wait at most 2^31-1 ms (~24.8 days): a later deadline is armed again when it fires
  const delay = at - nowMs
  const early = delay > MAX_TIMER_MS
  const timer = setTimeout(() => {
    if (early && state.deadline?.timer === timer) state.deadline = undefined
    wake()
  }, Math.min(delay, MAX_TIMER_MS))
  timer.unref()
  state.deadline = {at, timer}
}

const MAX_TIMER_MS = 2 ** 31 - 1

/** The kubelet's calcRestartCountByLogDir: one more than the highest N of the `N.log*` files, 0 without any. */
export function restartCountFromLogDir(dir: string): number {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  let count = 0
  for (const name of names) {
    const match = /^(\d+)\.log(\..*)?/.exec(name)
    if (match) count = Math.max(count, Number(match[1]) + 1)
  }
  return count
}

const stateOf = (view: PodView, name: string): string | undefined => {
  const instance = view.latest.get(name)
  return instance?.status?.state ?? instance?.container.state
}

/** Every app container exited for good (restartPolicy Never, or OnFailure with exit 0 everywhere). */
export function completed(pod: AnyObject, initialized: boolean, view: PodView): boolean {
  const policy = pod.spec?.restartPolicy ?? 'Always'
  if (policy === 'Always' || !initialized) return false
  const specs: AnyObject[] = pod.spec?.containers ?? []
  return specs.every((spec) => {
    const instance = view.latest.get(spec.name)
    if (!instance || stateOf(view, spec.name) !== 'CONTAINER_EXITED') return false
    return policy === 'Never' || (instance.status?.exitCode ?? 0) === 0
  })
}

/**
 * Whether a pod the agent has just adopted is past its init containers: an app container is running or
 * created, or an app container exists and every init container exited 0 (an agent restart on a runtime
 * that kept the containers).
 */
export function adoptedInitialized(pod: AnyObject, view: PodView): boolean {
  const apps: AnyObject[] = pod.spec?.containers ?? []
  if (apps.some((c) => ['CONTAINER_RUNNING', 'CONTAINER_CREATED'].includes(stateOf(view, c.name) ?? ''))) return true
  if (!apps.some((c) => view.latest.has(c.name))) return false
  // a sidecar (restartPolicy Always) has done its part once it ran
  return (pod.spec?.initContainers ?? []).every((c: AnyObject) =>
    c.restartPolicy === 'Always' ? view.latest.has(c.name) : stateOf(view, c.name) === 'CONTAINER_EXITED' && (view.latest.get(c.name)!.status?.exitCode ?? 0) === 0,
  )
}

/**
 * generateAPIPodStatus' three-way merge: a phase that is not terminal becomes the old (agent) or API
 * phase when that was terminal; with the phase unchanged, the old reason and message are kept.
 */
export function mergePhase(status: AnyObject, old: AnyObject | undefined, api: AnyObject | undefined): AnyObject {
  const base = old ?? api ?? {}
  if (!isTerminalPhase(status.phase)) {
    if (isTerminalPhase(base.phase)) status.phase = base.phase
    else if (isTerminalPhase(api?.phase)) status.phase = api!.phase
  }
  if (status.phase === base.phase) {
    const reason = base.reason || api?.reason
    const message = base.message || api?.message
    if (reason) status.reason = reason
    if (message) status.message = message
  }
  return status
}

/** containers whose Killing event was recorded (oldest dropped past 10,000) */
const killingAnnounced = new Set<string>()

/**
 * A pod that is done (terminal, or every container finished for good): its running containers are
 * stopped within the grace period (app containers first, a Killing event each) and its ready sandboxes
 * stopped. Nothing is removed: the exited containers keep their statuses. Answers whether containers were stopped.
 */
export async function stopFinishedPod(cri: CriClient, events: AgentEvents | undefined, pod: AnyObject, sandboxes: PodSandbox[], containers: Container[], graceSeconds: number): Promise<boolean> {
  const running = containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED')
  const isInit = (c: Container): boolean => c.labels?.[LABEL_CONTAINER_KIND] === 'init'
  // one Killing event per container, however many syncs it takes to stop (a runtime that cannot stop
  // it would otherwise use up the pod's event budget)
  for (const c of running) {
    if (killingAnnounced.has(c.id)) continue
    killingAnnounced.add(c.id)
    if (killingAnnounced.size > 10_000) killingAnnounced.delete(killingAnnounced.values().next().value!)
    events?.killing(pod, c.labels?.[LABEL_CONTAINER_NAME] ?? c.metadata?.name ?? '')
  }
  await Promise.all(running.filter((c) => !isInit(c)).map((c) => cri.stopContainer(c.id, graceSeconds).catch(() => undefined)))
  await Promise.all(running.filter(isInit).map((c) => cri.stopContainer(c.id, graceSeconds).catch(() => undefined)))
  const ready = sandboxes.filter((s) => s.state === 'SANDBOX_READY')
  for (const sandbox of ready) await cri.stopPodSandbox(sandbox.id).catch(() => undefined)
  return running.length > 0
}
