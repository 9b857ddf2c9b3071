// Reads ustar archives for tests: lists the entries (checking every header's checksum) and reads
// an entry's data, without loading the whole archive.
import {closeSync, openSync, readSync} from 'node:fs'

export interface TarEntry {
  name: string
  /** '0' file, '2' symlink, '5' directory */
  type: string
  mode: number
  size: number
  linkTarget: string
  /** byte offset of the data in the archive */
  offset: number
}

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length)
  const end = raw.indexOf(0)
  return raw.subarray(0, end < 0 ? length : end).toString('utf8')
}

function octal(block: Buffer, start: number, length: number): number {
  if (block[start]! & 0x80) {
    let value = 0n
    for (let i = start + 1; i < start + length; i++) value = (value << 8n) | BigInt(block[i]!)
    return Number(value)
  }
  const text = field(block, start, length).trim()
  return text ? parseInt(text, 8) : 0
}

/** Every entry of the archive; throws on a bad checksum or a truncated archive. */
export function listTar(path: string): TarEntry[] {
  const fd = openSync(path, 'r')
  try {
    const entries: TarEntry[] = []
    const block = Buffer.alloc(512)
    let position = 0
    while (true) {
      if (readSync(fd, block, 0, 512, position) !== 512) throw new Error(`truncated archive at ${position}`)
      if (block.every((byte) => byte === 0)) return entries
      let sum = 0
      for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!
      if (sum !== octal(block, 148, 8)) throw new Error(`bad header checksum at ${position}`)
      if (field(block, 257, 6) !== 'ustar') throw new Error(`not a ustar header at ${position}`)
      const prefix = field(block, 345, 155)
      const name = field(block, 0, 100)
      const size = octal(block, 124, 12)
      entries.push({
        name: prefix ? `${prefix}/${name}` : name,
        type: String.fromCharCode(block[156]!),
        mode: octal(block, 100, 8),
        size,
        linkTarget: field(block, 157, 100),
        offset: position + 512,
      })
      position += 512 + Math.ceil(size / 512) * 512
    }
  } finally {
    closeSync(fd)
  }
}

export function readTarEntry(path: string, entry: TarEntry): Buffer {
  const fd = openSync(path, 'r')
  try {
    const data = Buffer.alloc(entry.size)
    let got = 0
    while (got < entry.size) {
      const n = readSync(fd, data, got, entry.size - got, entry.offset + got)
      if (n === 0) throw new Error(`truncated data of ${entry.name}`)
      got += n
    }
    return data
  } finally {
    closeSync(fd)
  }
}
