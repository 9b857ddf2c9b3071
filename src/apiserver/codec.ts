// Request bodies in, responses out, through the negotiated serializer, with pretty printing and gzip.
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AnyObject, KindDeclaration} from '../api/types.js'
import {gzipSync} from 'node:zlib'
import {mediaTypeOf} from '../machinery/negotiation.js'
import {scanJsonText, type NumberLiteralAt} from '../machinery/field-validation.js'
import {jsonPatchNumbers} from '../machinery/patch.js'
import {errors} from '../machinery/status.js'
import {JSON_TYPE, jsonSerializer, type Serializer, type SerializerSet} from './serializers.js'

export {JSON_TYPE, YAML_TYPE, CBOR_TYPE} from './serializers.js'

export const JSON_PATCH = 'application/json-patch+json'
export const MERGE_PATCH = 'application/merge-patch+json'
export const STRATEGIC_PATCH = 'application/strategic-merge-patch+json'

/** default request body limit, as Kubernetes' 3 MiB */
export const MAX_BODY_BYTES = 3 * 1024 * 1024

/** The whole request body; 413 past the limit (the rest is read and dropped), in limitedReadBody's words. Plain stream events,
 *  not an async iterator: this runs for every write, and the iterator costs several µs each time. */
export function readBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? NaN)
  if (declared > limit) {
    request.resume()
    return Promise.reject(errors.tooLarge(`Request entity too large: limit is ${limit}`))
  }
  // a request already gone would never end
  if (request.destroyed || request.readableEnded) return Promise.reject(errors.badRequest('the request body was already read or the request has ended'))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      chunks.length = 0
      reject(error)
    }
    request.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > limit) fail(errors.tooLarge(`Request entity too large: limit is ${limit}`))
      else chunks.push(chunk)
    })
    request.once('end', () => {
      if (settled) return
      settled = true
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    })
    request.once('error', fail)
    // 'close' comes after every request; an Error (its stack trace costs µs) only when it came first
    request.once('close', () => settled || fail(new Error('the request ended before its body was read')))
  })
}

/** Decodes a body in the serializer its Content-Type names (JSON when absent). 415 for others. */
export function decodeBody(body: Buffer, contentType: string | undefined, serializers: SerializerSet, declaration?: KindDeclaration): unknown {
  const type = mediaTypeOf(contentType) || JSON_TYPE
  const serializer = serializers.byMediaType(type)
  if (!serializer) throw errors.unsupportedMediaType(type, serializers.all.map((s) => s.mediaType))
  if (body.length === 0 || (serializer.mediaType !== 'application/cbor' && onlyWhiteSpace(body))) {
    throw errors.badRequest('the request body is empty')
  }
  const decoded = serializer.decode(body, declaration)
  assertNestingDepth(decoded)
  return decoded
}

/**
 * How deep a request body may nest. Kubernetes' decoders stop at 10,000 levels; orch's code walks
 * objects recursively (patches, managedFields, encoders), and past ~2,000 levels a later patch or a
 * YAML read of the stored object would overflow the stack, so orch stops at 1,000 — far beyond any
 * real object — rather than store what it could not serve.
 */
export const MAX_NESTING_DEPTH = 1000

/** 400, worded as Go's JSON scanner words it, for a body nested deeper than MAX_NESTING_DEPTH (the
 *  recursion stops at that depth, which the stack holds easily). */
export function assertNestingDepth(value: unknown): void {
  const opener = tooDeep(value, 1)
  if (opener !== undefined) throw errors.badRequest(`invalid character '${opener}' exceeded max depth`)
}

/** the opening character of the first value found past MAX_NESTING_DEPTH, or undefined */
function tooDeep(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return undefined
  if (depth > MAX_NESTING_DEPTH) return Array.isArray(value) ? '[' : '{'
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = tooDeep(item, depth + 1)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const key in value) {
    const found = tooDeep((value as Record<string, unknown>)[key], depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

export interface SendOptions {
  serializer?: Serializer
  /** the kind served, for encodings that need its schema (protobuf) */
  declaration?: KindDeclaration
  /** the value is already the encoded body (a Buffer) */
  preEncoded?: boolean
  pretty?: boolean
  /** compress: a get or list whose client accepts gzip, with APIResponseCompression on */
  gzip?: boolean
  headers?: Record<string, string>
}

export function encodeBody(value: unknown, serializer: Serializer, pretty: boolean, declaration?: KindDeclaration): Buffer {
  if (pretty && serializer.mediaType === JSON_TYPE) return Buffer.from(JSON.stringify(value, null, 2) + '\n')
  return serializer.encode(value, declaration)
}

export function send(response: ServerResponse, code: number, value: unknown, options: SendOptions = {}): void {
  const serializer = options.serializer ?? jsonSerializer
  // protobuf lists go out item by item, never as one copy of the whole list
  const list = value as {kind?: string; metadata?: Record<string, unknown>; items?: AnyObject[]}
  if (serializer.encodeListChunks && options.declaration && !options.gzip && list.kind === `${options.declaration.kind}List` && Array.isArray(list.items)) {
    response.writeHead(code, {'Content-Type': serializer.mediaType, 'Cache-Control': 'no-cache, private', ...options.headers})
    for (const chunk of serializer.encodeListChunks(options.declaration, list.metadata, list.items)) response.write(chunk)
    response.end()
    return
  }
  let body = options.preEncoded ? (value as Buffer) : encodeBody(value, serializer, options.pretty ?? false, options.declaration)
  const headers: Record<string, string | number> = {
    'Content-Type': serializer.mediaType,
    'Cache-Control': 'no-cache, private',
    ...options.headers,
  }
  if (options.gzip) {
    body = gzipSync(body)
    headers['Content-Encoding'] = 'gzip'
    headers['Vary'] = 'Accept-Encoding'
  }
  headers['Content-Length'] = body.length
  response.writeHead(code, headers)
  response.end(body)
}

export function acceptsGzip(request: IncomingMessage): boolean {
  const header = request.headers['accept-encoding']
  if (!header) return false
  return String(header)
    .split(',')
    .some((part) => {
      const [name, ...params] = part.trim().split(';')
      return name.trim().toLowerCase() === 'gzip' && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))
    })
}

function onlyWhiteSpace(body: Buffer): boolean {
  for (const byte of body) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false
  return true
}

/** A body in JSON: its Content-Type says so, or names no media type (JSON is the default). */
export function isJsonBody(contentType: string | undefined): boolean {
  return (mediaTypeOf(contentType) || JSON_TYPE) === JSON_TYPE
}

/** The numbers of a body in JSON text (a JSON body, a merge patch, a JSON patch) whose text JSON.parse
 *  does not keep (none for other encodings). */
export function writtenNumbers(raw: Buffer, contentType: string | undefined): NumberLiteralAt[] {
  const type = mediaTypeOf(contentType) || JSON_TYPE
  return type === JSON_TYPE || type === MERGE_PATCH || type === JSON_PATCH ? scanJsonText(raw.toString('utf8')).numberLiterals : []
}

/** Where the numbers a merge or JSON patch writes land in the patched object, with their text (Kubernetes'
 *  json-patch library keeps it): a merge patch's at their own paths, a JSON patch's where its operations
 *  put them. A strategic merge patch's are decoded before it is applied: their text only tells how its
 *  422 prints the patch, so they are given at their paths in the patch. None for apply patches. */
export function patchNumbersOf(contentType: string | undefined, patch: unknown, raw: Buffer): NumberLiteralAt[] {
  const type = mediaTypeOf(contentType)
  if (type === MERGE_PATCH) return writtenNumbers(raw, type)
  if (type === STRATEGIC_PATCH) return writtenNumbers(raw, JSON_TYPE)
  if (type === JSON_PATCH) return jsonPatchNumbers(patch, writtenNumbers(raw, type))
  return []
}
