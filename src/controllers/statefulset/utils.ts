// StatefulSet helpers with no I/O, after Kubernetes' pkg/controller/statefulset/stateful_set_utils.go
// and pkg/controller/history: pod identity (name, ordinal, labels), the pods and claims a set wants,
// pod health, ControllerRevisions (data, hash, name) and the status arithmetic.
import type {AnyObject} from '../../api/types.js'
import type {OwnerReference} from '../../api/types.js'
import {goJSON} from '../../machinery/field-path.js'
import {isPlainObject, withGoZeroValues} from '../../machinery/typed-value.js'
import {podTemplateSpec} from '../../api/core/pod-spec.js'

/** apps.StatefulSetPodNameLabel */
export const POD_NAME_LABEL = 'statefulset.orch.io/pod-name'
/** apps.PodIndexLabel */
export const POD_INDEX_LABEL = 'apps.orch.io/pod-index'
/** apps.StatefulSetRevisionLabel (keeps Kubernetes' name) */
export const REVISION_LABEL = 'controller-revision-hash'
/** history.ControllerRevisionHashLabel */
export const HISTORY_HASH_LABEL = 'controller.orch.io/hash'

export const SET_API_VERSION = 'apps/v1'
export const SET_KIND = 'StatefulSet'

/** An object read from the API server: it always has metadata. */
export type ApiObject = AnyObject & {metadata: Record<string, any>}
export type Pod = ApiObject
export type Claim = ApiObject
export type StatefulSet = ApiObject
export type Revision = ApiObject

export type {OwnerReference}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value)
}

// ---------- names and ordinals ----------

const statefulPodPattern = /^(.*)-([0-9]+)$/

/** The parent set's name and the ordinal in a pod's name; ordinal -1 when there is none (or it overflows int32). */
export function parentAndOrdinal(name: string): {parent: string; ordinal: number} {
  const match = statefulPodPattern.exec(name)
  if (!match) return {parent: '', ordinal: -1}
  const ordinal = Number(match[2])
  return {parent: match[1]!, ordinal: Number.isSafeInteger(ordinal) && ordinal <= 2 ** 31 - 1 ? ordinal : -1}
}

export function ordinalOf(pod: Pod): number {
  return parentAndOrdinal(pod.metadata?.name ?? '').ordinal
}

export function startOrdinal(set: StatefulSet): number {
  return set.spec?.ordinals?.start ?? 0
}

export function replicasOf(set: StatefulSet): number {
  return set.spec?.replicas ?? 1
}

/** Whether the pod's ordinal lies in [start, start + replicas). */
export function inOrdinalRange(pod: Pod, set: StatefulSet): boolean {
  const ordinal = ordinalOf(pod)
  return ordinal >= startOrdinal(set) && ordinal < startOrdinal(set) + replicasOf(set)
}

export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name}-${ordinal}`
}

export function claimName(set: StatefulSet, template: AnyObject, ordinal: number): string {
  return `${template.metadata?.name ?? ''}-${set.metadata.name}-${ordinal}`
}

export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return parentAndOrdinal(pod.metadata?.name ?? '').parent === set.metadata.name
}

export function claimTemplates(set: StatefulSet): AnyObject[] {
  return Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []
}

// ---------- owner references ----------

export function controllerRef(owner: ApiObject, apiVersion: string, kind: string): OwnerReference {
  return {apiVersion, kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true}
}

export function setControllerRef(set: StatefulSet): OwnerReference {
  return controllerRef(set, SET_API_VERSION, SET_KIND)
}

export function ownerRefs(object: AnyObject): OwnerReference[] {
  return Array.isArray(object.metadata?.ownerReferences) ? object.metadata.ownerReferences : []
}

/** A copy of the object with these owner references (none: the field left out, as Kubernetes omits it). */
export function withOwnerRefs<T extends AnyObject>(object: T, refs: OwnerReference[]): T {
  const metadata: AnyObject = {...object.metadata, ownerReferences: refs}
  if (refs.length === 0) delete metadata.ownerReferences
  return {...object, metadata}
}

/** A copy of the object without its references to the owner `uid`. */
export function withoutOwner<T extends AnyObject>(object: T, uid: string | undefined): T {
  return withOwnerRefs(object, ownerRefs(object).filter((r) => r.uid !== uid))
}

/** The controlling owner reference of an object, if any. */
export function controllerOf(object: AnyObject): OwnerReference | undefined {
  return ownerRefs(object).find((r) => r?.controller === true)
}

export function isSetRef(ref: OwnerReference): boolean {
  return ref.kind === SET_KIND && ref.apiVersion === SET_API_VERSION
}

export function isPodRef(ref: OwnerReference): boolean {
  return ref.kind === 'Pod' && ref.apiVersion === 'v1'
}

export function hasOwnerUid(object: AnyObject, uid: string | undefined): boolean {
  return uid !== undefined && ownerRefs(object).some((r) => r.uid === uid)
}

// ---------- pod identity and storage ----------

export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const {parent, ordinal} = parentAndOrdinal(pod.metadata?.name ?? '')
  const labels = pod.metadata?.labels ?? {}
  return (
    ordinal >= 0 &&
    parent === set.metadata.name &&
    pod.metadata.name === podName(set, ordinal) &&
    pod.metadata.namespace === set.metadata.namespace &&
    labels[POD_NAME_LABEL] === pod.metadata.name &&
    labels[POD_INDEX_LABEL] === String(ordinal)
  )
}

/** updateIdentity: the name, namespace and identity labels of the pod's ordinal. */
export function updateIdentity(set: StatefulSet, pod: Pod): void {
  const ordinal = ordinalOf(pod)
  pod.metadata.name = podName(set, ordinal)
  pod.metadata.namespace = set.metadata.namespace
  pod.metadata.labels = {...(pod.metadata.labels ?? {}), [POD_NAME_LABEL]: pod.metadata.name, [POD_INDEX_LABEL]: String(ordinal)}
}

/** Whether the pod's volumes name every claim of the set's templates for its ordinal. */
export function storageMatches(set: StatefulSet, pod: Pod): boolean {
  const ordinal = ordinalOf(pod)
  if (ordinal < 0) return false
  const volumes = new Map<string, AnyObject>()
  for (const v of Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : []) volumes.set(v?.name, v)
  return claimTemplates(set).every((t) => volumes.get(t.metadata?.name)?.persistentVolumeClaim?.claimName === claimName(set, t, ordinal))
}

/** getPersistentVolumeClaims: the claims of an ordinal, keyed by template name (template order). */
export function claimsFor(set: StatefulSet, ordinal: number): Map<string, Claim> {
  const claims = new Map<string, Claim>()
  const selectorLabels: Record<string, string> = set.spec?.selector?.matchLabels ?? {}
  for (const template of claimTemplates(set)) {
    const claim = clone(template)
    const meta: AnyObject = {...(claim.metadata ?? {})}
    for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'ownerReferences']) {
      delete meta[field]
    }
    meta.name = claimName(set, template, ordinal)
    meta.namespace = set.metadata.namespace
    meta.labels = {...(meta.labels ?? {}), ...selectorLabels}
    claim.metadata = meta
    delete claim.status
    claim.apiVersion = 'v1'
    claim.kind = 'PersistentVolumeClaim'
    claims.set(template.metadata?.name ?? '', claim as Claim)
  }
  return claims
}

/** updateStorage: a volume per claim template (taking precedence over same-named volumes), then the rest. */
export function updateStorage(set: StatefulSet, pod: Pod): void {
  const claims = claimsFor(set, ordinalOf(pod))
  const current: AnyObject[] = Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : []
  const volumes: AnyObject[] = [...claims].map(([name, claim]) => ({name, persistentVolumeClaim: {claimName: claim.metadata.name}}))
  for (const v of current) if (!claims.has(v?.name)) volumes.push(v)
  pod.spec ??= {}
  if (volumes.length > 0) pod.spec.volumes = volumes
}

/** newStatefulSetPod: GetPodFromTemplate with the set as controller, then identity and storage. */
export function newStatefulSetPod(set: StatefulSet, ordinal: number): Pod {
  const template = set.spec?.template ?? {}
  const metadata: AnyObject = {
    name: podName(set, ordinal),
    generateName: `${set.metadata.name}-`,
    namespace: set.metadata.namespace,
    labels: {...(template.metadata?.labels ?? {})},
    ownerReferences: [setControllerRef(set)],
  }
  if (template.metadata?.annotations) metadata.annotations = {...template.metadata.annotations}
  if (Array.isArray(template.metadata?.finalizers) && template.metadata.finalizers.length > 0) metadata.finalizers = [...template.metadata.finalizers]
  const pod: Pod = {apiVersion: 'v1', kind: 'Pod', metadata, spec: clone(template.spec ?? {}) as AnyObject}
  updateIdentity(set, pod)
  // initIdentity: set only on creation (immutable afterwards)
  pod.spec.hostname = pod.metadata.name
  if (set.spec?.serviceName) pod.spec.subdomain = set.spec.serviceName
  updateStorage(set, pod)
  return pod
}

export function podRevision(pod: Pod): string {
  return pod.metadata?.labels?.[REVISION_LABEL] ?? ''
}

/**
 * newVersionedStatefulSetPod: ordinals below the partition (RollingUpdate) are made from the current
 * revision, the others (and every pod under OnDelete) from the update revision.
 */
export function newVersionedPod(currentSet: StatefulSet, updateSet: StatefulSet, currentRevision: string, updateRevision: string, ordinal: number): Pod {
  const strategy = currentSet.spec?.updateStrategy ?? {}
  const start = startOrdinal(currentSet)
  const rollingUpdate = strategy.rollingUpdate
  const useCurrent =
    (strategy.type === 'RollingUpdate' && rollingUpdate == null && ordinal < start + (currentSet.status?.currentReplicas ?? 0)) ||
    (rollingUpdate != null && ordinal < start + (rollingUpdate.partition ?? 0))
  const pod = newStatefulSetPod(useCurrent ? currentSet : updateSet, ordinal)
  pod.metadata.labels[REVISION_LABEL] = useCurrent ? currentRevision : updateRevision
  return pod
}

// ---------- pod health ----------

function readyCondition(pod: Pod): AnyObject | undefined {
  return (Array.isArray(pod.status?.conditions) ? pod.status.conditions : []).find((c: AnyObject) => c?.type === 'Ready')
}

/** isCreated: the API server has it (a pod it stored always has a phase). */
export function isCreated(pod: Pod): boolean {
  return Boolean(pod.status?.phase)
}

export function isPending(pod: Pod): boolean {
  return pod.status?.phase === 'Pending'
}

export function isFailedOrSucceeded(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded'
}

export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata?.deletionTimestamp)
}

export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && readyCondition(pod)?.status === 'True'
}

/** podutil.IsPodAvailable: ready, and ready for longer than minReadySeconds. */
export function isAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const ready = readyCondition(pod)
  if (ready?.status !== 'True') return false
  if (minReadySeconds <= 0) return true
  const since = Date.parse(ready.lastTransitionTime ?? '')
  return Number.isFinite(since) && since + minReadySeconds * 1000 < now
}

/** isRunningAndAvailable as the controller uses it: Running, Ready, and available. */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return isRunningAndReady(pod) && isAvailable(pod, minReadySeconds, now)
}

export function isHealthy(pod: Pod): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod)
}

export function isUnavailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return !isHealthy(pod) || !isAvailable(pod, minReadySeconds, now)
}

/** Milliseconds until a ready pod becomes available, or undefined when that is not pending. */
export function msUntilAvailable(pod: Pod, minReadySeconds: number, now: number): number | undefined {
  if (minReadySeconds <= 0 || !isRunningAndReady(pod) || isAvailable(pod, minReadySeconds, now)) return undefined
  const since = Date.parse(readyCondition(pod)?.lastTransitionTime ?? '')
  if (!Number.isFinite(since)) return undefined
  return Math.max(since + minReadySeconds * 1000 - now + 1, 1)
}

// ---------- revisions ----------

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  const out: AnyObject = {}
  for (const key of Object.keys(value).sort()) {
    const v = (value as AnyObject)[key]
    if (v !== undefined) out[key] = sortKeys(v)
  }
  return out
}

/** The pod template as Go's types encode it: struct fields held by value present (`resources: {}`),
 *  and the template's creationTimestamp, a zero time.Time, as null. */
function goEncodedTemplate(template: unknown): AnyObject {
  const encoded = withGoZeroValues(clone(isPlainObject(template) ? template : {}), podTemplateSpec) as AnyObject
  encoded.metadata = {creationTimestamp: null, ...encoded.metadata}
  return encoded
}

/**
 * getPatch: the set's pod template as a strategic merge patch that replaces the template, byte for byte
 * as Kubernetes stores it (Go's encoding of the typed template, keys sorted): kubectl's `rollout undo`
 * compares its own encoding with these bytes to report "skipped rollback", and the revision's hash is
 * taken over them.
 */
export function revisionData(set: StatefulSet): AnyObject {
  return sortKeys({spec: {template: {...goEncodedTemplate(set.spec?.template), $patch: 'replace'}}}) as AnyObject
}

/** Revision data in the encoding of revisionData, whatever encoding wrote it (revisions stored before
 *  the template was Go-encoded equal the current ones, so no rolling update follows an upgrade). */
function canonicalRevisionData(data: unknown): unknown {
  if (!isPlainObject(data) || !isPlainObject(data.spec) || !isPlainObject(data.spec.template)) return data ?? null
  const {$patch, ...rest} = data.spec.template
  return sortKeys({...data, spec: {...data.spec, template: {...goEncodedTemplate(rest), ...($patch === undefined ? {} : {$patch})}}})
}

/** FNV-32 (not 32a) of the bytes, as Go's hash/fnv New32. */
function fnv32(bytes: Uint8Array): number {
  let hash = 0x811c9dc5
  for (const byte of bytes) {
    hash = Math.imul(hash, 0x01000193) >>> 0
    hash = (hash ^ byte) >>> 0
  }
  return hash
}

const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789'

/** rand.SafeEncodeString */
function safeEncode(text: string): string {
  let out = ''
  for (const c of text) out += SAFE_ALPHANUMS[c.charCodeAt(0) % SAFE_ALPHANUMS.length]
  return out
}

/** history.HashControllerRevision: FNV-32 of the data bytes and the collision count, safely encoded. */
export function hashRevision(data: AnyObject, collisionCount: number | undefined): string {
  const text = goJSON(data) + (collisionCount === undefined ? '' : String(collisionCount))
  return safeEncode(String(fnv32(Buffer.from(text, 'utf8'))))
}

/** history.ControllerRevisionName */
export function revisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`
}

/** newRevision: a ControllerRevision of the set's template with the given number, named by hash. */
export function newRevision(set: StatefulSet, revision: number, collisionCount: number): Revision {
  const data = revisionData(set)
  const hash = hashRevision(data, collisionCount)
  const metadata: AnyObject = {
    name: revisionName(set.metadata.name, hash),
    namespace: set.metadata.namespace,
    labels: {...(set.spec?.template?.metadata?.labels ?? {}), [HISTORY_HASH_LABEL]: hash},
    annotations: {...(set.metadata.annotations ?? {})},
    ownerReferences: [setControllerRef(set)],
  }
  if (Object.keys(metadata.annotations).length === 0) delete metadata.annotations
  return {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata, data, revision}
}

/** history.EqualRevision: same data (compared as Kubernetes compares the raw bytes). */
export function equalRevision(a: Revision | undefined, b: Revision | undefined): boolean {
  if (!a || !b) return a === b
  return goJSON(canonicalRevisionData(a.data)) === goJSON(canonicalRevisionData(b.data))
}

/** history.SortControllerRevisions: by revision number, then creation time, then name. */
export function sortRevisions(revisions: Revision[]): Revision[] {
  return revisions.sort((a, b) => {
    const ra = Number(a.revision ?? 0)
    const rb = Number(b.revision ?? 0)
    if (ra !== rb) return ra - rb
    const ta = a.metadata?.creationTimestamp ?? ''
    const tb = b.metadata?.creationTimestamp ?? ''
    if (ta !== tb) return ta < tb ? -1 : 1
    const na = a.metadata?.name ?? ''
    const nb = b.metadata?.name ?? ''
    return na < nb ? -1 : na > nb ? 1 : 0
  })
}

/** nextRevision: one more than the highest revision number (revisions sorted), 1 for none. */
export function nextRevision(revisions: Revision[]): number {
  return revisions.length === 0 ? 1 : Number(revisions[revisions.length - 1]!.revision ?? 0) + 1
}

/** ApplyRevision: the set with its template as the revision recorded it. */
export function applyRevision(set: StatefulSet, revision: Revision): StatefulSet {
  const out = clone(set)
  const template = revision.data?.spec?.template
  if (template && typeof template === 'object') {
    const restored = clone(template)
    delete restored.$patch
    out.spec = {...out.spec, template: restored}
  }
  return out
}

// ---------- rolling update ----------

/**
 * maxUnavailable as a number of pods: an int, or a percentage of replicas rounded up (document 2;
 * Kubernetes' controller rounds down); default 1, never below 1.
 */
export function maxUnavailableOf(value: unknown, replicas: number): number {
  let n = 1
  if (typeof value === 'number') n = value
  else if (typeof value === 'string' && /^[0-9]+%$/.test(value)) n = Math.ceil((Number(value.slice(0, -1)) * replicas) / 100)
  else if (typeof value === 'string' && /^[0-9]+$/.test(value)) n = Number(value)
  return Math.max(1, Math.floor(n))
}

// ---------- status ----------

export interface ReplicaCounts {
  replicas: number
  readyReplicas: number
  availableReplicas: number
  currentReplicas: number
  updatedReplicas: number
}

/** computeReplicaStatus over the given pod lists. */
export function countReplicas(podLists: Pod[][], minReadySeconds: number, now: number, currentRevision: string, updateRevision: string): ReplicaCounts {
  const counts: ReplicaCounts = {replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0}
  for (const pods of podLists) {
    for (const pod of pods) {
      if (isCreated(pod)) counts.replicas++
      if (isRunningAndReady(pod)) {
        counts.readyReplicas++
        if (isAvailable(pod, minReadySeconds, now)) counts.availableReplicas++
      }
      if (isCreated(pod) && !isTerminating(pod)) {
        if (podRevision(pod) === currentRevision) counts.currentReplicas++
        if (podRevision(pod) === updateRevision) counts.updatedReplicas++
      }
    }
  }
  return counts
}

export interface SetStatus extends ReplicaCounts {
  observedGeneration: number
  currentRevision: string
  updateRevision: string
  collisionCount: number
  conditions?: AnyObject[]
}

/** The status as Kubernetes serialises it: omitempty fields left out when zero. */
export function statusObject(status: SetStatus): AnyObject {
  const out: AnyObject = {}
  if (status.observedGeneration) out.observedGeneration = status.observedGeneration
  out.replicas = status.replicas
  if (status.readyReplicas) out.readyReplicas = status.readyReplicas
  if (status.currentReplicas) out.currentReplicas = status.currentReplicas
  if (status.updatedReplicas) out.updatedReplicas = status.updatedReplicas
  if (status.currentRevision) out.currentRevision = status.currentRevision
  if (status.updateRevision) out.updateRevision = status.updateRevision
  out.collisionCount = status.collisionCount
  if (status.conditions && status.conditions.length > 0) out.conditions = status.conditions
  out.availableReplicas = status.availableReplicas
  return out
}

/** Whether the stored status differs from the computed one in any field the controller owns. */
export function statusDiffers(stored: AnyObject | undefined, status: SetStatus): boolean {
  const s = stored ?? {}
  return (
    (s.observedGeneration ?? 0) !== status.observedGeneration ||
    (s.replicas ?? 0) !== status.replicas ||
    (s.readyReplicas ?? 0) !== status.readyReplicas ||
    (s.currentReplicas ?? 0) !== status.currentReplicas ||
    (s.updatedReplicas ?? 0) !== status.updatedReplicas ||
    (s.availableReplicas ?? 0) !== status.availableReplicas ||
    (s.currentRevision ?? '') !== status.currentRevision ||
    (s.updateRevision ?? '') !== status.updateRevision ||
    (s.collisionCount ?? 0) !== status.collisionCount ||
    s.collisionCount === undefined
  )
}

/** completeRollingUpdate: once every replica is updated and ready, the update revision becomes current. */
export function completeRollingUpdate(set: StatefulSet, status: SetStatus): void {
  const replicas = replicasOf(set)
  if (
    set.spec?.updateStrategy?.type === 'RollingUpdate' &&
    status.updatedReplicas === replicas &&
    status.readyReplicas === replicas &&
    status.replicas === replicas
  ) {
    status.currentReplicas = status.updatedReplicas
    status.currentRevision = status.updateRevision
  }
}
