// Everything the tests start (orch servers and agents, etcd, containerd) is registered here and killed
// when the test process ends for any reason it can see: a normal exit, or the signal the test runner
// sends a file that ran past --test-timeout. Without the signal hooks such a file's children would
// outlive it, holding their ports and directories.
const cleanups = new Set<() => void>()
let hooksInstalled = false

function runAll(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup()
    } catch {
      // already gone
    }
  }
  cleanups.clear()
}

function installHooks(): void {
  if (hooksInstalled) return
  hooksInstalled = true
  process.once('exit', runAll)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      runAll()
      // nobody else handles it: take the signal's default action (die of it)
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    })
  }
}

/** Runs `cleanup` (synchronous: a SIGKILL, a removal) when the test process ends; call the result once it is done anyway. */
export function cleanUpAtExit(cleanup: () => void): () => void {
  installHooks()
  cleanups.add(cleanup)
  return () => {
    cleanups.delete(cleanup)
  }
}
