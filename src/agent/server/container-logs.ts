// Reading a container's CRI log file as the kubelet's ReadLogs does (pkg/kubelet/kuberuntime/logs):
// each line `<RFC3339Nano timestamp> <stdout|stderr> <F|P> <content>`, a `P` entry being part of a line
// whose rest follows (the parts are written one after another, so they join into the line). The
// output is the content, with the entry's timestamp before each whole line when `timestamps`;
// `tailLines` starts that many entries before the end of the file, `sinceSeconds`/`sinceTime` skip
// entries older than the later of the two, `limitBytes` stops after that many bytes of output, and
// `follow` goes on with what is written later until the container no longer runs; when the file is
// rotated meanwhile (renamed away, a new one at the path: log-rotation.ts), following finishes the old
// file and goes on with the new one, as the kubelet's ReadLogs does on its rename/create events.
import {open, stat, type FileHandle} from 'node:fs/promises'

export interface ContainerLogOptions {
  follow?: boolean
  timestamps?: boolean
  sinceSeconds?: number
  /** RFC 3339 */
  sinceTime?: string
  tailLines?: number
  limitBytes?: number
}

export interface CriLogEntry {
  /** the timestamp as written, its fraction without trailing zeros (Go's RFC3339Nano) */
  timestamp: string
  /** nanoseconds since the epoch */
  timeNs: bigint
  stream: 'stdout' | 'stderr'
  partial: boolean
  /** the content; a whole line's ends with `\n` */
  content: Buffer
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/

/** Nanoseconds since the epoch of an RFC 3339 time, or undefined; as Go's time.Parse, digits past the ninth of a fraction are dropped. */
export function parseRfc3339Nano(text: string): {ns: bigint; normalized: string} | undefined {
  const match = TIMESTAMP.exec(text)
  if (!match) return undefined
  const [, base, allDigits = '', zone] = match
  const fraction = allDigits.slice(0, 9)
  const ms = Date.parse(`${base}${zone}`)
  if (Number.isNaN(ms)) return undefined
  const ns = BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0'))
  const trimmed = fraction.replace(/0+$/, '')
  return {ns, normalized: `${base}${trimmed ? `.${trimmed}` : ''}${zone}`}
}

const SPACE = 0x20

/** One line of a CRI log file (without its newline); throws on a line that is not one. */
export function parseCriLine(line: Buffer): CriLogEntry {
  const first = line.indexOf(SPACE)
  if (first < 0) throw new Error(`invalid CRI log format: ${JSON.stringify(line.toString('utf8'))}`)
  const timestampText = line.subarray(0, first).toString('latin1')
  const time = parseRfc3339Nano(timestampText)
  if (!time) throw new Error(`unexpected timestamp format ${JSON.stringify(timestampText)}`)
  const second = line.indexOf(SPACE, first + 1)
  if (second < 0) throw new Error(`invalid CRI log format: ${JSON.stringify(line.toString('utf8'))}`)
  const stream = line.subarray(first + 1, second).toString('latin1')
  if (stream !== 'stdout' && stream !== 'stderr') throw new Error(`unexpected stream type ${JSON.stringify(stream)}`)
  const third = line.indexOf(SPACE, second + 1)
  // a tag without content (`... F` and nothing after) is an empty line
  const tagEnd = third < 0 ? line.length : third
  const tags = line.subarray(second + 1, tagEnd).toString('latin1').split(':')
  const partial = tags[0] === 'P'
  if (tags[0] !== 'P' && tags[0] !== 'F') throw new Error(`unexpected tag ${JSON.stringify(tags[0])}`)
  const text = third < 0 ? Buffer.alloc(0) : line.subarray(third + 1)
  return {timestamp: time.normalized, timeNs: time.ns, stream, partial, content: partial ? text : Buffer.concat([text, Buffer.from('\n')])}
}

/** Writes entries as the kubelet's logWriter: timestamps before whole lines, stopping at limitBytes. */
export class LogRenderer {
  private lineStart = true
  private remaining: number
  private readonly sinceNs: bigint | undefined

  constructor(
    private readonly options: ContainerLogOptions,
    private readonly write: (chunk: Buffer) => void,
    now: Date = new Date(),
  ) {
    this.remaining = options.limitBytes ?? Infinity
    let since: bigint | undefined
    if (options.sinceSeconds !== undefined) since = BigInt(now.getTime() - options.sinceSeconds * 1000) * 1_000_000n
    if (options.sinceTime !== undefined) {
      const at = parseRfc3339Nano(options.sinceTime)?.ns
      if (at !== undefined && (since === undefined || at > since)) since = at
    }
    this.sinceNs = since
  }

  /** true once limitBytes is reached: nothing more is written */
  get done(): boolean {
    return this.remaining <= 0
  }

  /** Renders one line of the file; lines that do not parse are skipped, as the kubelet logs and skips them. */
  line(raw: Buffer): void {
    if (this.done) return
    let entry: CriLogEntry
    try {
      entry = parseCriLine(raw)
    } catch {
      return
    }
    if (this.sinceNs !== undefined && entry.timeNs < this.sinceNs) return
    const prefix = this.options.timestamps && this.lineStart ? Buffer.from(`${entry.timestamp} `) : undefined
    this.lineStart = !entry.partial
    let out = prefix ? Buffer.concat([prefix, entry.content]) : entry.content
    if (out.length > this.remaining) out = out.subarray(0, this.remaining)
    this.remaining -= out.length
    if (out.length > 0) this.write(out)
  }
}

const NEWLINE = 0x0a

/** The whole lines of `data`, and the bytes after the last newline (an entry still being written). */
export function splitLines(data: Buffer): {lines: Buffer[]; rest: Buffer} {
  const lines: Buffer[] = []
  let start = 0
  let newline: number
  while ((newline = data.indexOf(NEWLINE, start)) >= 0) {
    lines.push(data.subarray(start, newline))
    start = newline + 1
  }
  return {lines, rest: data.subarray(start)}
}

/** The text `kubectl logs` would print for a log file's content (no follow). */
export function renderLogText(fileContent: Buffer, options: ContainerLogOptions, now?: Date): Buffer {
  const chunks: Buffer[] = []
  const renderer = new LogRenderer(options, (chunk) => chunks.push(chunk), now)
  const {lines} = splitLines(fileContent)
  const tail = options.tailLines
  for (const line of tail === undefined ? lines : lines.slice(Math.max(0, lines.length - tail))) renderer.line(line)
  return Buffer.concat(chunks)
}

export interface FollowControl {
  /** whether the container still runs (CRI ContainerStatus); following ends once it does not */
  running(): Promise<boolean>
  /** aborted when the client goes away */
  signal: AbortSignal
  /** how often the file is read again (ms) */
  pollMs?: number
  /** how often the container's state is checked while nothing new is written (ms) */
  checkMs?: number
}

/**
 * Streams a CRI log file through `write`. Throws before writing anything when the file cannot be
 * opened (`failed to open log file "<path>": ...`); `ready` is called once it is open.
 */
export async function streamContainerLog(
  path: string,
  options: ContainerLogOptions,
  write: (chunk: Buffer) => void,
  control: FollowControl,
  ready: () => void = () => {},
): Promise<void> {
  let file: FileHandle
  try {
    file = await open(path, 'r')
  } catch (error) {
    throw new Error(`failed to open log file ${JSON.stringify(path)}: ${(error as Error).message}`)
  }
  try {
    ready()
    const renderer = new LogRenderer(options, write)
    const opened = await file.stat()
    const size = opened.size
    /** the open file's inode: another one at the path means the log was rotated */
    let ino = opened.ino
    const initial = Buffer.alloc(size)
    const {bytesRead} = size > 0 ? await file.read(initial, 0, size, 0) : {bytesRead: 0}
    let {lines, rest} = splitLines(initial.subarray(0, bytesRead))
    let offset = bytesRead - rest.length
    if (options.tailLines !== undefined) lines = lines.slice(Math.max(0, lines.length - options.tailLines))
    for (const line of lines) renderer.line(line)
    if (!options.follow) return
    const pollMs = control.pollMs ?? 100
    const checkMs = control.checkMs ?? 500
    let lastCheck = Date.now()
    const buffer = Buffer.alloc(64 * 1024)
    /** Renders the whole lines written since offset; answers how many bytes it read. */
    const readMore = async (): Promise<number> => {
      const read = await file.read(buffer, 0, buffer.length, offset)
      if (read.bytesRead > 0) {
        offset += read.bytesRead
        const split = splitLines(Buffer.concat([rest, buffer.subarray(0, read.bytesRead)]))
        rest = Buffer.from(split.rest)
        for (const line of split.lines) renderer.line(line)
      }
      return read.bytesRead
    }
    for (;;) {
      if (renderer.done || control.signal.aborted) return
      if ((await readMore()) > 0) continue
      // nothing new: has the file been rotated (another file at the path now)?
      const current = await stat(path).catch(() => undefined)
      if (current && current.ino !== ino) {
        if ((await readMore()) > 0) continue // the old file still had some: read it to its end first
        const next = await open(path, 'r').catch(() => undefined)
        if (next) {
          await file.close()
          file = next
          ino = (await file.stat()).ino
          offset = 0
          rest = Buffer.alloc(0)
          continue
        }
      }
      if (Date.now() - lastCheck >= checkMs) {
        lastCheck = Date.now()
        if (!(await control.running())) {
          // what was written before the container stopped
          while ((await readMore()) > 0);
          return
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs)
        control.signal.addEventListener('abort', () => {
          clearTimeout(timer)
          resolve()
        }, {once: true})
      })
    }
  } finally {
    await file.close()
  }
}
