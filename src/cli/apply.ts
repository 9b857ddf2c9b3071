// `orch apply -f FILE|DIR|-`: manifests (multi-document YAML, JSON, kind List) read from files, the
// .yaml/.yml/.json files of a directory in name order, or stdin; each object created or brought up to date
// through an ApplyStrategy. The strategy for now is create-or-replace (GET; absent: POST; present and
// different in a field the manifest gives: PUT at the live resourceVersion); server-side apply will be
// another strategy behind the same interface. A manifest that cannot be read fails the command before
// anything is sent; an object the server refuses is reported on one line and the others still go.
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import * as yaml from 'js-yaml'
import type {AnyObject} from '../api/types.js'
import {JsonStreamDecoder, isApiStatusError, type ResourceLocator, type RestClient} from '../client/index.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {UnknownResourceError, objectName, resourceForKind, type ResourceInfo} from './resources.js'

// ---------- manifests ----------

/** An object as a manifest must give it: apiVersion, kind and a name at least. */
export type ManifestObject = AnyObject & {apiVersion: string; kind: string; metadata: Record<string, any> & {name: string}}

/** One object of a manifest, and where it came from (for messages). */
export interface Manifest {
  /** the file name, or `STDIN` */
  source: string
  object: ManifestObject
}

/** A failure about one object (the others still go): reported on one line, then exit code 1. */
export class ObjectError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ObjectError'
  }
}

/** A manifest that cannot be read or parsed. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ManifestError'
  }
}

const manifestExtensions = /\.(ya?ml|json)$/i

/** The files a -f value names: itself, or a directory's .yaml/.yml/.json files in name order (not recursive). */
function filesOf(path: string): string[] {
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ManifestError(code === 'ENOENT' ? `the path "${path}" does not exist` : `the path "${path}" cannot be read: ${(error as Error).message}`)
  }
  if (!stats.isDirectory()) return [path]
  return readdirSync(path)
    .filter((name) => manifestExtensions.test(name))
    .sort()
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile())
}

/** The documents of a JSON text: one value, or a stream of concatenated objects. */
function parseJson(text: string, source: string): unknown[] {
  try {
    return [JSON.parse(text)]
  } catch (error) {
    try {
      const decoder = new JsonStreamDecoder()
      const values = decoder.push(Buffer.from(text))
      decoder.end()
      if (values.length > 0) return values
    } catch {
      // the first error says more
    }
    throw new ManifestError(`error parsing ${source}: ${(error as Error).message}`)
  }
}

function parseYaml(text: string, source: string): unknown[] {
  try {
    return yaml.loadAll(text)
  } catch (error) {
    if (error instanceof yaml.YAMLException) {
      const line = error.mark ? ` (line ${error.mark.line + 1}, column ${error.mark.column + 1})` : ''
      throw new ManifestError(`error parsing ${source}: ${error.reason}${line}`)
    }
    throw new ManifestError(`error parsing ${source}: ${(error as Error).message}`)
  }
}

function isRecord(value: unknown): value is AnyObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The objects of one text: YAML documents or JSON values; empty documents skipped, kind List unpacked. */
export function parseManifests(text: string, source: string): Manifest[] {
  const documents = /^\s*[{[]/.test(text) ? parseJson(text, source) : parseYaml(text, source)
  const out: Manifest[] = []
  const add = (value: unknown, where: string) => {
    if (value === null || value === undefined) return
    if (!isRecord(value)) throw new ManifestError(`error parsing ${source}: ${where} is not an object`)
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      value.items.forEach((item: unknown, i: number) => add(item, `${where}, item ${i + 1}`))
      return
    }
    const missing = [
      typeof value.apiVersion === 'string' && value.apiVersion !== '' ? '' : 'apiVersion not set',
      typeof value.kind === 'string' && value.kind !== '' ? '' : 'kind not set',
      isRecord(value.metadata) && typeof value.metadata.name === 'string' && value.metadata.name !== '' ? '' : 'metadata.name not set',
    ].filter(Boolean)
    if (missing.length > 0) throw new ManifestError(`error validating ${source}: ${where}: ${missing.join(', ')}`)
    out.push({source, object: value as ManifestObject})
  }
  documents.forEach((value, i) => add(value, documents.length > 1 ? `document ${i + 1}` : 'the document'))
  return out
}

/** Every object of the -f values (files, directories, `-` for stdin), in order. */
export function readManifests(paths: string[], readStdin: () => string = () => readFileSync(0, 'utf8')): Manifest[] {
  const out: Manifest[] = []
  for (const path of paths) {
    if (path === '-') {
      out.push(...parseManifests(readStdin(), 'STDIN'))
      continue
    }
    for (const file of filesOf(path)) {
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch (error) {
        throw new ManifestError(`the path "${file}" cannot be read: ${(error as Error).message}`)
      }
      out.push(...parseManifests(text, file))
    }
  }
  return out
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

export type ApplyResult = 'created' | 'configured' | 'unchanged' | 'serverside-applied'

/** How one object is brought to the state of its manifest. */
export interface ApplyStrategy {
  apply(client: RestClient, info: ResourceInfo, locator: ResourceLocator, object: ManifestObject, source: string): Promise<ApplyResult>
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
  if (isRecord(given)) return isRecord(live) && Object.entries(given).every(([key, value]) => containsManifest(live[key], value))
  return live === given
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

/** Create-or-replace: GET; absent → POST; present and different → PUT with the live resourceVersion. */
export const createOrReplace: ApplyStrategy = {
  async apply(client, info, locator, object, source) {
    // a write conflict (created or changed in between) is retried from a fresh read
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= 3
      let live: AnyObject | undefined
      try {
        live = await client.get(locator)
      } catch (error) {
        if (!isApiStatusError(error) || error.code !== 404) throw step('retrieving current configuration of', source, error)
      }
      if (!live) {
        try {
          await client.create(locator, object)
          return 'created'
        } catch (error) {
          if (!last && isApiStatusError(error) && error.code === 409) continue
          throw step('creating', source, error)
        }
      }
      if (containsManifest(live, comparable(object, info))) return 'unchanged'
      try {
        await client.update(locator, replacement(object, live))
        return 'configured'
      } catch (error) {
        if (!last && isApiStatusError(error) && error.code === 409) continue
        throw step('replacing', source, error)
      }
    }
  },
}

/** API errors become the step's one-line error; others (the server unreachable) stop the command. */
function step(what: string, source: string, error: unknown): unknown {
  return isApiStatusError(error) ? new ApplyStepError(what, source, error) : error
}

// ---------- the command ----------

export interface ApplyOptions extends ConnectOptions {
  /** -f values: files, directories, `-` */
  filenames: string[]
}

/** Runs `orch apply`; exit code 1 when any object failed (the others are still applied). */
export function runApply(options: ApplyOptions, strategy: ApplyStrategy = createOrReplace): Promise<void> {
  return withSession(options, async (session) => {
    const manifests = readManifests(options.filenames)
    if (manifests.length === 0) throw new Error('no objects passed to apply')
    let code = 0
    for (const manifest of manifests) {
      try {
        const {info, locator} = await targetOf(session, manifest)
        const object = structuredClone(manifest.object)
        if (locator.namespace) object.metadata.namespace = locator.namespace
        const result = await strategy.apply(session.client, info, locator, object, manifest.source)
        process.stdout.write(`${objectName(info, locator.name)} ${result}\n`)
      } catch (error) {
        // anything else (the server unreachable) stops the command at once
        if (!(error instanceof ObjectError)) throw error
        reportError(error, session.server)
        code = 1
      }
    }
    return code
  })
}
