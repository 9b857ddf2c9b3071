// The storage version migrator: records the resource's current resourceVersion, rewrites every
// object of the group/resource through the API with a no-op update (retrying on conflicts), and
// moves the migration's conditions as Kubernetes' svm controller does: Running (reason
// StorageVersionMigrationInProgress), then Succeeded (StorageVersionMigrationSucceeded) with Running
// turned False, or Failed (StorageVersionMigrationFailed, "migration encountered unhandled error: ...").
// A resource discovery does not serve is looked for again until a minute after the migration's
// creation, then the migration fails.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, Informer, type ResourceLocator, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatTime} from '../machinery/managed-fields.js'
import {Controller, type ReconcileResult} from './controller.js'

const SVM = {group: 'storagemigration.orch.io', version: 'v1beta1', resource: 'storageversionmigrations'}
const CONFLICT_RETRIES = 5
/** Kubernetes' condition reasons */
const RUNNING_REASON = 'StorageVersionMigrationInProgress'
const SUCCEEDED_REASON = 'StorageVersionMigrationSucceeded'
const FAILED_REASON = 'StorageVersionMigrationFailed'
/** how long after its creation a migration of a resource discovery does not know is retried (Kubernetes:
 *  a minute, "we resync discovery every 30 seconds so twice that should be sufficient") */
export const DISCOVERY_WAIT_MS = 60_000
/** between those retries at most */
const DISCOVERY_RETRY_MS = 5_000
/** Kubernetes' isRetriableError: too many requests, internal error, unavailable, timeouts */
const RETRIABLE_CODES = new Set([429, 500, 503, 504])

function conditionTrue(svm: AnyObject, type: string): boolean {
  return (svm.status?.conditions ?? []).some((c: AnyObject) => c.type === type && c.status === 'True')
}

export class StorageMigrationController {
  private readonly controller: Controller
  private readonly migrations: Informer<AnyObject>
  private readonly discoveryWaitMs: number
  private readonly now: () => Date

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    options: {discoveryWaitMs?: number; now?: () => Date} = {},
  ) {
    this.discoveryWaitMs = options.discoveryWaitMs ?? DISCOVERY_WAIT_MS
    this.now = options.now ?? (() => new Date())
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
      // discovery may not know a resource that was just added (a new CRD): it is given time to appear
      const remaining = Date.parse(svm.metadata!.creationTimestamp) + this.discoveryWaitMs - this.now().getTime()
      if (remaining > 0) {
        this.logger.v(4, 'resource does not exist in discovery, requeuing to attempt again', {migration: name, group, resource})
        return {requeueAfterMs: Math.min(remaining, DISCOVERY_RETRY_MS)}
      }
      await this.fail(svm, 'unable to obtain GVR from discovery')
      return
    }
    if (!svm.status?.resourceVersion || !conditionTrue(svm, 'Running')) {
      const first = await this.client.list<AnyObject>(locator, {limit: 1})
      svm = await this.setCondition(svm, 'Running', RUNNING_REASON, '', first.metadata.resourceVersion)
      if (!svm) return
    }
    try {
      const items = await this.client.listAll<AnyObject>(locator)
      for (const item of items.items) await this.rewrite(locator, item)
    } catch (error) {
      // throttling, server errors and lost connections are tried again later; any other answer fails
      // the migration
      if (!(error instanceof ApiStatusError) || RETRIABLE_CODES.has(error.code)) throw error
      await this.fail(svm, (error as Error).message)
      return
    }
    await this.setCondition(svm, 'Succeeded', SUCCEEDED_REASON, '')
    this.logger.v(1, 'storage migration done', {migration: name})
  }

  private async fail(svm: AnyObject, error: string): Promise<void> {
    await this.setCondition(svm, 'Failed', FAILED_REASON, `migration encountered unhandled error: ${error}`)
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

  /** Kubernetes' setStatusConditions: adds the condition True (nothing when it is True already); a
   *  migration that ends (Succeeded, Failed) turns an existing Running condition's status False, its
   *  reason, message and lastTransitionTime left as they are. */
  private async setCondition(svm: AnyObject, type: string, reason: string, message: string, resourceVersion?: string): Promise<AnyObject | undefined> {
    let conditions: AnyObject[] = [...(svm.status?.conditions ?? [])]
    if (!conditions.some((c) => c.type === type && c.status === 'True')) {
      if (type === 'Succeeded' || type === 'Failed') conditions = conditions.map((c) => (c.type === 'Running' ? {...c, status: 'False'} : c))
      conditions.push({type, status: 'True', lastTransitionTime: formatTime(this.now()), reason, message})
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
