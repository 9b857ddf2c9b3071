// Records of running container processes, `<root>/containers/<id>.json`, so that a runtime that
// died without cleaning up (the agent was SIGKILLed) kills what it left behind when it starts again:
// a container of a runtime that is gone has nobody to report on it or stop it.
import {mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {removeCgroup} from './cgroup.js'
import {readStat} from './procfs.js'

interface ProcessRecord {
  pid: number
  /** /proc/<pid>/stat start time: tells the process apart from a later one with a reused pid */
  startTime: string
  cgroupPath: string | null
}

const dirOf = (rootDir: string): string => join(rootDir, 'containers')

export function recordProcess(rootDir: string, containerId: string, pid: number, cgroupPath: string | null): void {
  const stat = readStat(pid)
  if (!stat) return
  mkdirSync(dirOf(rootDir), {recursive: true, mode: 0o700})
  const record: ProcessRecord = {pid, startTime: stat.startTime, cgroupPath}
  writeFileSync(join(dirOf(rootDir), `${containerId}.json`), JSON.stringify(record), {mode: 0o600})
}

export function forgetProcess(rootDir: string, containerId: string): void {
  rmSync(join(dirOf(rootDir), `${containerId}.json`), {force: true})
}

/** Kills the process groups and cgroups recorded by an earlier run; returns how many were still alive. */
export async function reapOrphans(rootDir: string, deadline: number): Promise<number> {
  let entries: string[]
  try {
    entries = readdirSync(dirOf(rootDir))
  } catch {
    return 0
  }
  let killed = 0
  for (const entry of entries.filter((name) => name.endsWith('.json'))) {
    const path = join(dirOf(rootDir), entry)
    try {
      const record = JSON.parse(readFileSync(path, 'utf8')) as ProcessRecord
      const stat = readStat(record.pid)
      if (stat && stat.startTime === record.startTime) {
        killed++
        try {
          process.kill(-record.pid, 'SIGKILL')
        } catch {
          process.kill(record.pid, 'SIGKILL')
        }
      }
      if (record.cgroupPath) await removeCgroup(record.cgroupPath, deadline)
    } catch {
      // unreadable record or already gone: nothing to do
    }
    rmSync(path, {force: true})
  }
  return killed
}
