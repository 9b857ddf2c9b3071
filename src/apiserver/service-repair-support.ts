// What the two Service allocation repair loops (./service-repair.ts) share: the Events they record, as
// client-go's events.k8s.io recorder writes them, and a list of a resource that is not older than a
// given revision.
import {hostname} from 'node:os'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {formatMicroTime} from '../machinery/managed-fields.js'
import type {ResourceRegistry} from './registry.js'
import {EventNames} from '../client/index.js'

/** An isomorphic event observed again within this window adds to the first one's series (client-go's
 *  finishTime, 6 minutes); after it a new Event is written. */
const SERIES_WINDOW_MS = 6 * 60_000
const REMEMBERED = 4096

interface Written {
  namespace: string
  name: string
  count: number
  lastObserved: number
}

/**
 * Warning Events about Services and IPAddresses, as the repair controllers' events.k8s.io recorder
 * writes them (seen through core/v1): named `<object>.<unix nanoseconds in hex>`, in the object's
 * namespace (`default` for a cluster-scoped one), with eventTime, action, reportingComponent (the
 * controller) and reportingInstance (`<controller>-<hostname>`). The same event about the same object
 * again becomes a series on the first one (count, lastObservedTime) instead of a new Event. Recording
 * never fails the repair: a write that fails is logged and dropped.
 */
export class RepairEvents implements EventSink {
  private readonly names = new EventNames()
  private readonly written = new Map<string, Written>()
  private readonly instance: string

  constructor(
    private readonly events: ResourceRegistry,
    private readonly controller: string,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {
    this.instance = `${controller}-${hostname()}`
  }

  async warning(regarding: AnyObject, reason: string, action: string, note: string): Promise<void> {
    const meta = regarding.metadata ?? {}
    const reference = {
      kind: regarding.kind,
      namespace: meta.namespace,
      name: meta.name,
      uid: meta.uid,
      apiVersion: regarding.apiVersion,
      resourceVersion: meta.resourceVersion,
    }
    const now = this.now()
    const key = JSON.stringify([action, reason, reference])
    try {
      const seen = this.written.get(key)
      if (seen && now.getTime() - seen.lastObserved < SERIES_WINDOW_MS) {
        seen.count++
        seen.lastObserved = now.getTime()
        const series = {count: seen.count, lastObservedTime: formatMicroTime(now)}
        await this.events.guaranteedUpdate(seen.namespace, seen.name, (event) => ({...event, series}), {admit: {context: {now}, subresource: ''}})
        return
      }
      const namespace: string = meta.namespace || 'default'
      const name = this.names.next(meta.name, now.getTime())
      const event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {name, namespace},
        involvedObject: reference,
        reason,
        message: note,
        source: {},
        type: 'Warning',
        eventTime: formatMicroTime(now),
        action,
        reportingComponent: this.controller,
        reportingInstance: this.instance,
      }
      this.written.delete(key)
      await this.events.create(namespace, event, {context: {now}})
      if (this.written.size >= REMEMBERED) this.written.delete(this.written.keys().next().value!)
      this.written.set(key, {namespace, name, count: 1, lastObserved: now.getTime()})
    } catch (error) {
      this.written.delete(key)
      this.logger.v(2, 'event not recorded', {reason, object: `${meta.namespace ?? ''}/${meta.name}`, error: (error as Error).message})
    }
  }
}

/**
 * The objects of a resource as of a revision not older than `atLeast`: the watch cache's when it has
 * seen that revision (waiting up to waitMs for it), else a consistent read from storage. A repair
 * compares two resources; reading the second at or after the revision of the first means nothing
 * stored before that first read can be missing from the second. SQLite moves every cache on with each
 * commit, so a short wait is enough; etcd moves one on only with writes to its own resource (or a
 * progress notification, minutes apart), so there waitMs is 0.
 */
export async function listAtLeast(registry: ResourceRegistry, atLeast: number, waitMs = 0): Promise<{items: AnyObject[]; revision: number}> {
  const cache = registry.cache
  if (cache.synced && cache.revision < atLeast && waitMs > 0) await cache.waitUntil(atLeast, waitMs).catch(() => undefined)
  if (cache.synced && cache.revision >= atLeast) {
    const {items, revision} = cache.list()
    return {items: items.map((entry) => entry.object), revision}
  }
  const listed = await registry.list('', {})
  return {items: listed.items, revision: Number(listed.resourceVersion)}
}

/** The stored Services, as the repairs read them. */
export interface ServiceSource {
  /** every Service, as of a revision not older than atLeast, and that revision */
  list(atLeast: number): Promise<{items: AnyObject[]; revision: number}>
  /** the Service as stored now (undefined when there is none) */
  get(namespace: string, name: string): Promise<AnyObject | undefined>
}

/** What a repair records Events with. */
export interface EventSink {
  warning(regarding: AnyObject, reason: string, action: string, note: string): Promise<void>
}

/** The stored Services of a registry (waitMs: see listAtLeast). */
export function serviceSource(services: ResourceRegistry, waitMs: number): ServiceSource {
  return {
    list: (atLeast) => listAtLeast(services, atLeast, waitMs),
    get: (namespace, name) => services.getIfExists(namespace, name),
  }
}

/** A Service's `namespace/name`. */
export function serviceName(service: AnyObject): string {
  return `${service.metadata?.namespace ?? ''}/${service.metadata?.name ?? ''}`
}
