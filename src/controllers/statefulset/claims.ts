// PersistentVolumeClaim ownership under persistentVolumeClaimRetentionPolicy, after Kubernetes'
// isClaimOwnerUpToDate / updateClaimOwnerRefForSetAndPod:
//   Retain on scale and delete: no owner reference from the set or the pod
//   Retain on scale, Delete on set deletion: a controller reference to the set
//   Delete on scale, Retain on set deletion: a controller reference to the pod once it is scaled down
//   Delete on both: the set while the pod is in range, the pod once it is scaled down.
// A claim owned by another controller, or pointing at an older object of the same name, is left alone.
import {
  claimTemplates,
  controllerRef,
  hasOwnerUid,
  inOrdinalRange,
  ownerRefs,
  setControllerRef,
  SET_API_VERSION,
  SET_KIND,
  type Claim,
  type OwnerReference,
  type Pod,
  type StatefulSet,
} from './utils.js'

export interface RetentionPolicy {
  whenDeleted: 'Retain' | 'Delete'
  whenScaled: 'Retain' | 'Delete'
}

export function retentionPolicy(set: StatefulSet): RetentionPolicy {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {}
  return {
    whenDeleted: policy.whenDeleted === 'Delete' ? 'Delete' : 'Retain',
    whenScaled: policy.whenScaled === 'Delete' ? 'Delete' : 'Retain',
  }
}

function matchesRef(ref: OwnerReference, object: Pod | StatefulSet, apiVersion: string, kind: string): boolean {
  return ref.apiVersion === apiVersion && ref.kind === kind && ref.name === object.metadata.name
}

const matchesSet = (ref: OwnerReference, set: StatefulSet) => matchesRef(ref, set, SET_API_VERSION, SET_KIND)
const matchesPod = (ref: OwnerReference, pod: Pod) => matchesRef(ref, pod, 'v1', 'Pod')

/** A reference to the object's name and kind whose uid is not the object's (a previous incarnation). */
function hasStaleRef(claim: Claim, matches: (ref: OwnerReference) => boolean, uid: string | undefined): boolean {
  const ref = ownerRefs(claim).find(matches)
  return ref !== undefined && ref.uid !== uid
}

/** The claim has a retention policy to apply but another object (or an old set or pod) controls it. */
export function hasUnexpectedController(claim: Claim, set: StatefulSet, pod: Pod): boolean {
  const policy = retentionPolicy(set)
  if (policy.whenScaled === 'Retain' && policy.whenDeleted === 'Retain') return false
  for (const ref of ownerRefs(claim)) {
    if (matchesSet(ref, set)) {
      if (ref.uid !== set.metadata.uid) return true
      continue
    }
    if (matchesPod(ref, pod)) {
      if (ref.uid !== pod.metadata?.uid) return true
      continue
    }
    if (ref.controller === true) return true
  }
  return false
}

function hasNonControllerOwner(claim: Claim, set: StatefulSet, pod: Pod): boolean {
  return ownerRefs(claim).some((ref) => (ref.uid === set.metadata.uid || (pod.metadata?.uid !== undefined && ref.uid === pod.metadata.uid)) && ref.controller !== true)
}

/** isClaimOwnerUpToDate: the claim's owner references agree with the policy (or must not be touched). */
export function isClaimOwnerUpToDate(claim: Claim, set: StatefulSet, pod: Pod): boolean {
  if (hasStaleRef(claim, (r) => matchesSet(r, set), set.metadata.uid) || hasStaleRef(claim, (r) => matchesPod(r, pod), pod.metadata?.uid)) return true
  const ownedBySet = hasOwnerUid(claim, set.metadata.uid)
  const ownedByPod = hasOwnerUid(claim, pod.metadata?.uid)
  if (hasUnexpectedController(claim, set, pod)) return !(ownedBySet || ownedByPod)
  if (hasNonControllerOwner(claim, set, pod)) return false
  const policy = retentionPolicy(set)
  const scaledDown = !inOrdinalRange(pod, set)
  if (policy.whenScaled === 'Retain' && policy.whenDeleted === 'Retain') return !ownedBySet && !ownedByPod
  if (policy.whenScaled === 'Retain' && policy.whenDeleted === 'Delete') return ownedBySet && !ownedByPod
  if (policy.whenScaled === 'Delete' && policy.whenDeleted === 'Retain') return !ownedBySet && scaledDown === ownedByPod
  return scaledDown !== ownedBySet && scaledDown === ownedByPod
}

function addControllerRef(refs: OwnerReference[], ref: OwnerReference): OwnerReference[] {
  return refs.some((r) => r.uid === ref.uid) ? refs : [...refs, ref]
}

/** updateClaimOwnerRefForSetAndPod: the owner references the policy wants on the claim. */
export function desiredClaimOwnerRefs(claim: Claim, set: StatefulSet, pod: Pod): OwnerReference[] {
  const unexpected = hasUnexpectedController(claim, set, pod)
  let refs = ownerRefs(claim).filter((r) => !matchesSet(r, set) && !matchesPod(r, pod))
  if (unexpected) return refs
  const policy = retentionPolicy(set)
  const scaledDown = !inOrdinalRange(pod, set)
  const podRef = pod.metadata?.uid ? controllerRef(pod, 'v1', 'Pod') : undefined
  if (policy.whenDeleted === 'Delete' && (policy.whenScaled === 'Retain' || !scaledDown)) refs = addControllerRef(refs, setControllerRef(set))
  if (policy.whenScaled === 'Delete' && scaledDown && podRef) refs = addControllerRef(refs, podRef)
  return refs
}

/** The set's claim names for one ordinal. */
export function claimNamesOf(set: StatefulSet, ordinal: number): string[] {
  return claimTemplates(set).map((t) => `${t.metadata?.name ?? ''}-${set.metadata.name}-${ordinal}`)
}

/** Whether the claim's name is `<template>-<set>-<ordinal>` for one of the set's templates. */
export function isClaimOfSet(set: StatefulSet, claim: Claim): boolean {
  const name: string = claim.metadata?.name ?? ''
  return claimTemplates(set).some((t) => {
    const prefix = `${t.metadata?.name ?? ''}-${set.metadata.name}-`
    return name.startsWith(prefix) && /^[0-9]+$/.test(name.slice(prefix.length))
  })
}
