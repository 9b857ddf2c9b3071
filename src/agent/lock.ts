// The agent's lock file (`--lock-file`, default /var/run/agent.lock): one agent per lock. The file
// holds the owner's pid; a second agent finds a live owner and refuses to start. A lock left by a
// process that is gone is taken over. Taking the lock is an exclusive create, so two agents
// starting at once cannot both win.
import {closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

export class LockHeldError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export interface AgentLock {
  path: string
  release(): void
}

export function acquireLock(path: string): AgentLock {
  mkdirSync(dirname(path), {recursive: true})
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644)
      writeSync(fd, `${process.pid}\n`)
      closeSync(fd)
      let released = false
      return {
        path,
        release() {
          if (released) return
          released = true
          try {
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, {force: true})
          } catch {
            // already gone
          }
        },
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`lock file ${path}: ${(e as Error).message}`)
      const owner = Number(readFileSync(path, 'utf8').trim())
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new LockHeldError(`lock file ${path} is held by another agent (pid ${owner})`)
      }
      rmSync(path, {force: true})
    }
  }
  throw new LockHeldError(`lock file ${path}: could not be taken`)
}
