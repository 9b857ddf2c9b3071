// Container log rotation, as the kubelet's ContainerLogManager does it (pkg/kubelet/logs): every
// monitor interval the running containers are listed and queued; up to maxWorkers of them are looked
// at in parallel. A container whose current log file (ContainerStatus logPath) is at least maxSize
// bytes is rotated:
//   1. leftovers of an interrupted rotation are removed (`*.tmp`, and a rotated file whose `.gz` exists);
//   2. the oldest rotated files are removed so that at most maxFiles - 2 remain (the file rotated now
//      and the new current one make maxFiles);
//   3. the remaining uncompressed rotated files are gzip-compressed to `<file>.<timestamp>.gz`;
//   4. the current file is renamed to `<file>.<timestamp>` (Go layout 20060102-150405, local time)
//      and CRI ReopenContainerLog makes the runtime write to a new file at the path; when that fails
//      the file is renamed back, to be tried again next round.
// A current file that is missing is reopened first. One deviation: when `<file>.<timestamp>` (or its
// `.gz`) already exists - a second rotation within the same second - the container is left for a
// later round instead of overwriting it.
import {createReadStream, createWriteStream} from 'node:fs'
import {readdir, rename, rm, stat} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'
import {pipeline} from 'node:stream/promises'
import {createGzip} from 'node:zlib'
import type {Logger} from '../../machinery/log.js'
import {parseQuantity, quantityValue} from '../../machinery/quantity.js'
import type {CriClient} from '../cri/client.js'

const COMPRESS_SUFFIX = '.gz'
const TMP_SUFFIX = '.tmp'

export interface LogRotationPolicy {
  /** bytes; a current file of at least this size is rotated (negative: no rotation) */
  maxSizeBytes: number
  /** files kept per container, the current one included (at least 2) */
  maxFiles: number
}

export interface LogRotationOptions extends LogRotationPolicy {
  cri: Pick<CriClient, 'listContainers' | 'containerStatus' | 'reopenContainerLog'>
  /** containers looked at in parallel (at least 1) */
  maxWorkers: number
  monitorIntervalMs: number
  logger: Logger
  now?: () => Date
}

/** Kubernetes' containerLogMaxSize (a quantity such as `10Mi`) in bytes; throws on a bad quantity. */
export function quantityBytes(text: string): number {
  return Number(quantityValue(parseQuantity(text)))
}

/** `<file>.<timestamp>` for a rotation at `at` (Go layout 20060102-150405, local time). */
export function rotatedName(log: string, at: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0')
  const stamp = `${at.getFullYear()}${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}${pad(at.getSeconds())}`
  return `${log}.${stamp}`
}

/** Splits the rotated files of a log into those in use and leftovers (temporary files, files already compressed). */
export function partitionRotated(files: string[]): {inUse: string[]; unused: string[]} {
  const all = new Set(files)
  const inUse: string[] = []
  const unused: string[] = []
  for (const file of files) {
    if (file.endsWith(TMP_SUFFIX)) unused.push(file)
    else if (file.endsWith(COMPRESS_SUFFIX)) inUse.push(file)
    else if (all.has(file + COMPRESS_SUFFIX)) unused.push(file)
    else inUse.push(file)
  }
  return {inUse, unused}
}

/** Which rotated files (in use) to remove, oldest first, so that maxFiles - 2 remain; and the rest, oldest first. */
export function excessRotated(inUse: string[], maxFiles: number): {remove: string[]; keep: string[]} {
  const sorted = [...inUse].sort()
  const keepCount = Math.max(0, maxFiles - 2)
  const cut = Math.max(0, sorted.length - keepCount)
  return {remove: sorted.slice(0, cut), keep: sorted.slice(cut)}
}

/** Every `<log>.*` file. */
async function rotatedFiles(log: string): Promise<string[]> {
  const dir = dirname(log)
  const prefix = `${basename(log)}.`
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return names.filter((name) => name.startsWith(prefix) && name.length > prefix.length).map((name) => join(dir, name))
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/** Compresses `file` to `file.gz` (through `file.tmp`), then removes `file`. */
export async function compressLog(file: string): Promise<void> {
  const {mode} = await stat(file)
  const tmp = file + TMP_SUFFIX
  try {
    await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp, {mode: mode & 0o777}))
    await rename(tmp, file + COMPRESS_SUFFIX)
  } finally {
    await rm(tmp, {force: true})
  }
  await rm(file, {force: true})
}

export type RotationResult = 'rotated' | 'skipped'

/**
 * Rotates one container's log file (the steps in the header); `reopen` is CRI ReopenContainerLog.
 * Throws when a step fails (the current file is renamed back when the reopen fails).
 */
export async function rotateLog(log: string, policy: LogRotationPolicy, reopen: () => Promise<void>, now: Date): Promise<RotationResult> {
  const {inUse, unused} = partitionRotated(await rotatedFiles(log))
  for (const file of unused) await rm(file, {force: true})
  const {remove, keep} = excessRotated(inUse, policy.maxFiles)
  for (const file of remove) await rm(file, {force: true})
  for (const file of keep) if (!file.endsWith(COMPRESS_SUFFIX)) await compressLog(file)
  const rotated = rotatedName(log, now)
  if ((await exists(rotated)) || (await exists(rotated + COMPRESS_SUFFIX))) return 'skipped'
  await rename(log, rotated)
  try {
    await reopen()
  } catch (error) {
    // renamed back, to be rotated again next round
    await rename(rotated, log)
    throw error
  }
  return 'rotated'
}

/** The rotation loop: started and stopped with the pod manager. */
export class ContainerLogRotator {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private running = false
  private readonly queue: string[] = []
  private readonly queued = new Set<string>()
  private readonly workers = new Set<Promise<void>>()
  private tick: Promise<void> | undefined
  private readonly now: () => Date

  constructor(private readonly options: LogRotationOptions) {
    this.now = options.now ?? (() => new Date())
  }

  /** Starts the periodic rotation (nothing when maxSizeBytes is negative: rotation is disabled). */
  start(): void {
    if (this.running || this.stopped || this.options.maxSizeBytes < 0) return
    this.running = true
    this.options.logger.info('container log rotation', {maxSize: this.options.maxSizeBytes, maxFiles: this.options.maxFiles, workers: this.options.maxWorkers, intervalMs: this.options.monitorIntervalMs})
    this.schedule(0)
  }

  /** Stops the loop; resolves once the round and the rotations under way are done. No timer is left. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.queue.length = 0
    this.queued.clear()
    await this.tick
    await Promise.all([...this.workers])
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.tick = this.round().finally(() => {
        this.tick = undefined
        this.schedule(this.options.monitorIntervalMs)
      })
    }, delayMs)
  }

  /** One round: queue every running container, and let the workers take them. */
  async round(): Promise<void> {
    let containers
    try {
      containers = await this.options.cri.listContainers()
    } catch (error) {
      this.options.logger.warn('container log rotation: could not list containers', {error: (error as Error).message})
      return
    }
    for (const container of containers) {
      // a container that does not run writes nothing more: no empty current file is kept for it
      if (container.state !== 'CONTAINER_RUNNING' || this.queued.has(container.id) || this.stopped) continue
      this.queued.add(container.id)
      this.queue.push(container.id)
    }
    while (this.workers.size < this.options.maxWorkers && this.queue.length > 0) {
      const worker: Promise<void> = this.work().finally(() => this.workers.delete(worker))
      this.workers.add(worker)
    }
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      const id = this.queue.shift()
      if (id === undefined) return
      try {
        await this.rotateContainer(id)
      } finally {
        this.queued.delete(id)
      }
    }
  }

  /** Looks at one container: reopens a missing file, rotates one at least maxSize bytes long. */
  async rotateContainer(id: string): Promise<RotationResult> {
    const {cri, logger} = this.options
    try {
      const status = (await cri.containerStatus(id)).status
      if (!status?.logPath) return 'skipped'
      const path = status.logPath
      let size: number
      try {
        size = (await stat(path)).size
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        await cri.reopenContainerLog(id)
        size = (await stat(path)).size
      }
      if (size < this.options.maxSizeBytes) return 'skipped'
      const result = await rotateLog(path, this.options, () => cri.reopenContainerLog(id), this.now())
      if (result === 'rotated') logger.v(2, 'rotated container log', {containerId: id, path, size})
      return result
    } catch (error) {
      logger.warn('container log rotation failed', {containerId: id, error: (error as Error).message})
      return 'skipped'
    }
  }
}
