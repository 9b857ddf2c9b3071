// `orch patch KIND NAME -p PATCH` (or KIND/NAME): one PATCH of one object, as kubectl patch does. The patch
// is JSON or YAML text (-p TEXT, -p @FILE, --patch-file FILE), sent as a JSON patch (a list of operations),
// a JSON merge patch or a strategic merge patch (the default, as kubectl) to the object or its status or
// scale subresource. Prints `configmap/x patched`, or `patched (no change)` when the object came back as
// it was (compared without managedFields, so a patch that changes nothing is recognised); with -o the
// patched object instead.
import {readFileSync} from 'node:fs'
import {isDeepStrictEqual} from 'node:util'
import * as yaml from 'js-yaml'
import type {AnyObject} from '../api/types.js'
import type {PatchType, ResourceLocator} from '../client/index.js'
import {dryRunSuffix} from './apply.js'
import {withSession, type ConnectOptions, type Session} from './connect.js'
import {formatObjects} from './printers.js'
import {objectName, resolveResource} from './resources.js'
import {loadYaml} from '../machinery/go-yaml.js'

export const patchTypes = ['json', 'merge', 'strategic'] as const
export type PatchKind = (typeof patchTypes)[number]

export const patchSubresources = ['status', 'scale'] as const

export interface PatchOptions extends ConnectOptions {
  /** KIND NAME, or KIND/NAME */
  args: string[]
  /** default strategic */
  type?: PatchKind
  /** -p: the patch, or @FILE (@- for stdin) */
  patch?: string
  /** --patch-file */
  patchFile?: string
  subresource?: (typeof patchSubresources)[number]
  dryRun?: 'none' | 'server'
  /** default orch-patch */
  fieldManager?: string
  /** -o json|yaml|name: print the patched object */
  output?: string
  /** --show-managed-fields: keep metadata.managedFields in -o json|yaml */
  showManagedFields?: boolean
}

/** The patch text of -p (or @FILE) and --patch-file. */
export function patchText(options: Pick<PatchOptions, 'patch' | 'patchFile'>, readStdin: () => string = () => readFileSync(0, 'utf8')): string {
  if (options.patch !== undefined && options.patchFile !== undefined) throw new Error('-p and --patch-file cannot be combined')
  const read = (path: string) => {
    if (path === '-') return readStdin()
    try {
      return readFileSync(path, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new Error(code === 'ENOENT' ? `the patch file "${path}" does not exist` : `the patch file "${path}" cannot be read: ${(error as Error).message}`)
    }
  }
  if (options.patchFile !== undefined) return read(options.patchFile)
  if (options.patch === undefined || options.patch.trim() === '') throw new Error('must specify --patch (-p) or --patch-file containing the contents of the patch')
  return options.patch.startsWith('@') ? read(options.patch.slice(1)) : options.patch
}

/** A patch from JSON or YAML text: a list of operations for a JSON patch, an object for the others. */
export function parsePatch(text: string, type: PatchKind): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    try {
      value = loadYaml(text, {json: false})
    } catch (error) {
      const reason = error instanceof yaml.YAMLException ? error.reason : (error as Error).message
      throw new Error(`unable to parse "${text.trim()}": ${reason}`)
    }
  }
  if (type === 'json' && !Array.isArray(value)) {
    throw new Error('a JSON patch (--type json) is a list of operations, e.g. [{"op": "replace", "path": "/data/k", "value": "v"}]')
  }
  if (type !== 'json' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new Error(`a ${type} patch is an object, e.g. {"data": {"k": "v"}}`)
  }
  return value
}

/** KIND and NAME from `KIND NAME` or `KIND/NAME`. */
function target(args: string[]): {kind: string; name: string} {
  if (args.length === 1 && args[0].includes('/')) {
    const slash = args[0].indexOf('/')
    const kind = args[0].slice(0, slash)
    const name = args[0].slice(slash + 1)
    if (!kind || !name || name.includes('/')) throw new Error(`arguments in resource/name form must have a single resource and name: "${args[0]}"`)
    return {kind, name}
  }
  if (args.length === 2 && !args[0].includes('/')) return {kind: args[0], name: args[1]}
  if (args.length === 0) throw new Error('you must specify the type and name of the object to patch: KIND NAME or KIND/NAME')
  if (args.length === 1) throw new Error(`you must specify the name of the ${args[0]} to patch`)
  throw new Error('orch patch patches one object: give KIND NAME or KIND/NAME')
}

/** What "no change" is judged on: the object without its managedFields (their times move on any write). */
function comparable(object: AnyObject): AnyObject {
  if (typeof object !== 'object' || object === null || !object.metadata) return object
  const {managedFields: _managedFields, ...metadata} = object.metadata
  return {...object, metadata}
}

/** Runs `orch patch`; the server's refusal is one line and exit 1. */
export function runPatch(options: PatchOptions): Promise<void> {
  return withSession(options, (session) => patch(session, options))
}

async function patch(session: Session, options: PatchOptions): Promise<number> {
  const type = options.type ?? 'strategic'
  const {kind, name} = target(options.args)
  if (options.output !== undefined && !['json', 'yaml', 'name'].includes(options.output)) {
    throw new Error(`unable to match a printer suitable for the output format "${options.output}", allowed formats are: json, name, yaml`)
  }
  const body = parsePatch(patchText(options), type)
  const {client} = session
  const info = await resolveResource(client, kind)
  if (!info.verbs.includes('patch')) throw new Error(`the server does not allow patching ${info.resource}`)
  if (options.subresource && !info.subresources.includes(options.subresource)) {
    throw new Error(`${info.resource} has no ${options.subresource} subresource`)
  }
  const locator: ResourceLocator = {
    group: info.group,
    version: info.version,
    resource: info.resource,
    namespace: info.namespaced ? session.namespace : undefined,
    name,
    subresource: options.subresource,
  }
  const before = await client.get(locator)
  const after = await client.patch(locator, type satisfies PatchType, body, {
    fieldManager: options.fieldManager || 'orch-patch',
    dryRun: options.dryRun === 'server' ? 'All' : undefined,
  })
  if (options.output) {
    process.stdout.write(formatObjects([after], options.output as 'json' | 'yaml' | 'name', info, true, {showManagedFields: options.showManagedFields}))
    return 0
  }
  const changed = !isDeepStrictEqual(comparable(before), comparable(after))
  // kubectl names what the server returned: a patch of /scale answers an autoscaling/v1 Scale
  const shown = options.subresource === 'scale' && after?.kind === 'Scale' ? `scale.autoscaling/${name}` : objectName(info, name)
  process.stdout.write(`${shown} ${changed ? 'patched' : 'patched (no change)'}${dryRunSuffix(options.dryRun)}\n`)
  return 0
}
