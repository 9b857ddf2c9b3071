// What the runtime holds for a pod, read through CRI, as the kubelet's runtime cache and
// generateAPIPodStatus see it: the pod's sandboxes (newest first) and containers, and the view the
// pod status is computed from (each container's latest and previous instance with its status, the
// pod IP, whether a sandbox is ready).
import type {AnyObject} from '../../api/types.js'
import {isCriError, type CriClient} from '../cri/client.js'
import type {Container, PodSandbox} from '../cri/types.js'
import {LABEL_CONTAINER_NAME, LABEL_POD_UID} from './cri-config.js'
import type {ContainerInstance, PodView, Waiting} from './status.js'

/** A container's instances in the order they were made: by attempt, then creation time. */
export const byAttempt = (a: Container, b: Container): number =>
  (a.metadata?.attempt ?? 0) - (b.metadata?.attempt ?? 0) || Number(BigInt(a.createdAt) - BigInt(b.createdAt))

/** The PLEG's view of the runtime: per pod UID, its sandboxes' and containers' ids and states. */
export function relistSignatures(sandboxes: PodSandbox[], containers: Container[]): Map<string, string> {
  const signatures = new Map<string, string>()
  const add = (uid: string | undefined, part: string): void => {
    if (!uid) return
    signatures.set(uid, `${signatures.get(uid) ?? ''}|${part}`)
  }
  for (const sandbox of sandboxes) add(sandbox.labels?.[LABEL_POD_UID], `${sandbox.id}:${sandbox.state}`)
  for (const container of containers) add(container.labels?.[LABEL_POD_UID], `${container.id}:${container.state}`)
  return signatures
}

/** What of a pod's own state the view carries along. */
export interface PodViewState {
  pod: AnyObject
  waiting: Map<string, Waiting>
  initialized: boolean
  failed: boolean
  terminated: boolean
}

export class PodViews {
  /** the statuses of exited containers, which no longer change */
  private readonly exitedStatus = new Map<string, ContainerInstance['status']>()

  constructor(
    private readonly cri: CriClient,
    private readonly hostIP: string,
  ) {}

  /** The pod's sandboxes (newest first) and containers. */
  async runtimeOf(uid: string): Promise<{sandboxes: PodSandbox[]; containers: Container[]}> {
    const selector = {labelSelector: {[LABEL_POD_UID]: uid}}
    const [sandboxes, containers] = await Promise.all([this.cri.listPodSandbox(selector), this.cri.listContainers(selector)])
    return {sandboxes: sandboxes.sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt))), containers}
  }

  async viewOf(state: PodViewState, sandboxes: PodSandbox[], containers: Container[], runtimeName: string): Promise<PodView> {
    const ready = sandboxes.find((s) => s.state === 'SANDBOX_READY')
    const latest = new Map<string, ContainerInstance>()
    const previous = new Map<string, ContainerInstance>()
    const byName = new Map<string, Container[]>()
    for (const container of containers) {
      const name = container.labels?.[LABEL_CONTAINER_NAME] ?? container.metadata?.name ?? ''
      byName.set(name, [...(byName.get(name) ?? []), container])
    }
    for (const [name, list] of byName) {
      list.sort(byAttempt)
      const last = list[list.length - 1]
      latest.set(name, {container: last, status: await this.statusOf(last)})
      if (list.length > 1) {
        const before = list[list.length - 2]
        previous.set(name, {container: before, status: await this.statusOf(before)})
      }
    }
    // a host-network pod's IPs are the node's (the kubelet's generateAPIPodStatus), also for status.podIP in env
    let podIP: string | undefined = state.pod.spec?.hostNetwork === true ? this.hostIP || undefined : undefined
    if (ready && !podIP) {
      try {
        podIP = (await this.cri.podSandboxStatus(ready.id)).status?.network?.ip || undefined
      } catch {
        podIP = undefined
      }
    }
    const {waiting, initialized, failed, terminated} = state
    return {latest, previous, podIP, sandboxReady: ready !== undefined, waiting, initialized, failed, terminated, runtimeName}
  }

  /** Forgets the statuses of containers that were removed. */
  forget(containerIds: Iterable<string>): void {
    for (const id of containerIds) this.exitedStatus.delete(id)
  }

  private async statusOf(container: Container): Promise<ContainerInstance['status']> {
    const cached = this.exitedStatus.get(container.id)
    if (cached) return cached
    try {
      const status = (await this.cri.containerStatus(container.id)).status ?? undefined
      if (status?.state === 'CONTAINER_EXITED') this.exitedStatus.set(container.id, status)
      return status
    } catch (error) {
      if (isCriError(error)) return undefined
      throw error
    }
  }
}
