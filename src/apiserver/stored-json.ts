// Objects as stored, and their JSON. An object's JSON is computed at most once: stored JSON begins
// apiVersion, kind, metadata, so the response to a write, a list or a watch event can send the stored
// bytes with metadata.resourceVersion spliced in instead of serialising the object again.
import type {AnyObject} from '../api/types.js'
import {asBuffer} from '../machinery/bytes.js'
import type {KeyValue} from '../storage/index.js'

/** The bytes to store for an object: apiVersion, kind and metadata first, without resourceVersion
 *  (the store's revision is the version) or selfLink. */
export function encodeStored(object: AnyObject): Buffer {
  const {resourceVersion: _rv, selfLink: _sl, ...metadata} = object.metadata ?? {}
  const {apiVersion, kind, metadata: _m, ...rest} = object
  return Buffer.from(JSON.stringify({apiVersion, kind, metadata, ...rest}))
}

/** The object a stored value holds, with resourceVersion set to its revision. */
export function decodeStored(kv: KeyValue): AnyObject {
  const object = JSON.parse(asBuffer(kv.value).toString('utf8')) as AnyObject
  object.metadata ??= {}
  object.metadata.resourceVersion = String(kv.modRevision)
  return object
}

/** decodeStored for objects that are shared and never changed (the watch cache's): their JSON is
 *  then taken from the stored bytes when asked for (jsonOf). */
export function decodeStoredShared(kv: KeyValue): AnyObject {
  const object = decodeStored(kv)
  rememberStored(object, kv.value, kv.modRevision)
  return object
}

const METADATA_KEY = Buffer.from('"metadata":{')
const LEADING_TYPE_META = /^\{"apiVersion":"[^"\\]*","kind":"[^"\\]*",$/

/** The stored JSON with metadata.resourceVersion put in, as bytes; undefined when the stored bytes
 *  are not laid out as encodeStored writes them (then the caller serialises the object). */
export function storedWithVersion(value: Uint8Array, revision: number): Buffer | undefined {
  const bytes = asBuffer(value)
  // a stored value cut short (damaged on disk) is not copied into an answer as is: the caller decodes
  // it instead, and its decode error fails the request as Kubernetes' list fails
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x7d) return undefined
  const at = bytes.indexOf(METADATA_KEY)
  if (at < 0 || at > 512 || !LEADING_TYPE_META.test(bytes.toString('latin1', 0, at))) return undefined
  const cut = at + METADATA_KEY.length
  const empty = bytes[cut] === 0x7d // '}'
  return Buffer.concat([bytes.subarray(0, cut), Buffer.from(`"resourceVersion":"${revision}"${empty ? '' : ','}`), bytes.subarray(cut)])
}

/** the stored value and revision an unchanged object was decoded from or encoded to */
const storedBytesOf = new WeakMap<AnyObject, Pick<KeyValue, 'value' | 'modRevision'>>()
const jsonOfObject = new WeakMap<AnyObject, Buffer>()

/** Records that `object` (with metadata.resourceVersion = revision) is exactly what `value` holds. The
 *  object must not change afterwards: jsonOf answers from these bytes. */
export function rememberStored(object: AnyObject, value: Uint8Array, revision: number): void {
  storedBytesOf.set(object, {value, modRevision: revision})
}

/** The JSON bytes of an object that no longer changes, computed once however many lists, watchers
 *  and responses send it: from its stored bytes when they are known, else by serialising it. */
export function jsonOf(object: AnyObject): Buffer {
  let bytes = jsonOfObject.get(object)
  if (bytes === undefined) {
    const stored = storedBytesOf.get(object)
    bytes = (stored && storedWithVersion(stored.value, stored.modRevision)) ?? Buffer.from(JSON.stringify(object))
    jsonOfObject.set(object, bytes)
  }
  return bytes
}
