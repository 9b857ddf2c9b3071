// Native sidecar containers (gate SidecarContainers, beta and on in Kubernetes 1.32): an init container
// with `restartPolicy: Always` is started in its turn among the init containers, and the next one (or
// the app containers) starts once it has *started* (running, and past its startupProbe if it has one);
// it is not an init container that must complete: it keeps running beside the app containers, is
// restarted (with back-off) whenever it exits whatever the pod's restartPolicy, is probed as app
// containers are, counts towards ContainersReady and Ready, and is stopped after the app containers.
import type {AnyObject} from '../../api/types.js'
import type {ContainerInstance, PodView} from './status.js'

export const isSidecar = (spec: AnyObject): boolean => spec.restartPolicy === 'Always'

/** The pod's sidecar (restartable init) containers, in spec order. */
export const sidecarsOf = (pod: AnyObject): AnyObject[] => (pod.spec?.initContainers ?? []).filter(isSidecar)

export type Probed = (name: string, containerId: string) => {started: boolean; ready: boolean}

/** What the init phase of a pod's sync does next (the kubelet's computeInitContainerActions, small). */
export type InitStep =
  | {action: 'done'}
  | {action: 'wait'}
  | {action: 'fail'}
  | {action: 'start'; spec: AnyObject; instance: ContainerInstance}
  | {action: 'restart'; spec: AnyObject; instance: ContainerInstance}
  | {action: 'create'; spec: AnyObject}

/**
 * The next init step: init containers in order, a regular one to a zero exit (a failure fails the pod
 * under restartPolicy Never, else it is restarted), a sidecar until it has started (restarted whenever
 * it exited).
 */
export function nextInitStep(pod: AnyObject, view: PodView, probed: Probed | undefined): InitStep {
  const policy = pod.spec?.restartPolicy ?? 'Always'
  for (const spec of (pod.spec?.initContainers ?? []) as AnyObject[]) {
    const instance = view.latest.get(spec.name)
    if (!instance) return {action: 'create', spec}
    const state = instance.status?.state ?? instance.container.state
    if (state === 'CONTAINER_CREATED') return {action: 'start', spec, instance}
    if (isSidecar(spec)) {
      if (state === 'CONTAINER_RUNNING') {
        if (probed?.(spec.name, instance.container.id).started ?? true) continue
        return {action: 'wait'}
      }
      return {action: 'restart', spec, instance}
    }
    if (state === 'CONTAINER_RUNNING') return {action: 'wait'}
    if ((instance.status?.exitCode ?? 0) === 0) continue
    return policy === 'Never' ? {action: 'fail'} : {action: 'restart', spec, instance}
  }
  return {action: 'done'}
}
