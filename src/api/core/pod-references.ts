// The other API objects a pod's spec names, as Kubernetes' podutil visitors find them: read by the
// Node authorizer's graph (what a node may read) and by NodeRestriction (what a mirror pod may not name).
import type {AnyObject} from '../types.js'

const list = (value: unknown): AnyObject[] => (Array.isArray(value) ? value.filter((v) => v && typeof v === 'object') : [])

/** Kubernetes' VisitPodConfigmapNames: every configMap a pod names, in volumes and containers. */
export function podConfigMapNames(pod: AnyObject): string[] {
  const names = new Set<string>()
  const spec = pod.spec ?? {}
  for (const container of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) {
    for (const source of list(container.envFrom)) if (source.configMapRef?.name) names.add(source.configMapRef.name)
    for (const variable of list(container.env)) {
      const name = variable.valueFrom?.configMapKeyRef?.name
      if (name) names.add(name)
    }
  }
  for (const volume of list(spec.volumes)) {
    if (volume.configMap?.name) names.add(volume.configMap.name)
    for (const source of list(volume.projected?.sources)) if (source.configMap?.name) names.add(source.configMap.name)
  }
  return [...names]
}

/** The claims a pod's volumes use: persistentVolumeClaim.claimName, and `<pod>-<volume>` for ephemeral volumes. */
export function podClaimNames(pod: AnyObject): string[] {
  const names = new Set<string>()
  for (const volume of list(pod.spec?.volumes)) {
    if (volume.persistentVolumeClaim?.claimName) names.add(volume.persistentVolumeClaim.claimName)
    else if (volume.ephemeral && volume.name) names.add(`${pod.metadata?.name ?? ''}-${volume.name}`)
  }
  return [...names]
}
