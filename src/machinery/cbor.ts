// CBOR as Kubernetes writes it: one data item, self-described (tag 55799), maps with text keys.
import {Decoder, Encoder} from 'cbor-x'
import {setOwn} from './own-keys.js'

/** the self-described CBOR tag 55799, as its three-byte head */
const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7])

const encoder = new Encoder({useRecords: false, mapsAsObjects: true, variableMapSize: true, tagUint8Array: false})
const decoder = new Decoder({useRecords: false, mapsAsObjects: true})
/** cbor-x reads a key __proto__ as `__proto_` (its guard against prototype pollution), so a body that
 *  holds those bytes is read with maps as Maps, which normalize turns into objects with every key. */
const mapDecoder = new Decoder({useRecords: false, mapsAsObjects: false})
const PROTO_KEY = Buffer.from('__proto__')

function decoderFor(bytes: Buffer): Decoder {
  return bytes.includes(PROTO_KEY) ? mapDecoder : decoder
}

export class CborError extends Error {}

export function encodeCbor(value: unknown): Buffer {
  return Buffer.concat([SELF_DESCRIBED, encoder.encode(value)])
}

/** One item (the self-described tag is optional on input). Trailing bytes are an error. */
export function decodeCbor(bytes: Buffer): unknown {
  const body = bytes.subarray(0, 3).equals(SELF_DESCRIBED) ? bytes.subarray(3) : bytes
  if (body.length === 0) throw new CborError('empty CBOR body')
  let items: unknown[]
  const reader = decoderFor(body)
  try {
    items = reader.decodeMultiple(body) as unknown[]
  } catch (error) {
    throw new CborError(`invalid CBOR: ${(error as Error).message}`)
  }
  if (!Array.isArray(items) || items.length !== 1) throw new CborError(`expected one CBOR data item, found ${Array.isArray(items) ? items.length : 0}`)
  return normalize(items[0], reader === mapDecoder)
}

/** Maps with non-string keys and other CBOR-only shapes are not valid API objects. */
function normalize(value: unknown, mapsAsMaps = false): unknown {
  if (value instanceof Map) {
    if (!mapsAsMaps) throw new CborError('CBOR maps must have text keys')
    const out: Record<string, unknown> = {}
    for (const [k, v] of value) setOwn(out, objectKey(k), normalize(v, true))
    return out
  }
  if (Array.isArray(value)) return value.map((item) => normalize(item, mapsAsMaps))
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) setOwn(out, k, normalize(v, mapsAsMaps))
    return out
  }
  return value
}

/** A map key as cbor-x makes an object key of it (its safeKey, less the renaming of __proto__). */
function objectKey(key: unknown): string {
  if (typeof key === 'string') return key
  if (typeof key === 'number' || typeof key === 'boolean' || typeof key === 'bigint' || key === null || key === undefined) return String(key)
  throw new CborError('CBOR maps must have text keys')
}

/**
 * Splits a CBOR sequence (RFC 8742, `application/cbor-seq`: a watch stream) into its data items, however
 * the bytes arrive: push() answers the items the chunk completes (each self-described or not), keeping an
 * item cut off at the end for the next push.
 */
export class CborSequenceReader {
  private buffer: Buffer = Buffer.alloc(0)

  push(chunk: Uint8Array): unknown[] {
    const incoming = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    this.buffer = this.buffer.length === 0 ? incoming : Buffer.concat([this.buffer, incoming])
    if (this.buffer.length === 0) return []
    const out: unknown[] = []
    const reader = decoderFor(this.buffer)
    try {
      reader.decodeMultiple(this.buffer, (value: unknown) => {
        out.push(value)
      })
      this.buffer = Buffer.alloc(0)
    } catch (error) {
      const e = error as {incomplete?: boolean; lastPosition?: number; message?: string}
      if (!e?.incomplete) throw new CborError(`invalid CBOR: ${e?.message ?? String(error)}`)
      // keep the item that is not complete yet (a copy: the chunk's memory may be reused)
      this.buffer = Buffer.from(this.buffer.subarray(e.lastPosition ?? 0))
    }
    return out.map((item) => normalize(item, reader === mapDecoder))
  }

  /** bytes of an incomplete item held back */
  get buffered(): number {
    return this.buffer.length
  }
}
