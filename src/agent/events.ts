// The agent's Events, as the kubelet records them (reasons of pkg/kubelet/events, messages of Kubernetes
// 1.32's kuberuntime, image manager and node status setters), written as core/v1 Events through the
// client layer's recorder (src/client/events.ts): source {component: agent, host: <node>}, reporting
// component `agent` and instance <node>, repeats counted on one Event (count, lastTimestamp; a PATCH),
// client-go's spam filter (25 per object, then one every 5 minutes), one write at a time so they land
// in the order they happened. Recording never waits for the API nor fails the caller: a write that
// fails is logged and dropped. Without an API client (standalone) events are only logged.
import type {AnyObject} from '../api/types.js'
import {CLIENT_GO_SPAM_FILTER, EventRecorder, referenceOf, type EventType, type ObjectReference} from '../client/events.js'
import type {RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'

/** source.component of the agent's events: the kubelet's `kubelet`, renamed as orch renames the kubelet */
export const AGENT_EVENT_COMPONENT = 'agent'

export interface AgentEventsOptions {
  /** the API client; undefined (standalone) — events are only logged */
  client: () => RestClient | undefined
  nodeName: string
  logger: Logger
  now?: () => number
  spam?: {burst: number; intervalMs: number}
  /** events waiting to be written before new ones are dropped (default 1,000) */
  maxQueued?: number
}

/** The kubelet's format.Pod: `name_namespace(uid)`. */
export function podName(pod: AnyObject): string {
  return `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`
}

/** The kubelet's container reference: the pod, fieldPath `spec.containers{name}` (or initContainers). */
export function containerReference(pod: AnyObject, container: string): ObjectReference {
  const init = (pod.spec?.initContainers ?? []).some((c: AnyObject) => c.name === container)
  const ephemeral = !init && (pod.spec?.ephemeralContainers ?? []).some((c: AnyObject) => c.name === container)
  const field = init ? 'initContainers' : ephemeral ? 'ephemeralContainers' : 'containers'
  return referenceOf(pod, `spec.${field}{${container}}`)
}

/** Reports events about one container of a pod (what the image manager is given). */
export type ContainerEvents = (type: EventType, reason: string, message: string) => void

export class AgentEvents {
  private readonly recorder: EventRecorder

  constructor(private readonly options: AgentEventsOptions) {
    this.recorder = new EventRecorder(options.client, options.logger, {
      component: AGENT_EVENT_COMPONENT,
      host: options.nodeName,
      instance: options.nodeName,
      now: options.now,
      maxQueued: options.maxQueued,
      concurrency: 1,
      spam: options.spam ?? CLIENT_GO_SPAM_FILTER,
      writeTimeoutMs: 10_000,
    })
  }

  /** events dropped (queue full, spam filter) */
  get dropped(): number {
    return this.recorder.dropped
  }

  /** Records an event about the referenced object (logged; written when there is an API). */
  event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    const object = `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}${ref.fieldPath ? ` ${ref.fieldPath}` : ''}`
    this.options.logger.v(3, 'event', {object, type, reason, message})
    if (!this.options.client()) return
    this.recorder.event(ref, type, reason, message)
  }

  // ---------------------------------------------------------------------------------------- node

  /** The kubelet's node reference: no namespace (the Event goes to `default`), uid = the node's name. */
  node(type: EventType, reason: string, message: string): void {
    this.event({kind: 'Node', name: this.options.nodeName, uid: this.options.nodeName}, type, reason, message)
  }

  /** kubelet.Run's first event. */
  starting(): void {
    this.node('Normal', 'Starting', 'Starting agent.')
  }

  /** The node status setters' events, when a condition is new or changes status. */
  nodeConditions(previous: AnyObject[] | undefined, current: AnyObject[]): void {
    for (const condition of current) {
      const before = (previous ?? []).find((c) => c.type === condition.type)
      if (before && before.status === condition.status) continue
      const reason = NODE_CONDITION_EVENTS[condition.type]?.[condition.status]
      if (reason) this.node('Normal', reason, `Node ${this.options.nodeName} status is now: ${reason}`)
    }
  }

  // ---------------------------------------------------------------------------------------- pods

  pod(pod: AnyObject, type: EventType, reason: string, message: string): void {
    const meta = pod.metadata ?? {}
    this.event({kind: 'Pod', namespace: meta.namespace, name: meta.name, uid: meta.uid, apiVersion: 'v1', resourceVersion: meta.resourceVersion}, type, reason, message)
  }

  container(pod: AnyObject, container: string, type: EventType, reason: string, message: string): void {
    this.event(containerReference(pod, container), type, reason, message)
  }

  /** A reporter bound to one container (for the image manager). */
  forContainer(pod: AnyObject, container: string): ContainerEvents {
    return (type, reason, message) => this.container(pod, container, type, reason, message)
  }

  created(pod: AnyObject, container: string): void {
    this.container(pod, container, 'Normal', 'Created', `Created container ${container}`)
  }

  started(pod: AnyObject, container: string): void {
    this.container(pod, container, 'Normal', 'Started', `Started container ${container}`)
  }

  /** Creating or starting a container failed (its config, the runtime): `Error: <message>`. */
  failed(pod: AnyObject, container: string, message: string): void {
    this.container(pod, container, 'Warning', 'Failed', `Error: ${message}`)
  }

  /** An exited container is not restarted before its back-off ends. */
  restartBackOff(pod: AnyObject, container: string): void {
    this.container(pod, container, 'Warning', 'BackOff', `Back-off restarting failed container ${container} in pod ${podName(pod)}`)
  }

  /** The kubelet's killContainer; message: why (a failed liveness or startup probe), else `Stopping container c`. */
  killing(pod: AnyObject, container: string, message?: string): void {
    this.container(pod, container, 'Normal', 'Killing', message ?? `Stopping container ${container}`)
  }

  sandboxFailed(pod: AnyObject, message: string): void {
    this.pod(pod, 'Warning', 'FailedCreatePodSandBox', message)
  }

  sandboxChanged(pod: AnyObject): void {
    this.pod(pod, 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.')
  }

  /** Resolves once the events recorded so far are written (or failed), or after timeoutMs. */
  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.recorder.drain(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))])
    clearTimeout(timer)
  }

  /** Stops recording; events not written yet are dropped. */
  shutdown(): Promise<void> {
    return this.recorder.shutdown()
  }
}

/** Node condition (type → status) → the event reason the kubelet's setters record on a transition. */
const NODE_CONDITION_EVENTS: Record<string, Record<string, string>> = {
  MemoryPressure: {False: 'NodeHasSufficientMemory', True: 'NodeHasInsufficientMemory'},
  DiskPressure: {False: 'NodeHasNoDiskPressure', True: 'NodeHasDiskPressure'},
  PIDPressure: {False: 'NodeHasSufficientPID', True: 'NodeHasInsufficientPID'},
  Ready: {True: 'NodeReady', False: 'NodeNotReady'},
}
