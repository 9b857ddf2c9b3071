// In-process watch fan-out for a store whose writes all happen in this process: every commit is
// handed to dispatch() in revision order, so a watcher never needs to poll.
import type {Watch, WatchEvent, WatchHandlers} from './store.js'

interface Watcher {
  start: string
  end: string
  handlers: WatchHandlers
  queue: WatchEvent[]
  progress: number
  scheduled: boolean
  active: boolean
}

export class LogWatchers {
  private readonly watchers = new Set<Watcher>()

  /** history: events already committed after the watch's start revision, in order;
   *  revision: the revision those events reach (live events follow it). */
  add(start: string, end: string, history: WatchEvent[], handlers: WatchHandlers, revision: number): Watch {
    const watcher: Watcher = {start, end, handlers, queue: history, progress: revision, scheduled: false, active: true}
    this.watchers.add(watcher)
    this.schedule(watcher)
    return {
      cancel: () => {
        watcher.active = false
        watcher.queue = []
        this.watchers.delete(watcher)
      },
    }
  }

  dispatch(events: WatchEvent[], revision: number): void {
    for (const watcher of this.watchers) {
      if (revision <= watcher.progress) continue
      for (const event of events) {
        if (event.revision > watcher.progress && event.kv.key >= watcher.start && event.kv.key < watcher.end) {
          watcher.queue.push(event)
        }
      }
      watcher.progress = revision
      this.schedule(watcher)
    }
  }

  closeAll(): void {
    for (const watcher of this.watchers) watcher.active = false
    this.watchers.clear()
  }

  private schedule(watcher: Watcher): void {
    if (watcher.scheduled) return
    watcher.scheduled = true
    queueMicrotask(() => {
      watcher.scheduled = false
      if (!watcher.active) return
      const events = watcher.queue
      watcher.queue = []
      try {
        if (events.length > 0) watcher.handlers.onEvents(events)
        if (watcher.active) watcher.handlers.onProgress?.(watcher.progress)
      } catch (error) {
        watcher.active = false
        this.watchers.delete(watcher)
        watcher.handlers.onError(error as Error)
      }
    })
  }
}
