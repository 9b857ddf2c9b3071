// Keeps the watch history for a retention window on any backend: samples the store's revision
// every interval and compacts to the newest sample older than the window.
import type {Logger} from '../machinery/log.js'
import type {Store} from './store.js'

export interface CompactorOptions {
  retentionMs: number
  intervalMs: number
  logger?: Logger
}

export class Compactor {
  private readonly samples: {at: number; revision: number}[] = []
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined

  constructor(
    private readonly store: Store,
    private readonly options: CompactorOptions,
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return
    this.timer = setInterval(() => {
      this.running ??= this.tick(Date.now()).finally(() => (this.running = undefined))
    }, this.options.intervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.running
  }

  /** One round, at the given time. */
  async tick(now: number): Promise<void> {
    try {
      this.samples.push({at: now, revision: await this.store.currentRevision()})
      let target = 0
      while (this.samples.length > 0 && now - this.samples[0].at >= this.options.retentionMs) {
        target = this.samples.shift()!.revision
      }
      if (target > (await this.store.compactedRevision())) {
        await this.store.compact(target)
        this.options.logger?.v(2, 'compacted history', {revision: target})
      }
    } catch (error) {
      this.options.logger?.warn('compaction failed', {error})
    }
  }
}
