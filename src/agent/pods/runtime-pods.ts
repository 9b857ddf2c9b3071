// Clean-ups of what the runtime holds for pods, as the kubelet does them: the sandbox a failed start
// left behind, and the sandboxes and directories of pods that no source has any more.
import type {AnyObject} from '../../api/types.js'
import {objectKey} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import type {CriClient} from '../cri/client.js'
import type {Container, DeepPartial, PodSandbox, PodSandboxConfig} from '../cri/types.js'
import type {AgentEvents} from '../events.js'
import {LABEL_POD_UID} from './cri-config.js'
import {criMessage, type Backoff} from './image-ensure.js'
import type {Waiting} from './status.js'
import {removeOrphanedPodDirectories} from './pod-dirs.js'

/** the key of the sandbox start back-off in a pod's back-offs */
const SANDBOX_BACKOFF = 'sandbox'

/** How long the sandbox start of the pod still backs off after a failure (0: it may start now). */
export function sandboxBackoffRemainingMs(entry: {backoff: Map<string, Backoff>}): number {
  const backoff = entry.backoff.get(SANDBOX_BACKOFF)
  return backoff ? Math.max(0, backoff.until - Date.now()) : 0
}

/**
 * RunPodSandbox, unless a failed start is backing off (as the kubelet's pod worker backs off after a
 * sync error: backOffPeriod, with up to half of it again as jitter): a failure leaves the containers
 * waiting (ContainerCreating, the message of the FailedCreatePodSandBox event) and removes the sandbox the
 * runtime may have left behind; a start that succeeds ends the back-off. Answers the ready sandbox, or
 * when to try again.
 */
export async function startSandbox(
  deps: {cri: CriClient; logger: Logger; backoffPeriodMs: number; events?: AgentEvents},
  uid: string,
  entry: {pod: AnyObject; waiting: Map<string, Waiting>; backoff: Map<string, Backoff>},
  config: DeepPartial<PodSandboxConfig>,
): Promise<PodSandbox | {retryInMs: number}> {
  const {cri, logger} = deps
  const backoff = entry.backoff.get(SANDBOX_BACKOFF)
  if (backoff && Date.now() < backoff.until) return {retryInMs: backoff.until - Date.now()}
  let id: string | undefined
  try {
    id = await cri.runPodSandbox(config)
    const sandbox = (await cri.listPodSandbox({id})).find((s) => s.id === id)
    if (!sandbox) throw new Error(`sandbox ${id} vanished`)
    if (sandbox.state !== 'SANDBOX_READY') throw new Error(`sandbox ${id} is not ready`)
    logger.info('started pod sandbox', {pod: objectKey(entry.pod), sandbox: id.slice(0, 12)})
    entry.backoff.delete(SANDBOX_BACKOFF)
    return sandbox
  } catch (error) {
    const message = `Failed to create pod sandbox: ${criMessage(error)}`
    const delay = Math.round(deps.backoffPeriodMs * (1 + Math.random() / 2))
    entry.backoff.set(SANDBOX_BACKOFF, {delay, until: Date.now() + delay})
    logger.warn('FailedCreatePodSandBox', {pod: objectKey(entry.pod), error: criMessage(error), retryInSeconds: Math.round(delay / 1000)})
    deps.events?.sandboxFailed(entry.pod, message)
    for (const spec of [...(entry.pod.spec?.initContainers ?? []), ...(entry.pod.spec?.containers ?? [])]) {
      entry.waiting.set(spec.name, {reason: 'ContainerCreating', message})
    }
    await removeFailedSandboxes(cri, uid, config.metadata?.attempt ?? 0, id)
    return {retryInMs: delay}
  }
}

/** The sandbox of a failed start (by its id, or the pod's not-ready sandboxes of that attempt) is stopped and removed. */
export async function removeFailedSandboxes(cri: CriClient, uid: string, attempt: number, id: string | undefined): Promise<void> {
  let sandboxes: PodSandbox[] = []
  try {
    sandboxes = await cri.listPodSandbox({labelSelector: {[LABEL_POD_UID]: uid}})
  } catch {
    sandboxes = []
  }
  const failed = sandboxes.filter((s) => s.id === id || (s.state !== 'SANDBOX_READY' && (s.metadata?.attempt ?? 0) === attempt))
  if (id && !failed.some((s) => s.id === id)) failed.push({id} as PodSandbox)
  for (const sandbox of failed) {
    await cri.stopPodSandbox(sandbox.id).catch(() => undefined)
    await cri.removePodSandbox(sandbox.id).catch(() => undefined)
  }
}

/**
 * The kubelet's RemoveOrphanedPods and cleanupOrphanedPodDirs: the sandboxes (and their containers) of
 * pods that no source has are stopped and removed; the directories under {root}/pods of pods no source
 * has and the runtime does not run go.
 */
export async function removeOrphanedPods(cri: CriClient, rootDir: string, sandboxes: PodSandbox[], containers: Container[], known: (uid: string) => boolean, logger: Logger): Promise<void> {
  for (const sandbox of sandboxes) {
    const uid = sandbox.labels?.[LABEL_POD_UID]
    if (!uid || known(uid)) continue
    logger.info('removing a pod no source has', {pod: `${sandbox.metadata?.namespace}/${sandbox.metadata?.name}`})
    for (const container of containers.filter((c) => c.podSandboxId === sandbox.id && c.state === 'CONTAINER_RUNNING')) {
      await cri.stopContainer(container.id, 0).catch(() => undefined)
    }
    await cri.stopPodSandbox(sandbox.id).catch(() => undefined)
    await cri.removePodSandbox(sandbox.id).catch(() => undefined)
  }
  const running = new Set([...sandboxes, ...containers].map((item) => item.labels?.[LABEL_POD_UID]))
  for (const name of removeOrphanedPodDirectories(rootDir, (uid) => known(uid) || running.has(uid))) {
    logger.info('removed the directory of a pod that is gone', {directory: name})
  }
}
