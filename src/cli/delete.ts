// `orch delete`: objects named on the command line (`KIND NAME...` or `KIND/NAME...`), chosen by label
// selector or --all (in one namespace or all), or given by manifests (-f). Each deletion prints
// `configmap "x" deleted` as kubectl does; an object that is not there is an error unless
// --ignore-not-found. The command returns once the server has accepted each deletion (objects with
// finalizers may linger until their finalizers are done).
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type CallOptions, type ResourceLocator} from '../client/index.js'
import {ObjectError, readManifests, targetOf} from './apply.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {kindName, resolveResource, type ResourceInfo} from './resources.js'

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

/** What to delete, and whether it was chosen by selector (then finding nothing is "No resources found"). */
async function targets(session: Session, options: DeleteOptions): Promise<{list: Target[]; errors: number; bySelector: boolean}> {
  const list: Target[] = []
  let errors = 0
  if (options.filenames.length > 0) {
    for (const manifest of readManifests(options.filenames)) {
      try {
        list.push(await targetOf(session, manifest))
      } catch (error) {
        if (!(error instanceof ObjectError)) throw error
        reportError(error, session.server)
        errors++
      }
    }
    return {list, errors, bySelector: false}
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
    return {list, errors, bySelector: false}
  }
  const info = await resolveResource(session.client, options.args[0])
  if (!options.selector && !options.all) {
    for (const name of options.args.slice(1)) list.push(named(info, name))
    return {list, errors, bySelector: false}
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
  return {list, errors, bySelector: true}
}

async function deleteObjects(session: Session, options: DeleteOptions): Promise<number> {
  checkUsage(options)
  const {list, errors, bySelector} = await targets(session, options)
  let code = errors > 0 ? 1 : 0
  if (bySelector && list.length === 0) {
    // kubectl delete says so on stdout (kubectl get on stderr)
    process.stdout.write('No resources found\n')
    return code
  }
  const callOptions: CallOptions = {
    propagationPolicy: propagation[options.cascade ?? 'background'],
    gracePeriodSeconds: options.gracePeriod !== undefined && options.gracePeriod >= 0 ? options.gracePeriod : undefined,
  }
  for (const {info, locator} of list) {
    try {
      await session.client.delete(locator, callOptions)
      process.stdout.write(`${kindName(info)} "${locator.name}" deleted\n`)
    } catch (error) {
      if (!isApiStatusError(error)) throw error
      if (error.code === 404 && options.ignoreNotFound) continue
      reportError(error, session.server)
      code = 1
    }
  }
  return code
}
