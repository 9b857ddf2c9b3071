// Writes a container's stdout and stderr to its log file in the CRI log format, one entry per line:
// `<RFC3339Nano timestamp> <stream> <tag> <content>\n`, tag `F` for a full line and `P` for a part of
// a line longer than the maximum (the rest follows in further entries, the last one tagged `F`).
import {createWriteStream, mkdirSync, openSync, type WriteStream} from 'node:fs'
import {dirname} from 'node:path'
import type {Readable} from 'node:stream'
import {nowNs, rfc3339Nano} from './clock.js'

/** Longest content of one log entry; longer lines are split into `P` entries (containerd uses 16 KiB). */
export const MAX_LOG_LINE_BYTES = 16 * 1024

const NEWLINE = 0x0a

export class CriLogWriter {
  private out: WriteStream
  private readonly sources: Promise<void>[] = []

  constructor(readonly path: string) {
    this.out = CriLogWriter.open(path)
  }

  private static open(path: string): WriteStream {
    mkdirSync(dirname(path), {recursive: true})
    const stream = createWriteStream(path, {flags: 'a', mode: 0o640})
    // a failing log write (disk full, removed directory) must not take the runtime down
    stream.on('error', () => {})
    return stream
  }

  /** Copies a stream (the container's stdout or stderr) into the log, line by line. */
  attach(source: Readable, name: 'stdout' | 'stderr'): void {
    let pending: Buffer = Buffer.alloc(0)
    this.sources.push(
      new Promise<void>((resolve) => {
        source.on('data', (chunk: Buffer) => {
          let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk
          let newline: number
          while ((newline = data.indexOf(NEWLINE)) >= 0) {
            this.entries(name, data.subarray(0, newline))
            data = data.subarray(newline + 1)
          }
          while (data.length > MAX_LOG_LINE_BYTES) {
            this.entry(name, 'P', data.subarray(0, MAX_LOG_LINE_BYTES))
            data = data.subarray(MAX_LOG_LINE_BYTES)
          }
          pending = Buffer.from(data)
        })
        const finish = (): void => {
          // a last line without a newline is still a whole line
          if (pending.length > 0) this.entry(name, 'F', pending)
          pending = Buffer.alloc(0)
          resolve()
        }
        source.once('end', finish)
        source.once('close', finish)
        source.once('error', finish)
      }),
    )
  }

  private entries(name: string, line: Buffer): void {
    while (line.length > MAX_LOG_LINE_BYTES) {
      this.entry(name, 'P', line.subarray(0, MAX_LOG_LINE_BYTES))
      line = line.subarray(MAX_LOG_LINE_BYTES)
    }
    this.entry(name, 'F', line)
  }

  private entry(name: string, tag: 'F' | 'P', content: Buffer): void {
    this.out.write(Buffer.concat([Buffer.from(`${rfc3339Nano(nowNs())} ${name} ${tag} `), content, Buffer.from('\n')]))
  }

  /**
   * Opens the log path again (after the agent rotated the file away): what is written from now on goes
   * to a new file at the path, created before this returns; what was queued for the old file still
   * goes there. Throws (the old file kept) when the path cannot be opened.
   */
  reopen(): void {
    const fd = openSync(this.path, 'a', 0o640)
    const stream = createWriteStream(this.path, {fd})
    stream.on('error', () => {})
    const old = this.out
    this.out = stream
    old.end()
  }

  /** Resolves once every attached stream ended and everything is written; then closes the file. */
  async close(): Promise<void> {
    await Promise.all(this.sources)
    await new Promise<void>((resolve) => this.out.end(resolve))
  }
}
