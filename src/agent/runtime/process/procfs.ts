// What the process runtime reads from /proc: process state and group membership, memory maps, which
// pages are resident (pagemap), open files.
import {readdirSync, readFileSync, readlinkSync} from 'node:fs'
import type {FileHandle} from 'node:fs/promises'

export interface ProcStat {
  pid: number
  /** R, S, D, T (stopped), t (traced), Z (zombie), X, I ... */
  state: string
  ppid: number
  pgid: number
  sid: number
  /** start time in clock ticks after boot: with the pid, identifies one process across pid reuse */
  startTime: string
}

/** Parses /proc/<pid>/stat; null when the process is gone. */
export function readStat(pid: number): ProcStat | null {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return null
  }
  // the command name (field 2) is in parentheses and may itself contain spaces and parentheses
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return {
    pid,
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startTime: fields[19] ?? '',
  }
}

/** Every process whose process group is `pgid`. */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = readStat(Number(entry))
    if (stat && stat.pgid === pgid) members.push(stat.pid)
  }
  return members.sort((a, b) => a - b)
}

export function isStoppedOrGone(pid: number): boolean {
  const stat = readStat(pid)
  return stat === null || stat.state === 'T' || stat.state === 't' || stat.state === 'Z' || stat.state === 'X'
}

export function isZombieOrGone(pid: number): boolean {
  const stat = readStat(pid)
  return stat === null || stat.state === 'Z' || stat.state === 'X'
}

export interface MemoryRegion {
  start: bigint
  end: bigint
  /** e.g. `r-xp` */
  perms: string
  /** the mapped file or a pseudo name like `[heap]`; empty for anonymous memory */
  path: string
}

export function parseMaps(text: string): MemoryRegion[] {
  const regions: MemoryRegion[] = []
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S+)\s+\S+\s+\S+\s+\S+\s*(.*)$/.exec(line)
    if (!match) continue
    regions.push({start: BigInt(`0x${match[1]}`), end: BigInt(`0x${match[2]}`), perms: match[3]!, path: match[4]!.trim()})
  }
  return regions
}

/** Kernel mappings that /proc/<pid>/mem cannot read (I/O or pfn mappings of the kernel). */
const KERNEL_MAPPINGS = new Set(['[vvar]', '[vvar_vclock]', '[vsyscall]'])

/** Regions whose contents a checkpoint dumps: readable, not a kernel special mapping. */
export function dumpableRegions(regions: MemoryRegion[]): MemoryRegion[] {
  return regions.filter((region) => region.perms.startsWith('r') && !KERNEL_MAPPINGS.has(region.path) && region.end <= BigInt(Number.MAX_SAFE_INTEGER))
}

let cachedPageSize: number | undefined

/** The base page size, from this process's own smaps (4096 on x86-64). */
export function pageSize(): number {
  if (cachedPageSize) return cachedPageSize
  cachedPageSize = 4096
  try {
    const match = /KernelPageSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps_rollup', 'latin1')) ?? /KernelPageSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps', 'latin1'))
    if (match) cachedPageSize = Number(match[1]) * 1024
  } catch {
    // keep the common default
  }
  return cachedPageSize
}

const PAGE_PRESENT = 1n << 63n
const PAGE_SWAPPED = 1n << 62n
/** pagemap entries read per call: 64 Ki pages (256 MiB of address space with 4 KiB pages) */
const PAGEMAP_BATCH = 64 * 1024

/**
 * The runs of pages of [start, end) that are resident or swapped out, from /proc/<pid>/pagemap:
 * the memory the process really uses, as opposed to address space it merely reserved. When the
 * pagemap cannot be read, the whole range is one run.
 */
export async function residentRuns(pagemap: FileHandle | null, start: bigint, end: bigint): Promise<[bigint, bigint][]> {
  if (!pagemap) return [[start, end]]
  const page = BigInt(pageSize())
  const runs: [bigint, bigint][] = []
  let runStart = -1n
  const firstPage = start / page
  const pages = Number((end - start) / page)
  const entries = Buffer.alloc(Math.min(pages, PAGEMAP_BATCH) * 8)
  for (let done = 0; done < pages; ) {
    const count = Math.min(pages - done, PAGEMAP_BATCH)
    const {bytesRead} = await pagemap.read(entries, 0, count * 8, Number((firstPage + BigInt(done)) * 8n))
    const got = Math.floor(bytesRead / 8)
    for (let i = 0; i < count; i++) {
      const address = start + BigInt(done + i) * page
      const entry = i < got ? entries.readBigUInt64LE(i * 8) : 0n
      const used = (entry & (PAGE_PRESENT | PAGE_SWAPPED)) !== 0n
      if (used && runStart < 0n) runStart = address
      if (!used && runStart >= 0n) {
        runs.push([runStart, address])
        runStart = -1n
      }
    }
    done += count
  }
  if (runStart >= 0n) runs.push([runStart, end])
  return runs
}

/** `<fd> -> <target>` per open file descriptor, one per line. */
export function openFiles(pid: number): string {
  const lines: string[] = []
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return ''
  }
  for (const fd of fds.sort((a, b) => Number(a) - Number(b))) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    let position = ''
    try {
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1')
      const pos = /^pos:\s*(\d+)/m.exec(info)
      const flags = /^flags:\s*(\d+)/m.exec(info)
      position = ` pos=${pos?.[1] ?? '?'} flags=${flags?.[1] ?? '?'}`
    } catch {
      // fdinfo gone: the fd was closed meanwhile
    }
    lines.push(`${fd} -> ${target}${position}`)
  }
  return lines.join('\n') + (lines.length > 0 ? '\n' : '')
}

/** VmRSS of a process in bytes, from /proc/<pid>/status; null when gone. */
export function residentBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))
    return match ? Number(match[1]) * 1024 : 0
  } catch {
    return null
  }
}
