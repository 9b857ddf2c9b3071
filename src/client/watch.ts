// Watches: GET ...?watch=1 answers a chunked stream of JSON objects {"type": ..., "object": ...}. The
// server ends each with a newline, but chunk boundaries fall anywhere (inside an object, inside a UTF-8
// character) and one chunk may hold several events, so the decoder finds object boundaries itself. An
// ERROR event carries a Status (410 Expired/Gone when the resourceVersion is too old) and ends the watch.
// A client whose wire is protobuf or CBOR asks for that encoding; the stream is decoded by the Content-Type
// the server answers: length-prefixed protobuf WatchEvent frames, a CBOR sequence, or JSON objects.
import {allDeclarations} from '../api/index.js'
import type {AnyObject, KindDeclaration} from '../api/types.js'
import {CborSequenceReader} from '../machinery/cbor.js'
import {decodeWatchEvent, WatchFrameReader} from '../machinery/protobuf.js'
import {ApiStatusError, asStatus, resourcePath, WIRE_ACCEPT, type ResourceLocator, type RestClient, type Wire} from './rest.js'

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

export interface WatchEvent<T = AnyObject> {
  type: WatchEventType
  object: T
}

export interface WatchOptions {
  resourceVersion?: string
  labelSelector?: string
  fieldSelector?: string
  allowWatchBookmarks?: boolean
  sendInitialEvents?: boolean
  resourceVersionMatch?: string
  timeoutSeconds?: number
  /** an `accept` here wins over the wire's */
  headers?: Record<string, string>
  /** the encoding to ask for (default: the client's wire) */
  wire?: Wire
}

export interface WatchHandlers<T = AnyObject> {
  /** each event but ERROR, in order; a returned promise is awaited before the next event */
  onEvent(event: WatchEvent<T>): void | Promise<void>
  /** an ERROR event (as ApiStatusError), a failed request, or a broken stream; the watch is over */
  onError?(error: Error): void
  /** the watch is over, for whatever reason (called after onError) */
  onClose?(): void
}

export interface WatchHandle {
  /** ends the watch; done then resolves */
  stop(): void
  /** resolves when the watch is over: stopped, ended by the server, or failed (the failure went to
   *  onError; without onError, done rejects with it) */
  done: Promise<void>
}

/** Splits a byte stream into top-level JSON values, whatever the chunking. */
export class JsonStreamDecoder {
  private buffer: Buffer = Buffer.alloc(0)
  /** scan state, kept between pushes so a long object is not scanned again */
  private pos = 0
  private depth = 0
  private inString = false
  private escaped = false
  private start = -1

  /** Adds bytes; returns the values completed by them. */
  push(chunk: Uint8Array): unknown[] {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk])
    const out: unknown[] = []
    const b = this.buffer
    for (; this.pos < b.length; this.pos++) {
      const c = b[this.pos]
      if (this.start < 0) {
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
        if (c !== 0x7b) throw new Error(`watch stream: expected a JSON object, got ${JSON.stringify(String.fromCharCode(c))}`)
        this.start = this.pos
        this.depth = 1
        continue
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === 0x5c) this.escaped = true
        else if (c === 0x22) this.inString = false
        continue
      }
      if (c === 0x22) this.inString = true
      else if (c === 0x7b || c === 0x5b) this.depth++
      else if (c === 0x7d || c === 0x5d) {
        this.depth--
        if (this.depth === 0) {
          const text = b.subarray(this.start, this.pos + 1).toString('utf8')
          try {
            out.push(JSON.parse(text))
          } catch (e) {
            throw new Error(`watch stream: invalid JSON object: ${(e as Error).message}`)
          }
          this.start = -1
        }
      }
    }
    // drop what has been consumed
    const keepFrom = this.start < 0 ? this.pos : this.start
    if (keepFrom > 0) {
      this.buffer = this.buffer.subarray(keepFrom)
      this.pos -= keepFrom
      if (this.start >= 0) this.start -= keepFrom
    }
    return out
  }

  /** The stream ended: an error when it ended inside an object. */
  end(): void {
    if (this.start >= 0) throw new Error('watch stream ended inside an event')
  }
}

const eventTypes = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'])

/** Turns the chunks of a watch stream into event values ({type, object}), in the stream's encoding. */
export interface WatchStreamDecoder {
  push(chunk: Uint8Array): unknown[]
  /** the stream ended: an error when it ended inside an event */
  end(): void
}

function declarationOf(locator: Pick<ResourceLocator, 'group' | 'version' | 'resource'>): KindDeclaration | undefined {
  return allDeclarations.find((d) => d.group === locator.group && d.version === locator.version && d.resource === locator.resource)
}

/**
 * The decoder for a watch stream of this Content-Type: protobuf frames (`application/vnd.orch.protobuf;
 * stream=watch`, decoded with the schema of the locator's kind), a CBOR sequence (`application/cbor-seq`),
 * else JSON objects.
 */
export function watchStreamDecoder(contentType: string | undefined, locator: Pick<ResourceLocator, 'group' | 'version' | 'resource'>): WatchStreamDecoder {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  if (type === 'application/vnd.orch.protobuf' || type === 'application/vnd.kubernetes.protobuf') {
    const frames = new WatchFrameReader()
    const declaration = declarationOf(locator)
    return {
      push: (chunk) => frames.push(chunk).map((frame) => decodeWatchEvent(declaration, frame)),
      end() {
        if (frames.buffered > 0) throw new Error('watch stream ended inside an event')
      },
    }
  }
  if (type === 'application/cbor-seq' || type === 'application/cbor') {
    const items = new CborSequenceReader()
    return {
      push: (chunk) => items.push(chunk),
      end() {
        if (items.buffered > 0) throw new Error('watch stream ended inside an event')
      },
    }
  }
  return new JsonStreamDecoder()
}

function toEvent<T>(value: unknown): WatchEvent<T> {
  const v = value as AnyObject
  if (typeof v !== 'object' || v === null || typeof v.type !== 'string' || !eventTypes.has(v.type)) {
    throw new Error(`watch stream: not a watch event: ${JSON.stringify(value).slice(0, 200)}`)
  }
  return {type: v.type as WatchEventType, object: v.object as T}
}

/** The Status of an ERROR event as an ApiStatusError (500 when the object is no Status). */
export function watchErrorOf(object: unknown): ApiStatusError {
  const status = asStatus(object)
  if (status) {
    if (!status.code) status.code = 500
    return new ApiStatusError(status)
  }
  return ApiStatusError.fromResponse(500, JSON.stringify(object ?? null))
}

function isAbort(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (error as Error)?.name === 'AbortError'
}

/**
 * The events of a watch as an async iterator. An ERROR event is thrown as ApiStatusError; a non-2xx
 * answer to the watch request likewise. Breaking out of the loop (or aborting `signal`) ends the request.
 */
export async function* watchEvents<T = AnyObject>(
  client: RestClient,
  locator: ResourceLocator,
  options: WatchOptions = {},
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const controller = new AbortController()
  const abort = () => controller.abort()
  if (signal?.aborted) return
  signal?.addEventListener('abort', abort, {once: true})
  const wire = options.wire ?? client.wire
  const hasAccept = Object.keys(options.headers ?? {}).some((key) => key.toLowerCase() === 'accept')
  try {
    let response
    try {
      response = await client.stream({
        method: 'GET',
        path: resourcePath({...locator, name: undefined, subresource: undefined}),
        query: {
          watch: 1,
          resourceVersion: options.resourceVersion,
          resourceVersionMatch: options.resourceVersionMatch || undefined,
          labelSelector: options.labelSelector || undefined,
          fieldSelector: options.fieldSelector || undefined,
          allowWatchBookmarks: options.allowWatchBookmarks ? 'true' : undefined,
          sendInitialEvents: options.sendInitialEvents === undefined ? undefined : String(options.sendInitialEvents),
          timeoutSeconds: options.timeoutSeconds,
        },
        accept: wire !== 'json' && !hasAccept ? WIRE_ACCEPT[wire] : undefined,
        headers: options.headers,
        signal: controller.signal,
        timeoutMs: 0,
      })
    } catch (e) {
      if (isAbort(e, controller.signal)) return
      throw e
    }
    if (response.status < 200 || response.status > 299) {
      const body = Buffer.from(await response.body.arrayBuffer())
      const contentType = response.headers['content-type']
      throw ApiStatusError.fromResponse(response.status, body, typeof contentType === 'string' ? contentType : undefined)
    }
    const contentType = response.headers['content-type']
    const decoder = watchStreamDecoder(typeof contentType === 'string' ? contentType : undefined, locator)
    try {
      for await (const chunk of response.body) {
        for (const value of decoder.push(chunk as Buffer)) {
          const event = toEvent<T>(value)
          if (event.type === 'ERROR') throw watchErrorOf(event.object)
          yield event
        }
      }
      decoder.end()
    } catch (e) {
      if (isAbort(e, controller.signal)) return
      throw e
    } finally {
      if (!response.body.destroyed) response.body.destroy()
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    controller.abort()
  }
}

/** Watches a collection, calling the handlers for each event, until stopped, ended or failed. */
export function watch<T = AnyObject>(
  client: RestClient,
  locator: ResourceLocator,
  options: WatchOptions,
  handlers: WatchHandlers<T>,
): WatchHandle {
  const controller = new AbortController()
  const run = async (): Promise<void> => {
    let failure: Error | undefined
    try {
      for await (const event of watchEvents<T>(client, locator, options, controller.signal)) {
        await handlers.onEvent(event)
        if (controller.signal.aborted) break
      }
    } catch (e) {
      failure = e instanceof Error ? e : new Error(String(e))
    }
    if (failure && handlers.onError) handlers.onError(failure)
    handlers.onClose?.()
    if (failure && !handlers.onError) throw failure
  }
  return {stop: () => controller.abort(), done: run()}
}
