// The protobuf wire format underneath the codec of protobuf.ts: varints, length-delimited messages, Kubernetes'
// time messages. A Writer grows one buffer; a nested message keeps one byte for its length and is moved
// along when the length needs more. A Reader checks every read against the end of the current message.
// A WatchFrameReader cuts a watch stream into its length-prefixed frames.
import {asBuffer} from './bytes.js'

export class ProtobufError extends Error {
  /** where in the object the problem is (a JSON path), when known */
  path = ''
  constructor(readonly problem: string) {
    super(problem)
    this.name = 'ProtobufError'
  }
  /** prefix the path with the enclosing field (or `[index]`) */
  within(segment: string): this {
    this.path = !this.path ? segment : this.path.startsWith('[') ? segment + this.path : `${segment}.${this.path}`
    this.message = `${this.problem} (at ${this.path})`
    return this
  }
}
export const PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00)

export const VARINT = 0
export const I64 = 1
export const LEN = 2
export const I32 = 5
const TWO_32 = 4294967296

export function varintSize(n: number): number {
  let size = 1
  while (n >= 128) {
    n = Math.floor(n / 128)
    size++
  }
  return size
}

export class Writer {
  buf: Buffer
  pos = 0
  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size)
  }
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = Buffer.allocUnsafe(size)
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }
  /** an unsigned varint (lengths, tags, non-negative values up to 2^53) */
  uint(n: number): void {
    this.reserve(10)
    const buf = this.buf
    let pos = this.pos
    while (n > 0x7f) {
      buf[pos++] = (n & 0x7f) | 0x80
      n = n < TWO_32 ? n >>> 7 : Math.floor(n / 128)
    }
    buf[pos++] = n
    this.pos = pos
  }
  /** a signed integer: negatives as 64-bit two's complement (10 bytes), as protobuf writes int32 and int64 */
  int(n: number): void {
    if (n >= 0) return this.uint(n)
    let hi = Math.floor(n / TWO_32)
    let lo = n - hi * TWO_32
    hi >>>= 0
    this.reserve(10)
    while (hi !== 0 || lo > 0x7f) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80
      lo = ((lo >>> 7) | (hi << 25)) >>> 0
      hi >>>= 7
    }
    this.buf[this.pos++] = lo
  }
  tag(number: number, wireType: number): void {
    this.uint(number * 8 + wireType)
  }
  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length)
    this.buf.set(bytes, this.pos)
    this.pos += bytes.length
  }
  bytes(bytes: Uint8Array): void {
    this.uint(bytes.length)
    this.raw(bytes)
  }
  string(s: string): void {
    const n = s.length
    if (n < 42) {
      // at most 126 bytes: a one-byte length. ASCII is copied here, cheaper than a call into Buffer.write
      this.reserve(1 + n * 3)
      const buf = this.buf
      const start = this.pos + 1
      let i = 0
      for (; i < n; i++) {
        const c = s.charCodeAt(i)
        if (c >= 0x80) break
        buf[start + i] = c
      }
      const written = i === n ? n : buf.write(s, start, 'utf8')
      this.buf[this.pos] = written
      this.pos += 1 + written
      return
    }
    const length = Buffer.byteLength(s, 'utf8')
    this.uint(length)
    this.reserve(length)
    this.pos += this.buf.write(s, this.pos, 'utf8')
  }
  double(n: number): void {
    this.reserve(8)
    this.buf.writeDoubleLE(n, this.pos)
    this.pos += 8
  }
  /** start a length-delimited message: one byte kept for its length, widened by end() if need be */
  begin(): number {
    this.reserve(1)
    return this.pos++
  }
  end(start: number): void {
    const length = this.pos - start - 1
    if (length < 128) {
      this.buf[start] = length
      return
    }
    const size = varintSize(length)
    this.reserve(size - 1)
    this.buf.copyWithin(start + size, start + 1, this.pos)
    this.pos += size - 1
    const end = this.pos
    this.pos = start
    this.uint(length)
    this.pos = end
  }
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos)
  }
}

export class Reader {
  readonly buf: Buffer
  /** the high 32 bits of the last varint read */
  hi = 0
  constructor(
    bytes: Uint8Array,
    public pos: number,
    public end: number,
  ) {
    this.buf = asBuffer(bytes)
  }
  truncated(): ProtobufError {
    return new ProtobufError('truncated data')
  }
  /** a varint: returns its low 32 bits (unsigned), leaves the high ones in this.hi */
  varint(): number {
    const buf = this.buf
    const end = this.end
    let pos = this.pos
    let lo = 0
    let hi = 0
    let b = 0
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= end) throw this.truncated()
      b = buf[pos++]
      lo |= (b & 0x7f) << shift
      if (b < 0x80) {
        this.pos = pos
        this.hi = 0
        return lo >>> 0
      }
    }
    if (pos >= end) throw this.truncated()
    b = buf[pos++]
    lo |= (b & 0x0f) << 28
    hi = (b & 0x7f) >> 4
    if (b >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        if (shift > 31) throw new ProtobufError('malformed varint')
        if (pos >= end) throw this.truncated()
        b = buf[pos++]
        hi |= (b & 0x7f) << shift
        if (b < 0x80) break
      }
    }
    this.pos = pos
    this.hi = hi >>> 0
    return lo >>> 0
  }
  /** a varint that must fit 32 bits unsigned (tags, lengths) */
  uint32(): number {
    if (this.pos < this.end && this.buf[this.pos] < 0x80) return this.buf[this.pos++]
    const n = this.varint()
    if (this.hi !== 0) throw new ProtobufError('varint too large')
    return n
  }
  int64(): number {
    const lo = this.varint()
    return (this.hi | 0) * TWO_32 + lo
  }
  /** a length prefix; the bytes must be there */
  length(): number {
    const n = this.uint32()
    if (n > this.end - this.pos) throw this.truncated()
    return n
  }
  skip(wireType: number, number: number): void {
    switch (wireType) {
      case VARINT:
        this.varint()
        return
      case I64:
        return this.advance(8)
      case LEN:
        return this.advance(this.length())
      case I32:
        return this.advance(4)
      case 3: // a group: skip to its end tag
        for (;;) {
          const tag = this.uint32()
          if ((tag & 7) === 4) {
            if (tag >>> 3 !== number) throw new ProtobufError('mismatched group end')
            return
          }
          this.skip(tag & 7, tag >>> 3)
        }
      default:
        throw new ProtobufError(`invalid wire type ${wireType}`)
    }
  }
  advance(n: number): void {
    if (n > this.end - this.pos) throw this.truncated()
    this.pos += n
  }
  /** run `read` over the next length-delimited message */
  message<T>(read: () => T): T {
    const length = this.length()
    const end = this.end
    this.end = this.pos + length
    const result = read()
    if (this.pos !== this.end) throw new ProtobufError('malformed message')
    this.end = end
    return result
  }
  /** the fields of the current message until its end: (number, wire type) for each */
  fields(each: (number: number, wireType: number) => void): void {
    while (this.pos < this.end) {
      const tag = this.uint32()
      const number = tag >>> 3
      if (number === 0) throw new ProtobufError('invalid field number 0')
      each(number, tag & 7)
    }
  }
  string(): string {
    const n = this.length()
    const start = this.pos
    this.pos += n
    if (n < 24) {
      // short ASCII strings are built here, cheaper than a call into Buffer.toString
      const buf = this.buf
      let text = ''
      for (let i = start; i < start + n; i++) {
        const c = buf[i]
        if (c >= 0x80) return buf.toString('utf8', start, start + n)
        text += String.fromCharCode(c)
      }
      return text
    }
    return this.buf.toString('utf8', start, start + n)
  }
  bytes(): Buffer {
    const n = this.length()
    this.pos += n
    return this.buf.subarray(this.pos - n, this.pos)
  }
}

export function expectWire(wireType: number, want: number): void {
  if (wireType !== want) throw new ProtobufError(`wire type ${wireType} where ${want} was expected`)
}


const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/

/** RFC 3339 to [seconds, nanos] since the epoch */
export function parseTime(text: string): [number, number] {
  const known = parsed.get(text)
  if (known) return [known[0], known[1]]
  const value = parseTimeUncached(text)
  remember(parsed, text, value)
  return [value[0], value[1]]
}

function parseTimeUncached(text: string): [number, number] {
  const m = TIME.exec(text)
  if (!m) throw new ProtobufError(`invalid RFC 3339 time ${JSON.stringify(text)}`)
  const year = Number(m[1])
  let ms = Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))
  // Date.UTC reads years 0-99 as 1900-1999
  if (year < 100) ms = new Date(ms).setUTCFullYear(year)
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60) : 0
  const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0
  return [ms / 1000 - offset, nanos]
}

/** Times repeat a lot within a list or a watch (objects written in the same second, managedFields
 *  times): the last conversions are remembered, in both directions. */
const TIME_CACHE_SIZE = 4096
const formatted = new Map<string, string>()
const parsed = new Map<string, [number, number]>()
function remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
  if (cache.size >= TIME_CACHE_SIZE) cache.delete(cache.keys().next().value as K)
  cache.set(key, value)
  return value
}

/** seconds since the epoch to RFC 3339 in UTC: whole seconds (metav1.Time) or 6 decimals (MicroTime) */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const key = micro ? `${seconds}.${nanos}` : String(seconds)
  return formatted.get(key) ?? remember(formatted, key, formatTimeUncached(seconds, nanos, micro))
}

function formatTimeUncached(seconds: number, nanos: number, micro: boolean): string {
  const date = new Date(seconds * 1000)
  if (Number.isNaN(date.getTime())) throw new ProtobufError(`time out of range: ${seconds}s`)
  const base = date.toISOString().slice(0, -5)
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`
}

/** Splits a protobuf watch stream into frame payloads (WatchEvent messages), however the bytes arrive. */
export class WatchFrameReader {
  private chunks: Buffer[] = []
  private length = 0

  /** the complete frames `chunk` finishes */
  push(chunk: Uint8Array): Uint8Array[] {
    this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    this.length += chunk.byteLength
    if (this.length < 4) return []
    if (this.chunks[0].length < 4) this.chunks = [Buffer.concat(this.chunks)]
    // join the held chunks only once a whole frame is there
    if (this.length < 4 + this.chunks[0].readUInt32BE(0)) return []
    const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
    const frames: Uint8Array[] = []
    let pos = 0
    while (data.length - pos >= 4) {
      const length = data.readUInt32BE(pos)
      if (data.length - pos - 4 < length) break
      frames.push(Uint8Array.prototype.slice.call(data, pos + 4, pos + 4 + length))
      pos += 4 + length
    }
    const rest = data.subarray(pos)
    this.chunks = rest.length ? [Buffer.from(rest)] : []
    this.length = rest.length
    return frames
  }

  /** bytes of an incomplete frame held back */
  get buffered(): number {
    return this.length
  }
}
