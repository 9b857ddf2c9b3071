// Serving a watch: a chunked stream of {type, object} documents from the resource's watch cache.
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AnyObject} from '../api/types.js'
import {errors} from '../machinery/status.js'
import {TooOldResourceVersionError, type CacheEvent, type Watch} from '../storage/index.js'
import {JSON_TYPE, type Serializer} from './serializers.js'
import type {ResourceRegistry} from './registry.js'
import {objectView, type ViewRequest} from './views.js'
import {jsonOf} from './stored-json.js'
import {parseResourceVersion} from './registry-list.js'

export interface WatchParams {
  resourceVersion?: string
  resourceVersionMatch?: string
  sendInitialEvents?: boolean
  allowWatchBookmarks: boolean
  timeoutSeconds?: number
  labelSelector?: string
  fieldSelector?: string
  /** gate WatchList (beta, on by default): sendInitialEvents is refused when it is off */
  watchListEnabled?: boolean
}

export interface WatchServeOptions {
  serializer: Serializer
  view?: ViewRequest
  includeObject?: string
  now: () => Date
  /** how often bookmarks go out when asked for (default 30 s) */
  bookmarkIntervalMs?: number
  /** default stream length when timeoutSeconds is absent (Kubernetes: 30–60 min) */
  defaultTimeoutMs?: number
  /** the annotation marking the end of initial events */
  initialEventsAnnotation: string
  /** aborted when the server shuts down: the stream ends cleanly, as Kubernetes ends watches then */
  shutdown?: AbortSignal
}

/** how long before a watch's deadline its last bookmark goes out (the cacher's 2 s) */
const PRE_TIMEOUT_BOOKMARK_MS = 2_000

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

const FRAME_END = Buffer.from('}\n')

/** The JSON watch frame of an event, built once however many watchers send it. */
const framesOfObject = new WeakMap<AnyObject, Partial<Record<EventType, Buffer>>>()
function cachedJsonFrame(type: EventType, object: AnyObject): Buffer {
  let frames = framesOfObject.get(object)
  if (!frames) framesOfObject.set(object, (frames = {}))
  return (frames[type] ??= Buffer.concat([Buffer.from(`{"type":"${type}","object":`), jsonOf(object), FRAME_END]))
}

/** Frames in other encodings (protobuf, CBOR), also built once per object, encoding and event type. */
const otherFrames = new WeakMap<AnyObject, Map<string, Buffer>>()
function cachedFrame(key: string, object: AnyObject, build: () => Buffer): Buffer {
  let frames = otherFrames.get(object)
  if (!frames) otherFrames.set(object, (frames = new Map()))
  let frame = frames.get(key)
  if (!frame) frames.set(key, (frame = build()))
  return frame
}

export function validateWatchParams(params: WatchParams): void {
  const invalid = (field: string, message: string) =>
    errors.invalid({group: 'meta.orch.io', kind: 'ListOptions'}, '', [{type: 'FieldValueForbidden', field, message}])
  if (params.sendInitialEvents !== undefined) {
    if (params.resourceVersionMatch !== 'NotOlderThan') {
      throw invalid('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan')
    }
    if (params.watchListEnabled === false) {
      throw invalid('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled')
    }
  } else if (params.resourceVersionMatch) {
    throw invalid('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided')
  }
}

/** Starts the stream or throws an ApiError before anything is written; a version too old for the history is an ERROR event (410 Expired) on a 200 stream. */
export async function serveWatch(
  request: IncomingMessage,
  response: ServerResponse,
  registry: ResourceRegistry,
  namespace: string,
  params: WatchParams,
  options: WatchServeOptions,
): Promise<void> {
  validateWatchParams(params)
  const selectors = registry.selectors(params)
  const cache = registry.cache
  await cache.start()
  const prefix = registry.prefix(namespace)
  const requested = parseResourceVersion(params.resourceVersion)
  // initial events: legacy "" / "0" watches, or sendInitialEvents=true
  const initial = params.sendInitialEvents ?? (requested === undefined || requested === 0)
  if (params.sendInitialEvents && requested === undefined) {
    await cache.waitUntil(await currentRevision(registry), 10_000)
  } else if (params.sendInitialEvents && requested !== undefined && requested > 0 && cache.revision < requested) {
    // Kubernetes' waitUntilWatchCacheFreshAndForceAllEvents: up to 3 s for the cache to reach the
    // version; one not reached is an ERROR event (504, cause ResourceVersionTooLarge) on a 200 stream
    try {
      await cache.waitUntil(requested, 3_000)
    } catch {
      const current = await currentRevision(registry)
      if (requested > current) {
        const tooLarge = errors.tooLargeResourceVersion(requested, current).toStatus() as unknown as AnyObject
        response.writeHead(200, watchStreamHeaders(options.serializer))
        response.end(options.serializer.frame({type: 'ERROR', object: tooLarge}, registry.declaration))
        return
      }
      // storage has it: the cache is on its way
      await cache.waitUntil(requested, 10_000)
    }
  }
  const kindMeta = {kind: registry.declaration.kind, apiVersion: registry.apiVersion}
  const streamHeaders = watchStreamHeaders(options.serializer)
  const frame = (type: EventType, object: AnyObject): Buffer => {
    if (!options.view && options.serializer.mediaType === JSON_TYPE) return cachedJsonFrame(type, object)
    if (!options.view) return cachedFrame(`${options.serializer.mediaType} ${type}`, object, () => options.serializer.frame({type, object}, registry.declaration))
    const body = objectView(registry.declaration, object, options.view, options.now(), options.includeObject)
    // the watch's first Table carries the column definitions, later ones none (the watch encoder's
    // tableOptions.NoHeaders after the first event: `columnDefinitions: null`)
    if (body.kind === 'Table' && type !== 'ERROR') {
      if (tableHeadersSent) body.columnDefinitions = null
      tableHeadersSent = true
    }
    return options.serializer.frame({type, object: body}, registry.declaration)
  }
  let tableHeadersSent = false
  const bookmark = (revision: number, extra?: Record<string, string>): Buffer => {
    const metadata: AnyObject = {resourceVersion: String(revision)}
    if (extra) metadata.annotations = extra
    return frame('BOOKMARK', {...kindMeta, metadata})
  }

  let startRevision: number
  const initialFrames: Buffer[] = []
  if (initial) {
    const snapshot = cache.list()
    startRevision = snapshot.revision
    for (const entry of snapshot.items) {
      if (entry.kv.key.startsWith(prefix) && selectors.matches(entry.object)) initialFrames.push(frame('ADDED', entry.object))
    }
    if (params.sendInitialEvents && params.allowWatchBookmarks) {
      initialFrames.push(bookmark(startRevision, {[options.initialEventsAnnotation]: 'true'}))
    }
  } else {
    startRevision = requested!
  }

  let ended = false
  let lastSent = startRevision
  let watch: Watch | undefined
  try {
    watch = cache.watch(startRevision, {
      onEvents: (events) => {
        if (ended) return
        // one write for the whole batch: each write is a TLS record and a syscall, which is what a
        // watcher costs; a server that falls behind gets larger batches, so it catches up (as
        // Kubernetes flushes a watch only when no further event is waiting)
        const frames: Buffer[] = []
        for (const event of events) {
          if (!event.key.startsWith(prefix)) continue
          const type = transition(event, selectors.matches)
          if (type) frames.push(frame(type, type === 'DELETED' && event.type === 'MODIFIED' ? leavingObject(event) : event.object))
        }
        if (frames.length > 0) response.write(frames.length === 1 ? frames[0] : Buffer.concat(frames))
        lastSent = events[events.length - 1].revision
      },
      // the cache re-lists (its storage watch was compacted away) or stops: Kubernetes' cacher ends
      // its watchers then without an ERROR event (terminateAllWatchers), and the client watches again
      // from the last version it saw, which is 410 only when the new history does not hold it
      onError: () => {
        if (ended) return
        finish()
      },
    })
  } catch (error) {
    if (!(error instanceof TooOldResourceVersionError)) throw error
    // Kubernetes' cacher: once a watch is authorized and its resourceVersion parsed, a version the
    // history no longer holds is one ERROR event (a 410 Expired Status), not an HTTP error
    const expired = errors.expired(`too old resource version: ${error.requested} (${error.oldest})`).toStatus() as unknown as AnyObject
    response.writeHead(200, streamHeaders)
    response.end(options.serializer.frame({type: 'ERROR', object: expired}, registry.declaration))
    return
  }

  response.writeHead(200, streamHeaders)
  for (const f of initialFrames) response.write(f)
  response.flushHeaders()

  const timers: NodeJS.Timeout[] = []
  const timeoutMs = params.timeoutSeconds !== undefined ? params.timeoutSeconds * 1000 : (options.defaultTimeoutMs ?? 30 * 60_000 * (1 + Math.random()))
  timers.push(setTimeout(() => finish(), timeoutMs))
  if (params.allowWatchBookmarks) {
    const sendBookmark = (always: boolean) => {
      const revision = cache.revision
      if (ended || (!always && revision <= lastSent)) return
      lastSent = Math.max(lastSent, revision)
      response.write(bookmark(lastSent))
    }
    timers.push(setInterval(() => sendBookmark(false), options.bookmarkIntervalMs ?? 30_000))
    // Kubernetes' cacheWatcher.nextBookmarkTime: a bookmark 2 s before the watch's deadline, so the
    // client resumes from the latest version even when nothing it selects has changed
    if (timeoutMs > PRE_TIMEOUT_BOOKMARK_MS) timers.push(setTimeout(() => sendBookmark(true), timeoutMs - PRE_TIMEOUT_BOOKMARK_MS))
  }
  function finish() {
    if (ended) return
    ended = true
    watch?.cancel()
    for (const t of timers) clearTimeout(t)
    response.end()
  }
  const onShutdown = () => finish()
  options.shutdown?.addEventListener('abort', onShutdown, {once: true})
  if (options.shutdown?.aborted) finish()
  await new Promise<void>((resolve) => {
    response.on('close', () => {
      options.shutdown?.removeEventListener('abort', onShutdown)
      finish()
      resolve()
    })
    request.on('close', () => {
      if (!response.writableEnded) finish()
    })
  })
}

function watchStreamHeaders(serializer: {streamMediaType: string}): Record<string, string> {
  return {'Content-Type': serializer.streamMediaType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked'}
}

function currentRevision(registry: ResourceRegistry): Promise<number> {
  return registry.currentStoreRevision()
}

/** The object of the DELETED event a watcher gets when a change takes an object out of its
 *  selection: the object as it was (which the watcher selected), at the change's resourceVersion —
 *  Kubernetes' cacheWatcher.convertToWatchEvent. One per change, shared by every such watcher. */
const leavingObjects = new WeakMap<CacheEvent<AnyObject>, AnyObject>()
function leavingObject(event: CacheEvent<AnyObject>): AnyObject {
  let object = leavingObjects.get(event)
  if (!object) {
    const prev = event.prev!
    object = {...prev, metadata: {...prev.metadata, resourceVersion: String(event.revision)}}
    leavingObjects.set(event, object)
  }
  return object
}

/** How a change looks to a watcher with selectors: objects entering the selection are ADDED, leaving it DELETED. */
function transition(event: CacheEvent<AnyObject>, matches: (o: AnyObject) => boolean): EventType | undefined {
  const now = matches(event.object)
  if (event.type === 'ADDED') return now ? 'ADDED' : undefined
  if (event.type === 'DELETED') return now ? 'DELETED' : undefined
  const before = event.prev ? matches(event.prev) : false
  if (now && before) return 'MODIFIED'
  if (now) return 'ADDED'
  if (before) return 'DELETED'
  return undefined
}
