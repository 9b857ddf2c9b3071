// One sync of a StatefulSet, after Kubernetes' defaultStatefulSetControl (stateful_set_control.go) and
// StatefulPodControl (stateful_pod_control.go): find or create the update revision, let a Round
// (round.ts) act on the pods, write the status (only when it changed), prune the revision history.
// The pod and claim operations (create claims then pod, delete, fix identity, claim ownership) and the
// events they record are here.
//
// As in Kubernetes (StatefulSetAutoDeletePVC), deleting a pod never deletes a claim: under whenScaled:
// Delete a scaled-down pod's claims are first given that pod as controller owner (claims.ts), and the
// garbage collector deletes them once the pod object is gone, not while it terminates. collectClaims
// makes the same deletes, on the same condition, for a server run without the garbage collector.
import {ApiStatusError, type ResourceLocator, type RestClient} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import {desiredClaimOwnerRefs, hasUnexpectedController, isClaimOfSet, isClaimOwnerUpToDate} from './claims.js'
import type {EventRecorder} from './events.js'
import {Round} from './round.js'
import {
  applyRevision,
  claimsFor,
  completeRollingUpdate,
  countReplicas,
  equalRevision,
  hashRevision,
  HISTORY_HASH_LABEL,
  identityMatches,
  isPodRef,
  isSetRef,
  msUntilAvailable,
  newRevision,
  nextRevision,
  ordinalOf,
  ownerRefs,
  podRevision,
  revisionName,
  sortRevisions,
  statusDiffers,
  statusObject,
  storageMatches,
  updateIdentity,
  withOwnerRefs,
  type Claim,
  type Pod,
  type Revision,
  type SetStatus,
  type StatefulSet,
} from './utils.js'

const STATUS_RETRIES = 5

const podsAt = (namespace: string): ResourceLocator => ({group: '', version: 'v1', resource: 'pods', namespace})
const claimsAt = (namespace: string): ResourceLocator => ({group: '', version: 'v1', resource: 'persistentvolumeclaims', namespace})
const revisionsAt = (namespace: string): ResourceLocator => ({group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace})
const setsAt = (namespace: string): ResourceLocator => ({group: 'apps', version: 'v1', resource: 'statefulsets', namespace})

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 404
}

function isAlreadyExists(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 409 && error.reason === 'AlreadyExists'
}

function isConflict(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 409 && error.reason !== 'AlreadyExists'
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

export interface ControlDeps {
  client: RestClient
  recorder: EventRecorder
  logger: Logger
  now: () => number
  /** the MaxUnavailableStatefulSet gate (beta: on unless turned off) */
  maxUnavailableStatefulSet?: boolean
}

/** What one sync saw: the set, its pods, every pod and claim of the namespace, its revisions. */
export interface SyncInput {
  set: StatefulSet
  /** the pods the set controls (claimed) */
  pods: Pod[]
  /** every pod of the namespace (to tell which claim owners still exist) */
  allPods: Pod[]
  /** every claim of the namespace, by name; kept current as this sync writes */
  claims: Map<string, Claim>
  revisions: Revision[]
}

export interface SyncResult {
  status?: SetStatus
  requeueAfterMs?: number
}

export class StatefulSetControl {
  constructor(private readonly deps: ControlDeps) {}

  private get client(): RestClient {
    return this.deps.client
  }

  /** Whether the rolling update honours rollingUpdate.maxUnavailable (the MaxUnavailableStatefulSet gate). */
  get maxUnavailableEnabled(): boolean {
    return this.deps.maxUnavailableStatefulSet !== false
  }

  /** UpdateStatefulSet: the revisions, then the pods and status; the history is pruned even after a failure. */
  async sync(input: SyncInput): Promise<SyncResult> {
    const revisions = sortRevisions([...input.revisions])
    let current: Revision | undefined
    let update: Revision | undefined
    let result: SyncResult = {}
    let failure: unknown
    try {
      const found = await this.getRevisions(input.set, revisions)
      current = found.current
      update = found.update
      result = await this.updateStatefulSet(input, current, update, found.collisionCount)
    } catch (error) {
      failure = error
    }
    try {
      await this.truncateHistory(input.set, input.pods, revisions, current, update)
    } catch (error) {
      failure ??= error
    }
    if (failure !== undefined) throw failure
    return result
  }

  // ---------- revisions ----------

  /** getStatefulSetRevisions: the current and update revisions, creating or re-numbering one when needed. */
  private async getRevisions(set: StatefulSet, revisions: Revision[]): Promise<{current: Revision; update: Revision; collisionCount: number}> {
    const collision = {count: set.status?.collisionCount ?? 0}
    const candidate = newRevision(set, nextRevision(revisions), collision.count)
    const equal = revisions.filter((r) => equalRevision(r, candidate))
    let update: Revision
    if (equal.length > 0 && equalRevision(revisions[revisions.length - 1], equal[equal.length - 1])) {
      // the template has not changed since the newest revision
      update = revisions[revisions.length - 1]!
    } else if (equal.length > 0) {
      // a rollback to an earlier template: that revision becomes the newest
      update = await this.renumberRevision(equal[equal.length - 1]!, candidate.revision)
    } else {
      update = await this.createRevision(set, candidate, collision)
    }
    const current = revisions.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update
    return {current, update, collisionCount: collision.count}
  }

  /** history.CreateControllerRevision: on a name taken by different data, count a collision and rehash. */
  private async createRevision(set: StatefulSet, candidate: Revision, collision: {count: number}): Promise<Revision> {
    const namespace = set.metadata.namespace
    for (;;) {
      const hash = hashRevision(candidate.data, collision.count)
      const revision = {
        ...candidate,
        metadata: {...candidate.metadata, name: revisionName(set.metadata.name, hash), labels: {...candidate.metadata.labels, [HISTORY_HASH_LABEL]: hash}},
      }
      try {
        const created = await this.client.create<Revision>(revisionsAt(namespace), revision)
        this.deps.logger.v(2, 'created controller revision', {statefulset: `${namespace}/${set.metadata.name}`, revision: created.metadata?.name})
        return created
      } catch (error) {
        if (!isAlreadyExists(error)) throw error
        const existing = await this.client.get<Revision>({...revisionsAt(namespace), name: revision.metadata.name})
        if (equalRevision(existing, revision)) return existing
        collision.count++
      }
    }
  }

  /** history.UpdateControllerRevision: give a revision a new number (retried on conflicts). */
  private async renumberRevision(revision: Revision, number: number): Promise<Revision> {
    let target = revision
    for (let attempt = 0; ; attempt++) {
      if (target.revision === number) return target
      try {
        return await this.client.update<Revision>({...revisionsAt(target.metadata.namespace), name: target.metadata.name}, {...target, revision: number})
      } catch (error) {
        if (!isConflict(error) || attempt >= STATUS_RETRIES) throw error
        target = await this.client.get<Revision>({...revisionsAt(target.metadata.namespace), name: target.metadata.name})
      }
    }
  }

  /** truncateHistory: delete the oldest revisions no pod, nor the status, uses, down to revisionHistoryLimit. */
  private async truncateHistory(set: StatefulSet, pods: Pod[], revisions: Revision[], current: Revision | undefined, update: Revision | undefined): Promise<void> {
    // the status' revisions stay too, should this sync have failed before it found its own
    const live = new Set<string>([set.status?.currentRevision, set.status?.updateRevision].filter((n): n is string => Boolean(n)))
    if (current) live.add(current.metadata.name)
    if (update) live.add(update.metadata.name)
    for (const pod of pods) live.add(podRevision(pod))
    const history = revisions.filter((r) => !live.has(r.metadata?.name))
    const limit = set.spec?.revisionHistoryLimit ?? 10
    if (history.length <= limit) return
    for (const revision of history.slice(0, history.length - limit)) {
      try {
        await this.client.delete({...revisionsAt(revision.metadata.namespace), name: revision.metadata.name}, {preconditions: {uid: revision.metadata.uid}})
        this.deps.logger.v(2, 'deleted controller revision', {revision: `${revision.metadata.namespace}/${revision.metadata.name}`})
      } catch (error) {
        if (!isNotFound(error)) throw error
      }
    }
  }

  // ---------- the pods ----------

  /** updateStatefulSet: act on the pods; the status is written whatever happened. */
  private async updateStatefulSet(input: SyncInput, current: Revision, update: Revision, collisionCount: number): Promise<SyncResult> {
    const {set} = input
    const now = this.deps.now()
    const minReadySeconds: number = set.spec?.minReadySeconds ?? 0
    const currentName: string = current.metadata.name
    const updateName: string = update.metadata.name
    const status: SetStatus = {
      observedGeneration: set.metadata.generation ?? 0,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
      ...countReplicas([input.pods], minReadySeconds, now, currentName, updateName),
    }
    const round = new Round(this, input, applyRevision(set, current), applyRevision(set, update), status, now)
    let failure: unknown
    try {
      await round.run()
    } catch (error) {
      failure = error
    }
    try {
      await this.writeStatus(set, status)
    } catch (error) {
      if (failure === undefined) failure = error
      else this.deps.logger.v(2, 'status not written', {statefulset: `${set.metadata.namespace}/${set.metadata.name}`, error: message(error)})
    }
    if (failure !== undefined) throw failure
    let requeueAfterMs: number | undefined
    for (const pod of input.pods) {
      const wait = msUntilAvailable(pod, minReadySeconds, this.deps.now())
      if (wait !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait)
    }
    return {status, requeueAfterMs}
  }

  /** updateStatefulSetStatus: complete a finished rolling update, then write /status only if it changed. */
  private async writeStatus(set: StatefulSet, status: SetStatus): Promise<void> {
    completeRollingUpdate(set, status)
    if (!statusDiffers(set.status, status)) return
    let target = set
    for (let attempt = 0; ; attempt++) {
      const body = {...target, status: statusObject({...status, conditions: target.status?.conditions})}
      try {
        await this.client.update({...setsAt(target.metadata.namespace), name: target.metadata.name, subresource: 'status'}, body)
        return
      } catch (error) {
        if (isNotFound(error)) return
        if (!isConflict(error) || attempt >= STATUS_RETRIES) throw error
        try {
          target = await this.client.get<StatefulSet>({...setsAt(set.metadata.namespace), name: set.metadata.name})
        } catch (getError) {
          if (isNotFound(getError)) return
          throw getError
        }
        if (target.metadata.uid !== set.metadata.uid) return
        if (!statusDiffers(target.status, status)) return
      }
    }
  }

  // ---------- pod and claim operations (StatefulPodControl) ----------

  async recordPodEvent(verb: 'create' | 'update' | 'delete', set: StatefulSet, pod: Pod, error?: unknown): Promise<void> {
    const title = verb[0]!.toUpperCase() + verb.slice(1)
    if (error === undefined) {
      await this.deps.recorder.event(set, 'Normal', `Successful${title}`, `${verb} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`)
    } else {
      await this.deps.recorder.event(set, 'Warning', `Failed${title}`, `${verb} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${message(error)}`)
    }
  }

  private async recordClaimEvent(set: StatefulSet, pod: Pod, claim: Claim, error?: unknown): Promise<void> {
    if (error === undefined) {
      await this.deps.recorder.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${claim.metadata.name} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`)
    } else {
      await this.deps.recorder.event(
        set,
        'Warning',
        'FailedCreate',
        `create Claim ${claim.metadata.name} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${message(error)}`,
      )
    }
  }

  /** createPersistentVolumeClaims: every missing claim of the pod, with the owner references the policy wants. */
  async createClaims(set: StatefulSet, pod: Pod, claims: Map<string, Claim>): Promise<void> {
    const errors: string[] = []
    for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
      const name: string = claim.metadata.name
      const existing = claims.get(name)
      if (existing) {
        if (existing.metadata?.deletionTimestamp) errors.push(`pvc ${name} is being deleted`)
        continue
      }
      const refs = desiredClaimOwnerRefs(claim, set, pod)
      if (refs.length > 0) claim.metadata.ownerReferences = refs
      try {
        const created = await this.client.create<Claim>(claimsAt(set.metadata.namespace), claim)
        claims.set(name, created)
        await this.recordClaimEvent(set, pod, claim)
      } catch (error) {
        errors.push(`failed to create PVC ${name}: ${message(error)}`)
        if (!isAlreadyExists(error)) await this.recordClaimEvent(set, pod, claim, error)
      }
    }
    if (errors.length > 0) throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`)
  }

  /** CreateStatefulPod: claims first, then the pod, then the claims' owner references. */
  async createPod(set: StatefulSet, pod: Pod, claims: Map<string, Claim>): Promise<void> {
    try {
      await this.createClaims(set, pod, claims)
    } catch (error) {
      await this.recordPodEvent('create', set, pod, error)
      throw error
    }
    let created: Pod
    try {
      created = await this.client.create<Pod>(podsAt(set.metadata.namespace), pod)
    } catch (error) {
      // an existing pod is only a stale view: the next sync sees it
      if (!isAlreadyExists(error)) await this.recordPodEvent('create', set, pod, error)
      throw error
    }
    try {
      await this.updateClaimsForRetention(set, created, claims)
    } catch (error) {
      await this.recordPodEvent('update', set, created, error)
      throw error
    }
    await this.recordPodEvent('create', set, pod)
  }

  /** DeleteStatefulPod: the pod only; its claims are the garbage collector's once it is gone. */
  async deletePod(set: StatefulSet, pod: Pod): Promise<void> {
    try {
      await this.client.delete({...podsAt(set.metadata.namespace), name: pod.metadata.name}, {preconditions: {uid: pod.metadata.uid}})
    } catch (error) {
      if (isNotFound(error)) return
      await this.recordPodEvent('delete', set, pod, error)
      throw error
    }
    await this.recordPodEvent('delete', set, pod)
  }

  async deleteClaim(claim: Claim, claims: Map<string, Claim>): Promise<void> {
    try {
      await this.client.delete({...claimsAt(claim.metadata.namespace), name: claim.metadata.name}, {preconditions: {uid: claim.metadata.uid}})
      this.deps.logger.v(2, 'deleted claim', {claim: `${claim.metadata.namespace}/${claim.metadata.name}`})
    } catch (error) {
      if (!isNotFound(error)) throw error
    }
    claims.delete(claim.metadata.name)
  }

  /** ClaimsMatchRetentionPolicy */
  claimsMatchRetention(set: StatefulSet, pod: Pod, claims: Map<string, Claim>): boolean {
    for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
      const existing = claims.get(claim.metadata.name)
      if (existing && !isClaimOwnerUpToDate(existing, set, pod)) return false
    }
    return true
  }

  /** UpdatePodClaimForRetentionPolicy */
  async updateClaimsForRetention(set: StatefulSet, pod: Pod, claims: Map<string, Claim>): Promise<void> {
    for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
      const name: string = claim.metadata.name
      const existing = claims.get(name)
      if (!existing) continue
      if (hasUnexpectedController(existing, set, pod)) {
        await this.deps.recorder.event(
          set,
          'Warning',
          'ConflictingController',
          `PersistentVolumeClaim ${name} has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim`,
        )
      }
      if (isClaimOwnerUpToDate(existing, set, pod)) continue
      try {
        const updated = withOwnerRefs(existing, desiredClaimOwnerRefs(existing, set, pod))
        claims.set(name, await this.client.update<Claim>({...claimsAt(set.metadata.namespace), name}, updated))
      } catch (error) {
        throw new Error(`could not update claim ${name} for delete policy ownerRefs: ${message(error)}`)
      }
    }
  }

  /** UpdateStatefulPod: restore the pod's identity labels; create claims it lacks. */
  async updatePod(set: StatefulSet, pod: Pod, claims: Map<string, Claim>): Promise<void> {
    let target = structuredClone(pod)
    let attempted = false
    let failure: unknown
    for (let attempt = 0; ; attempt++) {
      let consistent = true
      if (!identityMatches(set, target)) {
        updateIdentity(set, target)
        consistent = false
      }
      try {
        if (!storageMatches(set, target)) await this.createClaims(set, target, claims)
        if (!this.claimsMatchRetention(set, target, claims)) await this.updateClaimsForRetention(set, target, claims)
      } catch (error) {
        await this.recordPodEvent('update', set, target, error)
        throw error
      }
      if (consistent) break
      attempted = true
      try {
        await this.client.update({...podsAt(set.metadata.namespace), name: target.metadata.name}, target)
        failure = undefined
        break
      } catch (error) {
        failure = error
        if (!isConflict(error) || attempt >= STATUS_RETRIES) break
        target = await this.client.get<Pod>({...podsAt(set.metadata.namespace), name: target.metadata.name})
      }
    }
    if (attempted) await this.recordPodEvent('update', set, target, failure)
    if (failure !== undefined) throw failure
  }

  /**
   * The garbage collector's part for this set's claims: a claim whose owners (pods of the namespace,
   * or an earlier set of this name) are all gone is deleted. A terminating pod is not gone: it is
   * still listed, so its claims stay until the pod object is removed.
   */
  async collectClaims(set: StatefulSet, allPods: Pod[], claims: Map<string, Claim>): Promise<void> {
    const podUids = new Set(allPods.map((p) => p.metadata?.uid))
    for (const claim of [...claims.values()]) {
      if (!isClaimOfSet(set, claim) || claim.metadata?.deletionTimestamp) continue
      const refs = ownerRefs(claim)
      if (refs.length === 0) continue
      const gone = refs.every((r) => (isPodRef(r) && !podUids.has(r.uid)) || (isSetRef(r) && r.name === set.metadata.name && r.uid !== set.metadata.uid))
      if (gone) await this.deleteClaim(claim, claims)
    }
  }
}
