// CheckpointContainer of the process runtime: a tar archive of what can be read of the container's
// processes while they are frozen. It is for inspection and forensics and cannot be restored (see
// docs/checkpoint.md): per process its memory map, the contents of its resident memory, its open
// files; plus the container's config and status and its log.
//
// The processes are frozen with the cgroup freezer when the container has its own cgroup, else by
// SIGSTOP to its process group, and always resumed afterwards, on failure too. The archive is written
// to `<location>.partial` (mode 0600: it holds every secret the processes had in memory), synced and
// renamed into place; on any failure the partial file is removed, so a full disk leaves nothing.
import {mkdirSync, readFileSync, rmSync} from 'node:fs'
import {open, rename, type FileHandle} from 'node:fs/promises'
import {dirname, isAbsolute} from 'node:path'
import {nowNs} from './clock.js'
import {cgroupPids, freezeCgroup, thawCgroup} from './cgroup.js'
import {deadlineExceeded, errnoCode, failedPrecondition, internal, invalidArgument, resourceExhausted, RuntimeError} from './errors.js'
import {dumpableRegions, isStoppedOrGone, isZombieOrGone, openFiles, parseMaps, processGroupMembers, residentBytes, residentRuns} from './procfs.js'
import {TarWriter} from './tar.js'
import {waitUntil} from './wait.js'

/** Bytes read from /proc/<pid>/mem per call. */
const READ_CHUNK = 1 << 20

export interface CheckpointSubject {
  containerId: string
  /** written as config.json: the container's config and status */
  config: unknown
  /** the container's main process, leader of its process group */
  pid: number
  cgroupPath: string | null
  /** the container's CRI log, copied into the archive when present */
  logPath: string | null
}

export interface ProcessDump {
  pid: number
  /** VmRSS when frozen */
  vmRssBytes: number
  /** sum of the sizes of the readable regions in the memory map */
  readableMappedBytes: number
  dumpedBytes: number
  files: number
  /** runs that could not be read, as `start-end: reason` */
  skipped: string[]
}

export interface CheckpointSummary {
  format: 'orch-process-checkpoint/v1'
  containerId: string
  freezer: 'cgroup' | 'SIGSTOP'
  /** nanoseconds since the epoch: frozen at, resumed at */
  startedAt: string
  finishedAt: string
  processes: ProcessDump[]
  memoryBytes: number
  restorable: false
}

/** Writes the archive; resolves with what it contains. Throws RuntimeErrors with CRI status codes. */
export async function writeCheckpoint(subject: CheckpointSubject, location: string, deadline: number): Promise<CheckpointSummary> {
  if (!location || !isAbsolute(location)) throw invalidArgument(`checkpoint location ${JSON.stringify(location)} must be an absolute path`)
  mkdirSync(dirname(location), {recursive: true, mode: 0o700})
  const partial = `${location}.partial`
  rmSync(partial, {force: true})
  let handle: FileHandle | undefined
  let thaw: (() => void) | undefined
  try {
    handle = await open(partial, 'wx', 0o600)
    await handle.chmod(0o600)
    const file = handle
    const tar = new TarWriter(async (chunk) => {
      for (let offset = 0; offset < chunk.length; ) {
        const {bytesWritten} = await file.write(chunk, offset, chunk.length - offset)
        offset += bytesWritten
      }
    })
    const startedAt = nowNs()
    await tar.addFile('config.json', JSON.stringify(subject.config, null, 2) + '\n')

    let freezer: CheckpointSummary['freezer']
    let pids: () => number[]
    if (subject.cgroupPath) {
      const path = subject.cgroupPath
      freezer = 'cgroup'
      pids = () => cgroupPids(path)
      thaw = () => thawCgroup(path)
      await freezeCgroup(path, deadline)
    } else {
      freezer = 'SIGSTOP'
      pids = () => processGroupMembers(subject.pid)
      thaw = () => signalGroup(subject.pid, 'SIGCONT')
      signalGroup(subject.pid, 'SIGSTOP')
      await waitUntil(() => pids().every(isStoppedOrGone), deadline, `the processes of container ${subject.containerId} to stop`)
    }

    const processes: ProcessDump[] = []
    for (const pid of pids().filter((pid) => !isZombieOrGone(pid))) processes.push(await dumpProcess(tar, pid, deadline))
    if (subject.logPath) {
      let log: Buffer | undefined
      try {
        log = readFileSync(subject.logPath)
      } catch {
        // no log written yet
      }
      if (log) await tar.addFile('container.log', log)
    }
    const summary: CheckpointSummary = {
      format: 'orch-process-checkpoint/v1',
      containerId: subject.containerId,
      freezer,
      startedAt: String(startedAt),
      finishedAt: String(nowNs()),
      processes,
      memoryBytes: processes.reduce((sum, dump) => sum + dump.dumpedBytes, 0),
      restorable: false,
    }
    await tar.addFile('dump.json', JSON.stringify(summary, null, 2) + '\n')
    await tar.finish()
    await handle.datasync()
    await handle.close()
    handle = undefined
    // resume before the rename: the processes wait no longer than needed
    resume(thaw)
    thaw = undefined
    await rename(partial, location)
    return summary
  } catch (error) {
    await handle?.close().catch(() => {})
    rmSync(partial, {force: true})
    throw classify(error, partial)
  } finally {
    if (thaw) resume(thaw)
  }
}

function resume(thaw: () => void): void {
  try {
    thaw()
  } catch {
    // the container is gone (nothing left to resume)
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // the group is gone
  }
}

function classify(error: unknown, partial: string): RuntimeError {
  if (error instanceof RuntimeError) return error
  const code = errnoCode(error)
  if (code === 'ENOSPC' || code === 'EDQUOT') return resourceExhausted(`checkpoint: no space left writing ${partial}: ${(error as Error).message}`)
  if (code === 'ESRCH') return failedPrecondition(`checkpoint: the container's processes exited: ${(error as Error).message}`)
  return internal(`checkpoint failed: ${(error as Error).message}`)
}

const hex = (value: bigint): string => value.toString(16)

async function dumpProcess(tar: TarWriter, pid: number, deadline: number): Promise<ProcessDump> {
  const base = `proc/${pid}`
  const maps = readFileSync(`/proc/${pid}/maps`, 'latin1')
  const dump: ProcessDump = {pid, vmRssBytes: residentBytes(pid) ?? 0, readableMappedBytes: 0, dumpedBytes: 0, files: 0, skipped: []}
  await tar.addFile(`${base}/maps`, maps)
  await tar.addFile(`${base}/status`, readFileSync(`/proc/${pid}/status`))
  await tar.addFile(`${base}/cmdline`, readFileSync(`/proc/${pid}/cmdline`))
  await tar.addFile(`${base}/fds.txt`, openFiles(pid))
  const mem = await open(`/proc/${pid}/mem`, 'r')
  const pagemap = await open(`/proc/${pid}/pagemap`, 'r').catch(() => null)
  try {
    for (const region of dumpableRegions(parseMaps(maps))) {
      dump.readableMappedBytes += Number(region.end - region.start)
      for (const [start, end] of await residentRuns(pagemap, region.start, region.end)) {
        if (Date.now() > deadline) throw deadlineExceeded(`checkpoint did not finish within its timeout (process ${pid}, ${dump.dumpedBytes} bytes of memory written)`)
        await dumpRun(tar, mem, `${base}/mem/${hex(start)}-${hex(end)}.bin`, Number(start), Number(end - start), dump, deadline)
      }
    }
  } finally {
    await mem.close()
    await pagemap?.close()
  }
  return dump
}

async function readAt(mem: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length)
  let got = 0
  while (got < length) {
    const {bytesRead} = await mem.read(buffer, got, length - got, position + got)
    if (bytesRead === 0) throw Object.assign(new Error('short read'), {code: 'EIO'})
    got += bytesRead
  }
  return buffer
}

/** One run of resident pages as one archive file; a run whose first bytes cannot be read is skipped. */
async function dumpRun(tar: TarWriter, mem: FileHandle, name: string, start: number, size: number, dump: ProcessDump, deadline: number): Promise<void> {
  let first: Buffer
  try {
    first = await readAt(mem, start, Math.min(READ_CHUNK, size))
  } catch (error) {
    dump.skipped.push(`${start.toString(16)}-${(start + size).toString(16)}: ${errnoCode(error) ?? (error as Error).message}`)
    return
  }
  await tar.beginFile(name, size)
  await tar.write(first)
  for (let offset = first.length; offset < size; offset += READ_CHUNK) {
    if (Date.now() > deadline) throw deadlineExceeded(`checkpoint did not finish within its timeout (${dump.dumpedBytes} bytes of memory written)`)
    const length = Math.min(READ_CHUNK, size - offset)
    let chunk: Buffer
    try {
      chunk = await readAt(mem, start + offset, length)
    } catch (error) {
      // the size is already declared: keep the layout, note the hole
      chunk = Buffer.alloc(length)
      dump.skipped.push(`${(start + offset).toString(16)}-${(start + offset + length).toString(16)}: ${errnoCode(error) ?? 'unreadable'} (zero-filled)`)
    }
    await tar.write(chunk)
  }
  await tar.endFile()
  dump.dumpedBytes += size
  dump.files++
}
