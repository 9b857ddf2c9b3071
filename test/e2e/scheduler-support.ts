// Helpers for the scheduler's end-to-end tests: nodes created through the API (their status, Ready
// condition and allocatable, written through nodes/{name}/status as an agent would), pods, and waits
// that watch (list, then watch from its resourceVersion) instead of sleeping.
import assert from 'node:assert/strict'
import {call, openWatch, type HttpResult} from '../support/http.js'

export interface NodeOptions {
  labels?: Record<string, string>
  taints?: Record<string, unknown>[]
  unschedulable?: boolean
  /** default cpu 4, memory 8Gi, pods 110 */
  allocatable?: Record<string, string>
  /** the Ready condition's status; 'none' writes no status at all */
  ready?: 'True' | 'False' | 'Unknown' | 'none'
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')

export class Cluster {
  constructor(readonly base: string) {}

  api(method: string, path: string, body?: unknown): Promise<HttpResult> {
    return call(this.base, method, path, body)
  }

  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.api(method, path, body)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }

  async namespace(name: string): Promise<string> {
    const r = await this.api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
    assert.ok(r.status === 201 || r.status === 409, r.text)
    return name
  }

  async createNode(name: string, options: NodeOptions = {}): Promise<any> {
    let created = await this.ok('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {name, labels: {'kubernetes.io/hostname': name, ...options.labels}},
      spec: {...(options.taints ? {taints: options.taints} : {}), ...(options.unschedulable ? {unschedulable: true} : {})},
    })
    // TaintNodesByCondition gave the new node node.orch.io/not-ready:NoSchedule; the node lifecycle
    // controller, which these servers do not run, would take it off once the node reports: the node
    // keeps only the taints asked for
    if (!(options.taints ?? []).some((t) => t.key === 'node.orch.io/not-ready' && t.effect === 'NoSchedule')) {
      const taints = (created.spec?.taints ?? []).filter((t: any) => !(t.key === 'node.orch.io/not-ready' && t.effect === 'NoSchedule'))
      created = await this.ok('PUT', `/api/v1/nodes/${name}`, {...created, spec: {...created.spec, taints: taints.length > 0 ? taints : undefined}})
    }
    if (options.ready === 'none') return created
    return this.setNodeStatus(created, options.ready ?? 'True', options.allocatable)
  }

  async setNodeStatus(node: any, ready: 'True' | 'False' | 'Unknown', allocatable?: Record<string, string>): Promise<any> {
    const resources = allocatable ?? node.status?.allocatable ?? {cpu: '4', memory: '8Gi', pods: '110'}
    const status = {
      capacity: resources,
      allocatable: resources,
      conditions: [{type: 'Ready', status: ready, reason: ready === 'True' ? 'AgentReady' : 'AgentNotReady', message: '', lastHeartbeatTime: now(), lastTransitionTime: now()}],
    }
    return this.ok('PUT', `/api/v1/nodes/${node.metadata.name}/status`, {...node, status})
  }

  async createPod(namespace: string, pod: any): Promise<any> {
    return this.ok('POST', `/api/v1/namespaces/${namespace}/pods`, pod)
  }

  /** Deletes the nodes and every pod of the namespaces, so the next test starts from an empty cluster. */
  async clean(nodes: string[], namespaces: string[]): Promise<void> {
    for (const ns of namespaces) await this.api('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`)
    for (const node of nodes) await this.api('DELETE', `/api/v1/nodes/${node}`)
  }

  /** Lists the path, then watches it, until check(items) gives a value. */
  async waitUntil<T>(path: string, check: (items: any[]) => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
    const list = await this.ok('GET', path)
    const state = new Map<string, any>(list.items.map((i: any) => [i.metadata.name, i]))
    const first = check([...state.values()])
    if (first !== undefined && first !== false) return first
    const stream = await openWatch(this.base, `${path}${path.includes('?') ? '&' : '?'}watch=1&resourceVersion=${list.metadata.resourceVersion}`)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))
    try {
      for (let seen = 0; ; ) {
        const events = await Promise.race([stream.waitFor(seen + 1), expired])
        if (!events) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify([...state.values()].map(summary))}`)
        for (; seen < events.length; seen++) {
          const event = events[seen]
          if (event.type === 'DELETED') state.delete(event.object.metadata.name)
          else if (event.type === 'ADDED' || event.type === 'MODIFIED') state.set(event.object.metadata.name, event.object)
        }
        const result = check([...state.values()])
        if (result !== undefined && result !== false) return result
      }
    } finally {
      clearTimeout(timer)
      stream.close()
    }
  }

  /** Waits until every named pod is bound; returns pod name -> node name. */
  async waitForBound(namespace: string, names: string[]): Promise<Record<string, string>> {
    return this.waitUntil(
      `/api/v1/namespaces/${namespace}/pods`,
      (pods) => {
        const bound = pods.filter((p) => names.includes(p.metadata.name) && p.spec.nodeName)
        return bound.length === names.length ? Object.fromEntries(bound.map((p) => [p.metadata.name, p.spec.nodeName])) : undefined
      },
      `${names.join(', ')} bound`,
    )
  }

  /** Waits until the pod is reported unschedulable (PodScheduled False, reason Unschedulable); returns the message. */
  async waitForUnschedulable(namespace: string, name: string, message?: string): Promise<string> {
    return this.waitUntil(
      `/api/v1/namespaces/${namespace}/pods?fieldSelector=metadata.name%3D${name}`,
      (pods) => {
        const condition = pods[0]?.status?.conditions?.find((c: any) => c.type === 'PodScheduled')
        if (condition?.status !== 'False' || condition.reason !== 'Unschedulable') return undefined
        return message === undefined || condition.message === message ? (condition.message as string) : undefined
      },
      `${namespace}/${name} unschedulable${message ? `: ${message}` : ''}`,
    )
  }

  /** Waits for an event about the pod with this reason; returns it. */
  async waitForEvent(namespace: string, pod: string, reason: string, match: (event: any) => boolean = () => true): Promise<any> {
    return this.waitUntil(
      `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${pod}`,
      (events) => events.find((e) => e.reason === reason && match(e)),
      `${reason} event for ${namespace}/${pod}`,
    )
  }

  async pod(namespace: string, name: string): Promise<any> {
    return this.ok('GET', `/api/v1/namespaces/${namespace}/pods/${name}`)
  }
}

function summary(o: any): unknown {
  return {name: o.metadata?.name, nodeName: o.spec?.nodeName, conditions: o.status?.conditions, reason: o.reason, message: o.message}
}

/** A pod with one container; `requests` become its resource requests. */
export function pod(name: string, options: {requests?: Record<string, string>; labels?: Record<string, string>; spec?: Record<string, unknown>} = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, ...(options.labels ? {labels: options.labels} : {})},
    spec: {
      containers: [{name: 'app', image: 'registry.example/app:1', ...(options.requests ? {resources: {requests: options.requests}} : {})}],
      ...options.spec,
    },
  }
}
