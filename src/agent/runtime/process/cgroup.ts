// cgroup v2 for the process runtime: one child cgroup per container under a root the runtime may
// write (default `<cgroup2 mount>/orch-process`), limits from LinuxContainerResources, freezing for
// checkpoints, killing everything in it. Without a writable cgroup2 hierarchy all of this is skipped
// and reported in the runtime's status conditions.
import {existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {DeepPartial, LinuxContainerResources} from '../../cri/types.js'
import {errnoCode} from './errors.js'
import {waitUntil} from './wait.js'

/** The controllers the runtime enables for container cgroups when the hierarchy offers them. */
const WANTED_CONTROLLERS = ['cpu', 'memory', 'pids']
const DEFAULT_CPU_PERIOD = 100_000

export interface CgroupSetup {
  /** where container cgroups are created; null when cgroups are not used */
  root: string | null
  /** controllers enabled for the containers' cgroups (may be empty: then only freeze and kill work) */
  controllers: string[]
  /** a CamelCase reason when cgroups or some controllers are unavailable, else '' */
  reason: string
  message: string
}

/** The mount point of the cgroup2 hierarchy (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on hybrid hosts). */
export function cgroup2Mount(): string | null {
  let mountinfo: string
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')
  } catch {
    return null
  }
  const mounts: string[] = []
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ')
    if (!left || !right || right.split(' ')[0] !== 'cgroup2') continue
    const mountPoint = left.split(' ')[4]
    if (mountPoint) mounts.push(mountPoint.replace(/\\(\d{3})/g, (_, code: string) => String.fromCharCode(parseInt(code, 8))))
  }
  return mounts.includes('/sys/fs/cgroup') ? '/sys/fs/cgroup' : (mounts[0] ?? null)
}

/**
 * Prepares the cgroup root: `requested` is a directory inside the cgroup2 hierarchy, false to not use
 * cgroups, undefined for the default. Never throws: what does not work is reported in the result.
 */
export function setupCgroups(requested: string | false | undefined): CgroupSetup {
  if (requested === false) return {root: null, controllers: [], reason: 'CgroupsDisabled', message: 'cgroups are disabled by configuration'}
  const mount = cgroup2Mount()
  if (!mount) return {root: null, controllers: [], reason: 'NoCgroup2', message: 'no cgroup2 hierarchy is mounted'}
  const root = requested ?? join(mount, 'orch-process')
  if (!root.startsWith(`${mount}/`)) {
    return {root: null, controllers: [], reason: 'CgroupRootInvalid', message: `cgroup root ${root} is not inside the cgroup2 hierarchy at ${mount}`}
  }
  try {
    mkdirSync(root, {recursive: true})
    // probe: can we create (and remove) a child?
    const probe = join(root, `probe-${process.pid}`)
    mkdirSync(probe)
    rmdirSync(probe)
  } catch (error) {
    return {root: null, controllers: [], reason: 'CgroupRootNotWritable', message: `cannot create cgroups under ${root}: ${(error as Error).message}`}
  }
  // enable the wanted controllers along the path from the mount down to (and including) the root
  const available = readWords(join(mount, 'cgroup.controllers'))
  const wanted = WANTED_CONTROLLERS.filter((name) => available.includes(name))
  const levels = [mount]
  for (const part of root.slice(mount.length + 1).split('/')) levels.push(join(levels[levels.length - 1]!, part))
  for (const level of levels) {
    for (const name of wanted) {
      try {
        writeFileSync(join(level, 'cgroup.subtree_control'), `+${name}`)
      } catch {
        // not allowed here (processes in an inner cgroup, or not delegated): seen below
      }
    }
  }
  const controllers = readWords(join(root, 'cgroup.subtree_control'))
  const missing = WANTED_CONTROLLERS.filter((name) => !controllers.includes(name))
  if (missing.length > 0) {
    return {
      root,
      controllers,
      reason: 'CgroupControllersMissing',
      message: `cgroup root ${root}: controllers ${missing.join(', ')} not available (hierarchy offers: ${available.join(' ') || 'none'}); limits needing them are not applied`,
    }
  }
  return {root, controllers, reason: '', message: `containers run in cgroups under ${root}`}
}

function readWords(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean)
  } catch {
    return []
  }
}

/** Creates the container's cgroup and applies its limits; returns its path and what could not be applied. */
export function createCgroup(setup: CgroupSetup, name: string, resources: DeepPartial<LinuxContainerResources> | null | undefined): {path: string; notes: string[]} {
  if (!setup.root) throw new Error('cgroups are not in use')
  const path = join(setup.root, name)
  mkdirSync(path)
  return {path, notes: applyResources(setup, path, resources)}
}

/** Writes memory.max, memory.swap.max, cpu.max, cpu.weight and `unified` entries; returns what was skipped. */
export function applyResources(setup: CgroupSetup, path: string, resources: DeepPartial<LinuxContainerResources> | null | undefined): string[] {
  const notes: string[] = []
  if (!resources) return notes
  const has = (controller: string): boolean => setup.controllers.includes(controller)
  const memory = Number(resources.memoryLimitInBytes ?? 0)
  const swap = Number(resources.memorySwapLimitInBytes ?? 0)
  const quota = Number(resources.cpuQuota ?? 0)
  const period = Number(resources.cpuPeriod ?? 0) || DEFAULT_CPU_PERIOD
  const shares = Number(resources.cpuShares ?? 0)
  const write = (file: string, value: string, controller: string): void => {
    if (!has(controller)) {
      notes.push(`${file}=${value} not applied: the ${controller} controller is not available`)
      return
    }
    try {
      writeFileSync(join(path, file), value)
    } catch (error) {
      notes.push(`${file}=${value} not applied: ${(error as Error).message}`)
    }
  }
  if (memory > 0) write('memory.max', String(memory), 'memory')
  // CRI's swap limit is memory + swap (cgroup v1 style); v2 limits swap alone
  if (memory > 0 && swap > 0 && existsSync(join(path, 'memory.swap.max'))) write('memory.swap.max', String(Math.max(0, swap - memory)), 'memory')
  if (quota > 0) write('cpu.max', `${quota} ${period}`, 'cpu')
  if (shares > 0) write('cpu.weight', String(Math.floor(1 + ((Math.max(2, shares) - 2) * 9999) / 262142)), 'cpu')
  for (const [key, value] of Object.entries(resources.unified ?? {})) {
    if (key.includes('/') || key.startsWith('cgroup.')) {
      notes.push(`unified ${key} refused: not a controller file`)
      continue
    }
    write(key, String(value), key.split('.')[0]!)
  }
  return notes
}

/** The processes in the cgroup. */
export function cgroupPids(path: string): number[] {
  return readWords(join(path, 'cgroup.procs')).map(Number)
}

function eventsField(path: string, field: string): string | undefined {
  try {
    return new RegExp(`^${field} (\\S+)$`, 'm').exec(readFileSync(join(path, 'cgroup.events'), 'utf8'))?.[1]
  } catch {
    return undefined
  }
}

/** Freezes every process in the cgroup and waits until the kernel reports it frozen. */
export async function freezeCgroup(path: string, deadline: number): Promise<void> {
  writeFileSync(join(path, 'cgroup.freeze'), '1')
  await waitUntil(() => eventsField(path, 'frozen') === '1' || eventsField(path, 'populated') === '0', deadline, `cgroup ${path} to freeze`, join(path, 'cgroup.events'))
}

export function thawCgroup(path: string): void {
  writeFileSync(join(path, 'cgroup.freeze'), '0')
}

/** SIGKILLs everything in the cgroup (cgroup.kill where the kernel has it). */
export function killCgroup(path: string): void {
  try {
    writeFileSync(join(path, 'cgroup.kill'), '1')
    return
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' && !existsSync(path)) return
  }
  for (const pid of cgroupPids(path)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
}

/** Kills what is left in the cgroup, waits for it to empty and removes it. */
export async function removeCgroup(path: string, deadline: number): Promise<void> {
  if (!existsSync(path)) return
  killCgroup(path)
  await waitUntil(() => eventsField(path, 'populated') !== '1', deadline, `cgroup ${path} to empty`, join(path, 'cgroup.events'))
  try {
    rmdirSync(path)
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error
  }
}

/** Whether the kernel's OOM killer killed a process of this cgroup. */
export function oomKilled(path: string): boolean {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync(join(path, 'memory.events'), 'utf8'))
    return match !== null && Number(match[1]) > 0
  } catch {
    return false
  }
}
