// CBOR as Kubernetes writes it: one data item, self-described (tag 55799), maps with text keys. Bodies
// are read by cbor-decode.ts; cbor-x encodes and splits the watch streams a client reads.
import {Decoder, Encoder} from 'cbor-x'
import {CborDecodeError, decodeStrict, interpretTypeMeta, REQUEST_LIMITS, RESPONSE_LIMITS, type CborLimits, type TypeMeta} from './cbor-decode.js'
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

/** A body Kubernetes' CBOR decoder refuses, in fxamacker/cbor's words. `typeMeta` is what the serializer
 *  read of apiVersion and kind before the refusal; absent, even those could not be read. */
export class CborError extends Error {
  constructor(
    message: string,
    readonly typeMeta?: TypeMeta,
  ) {
    super(message)
  }
}

export function encodeCbor(value: unknown): Buffer {
  return Buffer.concat([SELF_DESCRIBED, encoder.encode(withoutUndefined(value))])
}

/**
 * The value with its undefined members left out, as JSON.stringify leaves them out: cbor-x would
 * write them as the simple value `undefined`, which Kubernetes' decoder (and orch's) refuses. A
 * value that holds none is returned as it is, without a copy.
 */
function withoutUndefined(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    value.forEach((item, index) => {
      const cleaned = item === undefined ? null : withoutUndefined(item)
      if (cleaned !== item) (copy ??= value.slice())[index] = cleaned
    })
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) {
      copy ??= {...(value as Record<string, unknown>)}
      delete copy[key]
      continue
    }
    const cleaned = withoutUndefined(item)
    if (cleaned !== item) (copy ??= {...(value as Record<string, unknown>)})[key] = cleaned
  }
  return copy ?? value
}

/** A request body: one data item, self-described or not, refused as Kubernetes refuses it (cbor-decode.ts). */
export function decodeCborRequest(bytes: Buffer): unknown {
  return decodeCbor(bytes, REQUEST_LIMITS)
}

/** One data item, self-described or not, checked as Kubernetes checks it but within `limits`. */
export function decodeCbor(bytes: Buffer, limits: CborLimits = RESPONSE_LIMITS): unknown {
  try {
    return decodeStrict(bytes, limits)
  } catch (error) {
    if (!(error instanceof CborDecodeError)) throw error
    // the serializer reads apiVersion and kind first: a body it cannot read them from fails there
    if (error.wellFormedness) throw new CborError(error.message)
    let typeMeta: TypeMeta
    try {
      typeMeta = interpretTypeMeta(bytes)
    } catch (interpretError) {
      if (interpretError instanceof CborDecodeError) throw new CborError(interpretError.message)
      throw interpretError
    }
    throw new CborError(error.message, typeMeta)
  }
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
