// Kubernetes' protobuf wire form, driven by the declarations' schemas: no code per kind.
//
// A body is the magic 6b 38 73 00 and a runtime.Unknown {typeMeta = 1 {apiVersion 1, kind 2}, raw = 2 (the
// object's own message, without type meta), contentEncoding = 3, contentType = 4}, laid out as Kubernetes'
// serializer writes it: type meta, raw, then contentEncoding and contentType, both empty and present.
// Lists are {metadata ListMeta = 1, items = 2}; the meta/v1 kinds (Status, Table, PartialObjectMetadata,
// PartialObjectMetadataList, DeleteOptions) follow protobuf-schemas.ts, numbered as in Kubernetes.
// A watch stream is a run of frames: a 4-byte big-endian length, then a WatchEvent message {type 1,
// object 2 {raw 1}}. As in Kubernetes (apiserver handlers/watch.go: the stream serializer is the raw one,
// the embedded encoder the normal one) the WatchEvent itself is not wrapped, while object.raw holds the
// object's complete encoding, magic and Unknown included.
//
// Field presence. Every field present in the JSON (neither undefined nor null) is written; absent ones are
// not, and the decoder keeps whatever is on the wire. Kubernetes writes its non-pointer fields always
// ("", 0, false, {}) and pointer fields when set: reading our bytes it sees zero values for what we left
// out, which is also what JSON without them means to it. Reading Kubernetes' bytes we keep the zero values
// it wrote (hostNetwork: false, …), except ObjectMeta's strings and generation, dropped when '' or 0 as
// Go leaves them out of JSON (Plan.omitZero; kubectl's bodies carry them all). Elsewhere the declarations'
// defaults and validation treat a non-pointer field's zero value as unset (`if (!x)`), and a pointer
// field's zero (replicas: 0, storageClassName: '') keeps its meaning, which dropping zeros would lose. An empty Time (Kubernetes'
// zero time) reads as null. Empty lists and maps have no wire form and read back absent, as in Kubernetes.
// Fields are written by number, map entries sorted by key, repeated scalars unpacked (packed is read too):
// Kubernetes' order, so equal content gives equal bytes. Unknown fields are skipped. int64 values are JS
// numbers (exact within ±2^53). Time carries seconds only (nanos 0, as Kubernetes), MicroTime microseconds.
import {listMeta} from '../api/meta.js'
import {apiVersionOf, type AnyObject, type KindDeclaration, type Schema} from '../api/types.js'
import {
  defaultApiVersion,
  listKinds,
  META_API_VERSION,
  partialObjectMetadataSchema,
  planOf,
  schemaForKind,
  type Plan,
} from './protobuf-schemas.js'
import {expectWire, formatTime, LEN, I64, parseTime, PROTOBUF_MAGIC, ProtobufError, Reader, VARINT, varintSize, Writer} from './protobuf-wire.js'

export {ProtobufError, PROTOBUF_MAGIC, WatchFrameReader} from './protobuf-wire.js'
export {
  deleteOptionsSchema,
  listSchemaOf,
  META_API_VERSION,
  metaSchemas,
  partialObjectMetadataListSchema,
  partialObjectMetadataSchema,
  statusSchema,
  tableSchema,
  watchEventSchema,
} from './protobuf-schemas.js'

/** empty contentEncoding (3) and contentType (4) closing every Unknown */
const UNKNOWN_TRAILER = Uint8Array.of(0x1a, 0x00, 0x22, 0x00)
const CHUNK = 64 * 1024
/** IntOrString, written whole as Kubernetes does: type 1 + intVal 0 before strVal; type 0 before intVal; strVal '' */
const INT_OR_STRING_STRING = Uint8Array.of(0x08, 0x01, 0x10, 0x00)
const INT_OR_STRING_INT = Uint8Array.of(0x08, 0x00)
const EMPTY_STR_VAL = Uint8Array.of(0x1a, 0x00)

// ---------- writing ----------

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function expected(what: string, value: unknown): ProtobufError {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
  return new ProtobufError(`expected ${what}, got ${got}`)
}

function writeFields(w: Writer, plan: Plan, value: Record<string, unknown>): void {
  for (const slot of plan.slots) {
    if (slot.embedded) {
      if (!slot.embedded.names.some((name) => value[name] !== undefined && value[name] !== null)) continue
      w.tag(slot.number, LEN)
      const start = w.begin()
      writeFields(w, slot.embedded, value)
      w.end(start)
      continue
    }
    const v = value[slot.name!]
    if (v === undefined || v === null) continue
    try {
      writeField(w, slot.number, slot.field!, v)
    } catch (error) {
      throw error instanceof ProtobufError ? error.within(slot.name!) : error
    }
  }
}

function writeField(w: Writer, number: number, schema: Schema, v: unknown): void {
  if (schema.type === 'array') {
    if (!Array.isArray(v)) throw expected('an array', v)
    for (let i = 0; i < v.length; i++) {
      try {
        writeOne(w, number, schema.items, v[i])
      } catch (error) {
        throw error instanceof ProtobufError ? error.within(`[${i}]`) : error
      }
    }
  } else if (schema.type === 'map') {
    if (!isRecord(v)) throw expected('an object', v)
    for (const key of Object.keys(v).sort()) {
      w.tag(number, LEN)
      const start = w.begin()
      w.tag(1, LEN)
      w.string(key)
      try {
        writeOne(w, 2, schema.values, v[key])
      } catch (error) {
        throw error instanceof ProtobufError ? error.within(key) : error
      }
      w.end(start)
    }
  } else {
    writeOne(w, number, schema, v)
  }
}

/** one value at `number`; null (an item of a list or map) as the type's zero value */
function writeOne(w: Writer, number: number, schema: Schema, v: unknown): void {
  switch (schema.type) {
    case 'string': {
      const s = v ?? ''
      if (typeof s !== 'string') throw expected('a string', v)
      w.tag(number, LEN)
      if (schema.format === 'byte') w.bytes(Buffer.from(s, 'base64'))
      else w.string(s)
      return
    }
    case 'integer': {
      const n = v ?? 0
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw expected('an integer', v)
      w.tag(number, VARINT)
      w.int(n)
      return
    }
    case 'number': {
      const n = v ?? 0
      if (typeof n !== 'number') throw expected('a number', v)
      w.tag(number, I64)
      w.double(n)
      return
    }
    case 'boolean': {
      const b = v ?? false
      if (typeof b !== 'boolean') throw expected('a boolean', v)
      w.tag(number, VARINT)
      w.uint(b ? 1 : 0)
      return
    }
  }
  w.tag(number, LEN)
  const start = w.begin()
  switch (schema.type) {
    case 'time':
      if (v !== null) {
        if (typeof v !== 'string') throw expected('an RFC 3339 time', v)
        const [seconds, nanos] = parseTime(v)
        w.tag(1, VARINT)
        w.int(seconds)
        w.tag(2, VARINT)
        w.int(schema.micro ? nanos - (nanos % 1000) : 0)
      }
      break
    case 'quantity': {
      const q = typeof v === 'number' ? String(v) : (v ?? '0')
      if (typeof q !== 'string') throw expected('a quantity', v)
      w.tag(1, LEN)
      w.string(q)
      break
    }
    case 'int-or-string':
      if (typeof v === 'string') {
        w.raw(INT_OR_STRING_STRING)
        w.tag(3, LEN)
        w.string(v)
      } else {
        const n = v ?? 0
        if (typeof n !== 'number' || !Number.isInteger(n)) throw expected('an integer or a string', v)
        w.raw(INT_OR_STRING_INT)
        w.tag(2, VARINT)
        w.int(n)
        w.raw(EMPTY_STR_VAL)
      }
      break
    case 'object':
      if (v !== null) {
        if (!isRecord(v)) throw expected('an object', v)
        writeFields(w, planOf(schema), v)
      }
      break
    case 'raw':
      w.tag(1, LEN)
      w.string(JSON.stringify(v) ?? 'null')
      break
    // a list or map in a value's place (map<string, ExtraValue>): a message holding it at 1
    case 'array':
    case 'map':
      if (v !== null) writeField(w, 1, schema, v)
      break
  }
  w.end(start)
}

/** magic + Unknown{typeMeta, raw = the object's message} into w */
function writeWrapped(w: Writer, declaration: KindDeclaration | undefined, object: AnyObject): void {
  const kind = object.kind ?? declaration?.kind
  if (!kind) throw new ProtobufError('the object has no kind')
  const schema = schemaForKind(declaration, kind)
  if (!schema) throw new ProtobufError(`no protobuf form for kind ${kind}`)
  w.raw(PROTOBUF_MAGIC)
  writeTypeMeta(w, object.apiVersion ?? defaultApiVersion(declaration, kind), kind)
  w.tag(2, LEN)
  const start = w.begin()
  // a list's ListMeta is written even when empty, as Kubernetes does
  writeFields(w, planOf(schema), listKinds.has(schema) && object.metadata == null ? {...object, metadata: {}} : object)
  w.end(start)
  w.raw(UNKNOWN_TRAILER)
}

function writeTypeMeta(w: Writer, apiVersion: string, kind: string): void {
  w.tag(1, LEN)
  const start = w.begin()
  w.tag(1, LEN)
  w.string(apiVersion)
  w.tag(2, LEN)
  w.string(kind)
  w.end(start)
}

/**
 * An object in Kubernetes' protobuf wire form: a kind of `declaration`, its `<Kind>List`, or a meta/v1
 * kind (Status, Table, PartialObjectMetadata, PartialObjectMetadataList, DeleteOptions), by object.kind.
 */
export function encodeObject(declaration: KindDeclaration | undefined, object: AnyObject): Uint8Array {
  const w = new Writer(1024)
  writeWrapped(w, declaration, object)
  return w.finish()
}

/** The object's own message (no magic, no Unknown envelope): for messages that embed it, such as the
 *  agent's pod-info responses, which carry a core/v1 Pod. */
export function encodeMessage(declaration: KindDeclaration, object: AnyObject): Uint8Array {
  const w = new Writer(1024)
  writeFields(w, planOf(declaration.schema), object)
  return w.finish()
}

/** The reverse of encodeMessage. */
export function decodeMessage(declaration: KindDeclaration, bytes: Uint8Array): AnyObject {
  try {
    const object: AnyObject = {apiVersion: apiVersionOf(declaration), kind: declaration.kind}
    readFields(new Reader(bytes, 0, bytes.length), planOf(declaration.schema), object)
    return object
  } catch (error) {
    return decodeError(error)
  }
}

/**
 * A `<Kind>List` in pieces for streaming: the items are encoded one by one (each needs its size before the
 * Unknown header can be written, as in Kubernetes' streaming list encoder), then handed out in chunks of
 * about 64 KiB, never joined into one buffer. The chunks together equal encodeObject of the list.
 */
export function encodeListChunks(declaration: KindDeclaration, meta: Record<string, unknown> | undefined, items: readonly AnyObject[]): Iterable<Uint8Array> {
  return listChunks(apiVersionOf(declaration), `${declaration.kind}List`, planOf(declaration.schema), meta, items)
}

/** A PartialObjectMetadataList in pieces, as encodeListChunks */
export function encodePartialObjectMetadataListChunks(meta: Record<string, unknown> | undefined, items: readonly AnyObject[]): Iterable<Uint8Array> {
  return listChunks(META_API_VERSION, 'PartialObjectMetadataList', planOf(partialObjectMetadataSchema), meta, items)
}

/** list items' messages by object (objects of a watch cache never change: a new version is a new object) */
const encodedItems = new WeakMap<AnyObject, {plan: Plan; data: Uint8Array}>()

function* listChunks(apiVersion: string, kind: string, plan: Plan, meta: Record<string, unknown> | undefined, items: readonly AnyObject[]): Generator<Uint8Array> {
  const scratch = new Writer(4096)
  const encode = (p: Plan, value: AnyObject): Uint8Array => {
    scratch.pos = 0
    writeFields(scratch, p, value)
    return Buffer.from(scratch.finish())
  }
  const encoded: Array<Uint8Array | undefined> = []
  let size = 0
  for (let i = 0; i < items.length; i++) {
    if (!isRecord(items[i])) throw expected('an object', items[i]).within(`items[${i}]`)
    try {
      // an object of the server's watch cache is encoded once however many lists send it
      let bytes = encodedItems.get(items[i])
      if (!bytes || bytes.plan !== plan) {
        bytes = {plan, data: encode(plan, items[i])}
        encodedItems.set(items[i], bytes)
      }
      encoded.push(bytes.data)
    } catch (error) {
      throw error instanceof ProtobufError ? error.within(`items[${i}]`) : error
    }
    size += 1 + varintSize(encoded[i]!.length) + encoded[i]!.length
  }
  const metaBytes = encode(planOf(listMeta), meta ?? {})
  size += 1 + varintSize(metaBytes.length) + metaBytes.length

  let chunk = new Writer(CHUNK + 1024)
  chunk.raw(PROTOBUF_MAGIC)
  writeTypeMeta(chunk, apiVersion, kind)
  chunk.tag(2, LEN)
  chunk.uint(size)
  chunk.tag(1, LEN)
  chunk.bytes(metaBytes)
  for (let i = 0; i < encoded.length; i++) {
    const item = encoded[i]!
    encoded[i] = undefined
    chunk.tag(2, LEN)
    chunk.uint(item.length)
    if (item.length >= CHUNK) {
      yield chunk.finish()
      yield item
      chunk = new Writer(CHUNK + 1024)
      continue
    }
    chunk.raw(item)
    if (chunk.pos >= CHUNK) {
      yield chunk.finish()
      chunk = new Writer(CHUNK + 1024)
    }
  }
  chunk.raw(UNKNOWN_TRAILER)
  yield chunk.finish()
}

// ---------- reading ----------

/** set a property, even one named __proto__ */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, {value, enumerable: true, writable: true, configurable: true})
  else target[key] = value
}

function readFields(r: Reader, plan: Plan, target: Record<string, unknown>): void {
  while (r.pos < r.end) {
    const tag = r.uint32()
    const number = tag >>> 3
    const wireType = tag & 7
    if (number === 0) throw new ProtobufError('invalid field number 0')
    const slot = plan.byNumber.get(number)
    if (!slot) {
      r.skip(wireType, number)
    } else if (slot.embedded) {
      expectWire(wireType, LEN)
      const end = r.end
      const length = r.length()
      r.end = r.pos + length
      readFields(r, slot.embedded, target)
      r.end = end
    } else {
      try {
        readField(r, wireType, slot.field!, slot.name!, target)
      } catch (error) {
        throw error instanceof ProtobufError ? error.within(slot.name!) : error
      }
    }
  }
  if (plan.omitZero) for (const name of plan.omitZero) if (target[name] === '' || target[name] === 0) delete target[name]
}

const packable = (s: Schema) => s.type === 'integer' || s.type === 'boolean' || s.type === 'number'

function readField(r: Reader, wireType: number, schema: Schema, name: string, target: Record<string, unknown>): void {
  if (schema.type === 'array') {
    const list = Array.isArray(target[name]) ? (target[name] as unknown[]) : []
    put(target, name, list)
    if (wireType === LEN && packable(schema.items)) {
      const wire = schema.items.type === 'number' ? I64 : VARINT
      r.message(() => {
        while (r.pos < r.end) list.push(readOne(r, wire, schema.items, undefined))
      })
    } else {
      try {
        list.push(readOne(r, wireType, schema.items, undefined))
      } catch (error) {
        throw error instanceof ProtobufError ? error.within(`[${list.length}]`) : error
      }
    }
  } else if (schema.type === 'map') {
    expectWire(wireType, LEN)
    const map = isRecord(target[name]) ? (target[name] as Record<string, unknown>) : {}
    put(target, name, map)
    let key = ''
    let value: unknown = undefined
    r.message(() =>
      r.fields((number, wire) => {
        if (number === 1) {
          expectWire(wire, LEN)
          key = r.string()
        } else if (number === 2) {
          value = readOne(r, wire, schema.values, undefined)
        } else {
          r.skip(wire, number)
        }
      }),
    )
    put(map, key, value === undefined ? zeroValue(schema.values) : value)
  } else {
    put(target, name, readOne(r, wireType, schema, target[name]))
  }
}

function zeroValue(schema: Schema): unknown {
  switch (schema.type) {
    case 'string':
      return ''
    case 'integer':
    case 'number':
      return 0
    case 'boolean':
      return false
    case 'quantity':
      return '0'
    case 'int-or-string':
      return 0
    case 'object':
    case 'map':
      return {}
    case 'array':
      return []
    default:
      return null
  }
}

function readOne(r: Reader, wireType: number, schema: Schema, existing: unknown): unknown {
  switch (schema.type) {
    case 'string':
      expectWire(wireType, LEN)
      return schema.format === 'byte' ? r.bytes().toString('base64') : r.string()
    case 'integer':
      expectWire(wireType, VARINT)
      return schema.format === 'int32' ? r.varint() | 0 : r.int64()
    case 'boolean':
      expectWire(wireType, VARINT)
      return r.varint() !== 0 || r.hi !== 0
    case 'number':
      expectWire(wireType, I64)
      r.advance(8)
      return r.buf.readDoubleLE(r.pos - 8)
  }
  expectWire(wireType, LEN)
  const end = r.end
  const length = r.length()
  r.end = r.pos + length
  const value = readMessage(r, schema, existing)
  if (r.pos !== r.end) throw new ProtobufError('malformed message')
  r.end = end
  return value
}

/** the message of a time, quantity, int-or-string, struct, raw extension or list holder */
function readMessage(r: Reader, schema: Schema, existing: unknown): unknown {
  switch (schema.type) {
    case 'time': {
      if (r.pos === r.end) return null
      let seconds = 0
      let nanos = 0
      r.fields((number, wire) => {
        if (number === 1 && wire === VARINT) seconds = r.int64()
        else if (number === 2 && wire === VARINT) nanos = r.varint() | 0
        else r.skip(wire, number)
      })
      return formatTime(seconds, schema.micro ? nanos : 0, schema.micro ?? false)
    }
    case 'quantity': {
      let q = '0'
      r.fields((number, wire) => (number === 1 && wire === LEN ? (q = r.string()) : r.skip(wire, number)))
      return q
    }
    case 'int-or-string': {
      let type = 0
      let intVal = 0
      let strVal = ''
      r.fields((number, wire) => {
        if (number === 1 && wire === VARINT) type = r.int64()
        else if (number === 2 && wire === VARINT) intVal = r.varint() | 0
        else if (number === 3 && wire === LEN) strVal = r.string()
        else r.skip(wire, number)
      })
      return type === 1 ? strVal : intVal
    }
    case 'object': {
      const target = isRecord(existing) ? existing : {}
      readFields(r, planOf(schema), target)
      return target
    }
    case 'raw': {
      let raw: Buffer | undefined
      r.fields((number, wire) => (number === 1 && wire === LEN ? (raw = r.bytes()) : r.skip(wire, number)))
      if (!raw || raw.length === 0) return null
      try {
        return JSON.parse(raw.toString('utf8'))
      } catch {
        throw new ProtobufError('raw bytes that are not JSON')
      }
    }
    default: {
      // array or map in a value's place: the message holds it at 1
      const holder: Record<string, unknown> = {}
      r.fields((number, wire) => (number === 1 ? readField(r, wire, schema, 'value', holder) : r.skip(wire, number)))
      return holder.value ?? zeroValue(schema)
    }
  }
}

function decodeError(error: unknown): never {
  if (error instanceof ProtobufError) {
    error.message = `error decoding protobuf: ${error.message}`
    throw error
  }
  throw error
}

/**
 * An object from Kubernetes' protobuf wire form: a kind of `declaration`, its list, or a meta/v1 kind, as
 * the data's type meta says (empty type meta: the declaration's kind). apiVersion and kind come first.
 * Throws ProtobufError for a missing prefix, truncated or malformed data, or a kind it cannot read here.
 */
/** apiVersion and kind from a wrapped body's runtime.Unknown, without decoding the rest. */
export function readTypeMeta(bytes: Uint8Array): {apiVersion: string; kind: string} {
  if (bytes.length < 4 || PROTOBUF_MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new ProtobufError('the data does not start with the protobuf prefix 6b 38 73 00')
  }
  const r = new Reader(bytes, 4, bytes.length)
  let apiVersion = ''
  let kind = ''
  r.fields((number, wire) => {
    if (number === 1 && wire === LEN) {
      r.message(() =>
        r.fields((n, w) => {
          if (n === 1 && w === LEN) apiVersion = r.string()
          else if (n === 2 && w === LEN) kind = r.string()
          else r.skip(w, n)
        }),
      )
    } else r.skip(wire, number)
  })
  return {apiVersion, kind}
}

export function decodeObject(declaration: KindDeclaration | undefined, bytes: Uint8Array): AnyObject {
  try {
    if (bytes.length === 0) throw new ProtobufError('empty data')
    if (bytes.length < 4 || PROTOBUF_MAGIC.some((b, i) => bytes[i] !== b)) {
      throw new ProtobufError('the data does not start with the protobuf prefix 6b 38 73 00')
    }
    if (bytes.length === 4) throw new ProtobufError('empty body after the protobuf prefix')
    const r = new Reader(bytes, 4, bytes.length)
    let apiVersion = ''
    let kind = ''
    let raw: [number, number] = [0, 0]
    let contentEncoding = ''
    r.fields((number, wire) => {
      if (number === 1 && wire === LEN) {
        r.message(() =>
          r.fields((n, w) => {
            if (n === 1 && w === LEN) apiVersion = r.string()
            else if (n === 2 && w === LEN) kind = r.string()
            else r.skip(w, n)
          }),
        )
      } else if (number === 2 && wire === LEN) {
        const length = r.length()
        raw = [r.pos, r.pos + length]
        r.pos += length
      } else if (number === 3 && wire === LEN) {
        contentEncoding = r.string()
      } else {
        r.skip(wire, number)
      }
    })
    if (contentEncoding !== '') throw new ProtobufError(`unsupported content encoding ${JSON.stringify(contentEncoding)}`)
    kind ||= declaration?.kind ?? ''
    if (!kind) throw new ProtobufError('the data names no kind')
    const schema = schemaForKind(declaration, kind)
    if (!schema) throw new ProtobufError(`kind ${kind} cannot be read here${declaration ? ` (expected ${declaration.kind})` : ''}`)
    const object: AnyObject = {apiVersion: apiVersion || defaultApiVersion(declaration, kind), kind}
    readFields(new Reader(bytes, raw[0], raw[1]), planOf(schema), object)
    if (listKinds.has(schema)) {
      object.metadata ??= {}
      object.items ??= []
    }
    return object
  } catch (error) {
    return decodeError(error)
  }
}

// ---------- watch ----------

export interface WatchEvent {
  type: string
  object: AnyObject
}

function writeWatchEvent(w: Writer, declaration: KindDeclaration | undefined, event: WatchEvent): void {
  w.tag(1, LEN)
  w.string(event.type)
  w.tag(2, LEN)
  const outer = w.begin()
  w.tag(1, LEN)
  const inner = w.begin()
  writeWrapped(w, declaration, event.object)
  w.end(inner)
  w.end(outer)
}

/** a WatchEvent message (unwrapped, as Kubernetes' stream serializer writes it; object.raw is wrapped) */
export function encodeWatchEvent(declaration: KindDeclaration | undefined, event: WatchEvent): Uint8Array {
  const w = new Writer(1024)
  writeWatchEvent(w, declaration, event)
  return w.finish()
}

/** one frame of a protobuf watch stream: a 4-byte big-endian length, then the WatchEvent message */
export function frameWatchEvent(declaration: KindDeclaration | undefined, event: WatchEvent): Uint8Array {
  const w = new Writer(1024)
  w.pos = 4
  writeWatchEvent(w, declaration, event)
  w.buf.writeUInt32BE(w.pos - 4, 0)
  return w.finish()
}

/** a WatchEvent message (a frame's payload) */
export function decodeWatchEvent(declaration: KindDeclaration | undefined, message: Uint8Array): WatchEvent {
  let type = ''
  let object: Uint8Array | undefined
  try {
    const r = new Reader(message, 0, message.length)
    r.fields((number, wire) => {
      if (number === 1 && wire === LEN) type = r.string()
      else if (number === 2 && wire === LEN) r.message(() => r.fields((n, w) => (n === 1 && w === LEN ? (object = r.bytes()) : r.skip(w, n))))
      else r.skip(wire, number)
    })
    if (!object) throw new ProtobufError('watch event without an object')
  } catch (error) {
    return decodeError(error)
  }
  return {type, object: decodeObject(declaration, object)}
}
