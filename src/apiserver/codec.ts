// Request bodies in, responses out: JSON and YAML (protobuf and CBOR plug in here), with views,
// pretty printing and gzip.
import type {IncomingMessage, ServerResponse} from 'node:http'
import {gzipSync} from 'node:zlib'
import * as yaml from 'js-yaml'
import {errors} from '../machinery/status.js'
import {mediaTypeOf} from '../machinery/negotiation.js'

export const JSON_TYPE = 'application/json'
export const YAML_TYPE = 'application/yaml'
export const SERVED_MEDIA_TYPES = [JSON_TYPE, YAML_TYPE] as const
export type ServedMediaType = (typeof SERVED_MEDIA_TYPES)[number]

/** default request body limit, as Kubernetes' 3 MiB */
export const MAX_BODY_BYTES = 3 * 1024 * 1024

export async function readBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? NaN)
  if (declared > limit) {
    request.resume()
    throw errors.tooLarge(`the request body is ${declared} bytes, over the limit of ${limit} bytes`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > limit) {
      request.resume()
      throw errors.tooLarge(`the request body is over the limit of ${limit} bytes`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** Decodes a JSON or YAML body. 415 for other media types, 400 when it does not parse. */
export function decodeBody(body: Buffer, contentType: string | undefined, accepted: readonly string[] = SERVED_MEDIA_TYPES): unknown {
  const type = mediaTypeOf(contentType) || JSON_TYPE
  if (!accepted.includes(type)) throw errors.unsupportedMediaType(type, [...accepted])
  const text = body.toString('utf8')
  if (text.trim() === '') throw errors.badRequest('the request body is empty')
  if (type === YAML_TYPE || type === 'application/apply-patch+yaml') {
    try {
      return yaml.load(text, {schema: yaml.JSON_SCHEMA, json: true})
    } catch (error) {
      throw errors.badRequest(`error decoding YAML: ${(error as Error).message.split('\n')[0]}`)
    }
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw errors.badRequest(`error decoding JSON: ${(error as Error).message}`)
  }
}

export function encodeBody(value: unknown, mediaType: string, pretty: boolean): Buffer {
  if (mediaType === YAML_TYPE) return Buffer.from(yaml.dump(value, {noRefs: true, lineWidth: -1}))
  return Buffer.from(pretty ? JSON.stringify(value, null, 2) + '\n' : JSON.stringify(value) + '\n')
}

export interface SendOptions {
  mediaType: string
  pretty?: boolean
  /** compress: a get or list whose client accepts gzip, with APIResponseCompression on */
  gzip?: boolean
  headers?: Record<string, string>
}

export function send(response: ServerResponse, code: number, value: unknown, options: SendOptions): void {
  let body = encodeBody(value, options.mediaType, options.pretty ?? false)
  const headers: Record<string, string | number> = {
    'Content-Type': options.mediaType,
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
