// A CBOR decoder that refuses what Kubernetes' decoder refuses (apimachinery's cbor/internal/modes
// Decode, on fxamacker/cbor v2.7) and words the refusal as fxamacker does. Like fxamacker it first
// checks the whole item is well-formed (within 64 levels, 1024 array elements and 1024 map pairs, no
// NaN, infinity or bignum), then decodes it: text strings must be valid UTF-8, map keys unique, integers
// within int64, simple values only false, true and null; byte strings read as strings and other tags
// as their content.
import {isUtf8} from 'node:buffer'
import {setOwn} from './own-keys.js'

export interface CborLimits {
  nestedLevels: number
  arrayElements: number
  mapPairs: number
}

/** Kubernetes 1.32's limits on a request body (client-go holds responses to them too, which fails on
 *  lists of over 1024 items until Kubernetes 1.35 raises them: orch's client does not) */
export const REQUEST_LIMITS: CborLimits = {nestedLevels: 64, arrayElements: 1024, mapPairs: 1024}
/** for responses: fxamacker's largest counts, and as deep as orch accepts any body (codec.ts MAX_NESTING_DEPTH) */
export const RESPONSE_LIMITS: CborLimits = {nestedLevels: 1000, arrayElements: 2147483647, mapPairs: 2147483647}

/** A refusal, in fxamacker/cbor's words. `wellFormedness` marks the errors of its first pass. */
export class CborDecodeError extends Error {
  constructor(message: string, readonly wellFormedness = false) {
    super(message)
  }
}

const TYPE_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives']
const BREAK = 0xff
const TWO_POW_32 = 2 ** 32
const MAX_INT64 = (1n << 63n) - 1n

const unexpectedEnd = () => new CborDecodeError('unexpected EOF', true)
const unacceptable = (type: number, what: string) => new CborDecodeError(`cbor: data item of cbor type ${TYPE_NAMES[type]} is not accepted by protocol: ${what}`)

function float16(bits: number): number {
  const exponent = (bits >> 10) & 0x1f
  const fraction = bits & 0x3ff
  const sign = bits & 0x8000 ? -1 : 1
  if (exponent === 0) return sign * fraction * 2 ** -24
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN
  return sign * (1024 + fraction) * 2 ** (exponent - 25)
}

/**
 * The first pass (fxamacker's wellformed): walks the item at `start` without building anything and
 * answers where it ends. Recursion is bounded by the nesting limit, so a deep body cannot overflow
 * the stack.
 */
class WellFormedness {
  private offset = 0
  private readonly view: DataView

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: CborLimits = RESPONSE_LIMITS,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  check(): void {
    if (this.bytes.length === 0) throw new CborDecodeError('EOF', true)
    this.item(0)
    if (this.offset !== this.bytes.length) {
      throw new CborDecodeError(`cbor: ${this.bytes.length - this.offset} bytes of extraneous data starting at index ${this.offset}`, true)
    }
  }

  /** the offset where the (well-formed) item at `from` ends */
  skip(from: number): number {
    this.offset = from
    this.item(0)
    return this.offset
  }

  /** the major type and argument (-1: indefinite length) of the head read last */
  private type = 0
  private argument = 0

  /** reads the head at the offset into type and argument */
  private head(): void {
    const {bytes} = this
    if (this.offset >= bytes.length) throw unexpectedEnd()
    const initial = bytes[this.offset++]
    const type = (this.type = initial >> 5)
    const info = initial & 0x1f
    if (info < 24) {
      this.argument = info
      return
    }
    const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0
    if (size === 0) {
      if (info !== 31) throw new CborDecodeError(`cbor: invalid additional information ${info} for type ${TYPE_NAMES[type]}`, true)
      if (type === 0 || type === 1 || type === 6) throw new CborDecodeError(`cbor: invalid additional information 31 for type ${TYPE_NAMES[type]}`, true)
      if (type === 7) throw new CborDecodeError('cbor: unexpected "break" code', true)
      this.argument = -1
      return
    }
    if (bytes.length - this.offset < size) throw unexpectedEnd()
    const at = this.offset
    this.offset += size
    if (size === 1) {
      this.argument = bytes[at]
      if (type === 7 && this.argument < 32) throw new CborDecodeError(`cbor: invalid simple value ${this.argument} for type primitives`, true)
    } else if (size === 2) {
      this.argument = (bytes[at] << 8) | bytes[at + 1]
      if (type === 7) this.acceptableFloat(float16(this.argument))
    } else if (size === 4) {
      if (type === 7) this.acceptableFloat(this.view.getFloat32(at))
      this.argument = this.view.getUint32(at)
    } else {
      if (type === 7) this.acceptableFloat(this.view.getFloat64(at))
      // lengths past 2^53 are cut off by the end of the body anyway
      this.argument = this.view.getUint32(at) * TWO_POW_32 + this.view.getUint32(at + 4)
    }
  }

  private acceptableFloat(value: number): void {
    if (Number.isNaN(value)) throw new CborDecodeError(unacceptable(7, 'floating-point NaN').message, true)
    if (!Number.isFinite(value)) throw new CborDecodeError(unacceptable(7, 'floating-point infinity').message, true)
  }

  private item(depth: number): void {
    this.head()
    const {type, argument} = this
    switch (type) {
      case 2:
      case 3:
        if (argument < 0) return this.indefiniteString(type, depth)
        if (this.bytes.length - this.offset < argument) throw unexpectedEnd()
        this.offset += argument
        return
      case 4:
      case 5: {
        if (++depth > this.limits.nestedLevels) throw this.tooDeep()
        if (argument < 0) return this.indefiniteContainer(type, depth)
        if (type === 4 && argument > this.limits.arrayElements) throw this.tooManyElements()
        if (type === 5 && argument > this.limits.mapPairs) throw this.tooManyPairs()
        const items = type === 5 ? argument * 2 : argument
        for (let i = 0; i < items; i++) this.item(depth)
        return
      }
      case 6: {
        let tag = argument
        // nested tags are read here, not by recursion; each past the first is a level
        for (;;) {
          if (this.offset >= this.bytes.length) throw unexpectedEnd()
          if (tag === 2 || tag === 3) throw new CborDecodeError(unacceptable(6, 'bignum').message, true)
          if (this.bytes[this.offset] >> 5 !== 6) break
          this.head()
          tag = this.argument
          if (++depth > this.limits.nestedLevels) throw this.tooDeep()
        }
        return this.item(depth)
      }
    }
  }

  private tooDeep = () => new CborDecodeError(`cbor: exceeded max nested level ${this.limits.nestedLevels}`, true)
  private tooManyElements = () => new CborDecodeError(`cbor: exceeded max number of elements ${this.limits.arrayElements} for CBOR array`, true)
  private tooManyPairs = () => new CborDecodeError(`cbor: exceeded max number of key-value pairs ${this.limits.mapPairs} for CBOR map`, true)

  private indefiniteString(type: number, depth: number): void {
    for (;;) {
      if (this.offset >= this.bytes.length) throw unexpectedEnd()
      const next = this.bytes[this.offset]
      if (next === BREAK) {
        this.offset++
        return
      }
      if (next >> 5 !== type) throw new CborDecodeError(`cbor: wrong element type ${TYPE_NAMES[next >> 5]} for indefinite-length ${TYPE_NAMES[type]}`, true)
      if ((next & 0x1f) === 31) throw new CborDecodeError(`cbor: indefinite-length ${TYPE_NAMES[type]} chunk is not definite-length`, true)
      this.item(depth)
    }
  }

  private indefiniteContainer(type: number, depth: number): void {
    let count = 0
    for (;;) {
      if (this.offset >= this.bytes.length) throw unexpectedEnd()
      if (this.bytes[this.offset] === BREAK) {
        this.offset++
        break
      }
      this.item(depth)
      count++
      if (type === 4 && count > this.limits.arrayElements) throw this.tooManyElements()
      if (type === 5 && count % 2 === 0 && count / 2 > this.limits.mapPairs) throw this.tooManyPairs()
    }
    if (type === 5 && count % 2 === 1) throw new CborDecodeError('cbor: unexpected "break" code', true)
  }
}


/** what the "expected later encoding" tags 21, 22 and 23 make of a byte string read as a string */
type TextEncoding = 'base64url' | 'base64' | 'hex' | undefined

/** Tags 0 and 1 (date/time) read into an interface as RFC 3339 strings, with nanoseconds if any
 *  (fxamacker's TimeTagToRFC3339Nano). */
function epochToRfc3339(seconds: number): string {
  const iso = new Date(Math.floor(seconds) * 1000).toISOString().slice(0, 19)
  const fraction = seconds - Math.floor(seconds)
  const nanos = fraction === 0 ? '' : `.${Math.round(fraction * 1e9).toString().padStart(9, '0').replace(/0+$/, '')}`
  return `${iso}${nanos}Z`
}

/** Short ASCII strings decoded before, by a hash of their bytes: map keys and common values repeat
 *  from body to body, and a string made again each time costs more than the rest of the decode. */
const SHORT_STRINGS: (string | undefined)[] = new Array(4096).fill(undefined)
const MAX_CACHED_LENGTH = 32

/** The second pass: builds the value of a well-formed item (every length has been checked). */
class Reader {
  offset = 0
  private readonly view: DataView

  constructor(private readonly bytes: Buffer) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  /** the argument of the head whose initial byte was just read (-1: indefinite length), past it */
  argument(info: number): number {
    const at = this.offset
    if (info < 24) return info
    if (info === 24) {
      this.offset += 1
      return this.bytes[at]
    }
    if (info === 25) {
      this.offset += 2
      return this.view.getUint16(at)
    }
    if (info === 26) {
      this.offset += 4
      return this.view.getUint32(at)
    }
    if (info === 27) {
      this.offset += 8
      return this.view.getUint32(at) * TWO_POW_32 + this.view.getUint32(at + 4)
    }
    return -1
  }

  value(encoding?: TextEncoding): unknown {
    const initial = this.bytes[this.offset++]
    const type = initial >> 5
    const info = initial & 0x1f
    switch (type) {
      case 0:
      case 1:
        return this.integer(type, info)
      case 2:
        return this.byteString(info, encoding)
      case 3:
        return this.text(info)
      case 4: {
        const length = this.argument(info)
        const out: unknown[] = []
        if (length >= 0) for (let i = 0; i < length; i++) out.push(this.value(encoding))
        else while (!this.atBreak()) out.push(this.value(encoding))
        return out
      }
      case 5:
        return this.map(info, encoding)
      case 6:
        return this.tagged(this.argument(info), encoding)
      default:
        return this.primitive(info)
    }
  }

  private atBreak(): boolean {
    if (this.bytes[this.offset] !== BREAK) return false
    this.offset++
    return true
  }

  private integer(type: number, info: number): number {
    if (info === 27) {
      const big = this.view.getBigUint64(this.offset)
      this.offset += 8
      if (big > MAX_INT64) {
        const shown = type === 0 ? `${big}` : `${-1n - big}`
        throw new CborDecodeError(`cbor: cannot unmarshal ${TYPE_NAMES[type]} into Go value of type int64 (${shown} overflows Go's int64)`)
      }
      return type === 0 ? Number(big) : Number(-1n - big)
    }
    const value = this.argument(info)
    return type === 0 ? value : -1 - value
  }

  private byteString(info: number, encoding: TextEncoding): string {
    const length = this.argument(info)
    let content: Buffer
    if (length >= 0) {
      content = this.bytes.subarray(this.offset, this.offset + length)
      this.offset += length
    } else {
      const chunks: Buffer[] = []
      while (!this.atBreak()) {
        const chunkLength = this.argument(this.bytes[this.offset++] & 0x1f)
        chunks.push(this.bytes.subarray(this.offset, this.offset + chunkLength))
        this.offset += chunkLength
      }
      content = Buffer.concat(chunks)
    }
    return encoding ? content.toString(encoding) : content.toString('utf8')
  }

  /** a text string, refused unless valid UTF-8 (fxamacker checks it as it decodes, not in the first pass) */
  text(info: number): string {
    const length = this.argument(info)
    if (length < 0) {
      let out = ''
      while (!this.atBreak()) out += this.text(this.bytes[this.offset++] & 0x1f)
      return out
    }
    const start = this.offset
    const end = (this.offset += length)
    const {bytes} = this
    if (length <= MAX_CACHED_LENGTH) {
      // short ASCII strings (keys, most names and values) from the cache: no validation, no native call
      let hash = length
      for (let i = start; i < end; i++) {
        const byte = bytes[i]
        if (byte >= 0x80) return this.utf8(start, end)
        hash = Math.imul(hash ^ byte, 0x01000193)
      }
      const slot = (hash ^ (hash >>> 15)) & (SHORT_STRINGS.length - 1)
      const cached = SHORT_STRINGS[slot]
      if (cached !== undefined && cached.length === length) {
        let same = true
        for (let i = 0; i < length; i++) {
          if (cached.charCodeAt(i) !== bytes[start + i]) {
            same = false
            break
          }
        }
        if (same) return cached
      }
      return (SHORT_STRINGS[slot] = String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]))
    }
    return this.utf8(start, end)
  }

  private utf8(start: number, end: number): string {
    const decoded = this.bytes.toString('utf8', start, end)
    // a malformed sequence becomes U+FFFD; only then is it worth telling it from a real one
    if (decoded.includes('\ufffd') && !isUtf8(this.bytes.subarray(start, end))) throw new CborDecodeError('cbor: invalid UTF-8 string')
    return decoded
  }

  private map(info: number, encoding: TextEncoding): Record<string, unknown> {
    const length = this.argument(info)
    const start = this.offset
    const out: Record<string, unknown> = {}
    let pairs = 0
    for (; length < 0 ? !this.atBreak() : pairs < length; pairs++) {
      const key = this.key()
      const value = this.value(encoding)
      if (key === '__proto__') setOwn(out, key, value)
      else out[key] = value
    }
    // fewer keys than pairs (counted once per map: cheaper than a look-up per key)
    if (pairs > 1 && Object.keys(out).length !== pairs) this.duplicateKeyIn(start, pairs)
    return out
  }

  /** throws for the first key of the map at `start` seen before, as fxamacker reports it */
  private duplicateKeyIn(start: number, pairs: number): never {
    this.offset = start
    const seen = new Set<string>()
    for (let index = 0; index < pairs; index++) {
      const key = this.key()
      if (seen.has(key)) throw new CborDecodeError(`cbor: found duplicate map key "${key}" at map element index ${index}`)
      seen.add(key)
      this.value()
    }
    throw new Error('duplicateKeyIn: no duplicate found')
  }

  /** a map key: into Go's map[string]interface{}, text or a byte string */
  key(): string {
    const initial = this.bytes[this.offset]
    const type = initial >> 5
    if (type === 3) {
      this.offset++
      return this.text(initial & 0x1f)
    }
    if (type === 2) return this.value() as string
    throw new CborDecodeError(`cbor: cannot unmarshal ${TYPE_NAMES[type]} into Go value of type string`)
  }

  private tagged(tag: number, encoding: TextEncoding): unknown {
    if (tag === 21) return this.value('base64url')
    if (tag === 22) return this.value('base64')
    if (tag === 23) return this.value('hex')
    const content = this.value(encoding)
    if (tag === 1 && typeof content === 'number') return epochToRfc3339(content)
    return content
  }

  private primitive(info: number): unknown {
    switch (info) {
      case 20:
        return false
      case 21:
        return true
      case 22:
        return null
      case 25:
        this.offset += 2
        return float16(this.view.getUint16(this.offset - 2))
      case 26:
        this.offset += 4
        return this.view.getFloat32(this.offset - 4)
      case 27:
        this.offset += 8
        return this.view.getFloat64(this.offset - 8)
      default:
        // undefined (23), the unassigned 0-19 and 32-255
        throw new CborDecodeError(unacceptable(7, `simple value ${this.argument(info)} is not recognized`).message)
    }
  }
}

/** Decodes one CBOR data item (and nothing after it) as Kubernetes' decoder reads it into an interface{}. */
export function decodeStrict(bytes: Buffer, limits: CborLimits): unknown {
  new WellFormedness(bytes, limits).check()
  return new Reader(bytes).value()
}

/** The body's apiVersion and kind as Kubernetes reads them first, into a TypeMeta. */
export interface TypeMeta {
  apiVersion?: string
  kind?: string
}

/**
 * What the serializer's metaFactory.Interpret makes of a well-formed body: it decodes the top-level
 * map into a TypeMeta, so only that map's keys (unique, valid UTF-8) and its apiVersion and kind
 * (strings or null) are checked; every other value is skipped. Throws its first error.
 */
export function interpretTypeMeta(bytes: Buffer): TypeMeta {
  const reader = new Reader(bytes)
  const walker = new WellFormedness(bytes)
  const skip = () => {
    reader.offset = walker.skip(reader.offset)
  }
  while (bytes[reader.offset] >> 5 === 6) reader.argument(bytes[reader.offset++] & 0x1f)
  const initial = bytes[reader.offset++]
  if (initial >> 5 !== 5) throw new CborDecodeError(`cbor: cannot unmarshal ${TYPE_NAMES[initial >> 5]} into Go value of type v1.TypeMeta`)
  const length = reader.argument(initial & 0x1f)
  const meta: TypeMeta = {}
  const seen = new Set<string | number>()
  let firstError: CborDecodeError | undefined
  for (let index = 0; length < 0 ? bytes[reader.offset] !== BREAK : index < length; index++) {
    const keyType = bytes[reader.offset] >> 5
    let key: string | number
    if (keyType <= 3) {
      try {
        key = keyType <= 1 ? (reader.value() as number) : reader.key()
      } catch (error) {
        // fxamacker keeps the first such error and reads on: a duplicate found later wins
        firstError ??= error as CborDecodeError
        skip()
        continue
      }
    } else {
      const name = TYPE_NAMES[keyType]
      firstError ??= new CborDecodeError(`cbor: cannot unmarshal ${name} into Go value of type string (map key is of type ${name} and cannot be used to match struct field name)`)
      skip()
      skip()
      continue
    }
    if (seen.has(key)) throw new CborDecodeError(`cbor: found duplicate map key "${key}" at map element index ${index}`)
    seen.add(key)
    const valueType = bytes[reader.offset] >> 5
    if ((key !== 'apiVersion' && key !== 'kind') || bytes[reader.offset] === 0xf6) {
      skip()
    } else if (valueType === 2 || valueType === 3) {
      try {
        meta[key] = reader.value() as string
      } catch (error) {
        firstError ??= error as CborDecodeError
      }
    } else {
      firstError ??= new CborDecodeError(`cbor: cannot unmarshal ${TYPE_NAMES[valueType]} into Go struct field v1.TypeMeta.${key} of type string`)
      skip()
    }
  }
  if (firstError) throw firstError
  return meta
}
