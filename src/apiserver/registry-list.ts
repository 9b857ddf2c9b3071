// Lists of one resource: from the watch cache or from storage, at the resourceVersion and with the
// paging (limit, continue) the request asks for, as Kubernetes' cacher and etcd3 store answer them.
import type {AnyObject, FieldError} from '../api/types.js'
import {errors} from '../machinery/status.js'
import {CompactedError, type Store, type WatchCache} from '../storage/index.js'
import {decodeContinue, encodeContinue, LATEST} from './continue.js'
import type {Selectors} from './selectors.js'
import {decodeStored, storedWithVersion} from './stored-json.js'

export interface ListParams {
  /** the caller sends JSON as stored: items from storage come as their stored bytes, not parsed */
  encoded?: boolean
  /** gate ConsistentListFromCache: a list at the current revision is served by the watch cache once
   *  it has caught up with storage (Kubernetes 1.31+); only where storage reports progress on every
   *  commit (SQLite), else from storage */
  consistentFromCache?: boolean
  labelSelector?: string
  fieldSelector?: string
  limit?: number
  continue?: string
  resourceVersion?: string
  resourceVersionMatch?: string
  /** the request named sendInitialEvents, which only a watch may */
  sendInitialEvents?: boolean
}

/** Kubernetes' ValidateListOptions for a list (not a watch): every problem, as one 422. */
export function validateListOptions(params: ListParams): void {
  const causes: FieldError[] = []
  const match = params.resourceVersionMatch ?? ''
  const forbidden = (message: string) => causes.push({type: 'FieldValueForbidden', field: 'resourceVersionMatch', message})
  if (match) {
    if (!params.resourceVersion) forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided')
    if (params.continue) forbidden('resourceVersionMatch is forbidden when continue is provided')
    if (match !== 'NotOlderThan' && match !== 'Exact') {
      causes.push({type: 'FieldValueNotSupported', field: 'resourceVersionMatch', value: match, message: 'supported values: "Exact", "NotOlderThan", ""'})
    }
    if (match === 'Exact' && params.resourceVersion === '0') forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
  }
  if (params.sendInitialEvents) causes.push({type: 'FieldValueForbidden', field: 'sendInitialEvents', message: 'sendInitialEvents is forbidden for list'})
  if (causes.length > 0) throw errors.invalid({group: 'meta.orch.io', kind: 'ListOptions'}, '', causes)
}

export interface ListResult {
  items: AnyObject[]
  /** with `encoded: true` from storage: each item's JSON bytes (then `items` is empty) */
  encodedItems?: Buffer[]
  resourceVersion: string
  continue?: string
  remainingItemCount?: number
}

/** A request's resourceVersion as a revision (undefined when absent or ''); anything but decimal digits
 *  is 400, as Kubernetes' ParseUint (Number() would also take 0x10 or 1e1). */
export function parseResourceVersion(text: string | undefined): number | undefined {
  if (!text) return undefined
  const revision = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(revision)) throw errors.badRequest(`invalid resource version: ${text}`)
  return revision
}

export class ResourceLister {
  constructor(
    private readonly store: Store,
    private readonly cache: WatchCache<AnyObject>,
    private readonly now: () => Date,
    /** how long a continue token stays valid (default 5 minutes) */
    private readonly continueTokenTtlMs?: number,
  ) {}

  async list(prefix: string, selectors: Selectors, params: ListParams): Promise<ListResult> {
    const limit = params.limit && params.limit > 0 ? params.limit : 0
    const match = params.resourceVersionMatch ?? ''
    validateListOptions(params)
    if (params.continue) {
      // "0" with a continue token is tolerated, as Kubernetes does
      if (params.resourceVersion && params.resourceVersion !== '0') {
        throw errors.badRequest('specifying resource version is not allowed when using continue')
      }
      const token = decodeContinue(params.continue, prefix, this.now(), this.continueTokenTtlMs)
      if (token.revision === LATEST) return this.fromStore(prefix, selectors, limit, 0, token.startAfter, params.encoded)
      // a list's token pins a revision storage had; a later one is forged (storage cannot read it)
      if (token.revision > (await this.store.currentRevision())) {
        throw errors.badRequest('continue key is not valid: its resource version is ahead of storage')
      }
      return this.fromStore(prefix, selectors, limit, token.revision, token.startAfter, params.encoded)
    }
    const requested = parseResourceVersion(params.resourceVersion)
    if (match === 'Exact') {
      await this.notAhead(requested!)
      return this.fromStore(prefix, selectors, limit, requested!, undefined, params.encoded)
    }
    if (requested !== undefined && requested > 0 && limit > 0) {
      // a page at a version: Kubernetes delegates it to storage (the watch cache does not page); without
      // resourceVersionMatch it is Exact, with NotOlderThan it pages the latest state once storage is there
      await this.notAhead(requested)
      return this.fromStore(prefix, selectors, limit, match === 'NotOlderThan' ? 0 : requested, undefined, params.encoded)
    }
    if (requested === 0 || (requested !== undefined && match !== 'Exact')) {
      // NotOlderThan (or the legacy "0 = any"): the cache serves when it is new enough
      await this.cache.start()
      if (requested === 0 || this.cache.revision >= requested!) return this.fromCache(prefix, selectors)
      try {
        await this.cache.waitUntil(requested!, 3_000)
        return this.fromCache(prefix, selectors)
      } catch {
        await this.notAhead(requested!)
        return this.fromStore(prefix, selectors, limit, 0, undefined, params.encoded)
      }
    }
    if (params.consistentFromCache && limit === 0 && this.store.backend === 'sqlite') {
      await this.cache.start()
      const current = await this.store.currentRevision()
      try {
        await this.cache.waitUntil(current, 3_000)
        return this.fromCache(prefix, selectors)
      } catch {
        // the cache is behind: storage answers
      }
    }
    return this.fromStore(prefix, selectors, limit, 0, undefined, params.encoded)
  }

  /** A storage read at resourceVersion `requested` (not older than it): at once when storage has
   *  reached it, else up to 3 s for it to (followed through the watch cache, which etcd may only move
   *  on with a write to this resource), then 504 Too large resource version, as Kubernetes answers. */
  async waitFresh(requested: number): Promise<void> {
    if (requested <= 0) return
    // the cache never runs ahead of storage: when it has the revision, storage has it too (no read)
    if (this.cache.synced && this.cache.revision >= requested) return
    if ((await this.store.currentRevision()) >= requested) return
    await this.cache.start()
    if (this.cache.revision >= requested) return
    try {
      await this.cache.waitUntil(requested, 3_000)
    } catch {
      await this.notAhead(requested)
    }
  }

  /** 504 Timeout (cause ResourceVersionTooLarge) when storage has not reached `requested`. */
  async notAhead(requested: number): Promise<void> {
    const current = await this.store.currentRevision()
    if (requested > current) throw errors.tooLargeResourceVersion(requested, current)
  }

  private fromCache(prefix: string, selectors: Selectors): ListResult {
    const {items, revision} = this.cache.list()
    const out: AnyObject[] = []
    for (const entry of items) {
      if (!entry.kv.key.startsWith(prefix)) continue
      if (selectors.matches(entry.object)) out.push(entry.object)
    }
    return {items: out, resourceVersion: String(revision)}
  }

  /** A consistent list: one storage revision for every page; with selectors, pages are filled by
   *  reading on until `limit` matches are found. */
  private async fromStore(
    prefix: string,
    selectors: Selectors,
    limit: number,
    revision: number,
    startAfter: string | undefined,
    encoded = false,
  ): Promise<ListResult> {
    const items: AnyObject[] = []
    const encodedItems: Buffer[] = []
    let count = 0
    let atRevision = revision
    let cursor = startAfter
    let remaining = 0
    let lastKey: string | undefined
    try {
      for (;;) {
        const want = limit > 0 ? Math.max(limit - count, selectors.empty ? 0 : 64) : 0
        const page = await this.store.list(prefix, {revision: atRevision, startAfter: cursor, limit: want})
        atRevision = page.revision
        for (const kv of page.items) {
          lastKey = kv.key
          // the JSON fast path: no parse at all without selectors, no re-serialising with them
          const bytes = encoded ? storedWithVersion(kv.value, kv.modRevision) : undefined
          if (bytes && selectors.empty) {
            encodedItems.push(bytes)
            count++
          } else {
            const object = decodeStored(kv)
            if (selectors.matches(object)) {
              count++
              if (bytes) encodedItems.push(bytes)
              else if (encoded) encodedItems.push(Buffer.from(JSON.stringify(object)))
              else items.push(object)
            }
          }
          if (limit > 0 && count >= limit) break
        }
        const consumedAll = page.items.length === 0 || lastKey === page.items[page.items.length - 1].key
        remaining = consumedAll ? page.remaining : page.remaining + (page.items.length - 1 - page.items.findIndex((kv) => kv.key === lastKey))
        if (limit === 0 || count >= limit || remaining === 0 || page.items.length === 0) break
        cursor = lastKey
      }
    } catch (error) {
      if (error instanceof CompactedError) {
        if (startAfter === undefined) throw errors.expired(`The resourceVersion for the provided list is too old.`)
        const expired = errors.expired(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        )
        // the token it speaks of: the same place, at the latest state
        expired.continueToken = encodeContinue(LATEST, startAfter, prefix, this.now())
        throw expired
      }
      throw error
    }
    const result: ListResult = {items, resourceVersion: String(atRevision)}
    if (encoded) result.encodedItems = encodedItems
    if (limit > 0 && remaining > 0 && lastKey !== undefined) {
      result.continue = encodeContinue(atRevision, lastKey, prefix, this.now())
      if (selectors.empty) result.remainingItemCount = remaining
    }
    return result
  }
}
