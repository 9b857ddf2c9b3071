// A controller: informers feed keys into a work queue; workers call an idempotent reconcile(key).
import type {Logger} from '../machinery/log.js'
import {WorkQueue} from './queue.js'

export interface ReconcileResult {
  /** look at this key again after this many ms even if nothing changes */
  requeueAfterMs?: number
}

export interface ControllerOptions {
  name: string
  logger: Logger
  workers?: number
  reconcile(key: string): Promise<ReconcileResult | void>
}

export class Controller {
  readonly queue = new WorkQueue()
  private readonly workers: Promise<void>[] = []
  private running = false

  constructor(private readonly options: ControllerOptions) {}

  enqueue(key: string): void {
    this.queue.add(key)
  }

  start(): void {
    if (this.running) return
    this.running = true
    for (let i = 0; i < (this.options.workers ?? 1); i++) this.workers.push(this.work())
  }

  async stop(): Promise<void> {
    this.running = false
    this.queue.shutdown()
    await Promise.allSettled(this.workers)
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get()
      if (key === undefined) return
      try {
        const result = await this.options.reconcile(key)
        this.queue.forget(key)
        if (result?.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs)
      } catch (error) {
        // a controller never crashes the server: log, back off, try again
        this.options.logger.warn('reconcile failed', {controller: this.options.name, key, error: (error as Error).message})
        this.queue.addRateLimited(key)
      } finally {
        this.queue.done(key)
      }
    }
  }
}
