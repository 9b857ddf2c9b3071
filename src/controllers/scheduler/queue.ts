// The scheduling queue (kube-scheduler's PriorityQueue): pending pods wait in one of three places.
//
//   active         ready to be tried: highest spec.priority first, then in arrival order
//   backoff        tried and failed recently: back to active when the back-off is over, 1 s doubling
//                  per attempt up to 10 s (podInitialBackoff / podMaxBackoff)
//   unschedulable  no node fits: the pod waits until the cluster changes (a node added or updated,
//                  a pod deleted) and then goes to active, or to backoff if its back-off is not over;
//                  a pod left there 5 minutes is tried again anyway
//
// A popped pod is "in flight" until its attempt ends in done, unschedulable or backoff.
import type {PodInfo} from './info.js'

export interface QueueOptions {
  initialBackoffMs?: number
  maxBackoffMs?: number
  /** podMaxInUnschedulablePodsDuration (default 5 minutes) */
  maxUnschedulableMs?: number
  now?: () => number
}

type Place = 'active' | 'backoff' | 'unschedulable' | 'inflight'

interface Entry {
  info: PodInfo
  place: Place
  /** scheduling attempts that failed */
  attempts: number
  /** when the last attempt failed (the back-off runs from there) */
  failedAt: number
  /** when it went unschedulable */
  parkedAt: number
  /** the heap item that is current for this pod (older ones are skipped) */
  seq: number
}

interface HeapItem {
  key: string
  priority: number
  seq: number
}

/** Popped pods: the info and how many attempts failed before this one. */
export interface QueuedPod {
  info: PodInfo
  attempts: number
}

function before(a: HeapItem, b: HeapItem): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq
}

/** What of a pod an update must change for a parked pod to be worth another try. */
function schedulingSpec(info: PodInfo): string {
  const meta = info.pod.metadata ?? {}
  return JSON.stringify([info.pod.spec ?? {}, meta.labels ?? {}, meta.annotations ?? {}])
}

export class SchedulingQueue {
  private readonly entries = new Map<string, Entry>()
  private readonly heap: HeapItem[] = []
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private waiters: (() => void)[] = []
  private seq = 0
  private closed = false
  private readonly initialBackoff: number
  private readonly maxBackoff: number
  private readonly maxUnschedulable: number
  private readonly now: () => number

  constructor(options: QueueOptions = {}) {
    this.initialBackoff = options.initialBackoffMs ?? 1_000
    this.maxBackoff = options.maxBackoffMs ?? 10_000
    this.maxUnschedulable = options.maxUnschedulableMs ?? 5 * 60_000
    this.now = options.now ?? Date.now
  }

  /** A pending pod appeared or changed. A parked pod whose spec or labels changed is tried again. */
  upsert(info: PodInfo): void {
    if (this.closed) return
    const entry = this.entries.get(info.key)
    if (!entry || entry.info.uid !== info.uid) {
      if (entry) this.remove(info.key)
      this.entries.set(info.key, {info, place: 'active', attempts: 0, failedAt: 0, parkedAt: 0, seq: 0})
      this.activate(info.key)
      return
    }
    const changed = entry.place === 'unschedulable' && schedulingSpec(entry.info) !== schedulingSpec(info)
    entry.info = info
    if (changed) this.release(info.key)
  }

  /** The pod is bound, deleted, or no longer ours. */
  remove(key: string): void {
    this.entries.delete(key)
    this.clearTimer(key)
  }

  has(key: string): boolean {
    return this.entries.has(key)
  }

  /** The next pod to try (waits for one); undefined once closed. */
  async pop(): Promise<QueuedPod | undefined> {
    for (;;) {
      if (this.closed) return undefined
      const item = this.takeTop()
      if (item) {
        const entry = this.entries.get(item.key)!
        entry.place = 'inflight'
        return {info: entry.info, attempts: entry.attempts}
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  /** The attempt placed the pod (its binding went through). */
  done(key: string): void {
    if (this.entries.get(key)?.place === 'inflight') this.remove(key)
  }

  /** No node fits: park the pod until the cluster changes. */
  unschedulable(key: string): void {
    const entry = this.entries.get(key)
    if (!entry || entry.place !== 'inflight') return
    entry.attempts++
    entry.failedAt = entry.parkedAt = this.now()
    entry.place = 'unschedulable'
  }

  /** The attempt failed for another reason (a binding error): try again after the back-off. */
  backoff(key: string): void {
    const entry = this.entries.get(key)
    if (!entry || entry.place !== 'inflight') return
    entry.attempts++
    entry.failedAt = this.now()
    this.release(key)
  }

  /** The back-off after `attempts` failed attempts: 1 s, 2 s, 4 s, 8 s, then 10 s. */
  backoffDuration(attempts: number): number {
    let duration = this.initialBackoff
    for (let i = 1; i < attempts; i++) {
      if (duration > this.maxBackoff - duration) return this.maxBackoff
      duration += duration
    }
    return Math.min(duration, this.maxBackoff)
  }

  /** The cluster changed (a node came or changed, a pod went): every parked pod gets another try. */
  moveAllToActiveOrBackoff(): void {
    for (const [key, entry] of this.entries) if (entry.place === 'unschedulable') this.release(key)
  }

  /** Parked pods that waited longer than maxUnschedulableMs are tried again. */
  flushLeftover(): void {
    const now = this.now()
    for (const [key, entry] of this.entries) {
      if (entry.place === 'unschedulable' && now - entry.parkedAt > this.maxUnschedulable) this.release(key)
    }
  }

  /** How many pods wait where (for logs and benches). */
  counts(): Record<Place, number> {
    const out: Record<Place, number> = {active: 0, backoff: 0, unschedulable: 0, inflight: 0}
    for (const entry of this.entries.values()) out[entry.place]++
    return out
  }

  close(): void {
    this.closed = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    for (const wake of this.waiters.splice(0)) wake()
  }

  /** To active, or to backoff until the pod's back-off is over. */
  private release(key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    const wait = entry.attempts === 0 ? 0 : entry.failedAt + this.backoffDuration(entry.attempts) - this.now()
    if (wait <= 0) {
      this.activate(key)
      return
    }
    entry.place = 'backoff'
    if (this.timers.has(key)) return
    const timer = setTimeout(() => {
      this.timers.delete(key)
      if (this.entries.get(key)?.place === 'backoff') this.activate(key)
    }, wait)
    timer.unref()
    this.timers.set(key, timer)
  }

  private clearTimer(key: string): void {
    const timer = this.timers.get(key)
    if (timer) clearTimeout(timer)
    this.timers.delete(key)
  }

  private activate(key: string): void {
    const entry = this.entries.get(key)!
    this.clearTimer(key)
    entry.place = 'active'
    entry.seq = ++this.seq
    this.push({key, priority: entry.info.priority, seq: entry.seq})
    this.waiters.shift()?.()
  }

  // ---------- the active heap (stale items are skipped when they come up) ----------

  private push(item: HeapItem): void {
    const heap = this.heap
    heap.push(item)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }

  private takeTop(): HeapItem | undefined {
    const heap = this.heap
    while (heap.length > 0) {
      const top = heap[0]!
      const last = heap.pop()!
      if (heap.length > 0) {
        heap[0] = last
        let i = 0
        for (;;) {
          const left = 2 * i + 1
          const right = left + 1
          let smallest = i
          if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left
          if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right
          if (smallest === i) break
          ;[heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!]
          i = smallest
        }
      }
      const entry = this.entries.get(top.key)
      if (entry && entry.place === 'active' && entry.seq === top.seq) return top
    }
    return undefined
  }
}
