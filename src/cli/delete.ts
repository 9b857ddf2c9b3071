// `orch delete`: objects named on the command line (`KIND NAME...` or `KIND/NAME...`), chosen by label
// selector or --all (in one namespace or all), or given by manifests (-f). Each deletion prints
// `configmap "x" deleted` (`-o name`: `configmap/x`) as kubectl does; an object that is not there is an
// error unless --ignore-not-found. As kubectl, the command then waits (--wait, default true) until every
// deleted object is really gone (finalizers done, dependents deleted under --cascade=foreground), up to
// --timeout; --wait=false returns once the server has accepted each deletion. --dry-run=server has the
// server check each deletion without doing it; --dry-run=client sends no deletion at all.
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type CallOptions, type ResourceLocator} from '../client/index.js'
import {ObjectError, dryRunSuffix, targetOf} from './apply.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {readManifests} from './manifests.js'
import {kindName, objectName, resolveResource, type ResourceInfo} from './resources.js'

export interface DeleteOptions extends ConnectOptions {
  /** KIND NAME..., or KIND/NAME... */
  args: string[]
  /** -f values */
  filenames: string[]
  selector?: string
  all?: boolean
  allNamespaces?: boolean
  ignoreNotFound?: boolean
  /** propagation of the deletion to dependents (default background, as kubectl) */
  cascade?: 'background' | 'foreground' | 'orphan'
  /** seconds of grace (-1: the object's default) */
  gracePeriod?: number
  /** -R: read -f directories recursively */
  recursive?: boolean
  /** -o name: print kind/name instead of `kind "name" deleted` */
  output?: string
  /** --dry-run: server (the server checks, nothing is deleted) or client (nothing is sent) */
  dryRun?: 'none' | 'server' | 'client'
  /** --wait (default true): return only when the deleted objects are gone */
  wait?: boolean
  /** --timeout: how long --wait waits, in milliseconds (0 or absent: without end) */
  timeoutMs?: number
}

/** A Go duration as kubectl's --timeout takes it (`30s`, `1m30s`, `500ms`, `0`), in milliseconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim()
  if (/^\d+$/.test(trimmed)) {
    // a bare number: Go wants a unit, except for 0
    if (Number(trimmed) === 0) return 0
    throw new Error(`invalid duration "${text}": missing unit (e.g. 30s, 2m)`)
  }
  const units: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000}
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) throw new Error(`invalid duration "${text}" (e.g. 30s, 2m, 1h30m)`)
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]], 0)
}

interface Target {
  info: ResourceInfo
  locator: ResourceLocator & {name: string}
}

const propagation = {background: 'Background', foreground: 'Foreground', orphan: 'Orphan'} as const

/** Runs `orch delete`; exit code 1 when any deletion failed (the others still happen). */
export function runDelete(options: DeleteOptions): Promise<void> {
  return withSession(options, (session) => deleteObjects(session, options))
}

function checkUsage(options: DeleteOptions): void {
  const byFile = options.filenames.length > 0
  if (byFile && options.args.length > 0) throw new Error('when -f is given, no resource type or name may be given as argument')
  if (byFile && (options.selector || options.all)) throw new Error('-f cannot be combined with --selector or --all')
  if (!byFile && options.args.length === 0) {
    throw new Error('you must provide one or more resources by argument or filename (-f)')
  }
  const slashed = options.args.some((a) => a.includes('/'))
  if (slashed && (options.selector || options.all)) throw new Error('name cannot be provided when a selector or --all is specified')
  if (!byFile && !slashed && options.args.length === 1 && !options.selector && !options.all) {
    throw new Error('resource(s) were provided, but no name was specified (give names, --selector or --all)')
  }
  if (!slashed && options.args.length > 1 && (options.selector || options.all)) {
    throw new Error('name cannot be provided when a selector or --all is specified')
  }
  if (options.selector && options.all) throw new Error('--all cannot be combined with --selector')
  if (options.allNamespaces && !options.selector && !options.all) throw new Error('--all-namespaces needs --selector or --all')
}

/**
 * What to delete, whether it was chosen by selector (then finding nothing is "No resources found"), and
 * the manifests' errors: as kubectl's ContinueOnError builder, a file or document that cannot be parsed
 * leaves the others to be deleted; its error is reported after the deletions.
 */
async function targets(session: Session, options: DeleteOptions): Promise<{list: Target[]; unread: Error[]; bySelector: boolean}> {
  const list: Target[] = []
  if (options.filenames.length > 0) {
    const read = await readManifests(options.filenames, {recursive: options.recursive})
    // what could not be read or mapped is reported after the deletions, reading errors first, as apply does
    const unread = [...read.errors]
    for (const manifest of read.manifests) {
      try {
        list.push(await targetOf(session, manifest))
      } catch (error) {
        if (!(error instanceof ObjectError)) throw error
        unread.push(error)
      }
    }
    return {list, unread, bySelector: false}
  }
  const named = (info: ResourceInfo, name: string): Target => ({
    info,
    locator: {group: info.group, version: info.version, resource: info.resource, namespace: info.namespaced ? session.namespace : undefined, name},
  })
  if (options.args.some((a) => a.includes('/'))) {
    for (const arg of options.args) {
      const slash = arg.indexOf('/')
      if (slash <= 0 || slash === arg.length - 1) throw new Error(`arguments in resource/name form must have a single resource and name: "${arg}"`)
      list.push(named(await resolveResource(session.client, arg.slice(0, slash)), arg.slice(slash + 1)))
    }
    return {list, unread: [], bySelector: false}
  }
  const info = await resolveResource(session.client, options.args[0])
  if (!options.selector && !options.all) {
    for (const name of options.args.slice(1)) list.push(named(info, name))
    return {list, unread: [], bySelector: false}
  }
  const allNamespaces = Boolean(options.allNamespaces) && info.namespaced
  const collection: ResourceLocator = {
    group: info.group,
    version: info.version,
    resource: info.resource,
    namespace: info.namespaced && !allNamespaces ? session.namespace : undefined,
  }
  const found = await session.client.listAll<AnyObject>(collection, {labelSelector: options.selector})
  for (const item of found.items) {
    list.push({info, locator: {...collection, namespace: info.namespaced ? item.metadata?.namespace : undefined, name: item.metadata?.name ?? ''}})
  }
  return {list, unread: [], bySelector: true}
}

async function deleteObjects(session: Session, options: DeleteOptions): Promise<number> {
  checkUsage(options)
  const {list, unread, bySelector} = await targets(session, options)
  let code = unread.length > 0 ? 1 : 0
  if (bySelector && list.length === 0) {
    // kubectl delete says so on stdout (kubectl get on stderr)
    process.stdout.write('No resources found\n')
    return code
  }
  const dryRun = options.dryRun ?? 'none'
  const callOptions: CallOptions = {
    propagationPolicy: propagation[options.cascade ?? 'background'],
    gracePeriodSeconds: options.gracePeriod !== undefined && options.gracePeriod >= 0 ? options.gracePeriod : undefined,
    dryRun: dryRun === 'server' ? 'All' : undefined,
  }
  const pending: {target: Target; uid?: string}[] = []
  try {
    if (await deleteEach(session, list, options, callOptions, pending)) code = 1
  } finally {
    for (const error of unread) reportError(error, session.server)
  }
  if (options.wait === false || pending.length === 0) return code
  return (await waitGone(session, pending, options.timeoutMs ?? 0)) ? code : 1
}

/** Deletes each target, printing kubectl's line for it; true when one failed. */
async function deleteEach(session: Session, list: Target[], options: DeleteOptions, callOptions: CallOptions, pending: {target: Target; uid?: string}[]): Promise<boolean> {
  const dryRun = options.dryRun ?? 'none'
  const suffix = dryRunSuffix(dryRun)
  let failed = false
  for (const target of list) {
    const {info, locator} = target
    try {
      if (dryRun !== 'client') {
        const answer: AnyObject = await session.client.delete(locator, callOptions)
        // an object in the answer is still there (finalizers, grace): wait for it; a Status means it is gone
        if (dryRun === 'none' && answer?.kind !== 'Status' && answer?.metadata?.uid) pending.push({target, uid: answer.metadata.uid})
      }
      if (options.output === 'name') process.stdout.write(`${objectName(info, locator.name)}\n`)
      else process.stdout.write(`${kindName(info)} "${locator.name}" deleted${suffix}\n`)
    } catch (error) {
      if (!isApiStatusError(error)) throw error
      if (error.code === 404 && options.ignoreNotFound) continue
      reportError(error, session.server)
      failed = true
    }
  }
  return failed
}

/**
 * Waits until each object is gone: not found, or found with another uid (deleted and made again). Polls
 * with a growing pause (50 ms up to 1 s). Answers false after reporting kubectl's timeout error for the
 * first object still there when timeoutMs (> 0) has passed.
 */
async function waitGone(session: Session, pending: {target: Target; uid?: string}[], timeoutMs: number): Promise<boolean> {
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity
  let pause = 50
  let left = pending
  while (left.length > 0) {
    const still: typeof left = []
    for (const item of left) {
      try {
        const live: AnyObject = await session.client.get(item.target.locator)
        if (!item.uid || live.metadata?.uid === item.uid) still.push(item)
      } catch (error) {
        if (!isApiStatusError(error) || error.code !== 404) throw error
      }
    }
    left = still
    if (left.length === 0) break
    if (Date.now() >= deadline) {
      const {info, locator} = left[0].target
      const resource = info.group ? `${info.resource}.${info.group}` : info.resource
      process.stderr.write(`error: timed out waiting for the condition on ${resource}/${locator.name}\n`)
      return false
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))))
    pause = Math.min(pause * 2, 1000)
  }
  return true
}
