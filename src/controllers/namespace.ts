// Namespace lifecycle: a namespace marked for deletion is emptied (every namespaced kind, honouring
// the objects' finalizers), its status conditions say how that goes, and then the `orch` finalizer
// is removed through /finalize so the namespace itself goes.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {Controller, type ReconcileResult} from './controller.js'

export const NAMESPACE_FINALIZER = 'orch'

interface NamespacedResource {
  group: string
  version: string
  resource: string
  deleteCollection: boolean
}

/** Every namespaced resource the server lists and deletes, found through discovery. */
export async function discoverNamespacedResources(client: RestClient): Promise<NamespacedResource[]> {
  const groupVersions: {group: string; version: string}[] = [{group: '', version: 'v1'}]
  const groups = await client.requestJson<{groups: {name: string; preferredVersion: {version: string}}[]}>({method: 'GET', path: '/apis'})
  for (const g of groups.groups) groupVersions.push({group: g.name, version: g.preferredVersion.version})
  const out: NamespacedResource[] = []
  for (const {group, version} of groupVersions) {
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`
    const list = await client.requestJson<{resources: {name: string; namespaced: boolean; verbs: string[]}[]}>({method: 'GET', path})
    for (const r of list.resources) {
      if (!r.namespaced || r.name.includes('/') || !r.verbs.includes('list') || !r.verbs.includes('delete')) continue
      out.push({group, version, resource: r.name, deleteCollection: r.verbs.includes('deletecollection')})
    }
  }
  return out
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, now: string): AnyObject {
  return {type, status, lastTransitionTime: now, reason, message}
}

export class NamespaceController {
  private readonly controller: Controller
  private readonly informer: Informer<AnyObject>
  private resources: NamespacedResource[] | undefined

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    private readonly options: {recheckMs?: number} = {},
  ) {
    this.controller = new Controller({name: 'namespace', logger, workers: 2, reconcile: (key) => this.reconcile(key)})
    const enqueue = (ns: AnyObject) => {
      if (ns.metadata?.deletionTimestamp) this.controller.enqueue(ns.metadata.name)
    }
    this.informer = new Informer<AnyObject>(client, {group: '', version: 'v1', resource: 'namespaces'}, {
      onAdd: enqueue,
      onUpdate: (_old, ns) => enqueue(ns),
    })
  }

  async start(): Promise<void> {
    this.informer.start()
    await this.informer.waitForSync()
    this.controller.start()
  }

  async stop(): Promise<void> {
    await this.controller.stop()
    await this.informer.stop()
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    let namespace: AnyObject
    try {
      namespace = await this.client.get<AnyObject>({group: '', version: 'v1', resource: 'namespaces', name})
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) return
      throw error
    }
    if (!namespace.metadata?.deletionTimestamp) return
    this.resources ??= await discoverNamespacedResources(this.client)
    const failures: string[] = []
    const remaining = new Map<string, number>()
    const finalizers = new Map<string, number>()
    for (const r of this.resources) {
      const locator = {group: r.group, version: r.version, resource: r.resource, namespace: name}
      const label = r.group ? `${r.resource}.${r.group}` : r.resource
      try {
        const list = await this.client.list<AnyObject>(locator)
        for (const item of list.items) {
          if (!item.metadata?.deletionTimestamp) {
            try {
              await this.client.delete({...locator, name: item.metadata!.name})
            } catch (error) {
              if (!(error instanceof ApiStatusError && error.code === 404)) throw error
            }
          }
        }
        const after = list.items.length > 0 ? (await this.client.list<AnyObject>(locator)).items : []
        if (after.length > 0) remaining.set(label, after.length)
        for (const item of after) {
          for (const f of item.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1)
        }
      } catch (error) {
        failures.push(`${label}: ${(error as Error).message}`)
      }
    }
    await this.writeConditions(namespace, failures, remaining, finalizers)
    if (failures.length > 0 || remaining.size > 0) return {requeueAfterMs: this.options.recheckMs ?? 500}
    await this.removeFinalizer(name)
    this.logger.v(1, 'namespace emptied and finalized', {namespace: name})
  }

  private async writeConditions(namespace: AnyObject, failures: string[], remaining: Map<string, number>, finalizers: Map<string, number>): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
    const listOf = (m: Map<string, number>) => [...m].sort().map(([k, n]) => `${k} has ${n} resource instances`).join(', ')
    const desired = [
      condition('NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered', now),
      condition('NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed', now),
      failures.length > 0
        ? condition('NamespaceDeletionContentFailure', 'True', 'ContentDeletionFailed', `Failed to delete all resource types, ${failures.length} remaining: ${failures.join(', ')}`, now)
        : condition('NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization', now),
      remaining.size > 0
        ? condition('NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${listOf(remaining)}`, now)
        : condition('NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed', now),
      finalizers.size > 0
        ? condition('NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain', `Some content in the namespace has finalizers remaining: ${[...finalizers].sort().map(([f, n]) => `${f} in ${n} resource instances`).join(', ')}`, now)
        : condition('NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished', now),
    ]
    const current: AnyObject[] = namespace.status?.conditions ?? []
    // keep lastTransitionTime where the status did not change
    const merged = desired.map((c) => {
      const old = current.find((o) => o.type === c.type)
      return old && old.status === c.status ? {...c, lastTransitionTime: old.lastTransitionTime} : c
    })
    const same = merged.every((c) => {
      const old = current.find((o) => o.type === c.type)
      return old && old.status === c.status && old.reason === c.reason && old.message === c.message
    })
    if (same) return
    try {
      await this.client.update(
        {group: '', version: 'v1', resource: 'namespaces', name: namespace.metadata!.name, subresource: 'status'},
        {...namespace, status: {...(namespace.status ?? {}), phase: 'Terminating', conditions: merged}},
      )
    } catch (error) {
      if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) return
      throw error
    }
  }

  private async removeFinalizer(name: string): Promise<void> {
    for (;;) {
      let namespace: AnyObject
      try {
        namespace = await this.client.get<AnyObject>({group: '', version: 'v1', resource: 'namespaces', name})
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) return
        throw error
      }
      const finalizers: string[] = namespace.spec?.finalizers ?? []
      if (!finalizers.includes(NAMESPACE_FINALIZER)) return
      try {
        await this.client.update(
          {group: '', version: 'v1', resource: 'namespaces', name, subresource: 'finalize'},
          {...namespace, spec: {...namespace.spec, finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER)}},
        )
        return
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 409) continue
        if (error instanceof ApiStatusError && error.code === 404) return
        throw error
      }
    }
  }
}
