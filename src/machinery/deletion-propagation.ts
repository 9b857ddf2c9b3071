// Deletion propagation: how a DELETE's propagationPolicy (or the deprecated orphanDependents) turns
// into finalizers, as Kubernetes' generic registry decides it (deletionFinalizersForGarbageCollection).
// Orphan marks the object with the `orphan` finalizer, Foreground with `foregroundDeletion`, Background
// with neither; without a say in the request, a finalizer the object already has stands, else the
// default is Background. The registry applies this to every kind; the garbage collector
// (src/controllers/garbagecollector) removes the finalizer once it has orphaned or deleted the dependents.

export const ORPHAN_FINALIZER = 'orphan'
export const FOREGROUND_FINALIZER = 'foregroundDeletion'

/** null is no say, as a nil pointer in Kubernetes' DeleteOptions */
export interface PropagationOptions {
  propagationPolicy?: string | null
  orphanDependents?: boolean | null
}

function shouldOrphan(finalizers: readonly string[], options: PropagationOptions): boolean {
  if (options.orphanDependents != null) return options.orphanDependents
  if (options.propagationPolicy != null) return options.propagationPolicy === 'Orphan'
  for (const finalizer of finalizers) {
    if (finalizer === ORPHAN_FINALIZER) return true
    if (finalizer === FOREGROUND_FINALIZER) return false
  }
  return false
}

function shouldDeleteInForeground(finalizers: readonly string[], options: PropagationOptions): boolean {
  if (options.orphanDependents != null) return false
  if (options.propagationPolicy != null) return options.propagationPolicy === 'Foreground'
  for (const finalizer of finalizers) {
    if (finalizer === FOREGROUND_FINALIZER) return true
    if (finalizer === ORPHAN_FINALIZER) return false
  }
  return false
}

/** The object's metadata.finalizers after a DELETE with these options: the same array when nothing changes. */
export function finalizersForDeletion(finalizers: readonly string[], options: PropagationOptions): readonly string[] {
  const next = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER)
  if (shouldOrphan(finalizers, options)) next.push(ORPHAN_FINALIZER)
  if (shouldDeleteInForeground(finalizers, options)) next.push(FOREGROUND_FINALIZER)
  const same = next.length === finalizers.length && next.every((f) => finalizers.includes(f))
  return same ? finalizers : next
}
