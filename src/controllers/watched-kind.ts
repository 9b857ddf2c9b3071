// The common shape of a controller over one kind: an informer on it, and each object that `wants`
// work queued by name for an idempotent reconcile(name). start() waits for the informer's first
// list before any worker runs; stop() ends workers, then the watch.
import type {AnyObject} from '../api/types.js'
import {Informer, type ResourceLocator, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {Controller, type ReconcileResult} from './controller.js'

export interface WatchedKindOptions {
  name: string
  locator: ResourceLocator
  logger: Logger
  workers?: number
  /** whether an added or updated object needs reconciling */
  wants(object: AnyObject): boolean
  reconcile(name: string): Promise<ReconcileResult | void>
}

export class WatchedKind {
  readonly informer: Informer<AnyObject>
  private readonly controller: Controller

  constructor(client: RestClient, options: WatchedKindOptions) {
    this.controller = new Controller({name: options.name, logger: options.logger, workers: options.workers, reconcile: options.reconcile})
    const enqueue = (object: AnyObject) => {
      if (options.wants(object)) this.controller.enqueue(object.metadata?.name ?? '')
    }
    this.informer = new Informer<AnyObject>(client, options.locator, {onAdd: enqueue, onUpdate: (_old, object) => enqueue(object)})
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
}
