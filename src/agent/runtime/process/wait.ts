// Waiting for a condition the kernel does not announce to a non-parent (a process stopping, a cgroup
// freezing or emptying): an inotify watch on a file that changes with it when there is one (cgroup
// `cgroup.events`), and a short re-check interval as the safety net, bounded by a deadline.
import {watch, type FSWatcher} from 'node:fs'
import {deadlineExceeded} from './errors.js'

const RECHECK_MS = 10

/** Resolves once check() is true; rejects with DEADLINE_EXCEEDED at deadline (ms since the epoch). */
export function waitUntil(check: () => boolean, deadline: number, what: string, watchPath?: string): Promise<void> {
  if (check()) return Promise.resolve()
  return new Promise<void>((resolve, reject) => {
    let watcher: FSWatcher | undefined
    let done = false
    const finish = (error?: unknown): void => {
      if (done) return
      done = true
      clearInterval(interval)
      clearTimeout(timeout)
      watcher?.close()
      if (error) reject(error)
      else resolve()
    }
    const test = (): void => {
      try {
        if (check()) finish()
      } catch (error) {
        finish(error)
      }
    }
    const interval = setInterval(test, RECHECK_MS)
    const timeout = setTimeout(() => finish(deadlineExceeded(`timed out waiting for ${what}`)), Math.max(0, deadline - Date.now()))
    if (watchPath) {
      try {
        watcher = watch(watchPath, test)
        watcher.on('error', () => {})
      } catch {
        // no inotify on this file: the interval does the work
      }
    }
  })
}
