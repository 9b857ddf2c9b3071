// A work queue as client-go's: a key is queued at most once, never processed by two workers at
// once, and a failed key comes back after an exponential back-off.

export interface QueueOptions {
  /** first retry delay (default 5 ms), doubled per failure up to maxDelayMs (default 30 s) */
  baseDelayMs?: number
  maxDelayMs?: number
}

export class WorkQueue {
  private readonly queue: string[] = []
  private readonly queued = new Set<string>()
  private readonly processing = new Set<string>()
  private readonly dirty = new Set<string>()
  private readonly failures = new Map<string, number>()
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private waiters: (() => void)[] = []
  private shuttingDown = false

  constructor(private readonly options: QueueOptions = {}) {}

  add(key: string): void {
    if (this.shuttingDown) return
    if (this.processing.has(key)) {
      this.dirty.add(key)
      return
    }
    if (this.queued.has(key)) return
    this.queued.add(key)
    this.queue.push(key)
    const waiter = this.waiters.shift()
    waiter?.()
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return
    if (this.timers.has(key)) return
    const timer = setTimeout(() => {
      this.timers.delete(key)
      this.add(key)
    }, delayMs)
    timer.unref()
    this.timers.set(key, timer)
  }

  /** Re-queues after the key's back-off; call when reconcile failed. */
  addRateLimited(key: string): void {
    const failures = (this.failures.get(key) ?? 0) + 1
    this.failures.set(key, failures)
    const base = this.options.baseDelayMs ?? 5
    const delay = Math.min(base * 2 ** (failures - 1), this.options.maxDelayMs ?? 30_000)
    this.addAfter(key, delay)
  }

  /** The key reconciled fine: its back-off starts over. */
  forget(key: string): void {
    this.failures.delete(key)
  }

  /** The next key, or undefined once shut down. */
  async get(): Promise<string | undefined> {
    while (this.queue.length === 0) {
      if (this.shuttingDown) return undefined
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
    const key = this.queue.shift()!
    this.queued.delete(key)
    this.processing.add(key)
    return key
  }

  done(key: string): void {
    this.processing.delete(key)
    if (this.dirty.delete(key)) this.add(key)
  }

  get length(): number {
    return this.queue.length
  }

  shutdown(): void {
    this.shuttingDown = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    for (const waiter of this.waiters) waiter()
    this.waiters = []
  }
}
