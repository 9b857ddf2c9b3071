// One pass of Kubernetes' updateStatefulSet over a set's pods: the replicas in [start, start+replicas)
// are created (claims first) and, under OrderedReady, each must be Running, Ready and available before
// the next is looked at; pods beyond the range ("condemned") are deleted highest ordinal first; then
// the RollingUpdate strategy replaces old-revision pods from the top down to the partition, keeping at
// most maxUnavailable unavailable (one at a time with the MaxUnavailableStatefulSet gate off). Parallel
// acts on all pods at once (slow-start batches) when it creates and scales down, not when it updates.
import type {StatefulSetControl, SyncInput} from './control.js'
import {retentionPolicy} from './claims.js'
import {
  claimsFor,
  countReplicas,
  identityMatches,
  inOrdinalRange,
  isCreated,
  isFailedOrSucceeded,
  isHealthy,
  isPending,
  isPodRef,
  isRunningAndAvailable,
  isRunningAndReady,
  isTerminating,
  isUnavailable,
  maxUnavailableOf,
  newVersionedPod,
  ordinalOf,
  ownerRefs,
  podRevision,
  replicasOf,
  startOrdinal,
  storageMatches,
  type Pod,
  type SetStatus,
  type StatefulSet,
} from './utils.js'

const MAX_BATCH_SIZE = 500

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** One pass of updateStatefulSet over the replicas and the condemned pods. */
export class Round {
  private readonly replicas: Pod[] = []
  private readonly condemned: Pod[] = []
  private firstUnhealthy: Pod | undefined
  private readonly monotonic: boolean
  private readonly minReadySeconds: number

  constructor(
    private readonly control: StatefulSetControl,
    private readonly input: SyncInput,
    private readonly currentSet: StatefulSet,
    private readonly updateSet: StatefulSet,
    private readonly status: SetStatus,
    private readonly now: number,
  ) {
    const set = input.set
    this.monotonic = set.spec?.podManagementPolicy !== 'Parallel'
    this.minReadySeconds = set.spec?.minReadySeconds ?? 0
    const start = startOrdinal(set)
    const count = replicasOf(set)
    const slots: (Pod | undefined)[] = new Array(count).fill(undefined)
    for (const pod of input.pods) {
      if (inOrdinalRange(pod, set)) slots[ordinalOf(pod) - start] = pod
      else if (ordinalOf(pod) >= 0) this.condemned.push(pod)
    }
    for (let i = 0; i < count; i++) {
      this.replicas.push(slots[i] ?? newVersionedPod(currentSet, updateSet, status.currentRevision, status.updateRevision, start + i))
    }
    this.condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a))
    this.firstUnhealthy = this.replicas.find((p) => !isHealthy(p))
    for (let i = this.condemned.length - 1; i >= 0 && !this.firstUnhealthy; i--) {
      if (!isHealthy(this.condemned[i]!)) this.firstUnhealthy = this.condemned[i]
    }
  }

  private get set(): StatefulSet {
    return this.input.set
  }

  private recount(): void {
    Object.assign(this.status, countReplicas([this.replicas, this.condemned], this.minReadySeconds, this.now, this.status.currentRevision, this.status.updateRevision))
  }

  async run(): Promise<void> {
    if (this.set.metadata.deletionTimestamp) return
    await this.control.collectClaims(this.set, this.input.allPods, this.input.claims)
    try {
      if (await this.runForAll(this.replicas, (i) => this.processReplica(i))) return
      if (await this.runForAll(this.condemned, (i) => this.fixCondemnedClaims(i))) return
      if (await this.runForAll(this.condemned, (i) => this.processCondemned(i))) return
    } finally {
      this.recount()
    }
    const strategy = this.set.spec?.updateStrategy ?? {}
    if (strategy.type === 'OnDelete') return
    await this.rollingUpdate()
  }

  /** runForAll: in order, stopping at the first pod that says so (monotonic), or in slow-start batches. */
  private async runForAll(pods: Pod[], fn: (i: number) => Promise<boolean>): Promise<boolean> {
    if (this.monotonic) {
      for (let i = 0; i < pods.length; i++) if (await fn(i)) return true
      return false
    }
    let next = 0
    for (let batch = Math.min(1, pods.length); batch > 0; batch = Math.min(2 * batch, pods.length - next, MAX_BATCH_SIZE)) {
      const indexes = Array.from({length: batch}, (_, k) => next + k)
      next += batch
      const results = await Promise.allSettled(indexes.map((i) => fn(i)))
      const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason)
      if (errors.length === 1) throw errors[0]
      if (errors.length > 1) throw new Error(`[${errors.map(message).join(', ')}]`)
    }
    return false
  }

  /** processReplica: recreate failed pods, create missing ones, wait (monotonic) for each to be available. */
  private async processReplica(i: number): Promise<boolean> {
    const pod = this.replicas[i]!
    const {set, claims} = this.input
    if (isFailedOrSucceeded(pod)) {
      if (!isTerminating(pod)) await this.control.deletePod(set, pod)
      // the replacement comes in the next sync, once this one is gone
      return true
    }
    if (!isCreated(pod)) {
      if (this.claimIsStale(pod)) return true
      await this.control.createPod(set, pod, claims)
      if (this.monotonic) return true
    }
    if (isPending(pod)) await this.control.createClaims(set, pod, claims)
    if (!this.monotonic) {
      // a terminating pod too, as Kubernetes does: scaled back into range, its claims lose the
      // ownership whenScaled: Delete gave that pod, so the garbage collector keeps them
      if (isCreated(pod)) await this.fixIdentity(pod)
      return false
    }
    if (isTerminating(pod)) return true
    if (!isRunningAndReady(pod)) return true
    if (!isRunningAndAvailable(pod, this.minReadySeconds, this.now)) return true
    await this.fixIdentity(pod)
    return false
  }

  private async fixIdentity(pod: Pod): Promise<void> {
    const {claims} = this.input
    if (identityMatches(this.set, pod) && storageMatches(this.set, pod) && this.control.claimsMatchRetention(this.updateSet, pod, claims)) return
    await this.control.updatePod(this.updateSet, pod, claims)
  }

  /** PodClaimIsStale: under whenScaled Delete, a claim still owned by an earlier pod of this name blocks creation. */
  private claimIsStale(pod: Pod): boolean {
    if (retentionPolicy(this.set).whenScaled === 'Retain') return false
    for (const claim of claimsFor(this.set, ordinalOf(pod)).values()) {
      const existing = this.input.claims.get(claim.metadata.name)
      if (!existing) continue
      const ref = ownerRefs(existing).find((r) => isPodRef(r) && r.name === pod.metadata.name)
      if (ref && ref.uid !== pod.metadata.uid) return true
    }
    return false
  }

  private async fixCondemnedClaims(i: number): Promise<boolean> {
    const pod = this.condemned[i]!
    const {claims} = this.input
    if (!this.control.claimsMatchRetention(this.updateSet, pod, claims)) await this.control.updateClaimsForRetention(this.updateSet, pod, claims)
    return false
  }

  /** processCondemned: delete pods beyond the range, highest ordinal first (one at a time when monotonic). */
  private async processCondemned(i: number): Promise<boolean> {
    const pod = this.condemned[i]!
    if (isTerminating(pod)) return this.monotonic
    if (this.monotonic && pod !== this.firstUnhealthy) {
      if (!isRunningAndReady(pod) || !isRunningAndAvailable(pod, this.minReadySeconds, this.now)) return true
    }
    await this.control.deletePod(this.set, pod)
    return true
  }

  /**
   * The RollingUpdate strategy: old-revision pods from the highest ordinal down to the partition are
   * deleted (the next sync creates them at the update revision). With the MaxUnavailableStatefulSet
   * gate on (updateStatefulSetAfterInvariantEstablished) pods are deleted only while fewer than
   * maxUnavailable replicas are unavailable, whichever pods those are; with it off, one at a time,
   * each once every pod above it is available. Parallel and OrderedReady alike: an old pod that is
   * unavailable too is no exception (a node gone NotReady must not have several pods deleted).
   */
  private async rollingUpdate(): Promise<void> {
    const rollingUpdate = this.set.spec?.updateStrategy?.rollingUpdate
    const updateMin: number = rollingUpdate?.partition ?? 0
    if (this.control.maxUnavailableEnabled) {
      // the gate on: maxUnavailable, default 1, counted over all replicas (below the partition too)
      const maxUnavailable = rollingUpdate ? maxUnavailableOf(rollingUpdate.maxUnavailable, replicasOf(this.set)) : 1
      const unavailable = this.replicas.filter((pod) => this.isUnavailable(pod)).length
      let budget = maxUnavailable - unavailable
      for (let target = this.replicas.length - 1; target >= updateMin && budget > 0; target--) {
        const pod = this.replicas[target]!
        if (!this.needsUpdate(pod)) continue
        await this.deleteForUpdate(pod)
        budget--
      }
      return
    }
    // the gate off: maxUnavailable is ignored, even when the stored set has it
    for (let target = this.replicas.length - 1; target >= updateMin; target--) {
      const pod = this.replicas[target]!
      if (this.needsUpdate(pod)) {
        await this.deleteForUpdate(pod)
        return
      }
      // wait for a pod above (updated, or terminating) to be Running, Ready and available
      if (this.isUnavailable(pod)) return
    }
  }

  private isUnavailable(pod: Pod): boolean {
    return isUnavailable(pod, this.minReadySeconds, this.now)
  }

  /** An old-revision pod that is not terminating yet. */
  private needsUpdate(pod: Pod): boolean {
    return podRevision(pod) !== this.status.updateRevision && !isTerminating(pod)
  }

  /** Deletes a pod for the update; a pod only made this sync (not yet seen from the server) is left for the next. */
  private async deleteForUpdate(pod: Pod): Promise<void> {
    if (!isCreated(pod)) return
    await this.control.deletePod(this.set, pod)
    this.status.currentReplicas--
  }
}
