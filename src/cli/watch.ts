// `orch watch KIND`: one line per watch event until interrupted (or --timeout), made for grep and awk:
//
//   EVENT KIND[.GROUP]/NAME RESOURCEVERSION [NAMESPACE]
//   ADDED configmap/settings 412
//   MODIFIED statefulset.apps/web 415 shop        (with -A: the namespace is a fourth field)
//
// EVENT is ADDED, MODIFIED or DELETED; fields are separated by one space (names never hold spaces).
// The watch starts with an ADDED line for every object that exists (the server's initial state), then
// prints changes as they happen. `-o json` prints each event instead as one line of JSON:
// {"type":"ADDED","object":{...}}. When the server ends the watch (its timeout) it is resumed from the
// last resourceVersion seen, so no change is missed or repeated.
import type {AnyObject} from '../api/types.js'
import {watchEvents, type ResourceLocator, type WatchEvent} from '../client/index.js'
import {withSession, type ConnectOptions, type Session} from './connect.js'
import {objectName, resolveResource, type ResourceInfo} from './resources.js'

export interface WatchCommandOptions extends ConnectOptions {
  resource: string
  allNamespaces?: boolean
  selector?: string
  fieldSelector?: string
  /** 'json' for JSON lines; absent for the one-line summary */
  output?: string
  /** stop (exit 0) after this many seconds */
  timeoutSeconds?: number
}

/** The line for one event (without the newline). */
export function eventLine(event: WatchEvent, info: Pick<ResourceInfo, 'kind' | 'group'>, withNamespace: boolean, json: boolean): string {
  if (json) return JSON.stringify({type: event.type, object: event.object})
  const metadata = (event.object as AnyObject)?.metadata ?? {}
  const fields = [event.type, objectName(info, metadata.name ?? ''), metadata.resourceVersion ?? '']
  if (withNamespace) fields.push(metadata.namespace ?? '')
  return fields.join(' ')
}

/** Runs `orch watch` until interrupted, the timeout, or a failure (one line, exit 1). */
export function runWatch(options: WatchCommandOptions): Promise<void> {
  return withSession(options, (session) => watchResource(session, options))
}

async function watchResource(session: Session, options: WatchCommandOptions): Promise<number> {
  if (options.output !== undefined && options.output !== 'json') throw new Error(`unknown output format "${options.output}" (orch watch prints lines, or JSON with -o json)`)
  const info = await resolveResource(session.client, options.resource)
  if (!info.verbs.includes('watch')) throw new Error(`the server does not allow watching ${info.resource}`)
  const allNamespaces = Boolean(options.allNamespaces) && info.namespaced
  const locator: ResourceLocator = {
    group: info.group,
    version: info.version,
    resource: info.resource,
    namespace: info.namespaced && !allNamespaces ? session.namespace : undefined,
  }
  const json = options.output === 'json'

  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
  const stop = new AbortController()
  let timer: NodeJS.Timeout | undefined
  if (options.timeoutSeconds !== undefined && options.timeoutSeconds > 0) {
    timer = setTimeout(() => stop.abort(), options.timeoutSeconds * 1000)
  }

  let resourceVersion: string | undefined
  try {
    while (!stop.signal.aborted) {
      const events = watchEvents(
        session.client,
        locator,
        {resourceVersion, labelSelector: options.selector, fieldSelector: options.fieldSelector, allowWatchBookmarks: true},
        stop.signal,
      )
      for await (const event of events) {
        resourceVersion = (event.object as AnyObject)?.metadata?.resourceVersion ?? resourceVersion
        if (event.type === 'BOOKMARK') continue
        process.stdout.write(eventLine(event, info, allNamespaces, json) + '\n')
      }
    }
  } finally {
    if (timer) clearTimeout(timer)
  }
  return 0
}
