// The storage version migrator: records the resource's current resourceVersion, rewrites every
// object of the group/resource through the API with a no-op update (retrying on conflicts), and
// moves the migration's conditions Running -> Succeeded, or Failed with a reason.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type ResourceLocator, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import {Controller, type ReconcileResult} from './controller.js'

const SVM = {group: 'storagemigration.orch.io', version: 'v1beta1', resource: 'storageversionmigrations'}
const CONFLICT_RETRIES = 5

function conditionTrue(svm: AnyObject, type: string): boolean {
  return (svm.status?.conditions ?? []).some((c: AnyObject) => c.type === type && c.status === 'True')
}

export class StorageMigrationController {
  private readonly controller: Controller
  private readonly migrations: Informer<AnyObject>

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
  ) {
    this.controller = new Controller({name: 'storageversionmigration', logger, reconcile: (key) => this.reconcile(key)})
    const enqueue = (o: AnyObject) => this.controller.enqueue(o.metadata!.name)
    this.migrations = new Informer(client, SVM, {onAdd: enqueue, onUpdate: (_o, n) => enqueue(n)})
  }

  async start(): Promise<void> {
    this.migrations.start()
    await this.migrations.waitForSync()
    this.controller.start()
  }

  async stop(): Promise<void> {
    await this.controller.stop()
    await this.migrations.stop()
  }

  /** The served version of group/resource, found through discovery; undefined when not served. */
  private async locate(group: string, resource: string): Promise<ResourceLocator | undefined> {
    let version = 'v1'
    if (group) {
      try {
        const g = await this.client.requestJson<{preferredVersion: {version: string}}>({method: 'GET', path: `/apis/${group}`})
        version = g.preferredVersion.version
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) return undefined
        throw error
      }
    }
    const list = await this.client.requestJson<{resources: {name: string; verbs: string[]}[]}>({
      method: 'GET',
      path: group ? `/apis/${group}/${version}` : `/api/${version}`,
    })
    const found = list.resources.find((r) => r.name === resource)
    if (!found || !found.verbs.includes('list') || !found.verbs.includes('update')) return undefined
    return {group, version, resource}
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    let svm = this.migrations.get(name)
    if (!svm || svm.metadata?.deletionTimestamp) return
    if (conditionTrue(svm, 'Succeeded') || conditionTrue(svm, 'Failed')) return
    const {group = '', resource = ''} = svm.spec?.resource ?? {}
    const locator = await this.locate(group, resource)
    if (!locator) {
      await this.setConditions(svm, {Failed: ['True', 'ResourceNotFound', `resource "${group ? `${resource}.${group}` : resource}" is not served by this server`], Running: ['False', 'ResourceNotFound', 'migration failed']})
      return
    }
    if (!svm.status?.resourceVersion || !conditionTrue(svm, 'Running')) {
      const first = await this.client.list<AnyObject>(locator, {limit: 1})
      svm = await this.setConditions(svm, {Running: ['True', 'MigrationRunning', 'the migration is running']}, first.metadata.resourceVersion)
      if (!svm) return
    }
    try {
      const items = await this.client.listAll<AnyObject>(locator)
      for (const item of items.items) await this.rewrite(locator, item)
    } catch (error) {
      await this.setConditions(svm, {Failed: ['True', 'MigrationFailed', (error as Error).message], Running: ['False', 'MigrationFailed', 'migration failed']})
      return
    }
    await this.setConditions(svm, {Succeeded: ['True', 'MigrationSucceeded', 'the migration has succeeded'], Running: ['False', 'MigrationSucceeded', 'the migration has succeeded']})
    this.logger.v(1, 'storage migration done', {migration: name})
  }

  /** A no-op update of one object; a conflict means it was rewritten meanwhile: read and try again. */
  private async rewrite(locator: ResourceLocator, item: AnyObject): Promise<void> {
    let object = item
    for (let attempt = 0; ; attempt++) {
      const target = {...locator, namespace: object.metadata?.namespace, name: object.metadata!.name}
      try {
        await this.client.update(target, object)
        return
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) return
        if (error instanceof ApiStatusError && error.code === 409 && attempt < CONFLICT_RETRIES) {
          try {
            object = await this.client.get<AnyObject>(target)
          } catch (readError) {
            if (readError instanceof ApiStatusError && readError.code === 404) return
            throw readError
          }
          continue
        }
        throw error
      }
    }
  }

  private async setConditions(
    svm: AnyObject,
    changes: Record<string, ['True' | 'False', string, string]>,
    resourceVersion?: string,
  ): Promise<AnyObject | undefined> {
    const now = formatTime(new Date())
    const conditions: AnyObject[] = [...(svm.status?.conditions ?? [])]
    for (const [type, [status, reason, message]] of Object.entries(changes)) {
      const index = conditions.findIndex((c) => c.type === type)
      const old = index >= 0 ? conditions[index] : undefined
      const next = {type, status, reason, message, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now}
      if (index >= 0) conditions[index] = next
      else conditions.push(next)
    }
    const status = {...svm.status, conditions, ...(resourceVersion ? {resourceVersion} : {})}
    try {
      return await this.client.update<AnyObject>({...SVM, name: svm.metadata!.name, subresource: 'status'}, {...svm, status})
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) return undefined
      throw error
    }
  }
}
