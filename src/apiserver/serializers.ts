// The encodings the server speaks, chosen per request by Accept and Content-Type.
import type {AnyObject, KindDeclaration} from '../api/types.js'
import {CborError, decodeCborRequest, encodeCbor} from '../machinery/cbor.js'
import {decodeFailure, summarizeData} from '../machinery/go-json.js'
import {setOwn} from '../machinery/own-keys.js'
import {decodeObject, encodeListChunks, encodeObject, frameWatchEvent, ProtobufError} from '../machinery/protobuf.js'
import {errors} from '../machinery/status.js'
import {dumpYaml, loadYaml} from '../machinery/go-yaml.js'

export interface Serializer {
  mediaType: string
  /** Content-Type of a watch stream in this encoding */
  streamMediaType: string
  encode(value: unknown, declaration?: KindDeclaration): Buffer
  decode(body: Buffer, declaration?: KindDeclaration): unknown
  /** a list as a sequence of chunks (streamed item by item), when the encoding can */
  encodeListChunks?(declaration: KindDeclaration, meta: Record<string, unknown> | undefined, items: readonly AnyObject[]): Iterable<Uint8Array>
  /** one watch event, framed for the stream */
  frame(event: {type: string; object: AnyObject}, declaration?: KindDeclaration): Buffer
}

export const JSON_TYPE = 'application/json'
export const YAML_TYPE = 'application/yaml'
export const CBOR_TYPE = 'application/cbor'

/** String.prototype.toWellFormed (ES2024, in Node 20; TypeScript's lib here predates it) */
const wellFormedText = (text: string): string => (text as unknown as {toWellFormed(): string}).toWellFormed()

/** deeper than this a body is refused anyway (codec.ts MAX_NESTING_DEPTH): the walk stops there */
const WELL_FORMED_DEPTH = 1100

/** `value` with every lone surrogate in its strings and keys replaced by U+FFFD */
function wellFormed(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return wellFormedText(value)
  if (typeof value !== 'object' || value === null || depth > WELL_FORMED_DEPTH) return value
  if (Array.isArray(value)) return value.map((item) => wellFormed(item, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    setOwn(out, wellFormedText(key), wellFormed(child, depth + 1))
  }
  return out
}

export const jsonSerializer: Serializer = {
  mediaType: JSON_TYPE,
  streamMediaType: JSON_TYPE,
  encode: (value) => Buffer.from(JSON.stringify(value) + '\n'),
  decode(body) {
    let value: unknown
    try {
      value = JSON.parse(body.toString('utf8'))
    } catch (error) {
      throw errors.badRequest(`error decoding JSON: ${(error as Error).message}`)
    }
    // a lone surrogate can only come from a \uD800-\uDFFF escape, which Go's decoder reads as U+FFFD
    return body.includes('\\ud') || body.includes('\\uD') ? wellFormed(value) : value
  },
  frame: (event) => Buffer.from(JSON.stringify(event) + '\n'),
}

export const yamlSerializer: Serializer = {
  mediaType: YAML_TYPE,
  streamMediaType: YAML_TYPE,
  encode: (value) => Buffer.from(dumpYaml(value)),
  decode(body) {
    try {
      return loadYaml(body.toString('utf8'))
    } catch (error) {
      throw errors.badRequest(`error decoding YAML: ${(error as Error).message.split('\n')[0]}`)
    }
  },
  // documents separated as a YAML stream
  frame: (event) => Buffer.from('---\n' + dumpYaml(event)),
}

export const cborSerializer: Serializer = {
  mediaType: CBOR_TYPE,
  streamMediaType: 'application/cbor-seq',
  encode: (value) => encodeCbor(value),
  decode(body, declaration) {
    try {
      return decodeCborRequest(body)
    } catch (error) {
      if (!(error instanceof CborError)) throw error
      if (!declaration) throw errors.badRequest(`error decoding CBOR: ${error.message}`)
      // as the handlers' transformDecodeError words the serializer's error
      if (!error.typeMeta) {
        throw errors.badRequest(`the object provided is unrecognized (must be of type ${declaration.kind}): unable to determine group/version/kind: ${error.message} (${summarizeData(body, 30)})`)
      }
      throw errors.badRequest(decodeFailure(error.typeMeta, declaration, body, error.message))
    }
  },
  // a CBOR sequence: items back to back (RFC 8742)
  frame: (event) => encodeCbor(event),
}

export interface SerializerSet {
  /** in preference order; the first is the default */
  all: Serializer[]
  byMediaType(type: string): Serializer | undefined
}

export function serializerSet(gates: Record<string, boolean>, extra: Serializer[] = []): SerializerSet {
  const all = [jsonSerializer, yamlSerializer, protobufSerializer, ...extra]
  if (gates['CBORServingAndStorage']) all.push(cborSerializer)
  return {
    all,
    byMediaType: (type) => all.find((s) => s.mediaType === (type === KUBERNETES_PROTOBUF_TYPE ? PROTOBUF_TYPE : type)),
  }
}

export const PROTOBUF_TYPE = 'application/vnd.orch.protobuf'
/** Kubernetes' name for the same wire format: kubectl and client-go send request bodies of built-in
 *  kinds in it (`kubectl create namespace x`), so it is read as PROTOBUF_TYPE; responses are in the
 *  types the server lists (a client that sends it accepts JSON too). */
const KUBERNETES_PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf'

/** Kubernetes' protobuf: magic + runtime.Unknown; watch streams are length-prefixed WatchEvents. */
export const protobufSerializer: Serializer = {
  mediaType: PROTOBUF_TYPE,
  streamMediaType: `${PROTOBUF_TYPE};stream=watch`,
  encode: (value, declaration) => Buffer.from(encodeObject(declaration, value as AnyObject)),
  decode(body, declaration) {
    try {
      return decodeObject(declaration, body)
    } catch (error) {
      if (error instanceof ProtobufError) {
        // the object decoder says where it failed already prefixed; the envelope's errors are not
        throw errors.badRequest(error.message.startsWith('error decoding protobuf: ') ? error.message : `error decoding protobuf: ${error.message}`)
      }
      throw error
    }
  },
  frame: (event, declaration) => Buffer.from(frameWatchEvent(declaration, event as {type: 'ADDED'; object: AnyObject})),
  encodeListChunks: (declaration, meta, items) => encodeListChunks(declaration, meta, items),
}
