// Pod (v1, namespaced): the spec is PodSpec (pod-spec.ts); status, defaults and kubectl's columns here.
import {age, ageColumn} from '../columns.js'
import {deleteOptions, objectMeta} from '../meta.js'
import type {AnyObject, FieldError, KindDeclaration, ObjectSchema, TableColumn} from '../types.js'
import {resourceRequirements} from './container.js'
import {objectReference} from './event.js'
import {defaultPodSpec, podSpec} from './pod-spec.js'

const podCondition: ObjectSchema = {
  type: 'object',
  name: 'PodCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    observedGeneration: {type: 'integer', format: 'int64', proto: 7},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    lastProbeTime: {type: 'time', proto: 3},
    lastTransitionTime: {type: 'time', proto: 4},
    reason: {type: 'string', proto: 5},
    message: {type: 'string', proto: 6},
  },
}

const containerState: ObjectSchema = {
  type: 'object',
  name: 'ContainerState',
  fields: {
    waiting: {
      type: 'object',
      name: 'ContainerStateWaiting',
      proto: 1,
      fields: {reason: {type: 'string', proto: 1}, message: {type: 'string', proto: 2}},
    },
    running: {type: 'object', name: 'ContainerStateRunning', proto: 2, fields: {startedAt: {type: 'time', proto: 1}}},
    terminated: {
      type: 'object',
      name: 'ContainerStateTerminated',
      proto: 3,
      fields: {
        exitCode: {type: 'integer', format: 'int32', proto: 1, required: true},
        signal: {type: 'integer', format: 'int32', proto: 2},
        reason: {type: 'string', proto: 3},
        message: {type: 'string', proto: 4},
        startedAt: {type: 'time', proto: 5},
        finishedAt: {type: 'time', proto: 6},
        containerID: {type: 'string', proto: 7},
      },
    },
  },
}

export const containerStatus: ObjectSchema = {
  type: 'object',
  name: 'ContainerStatus',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    state: {...containerState, proto: 2},
    lastState: {...containerState, proto: 3},
    ready: {type: 'boolean', proto: 4, required: true},
    restartCount: {type: 'integer', format: 'int32', proto: 5, required: true},
    image: {type: 'string', proto: 6, required: true},
    imageID: {type: 'string', proto: 7, required: true},
    containerID: {type: 'string', proto: 8},
    started: {type: 'boolean', proto: 9},
    allocatedResources: {type: 'map', values: {type: 'quantity'}, proto: 10},
    resources: {...resourceRequirements, proto: 11},
    volumeMounts: {
      type: 'array',
      proto: 12,
      patchMergeKey: 'mountPath',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['mountPath'],
      items: {
        type: 'object',
        name: 'VolumeMountStatus',
        fields: {
          name: {type: 'string', proto: 1, required: true},
          mountPath: {type: 'string', proto: 2, required: true},
          readOnly: {type: 'boolean', proto: 3},
          recursiveReadOnly: {type: 'string', proto: 4},
        },
      },
    },
    stopSignal: {type: 'string', proto: 15},
  },
}

const ipEntry = (name: string): ObjectSchema => ({type: 'object', name, fields: {ip: {type: 'string', proto: 1, required: true}}})

export const podStatus: ObjectSchema = {
  type: 'object',
  name: 'PodStatus',
  fields: {
    observedGeneration: {type: 'integer', format: 'int64', proto: 17},
    phase: {type: 'string', proto: 1, enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']},
    conditions: {type: 'array', items: podCondition, proto: 2, patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type']},
    message: {type: 'string', proto: 3},
    reason: {type: 'string', proto: 4},
    nominatedNodeName: {type: 'string', proto: 11},
    hostIP: {type: 'string', proto: 5},
    hostIPs: {type: 'array', items: ipEntry('HostIP'), proto: 16, patchMergeKey: 'ip', patchStrategy: 'merge', listType: 'atomic'},
    podIP: {type: 'string', proto: 6},
    podIPs: {type: 'array', items: ipEntry('PodIP'), proto: 12, patchMergeKey: 'ip', patchStrategy: 'merge', listType: 'map', listMapKeys: ['ip']},
    startTime: {type: 'time', proto: 7},
    initContainerStatuses: {type: 'array', items: containerStatus, proto: 10, listType: 'atomic'},
    containerStatuses: {type: 'array', items: containerStatus, proto: 8, listType: 'atomic'},
    qosClass: {type: 'string', proto: 9, enum: ['Guaranteed', 'Burstable', 'BestEffort']},
    ephemeralContainerStatuses: {type: 'array', items: containerStatus, proto: 13, listType: 'atomic'},
    resize: {type: 'string', proto: 14},
  },
}

// ---------- defaults ----------

/**
 * The v1 PodStatus's single and plural IP fields read as Kubernetes' conversion reads them: podIP alone
 * gives podIPs [{ip: podIP}], podIP wins when it differs from podIPs[0], and podIP is podIPs[0]'s
 * (the same for hostIP and hostIPs).
 */
function reconcileStatusIPs(status: AnyObject, single: 'podIP' | 'hostIP', plural: 'podIPs' | 'hostIPs'): void {
  const one = status[single]
  const many = status[plural]
  if (typeof one === 'string' && one !== '' && (!Array.isArray(many) || many.length === 0 || many[0]?.ip !== one)) {
    status[plural] = [{ip: one}]
  }
  const first = Array.isArray(status[plural]) ? status[plural][0]?.ip : undefined
  if (typeof first === 'string' && first !== '') status[single] = first
}

/** Defaults only a Pod gets, not a pod template (SetDefaults_Pod), then the PodSpec defaults. */
function defaultPod(object: AnyObject): void {
  if (object.status && typeof object.status === 'object') {
    reconcileStatusIPs(object.status, 'podIP', 'podIPs')
    reconcileStatusIPs(object.status, 'hostIP', 'hostIPs')
  }
  object.spec ??= {}
  const spec = object.spec
  for (const list of [spec.containers, spec.initContainers]) {
    for (const c of Array.isArray(list) ? list : []) {
      const resources = c?.resources
      if (!resources || typeof resources !== 'object' || !resources.limits || typeof resources.limits !== 'object') continue
      resources.requests ??= {}
      for (const [name, value] of Object.entries(resources.limits)) {
        if (!(name in resources.requests)) resources.requests[name] = value
      }
    }
  }
  spec.enableServiceLinks ??= true
  if (spec.hostNetwork === true) {
    for (const list of [spec.containers, spec.initContainers]) {
      for (const c of Array.isArray(list) ? list : []) {
        for (const port of Array.isArray(c?.ports) ? c.ports : []) {
          if (port && typeof port === 'object' && !port.hostPort) port.hostPort = port.containerPort
        }
      }
    }
  }
  defaultPodSpec(spec)
}

// ---------- QoS class (as Kubernetes computes it when the pod is created) ----------

const suffixes: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
}

/** A resource.Quantity's value as a number (NaN when it does not parse). */
export function quantityValue(quantity: unknown): number {
  if (typeof quantity === 'number') return quantity
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(String(quantity).trim())
  if (!match) return NaN
  const [, number, exponent, suffix] = match
  return exponent ? Number(number + exponent) : Number(number) * suffixes[suffix ?? '']
}

function qosClass(spec: any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>()
  const limits = new Map<string, number>()
  let guaranteed = true
  const all = [...(Array.isArray(spec?.containers) ? spec.containers : []), ...(Array.isArray(spec?.initContainers) ? spec.initContainers : [])]
  for (const c of all) {
    for (const [name, q] of Object.entries<unknown>(c?.resources?.requests ?? {})) {
      const v = quantityValue(q)
      if ((name === 'cpu' || name === 'memory') && v > 0) requests.set(name, (requests.get(name) ?? 0) + v)
    }
    const found = new Set<string>()
    for (const [name, q] of Object.entries<unknown>(c?.resources?.limits ?? {})) {
      const v = quantityValue(q)
      if ((name === 'cpu' || name === 'memory') && v > 0) {
        found.add(name)
        limits.set(name, (limits.get(name) ?? 0) + v)
      }
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort'
  if (guaranteed) {
    for (const [name, request] of requests) {
      if (limits.get(name) !== request) guaranteed = false
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable'
}

// ---------- binding ----------

/** Why a pod cannot be bound (Kubernetes' messages), or '' when it can. */
export function bindingRejection(pod: AnyObject): string {
  const name = pod.metadata?.name ?? ''
  if (pod.metadata?.deletionTimestamp) return `pod ${name} is being deleted, cannot be assigned to a host`
  if (pod.spec?.nodeName) return `pod ${name} is already assigned to node "${pod.spec.nodeName}"`
  if ((pod.spec?.schedulingGates ?? []).length > 0) return `pod ${name} has non-empty .spec.schedulingGates`
  return ''
}

/** What POST pods/{name}/binding reads: a v1 Binding (not a stored kind; its schema decodes the body). */
export const podBinding: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Binding',
  resource: 'bindings',
  singular: 'binding',
  namespaced: true,
  verbs: ['create'],
  schema: {
    type: 'object',
    name: 'Binding',
    fields: {metadata: {...objectMeta, proto: 1}, target: {...objectReference, proto: 2, required: true}},
  },
}

/** The body of POST pods/{name}/eviction (policy/v1, as kubectl drain sends it). */
export const podEviction: KindDeclaration = {
  group: 'policy',
  version: 'v1',
  kind: 'Eviction',
  resource: 'evictions',
  singular: 'eviction',
  namespaced: true,
  verbs: ['create'],
  schema: {
    type: 'object',
    name: 'Eviction',
    fields: {metadata: {...objectMeta, proto: 1}, deleteOptions: {...deleteOptions, proto: 2}},
  },
}

/** ValidatePodBinding: the target is a Node (or names no kind) and has a name. */
export function validateBinding(binding: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const kind = binding.target?.kind ?? ''
  if (kind !== '' && kind !== 'Node') {
    errs.push({type: 'FieldValueNotSupported', field: 'target.kind', value: kind, message: 'supported values: "Node", "<empty>"'})
  }
  if (!binding.target?.name) errs.push({type: 'FieldValueRequired', field: 'target.name', message: ''})
  return errs
}

/** The pod after a Binding: node name set, the binding's annotations copied, PodScheduled True. */
function bind(binding: AnyObject, pod: AnyObject, now: Date): AnyObject {
  pod.spec ??= {}
  pod.spec.nodeName = binding.target?.name ?? ''
  const annotations = binding.metadata?.annotations
  if (annotations && typeof annotations === 'object' && Object.keys(annotations).length > 0) {
    pod.metadata = {...pod.metadata, annotations: {...(pod.metadata?.annotations ?? {}), ...annotations}}
  }
  pod.status ??= {}
  const conditions: any[] = (pod.status.conditions ??= [])
  const existing = conditions.find((c) => c?.type === 'PodScheduled')
  const transition = new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z')
  if (!existing) conditions.push({type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: transition})
  else {
    if (existing.status !== 'True') existing.lastTransitionTime = transition
    existing.status = 'True'
    delete existing.reason
    delete existing.message
  }
  return pod
}

// ---------- columns (kubectl's printPod) ----------

function isRestartableInit(container: any): boolean {
  return container?.restartPolicy === 'Always'
}

function conditionTrue(pod: AnyObject, type: string): boolean {
  return (pod.status?.conditions ?? []).some((c: any) => c?.type === type && c?.status === 'True')
}

function later(current: string, candidate: string | undefined): string {
  if (!candidate) return current
  if (!current) return candidate
  return Date.parse(candidate) > Date.parse(current) ? candidate : current
}

/** READY, STATUS and RESTARTS as kubectl computes them. */
export function podSummary(pod: AnyObject, now: Date): {ready: string; status: string; restarts: string} {
  const spec = pod.spec ?? {}
  const status = pod.status ?? {}
  const initSpecs: any[] = Array.isArray(spec.initContainers) ? spec.initContainers : []
  const byName = new Map(initSpecs.map((c) => [c?.name, c]))
  const total = (Array.isArray(spec.containers) ? spec.containers.length : 0) + initSpecs.filter(isRestartableInit).length
  let ready = 0
  let restarts = 0
  let sidecarRestarts = 0
  let lastRestart = ''
  let lastSidecarRestart = ''
  let reason: string = status.reason || status.phase || ''
  for (const c of status.conditions ?? []) {
    if (c?.type === 'PodScheduled' && c?.reason === 'SchedulingGated') reason = 'SchedulingGated'
  }

  let initializing = false
  const initStatuses: any[] = Array.isArray(status.initContainerStatuses) ? status.initContainerStatuses : []
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i] ?? {}
    restarts += c.restartCount ?? 0
    lastRestart = later(lastRestart, c.lastState?.terminated?.finishedAt)
    const sidecar = isRestartableInit(byName.get(c.name))
    if (sidecar) {
      sidecarRestarts += c.restartCount ?? 0
      lastSidecarRestart = later(lastSidecarRestart, c.lastState?.terminated?.finishedAt)
    }
    const terminated = c.state?.terminated
    const waiting = c.state?.waiting
    if (terminated && (terminated.exitCode ?? 0) === 0) continue
    if (sidecar && c.started === true) {
      if (c.ready) ready++
      continue
    }
    if (terminated) {
      if (!terminated.reason) reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`
      else reason = `Init:${terminated.reason}`
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`
    } else {
      reason = `Init:${i}/${initSpecs.length}`
    }
    initializing = true
    break
  }

  if (!initializing || conditionTrue(pod, 'Initialized')) {
    restarts = sidecarRestarts
    lastRestart = lastSidecarRestart
    let hasRunning = false
    const statuses: any[] = Array.isArray(status.containerStatuses) ? status.containerStatuses : []
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i] ?? {}
      restarts += c.restartCount ?? 0
      lastRestart = later(lastRestart, c.lastState?.terminated?.finishedAt)
      const terminated = c.state?.terminated
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason
      else if (terminated?.reason) reason = terminated.reason
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`
      else if (c.ready && c.state?.running) {
        hasRunning = true
        ready++
      }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady'
  }

  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown'
  else if (pod.metadata?.deletionTimestamp && status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating'

  const restartText = restarts !== 0 && lastRestart ? `${restarts} (${age(lastRestart, now)} ago)` : String(restarts)
  return {ready: `${ready}/${total}`, status: reason, restarts: restartText}
}

const orNone = (value: unknown) => (value ? String(value) : '<none>')

const podColumns: TableColumn[] = [
  {name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', priority: 0, cell: (o, now) => podSummary(o, now).ready},
  {name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0, cell: (o, now) => podSummary(o, now).status},
  {
    name: 'Restarts',
    type: 'string',
    description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    priority: 0,
    cell: (o, now) => podSummary(o, now).restarts,
  },
  ageColumn,
  {
    name: 'IP',
    type: 'string',
    description: 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
    priority: 1,
    cell: (o) => orNone(o.status?.podIPs?.[0]?.ip),
  },
  {
    name: 'Node',
    type: 'string',
    description: 'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling.',
    priority: 1,
    cell: (o) => orNone(o.spec?.nodeName),
  },
  {
    name: 'Nominated Node',
    type: 'string',
    description: 'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.',
    priority: 1,
    cell: (o) => orNone(o.status?.nominatedNodeName),
  },
  {
    name: 'Readiness Gates',
    type: 'string',
    description: 'If specified, all readiness gates will be evaluated for pod readiness.',
    priority: 1,
    cell: (o) => {
      const gates: any[] = o.spec?.readinessGates ?? []
      if (gates.length === 0) return '<none>'
      const conditions: any[] = o.status?.conditions ?? []
      const met = gates.filter((g) => conditions.find((c) => c?.type === g?.conditionType)?.status === 'True').length
      return `${met}/${gates.length}`
    },
  },
]

/**
 * Kubernetes' graceful pod deletion: a pod bound to a node and not finished stays, marked, for the
 * requested grace period (else spec.terminationGracePeriodSeconds, default 30) so that its node's
 * agent can stop it and then delete it with grace 0. Unbound or finished pods go at once.
 */
export function podDeletionGracePeriod(object: AnyObject, requested: number | undefined): number {
  const phase = object.status?.phase
  if (!object.spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0
  const grace = requested ?? object.spec?.terminationGracePeriodSeconds ?? 30
  return Math.max(0, grace)
}

export const pod: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  deletionGracePeriod: podDeletionGracePeriod,
  returnDeletedObject: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    {name: 'binding', verbs: ['create'], kind: {group: '', version: 'v1', kind: 'Binding'}, writes: 'custom'},
    // an eviction deletes the pod (subject to disruption budgets); it writes no part of it
    {name: 'eviction', verbs: ['create'], kind: {group: 'policy', version: 'v1', kind: 'Eviction'}},
    // the container's log, streamed from the pod's node agent (discovery: kind Pod, verb get, as Kubernetes lists it)
    {name: 'log', verbs: ['get']},
  ],
  hasStatus: true,
  // Kubernetes 1.32 counts no generation for pods (PodObservedGenerationTracking, 1.33, does):
  // only graceful deletion raises one a client set
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'Pod',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {...podSpec, proto: 2},
      status: {...podStatus, proto: 3},
    },
  },
  defaults: defaultPod,
  prepareForCreate(object) {
    const conditions: any[] = []
    if ((object.spec?.schedulingGates ?? []).length > 0) {
      conditions.push({
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: null,
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
      })
    }
    object.status = {phase: 'Pending', ...(conditions.length > 0 ? {conditions} : {}), qosClass: qosClass(object.spec)}
  },
  prepareSubresourceUpdate(subresource, object, old, context) {
    if (subresource !== 'binding') return old
    return bind(object, old, context.now)
  },
  columns: podColumns,
  fieldSelectors: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork === true),
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => o.status?.podIPs?.[0]?.ip ?? '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
}
