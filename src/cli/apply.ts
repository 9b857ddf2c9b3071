// `orch apply -f FILE|DIR|URL|-`: the objects of manifests (read by manifests.ts: multi-document YAML,
// JSON, kind List; files, directories, http(s) URLs, stdin), each created or brought up to date through an
// ApplyStrategy. The default strategy is server-side apply (one PATCH with application/apply-patch+yaml per
// object, fieldManager `orch` unless --field-manager, force=true with --force-conflicts), read first so
// that the result is printed as kubectl apply prints it: `configmap/x created|configured|unchanged`.
// --server-side=false keeps the older create-or-replace (GET; absent: POST; present and different in a
// field the manifest gives: PUT at the live resourceVersion). As kubectl, a file or document that cannot
// be parsed, or an object the server refuses (an apply conflict included), does not stop the others: each
// is reported on one line at the end, and the command exits 1. -o name prints kind/name per object,
// -o json|yaml the applied objects (several as kubectl's List).
import {isDeepStrictEqual} from 'node:util'
import type {AnyObject} from '../api/types.js'
import {canonicalQuantity} from '../machinery/quantity.js'
import {isApiStatusError, type ResourceLocator, type RestClient} from '../client/index.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {printable, sortKeys, toJson, toYaml, withTypeMeta} from './printers.js'
import {UnknownResourceError, objectName, resourceForKind, type ResourceInfo} from './resources.js'
import {readManifests, type Manifest, type ManifestObject} from './manifests.js'
import {isPlainObject} from '../machinery/typed-value.js'

// ---------- targets ----------

/** A failure about one object (the others still go): reported on one line, then exit code 1. */
export class ObjectError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ObjectError'
  }
}

/**
 * The resource and namespace of a manifest's object. A namespaced object without a namespace goes to the
 * command's namespace; one whose namespace differs from an explicit -n is refused, as kubectl does.
 */
export async function targetOf(session: Session, manifest: Manifest): Promise<{info: ResourceInfo; locator: ResourceLocator & {name: string}}> {
  const object = manifest.object
  const name: string = object.metadata.name
  let info: ResourceInfo
  try {
    info = await resourceForKind(session.client, object.apiVersion, object.kind)
  } catch (error) {
    if (!(error instanceof UnknownResourceError)) throw error
    const ns = object.metadata.namespace ?? ''
    throw new ObjectError(`resource mapping not found for name: "${name}" namespace: "${ns}" from "${manifest.source}": ${error.message}`)
  }
  let namespace: string | undefined
  if (info.namespaced) {
    const given: unknown = object.metadata.namespace
    if (typeof given === 'string' && given !== '' && session.explicitNamespace && given !== session.namespace) {
      throw new ObjectError(
        `the namespace from the provided object "${given}" does not match the namespace "${session.namespace}". You must pass '--namespace=${given}' to perform this operation.`,
      )
    }
    namespace = typeof given === 'string' && given !== '' ? given : session.namespace
  }
  return {info, locator: {group: info.group, version: info.version, resource: info.resource, namespace, name}}
}

// ---------- strategies ----------

export type ApplyResult = 'created' | 'configured' | 'unchanged'

/** What applying one object did, and the object as it is after (as the server answered; -o json|yaml print it). */
export interface ApplyOutcome {
  result: ApplyResult
  object: AnyObject
}

/** How one object is brought to the state of its manifest. */
export interface ApplyStrategy {
  apply(client: RestClient, info: ResourceInfo, locator: ResourceLocator, object: ManifestObject, source: string): Promise<ApplyOutcome>
}

/** --dry-run: none (write), server (the server does everything but store: dryRun=All), client (send no write). */
export type DryRun = 'none' | 'server' | 'client'

export const dryRunModes = ['none', 'server', 'client'] as const

/** What a strategy is told besides the object. */
export interface StrategyOptions {
  /** the manager recorded in managedFields (server-side apply: required; create-or-replace: the server's default when absent) */
  fieldManager?: string
  /** server-side apply: take ownership of fields other managers hold (force=true) */
  force?: boolean
  dryRun?: DryRun
}

/** kubectl's suffix of the result line under --dry-run. */
export function dryRunSuffix(dryRun: DryRun | undefined): string {
  return dryRun === 'server' ? ' (server dry run)' : dryRun === 'client' ? ' (dry run)' : ''
}

/** A failed step of applying one object: kubectl's `error when creating "file": <server message>`. */
class ApplyStepError extends ObjectError {
  constructor(step: string, source: string, cause: Error) {
    super(`error when ${step} "${source}": ${cause.message}`)
    this.name = 'ApplyStepError'
  }
}

/** True when every field the manifest gives has the same value in the live object (lists: same length). */
export function containsManifest(live: unknown, given: unknown): boolean {
  if (given === null || given === undefined) return live === null || live === undefined
  if (Array.isArray(given)) {
    return Array.isArray(live) && live.length === given.length && given.every((g, i) => containsManifest(live[i], g))
  }
  if (isPlainObject(given)) return isPlainObject(live) && Object.entries(given).every(([key, value]) => containsManifest(live[key], value))
  return live === given || sameQuantity(live, given)
}

/** A quantity the server stores in canonical form (`cpu: 0.5` as "500m", `1024Mi` as "1Gi"): only
 *  quantities are stored other than as written, so a live string that is the given value's canonical
 *  form is that value. */
function sameQuantity(live: unknown, given: unknown): boolean {
  if (typeof live !== 'string' || (typeof given !== 'string' && typeof given !== 'number')) return false
  try {
    return canonicalQuantity(String(given)) === live
  } catch {
    return false
  }
}

/** What is compared for "unchanged": the manifest less its status when the server keeps status apart. */
function comparable(object: AnyObject, info: ResourceInfo): AnyObject {
  if (!info.subresources.includes('status') || object.status === undefined) return object
  const {status: _status, ...rest} = object
  return rest
}

/** The body of the PUT: the manifest at the live resourceVersion, keeping what controllers own on the live object. */
function replacement(object: ManifestObject, live: AnyObject): AnyObject {
  const body = structuredClone(object)
  body.metadata.resourceVersion = live.metadata?.resourceVersion
  for (const key of ['finalizers', 'ownerReferences']) {
    if (body.metadata[key] === undefined && live.metadata?.[key] !== undefined) body.metadata[key] = live.metadata[key]
  }
  return body
}

/**
 * Server-side apply: the manifest is PATCHed as application/apply-patch+yaml (JSON is YAML); the server
 * merges it into the live object, creating it when absent, and records the manager's fields. A conflict
 * with another manager's fields (409) is the server's message on one line (`Apply failed with 1 conflict:
 * conflict with "bob" using apps/v1: .spec.replicas`), as is any other refusal. --dry-run=client sends
 * nothing.
 */
export function serverSideApply(options: StrategyOptions = {}): ApplyStrategy {
  const fieldManager = options.fieldManager || 'orch'
  return {
    async apply(client, info, locator, object, source) {
      // read first, to say what the apply did as kubectl apply says it: created, configured, unchanged
      const live = await readLive(client, locator, source)
      if (options.dryRun === 'client') {
        return {result: !live ? 'created' : containsManifest(live, comparable(object, info)) ? 'unchanged' : 'configured', object}
      }
      let applied: AnyObject
      try {
        applied = await client.patch(locator, 'apply', object, {fieldManager, force: options.force || undefined, dryRun: options.dryRun === 'server' ? 'All' : undefined})
      } catch (error) {
        if (isApiStatusError(error)) throw new ObjectError(error.message)
        throw error
      }
      if (!live) return {result: 'created', object: applied}
      // an apply that changes nothing (managedFields included) is not written: the version stays
      if (options.dryRun !== 'server') {
        return {result: applied.metadata?.resourceVersion === live.metadata?.resourceVersion ? 'unchanged' : 'configured', object: applied}
      }
      return {result: sameContent(live, applied) ? 'unchanged' : 'configured', object: applied}
    },
  }
}

/** live and a dry run's answer hold the same object, managedFields aside (their times differ even when
 *  nothing would change) */
function sameContent(live: AnyObject, applied: AnyObject): boolean {
  const strip = (object: AnyObject) => {
    const {managedFields: _m, resourceVersion: _rv, ...metadata} = object.metadata ?? {}
    return {...object, metadata}
  }
  return isDeepStrictEqual(strip(live), strip(applied))
}

/** Create-or-replace: GET; absent → POST; present and different → PUT with the live resourceVersion. */
export const createOrReplace: ApplyStrategy = createOrReplaceWith()

/** Create-or-replace with a field manager and dry run (client: read, compare, write nothing). */
export function createOrReplaceWith(options: StrategyOptions = {}): ApplyStrategy {
  const writeOptions = {fieldManager: options.fieldManager, dryRun: options.dryRun === 'server' ? ('All' as const) : undefined}
  const dryClient = options.dryRun === 'client'
  return {
    async apply(client, info, locator, object, source) {
      // a write conflict (created or changed in between) is retried from a fresh read
      for (let attempt = 1; ; attempt++) {
        const last = attempt >= 3
        const live = await readLive(client, locator, source)
        if (!live) {
          if (dryClient) return {result: 'created', object}
          try {
            return {result: 'created', object: await client.create(locator, object, writeOptions)}
          } catch (error) {
            if (!last && isApiStatusError(error) && error.code === 409) continue
            throw step('creating', source, error)
          }
        }
        if (containsManifest(live, comparable(object, info))) return {result: 'unchanged', object: live}
        if (dryClient) return {result: 'configured', object}
        try {
          return {result: 'configured', object: await client.update(locator, replacement(object, live), writeOptions)}
        } catch (error) {
          if (!last && isApiStatusError(error) && error.code === 409) continue
          throw step('replacing', source, error)
        }
      }
    },
  }
}

/** The live object, undefined when there is none. */
async function readLive(client: RestClient, locator: ResourceLocator, source: string): Promise<AnyObject | undefined> {
  try {
    return await client.get(locator)
  } catch (error) {
    if (isApiStatusError(error) && error.code === 404) return undefined
    throw step('retrieving current configuration of', source, error)
  }
}

/** API errors become the step's one-line error; others (the server unreachable) stop the command. */
function step(what: string, source: string, error: unknown): unknown {
  return isApiStatusError(error) ? new ApplyStepError(what, source, error) : error
}

// ---------- the command ----------

export interface ApplyOptions extends ConnectOptions {
  /** -f values: files, directories, `-` */
  filenames: string[]
  /** server-side apply (default true); false: create-or-replace */
  serverSide?: boolean
  /** --field-manager (server-side apply default: orch) */
  fieldManager?: string
  /** --force-conflicts (server-side apply only) */
  forceConflicts?: boolean
  dryRun?: DryRun
  /** -o: name (kind/name lines), json or yaml (the applied objects; several as a List) */
  output?: string
  /** -R: directories' subdirectories too */
  recursive?: boolean
}

/** The strategy the flags choose; a flag that does not fit it is a usage error. */
export function strategyFor(options: Omit<ApplyOptions, 'filenames'>): ApplyStrategy {
  const serverSide = options.serverSide ?? true
  if (!serverSide && options.forceConflicts) throw new Error('--force-conflicts only works with --server-side')
  const strategyOptions: StrategyOptions = {fieldManager: options.fieldManager, force: options.forceConflicts, dryRun: options.dryRun}
  return serverSide ? serverSideApply(strategyOptions) : createOrReplaceWith(strategyOptions)
}

/**
 * Runs `orch apply`; exit code 1 when any manifest or object failed. As kubectl's apply with its builder's
 * ContinueOnError: every object that could be read is applied, and then every error is reported, one line
 * each: first those of reading (a file or document that cannot be parsed), then those of applying.
 */
export function runApply(options: ApplyOptions, chosen?: ApplyStrategy): Promise<void> {
  return withSession(options, async (session) => {
    const strategy = chosen ?? strategyFor(options)
    const suffix = dryRunSuffix(options.dryRun)
    const {manifests, errors} = await readManifests(options.filenames, {recursive: options.recursive})
    if (manifests.length === 0 && errors.length === 0) throw new Error('no objects passed to apply')
    const failures: Error[] = [...errors]
    const reportFailures = () => failures.forEach((failure) => reportError(failure, session.server))
    const printed: {info: ResourceInfo; object: AnyObject}[] = []
    for (const manifest of manifests) {
      try {
        const {info, locator} = await targetOf(session, manifest)
        const object = structuredClone(manifest.object)
        // a cluster-scoped object has no namespace: one the manifest gives is dropped, as kubectl drops it
        if (locator.namespace) object.metadata.namespace = locator.namespace
        else delete object.metadata.namespace
        const outcome = await strategy.apply(session.client, info, locator, object, manifest.source)
        if (options.output === 'name') process.stdout.write(`${objectName(info, locator.name)}\n`)
        else if (options.output === 'json' || options.output === 'yaml') printed.push({info, object: outcome.object})
        else process.stdout.write(`${objectName(info, locator.name)} ${outcome.result}${suffix}\n`)
      } catch (error) {
        // anything else (the server unreachable) stops the command at once, after what went wrong before
        if (!(error instanceof ObjectError)) {
          reportFailures()
          throw error
        }
        failures.push(error)
      }
    }
    if (printed.length > 0) {
      // as kubectl apply prints them: one object as it is, several in a List (kind first, empty metadata)
      const objects = printed.map(({info, object}) => withTypeMeta(printable(object), info))
      if (objects.length === 1) process.stdout.write(options.output === 'json' ? toJson(objects[0]) : toYaml(objects[0]))
      else if (options.output === 'yaml') process.stdout.write(toYaml({apiVersion: 'v1', items: objects, kind: 'List', metadata: {}}))
      else process.stdout.write(JSON.stringify({kind: 'List', apiVersion: 'v1', metadata: {}, items: objects.map(sortKeys)}, null, 4) + '\n')
    }
    reportFailures()
    return failures.length > 0 ? 1 : 0
  })
}
