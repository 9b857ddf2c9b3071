// What the generic registry (./registry.ts) is given and small helpers it shares: write and delete
// options, its dependencies, the kind-specific hooks around writes, and object helpers.
import {isDeepStrictEqual} from 'node:util'
import type {AnyObject, KindDeclaration, RequestContext} from '../api/types.js'
import {goNullsToZero} from '../machinery/go-normalize.js'
import {errors} from '../machinery/status.js'
import type {Store} from '../storage/index.js'

export interface WriteOptions {
  dryRun?: boolean
  context: RequestContext
  /** the field manager of an ordinary write: its changes are recorded in managedFields */
  fieldManager?: string
  /** managedFields are already computed (server-side apply) */
  managedFieldsDone?: boolean
  /** the subresource the managedFields entry names when it is not the one written (/scale writes the
   *  parent's spec.replicas) */
  managedSubresource?: string
  /** a create may work on the body itself instead of a copy: the caller made it for this request
   *  (a decoded request body) and will not look at it again */
  bodyOwned?: boolean
  /** an update or apply that creates: also authorized as create, once the object validates (Kubernetes'
   *  withAuthorization runs with the create validation, after the strategy's) */
  createOnUpdate?: boolean
}

export interface DeleteOptions {
  dryRun?: boolean
  preconditions?: {uid?: string; resourceVersion?: string}
  gracePeriodSeconds?: number
  propagationPolicy?: string
  orphanDependents?: boolean
  context: RequestContext
  /** the caller ran admission for what it does (an eviction: CREATE of pods/eviction), so the
   *  delete runs none of its own, as Kubernetes' EvictionREST deletes with ValidateAllObjectFunc */
  admitted?: boolean
  /** one object of a deletecollection: admitted with no name, as Kubernetes' collection delete is */
  inCollection?: boolean
}

export interface RegistryDependencies {
  store: Store
  /** the namespace object, for namespaced creates (404 when missing, 403 when terminating) */
  namespaceOf(name: string): Promise<AnyObject | null>
  now(): Date
  /** how long a continue token stays valid (default 5 minutes) */
  continueTokenTtlMs?: number
  /** how far back a watch may resume (default 5 minutes) */
  watchHistoryMs?: number
}

/**
 * How a write that a hook began ends (Kubernetes' FinishFunc), called exactly once: true once the
 * object is stored, or an update found nothing to change (keep what was taken, free what the object
 * no longer holds); false when anything refused the write after the hook ran, it lost a conflict, or
 * it was a dry run (give back what was taken, free nothing).
 */
export type FinishWrite = (success: boolean) => Promise<void>

/** Kind-specific work around writes that needs other resources (a Service's cluster IPs and node ports). */
export interface RegistryHooks {
  /** Kubernetes' BeginCreate: after mutating admission, before validation and validating admission,
   *  so both see what it sets; may change the object */
  beginCreate?(object: AnyObject, options: {dryRun?: boolean}): Promise<FinishWrite | undefined>
  /** BeginUpdate: the same for an update (old is the stored object) */
  beginUpdate?(object: AnyObject, old: AnyObject, options: {dryRun?: boolean}): Promise<FinishWrite | undefined>
  /** checks of who may write what, in the storage layer as Kubernetes' policybased RBAC storages
   *  make them: after mutating admission, before beginCreate / beginUpdate and validation; throws to
   *  refuse. `old` is undefined for a create; `name` is the request's ('' for a POST) */
  authorizeWrite?(object: AnyObject, old: AnyObject | undefined, write: {context: RequestContext; name: string}): void
  /** after the object is gone from the store */
  afterDelete?(object: AnyObject): Promise<void>
}

/** Ends a hook's write; what fails to be freed is a leak for the hook to reconcile, never the
 *  request's error. */
export async function finishWrite(finish: FinishWrite | undefined, success: boolean): Promise<void> {
  await finish?.(success).catch(() => undefined)
}

/** Kubernetes' immortal namespaces (default, kube-system, kube-public), renamed: NamespaceLifecycle
 *  refuses to delete them */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'orch-system', 'orch-public'])

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
export const GENERATE_NAME_ATTEMPTS = 8
/** a longer generateName is cut to this, so that with the 5-character suffix the name fits 63
 *  characters (Kubernetes' SimpleNameGenerator) */
export const GENERATE_NAME_MAX_BASE = 58

export function generateNameSuffix(): string {
  let out = ''
  for (let i = 0; i < 5; i++) out += GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)]
  return out
}

export function withoutVersion(object: AnyObject): AnyObject {
  const {resourceVersion: _rv, ...metadata} = object.metadata ?? {}
  return {...object, metadata}
}

/**
 * An update that changes no value writes nothing (key order does not count), nor one that would change
 * only the times of managedFields entries (Kubernetes' IgnoreManagedFieldsTimestampsTransformer: the
 * same entries in the same order otherwise). One comparison of the whole object, with the stored
 * entries standing in for entries that differ from them only in their times.
 */
export function writesNothing(next: AnyObject, old: AnyObject): boolean {
  const ours = next.metadata?.managedFields
  const theirs = old.metadata?.managedFields
  const timesOnly =
    ours !== theirs &&
    Array.isArray(ours) &&
    Array.isArray(theirs) &&
    ours.length === theirs.length &&
    ours.every((entry, i) => isDeepStrictEqual({...(entry as AnyObject), time: undefined}, {...(theirs[i] as AnyObject), time: undefined}))
  const compared = timesOnly ? {...next, metadata: {...next.metadata, managedFields: theirs}} : next
  return isDeepStrictEqual(withoutVersion(compared), withoutVersion(old))
}

export function clone<T>(value: T): T {
  return structuredClone(value)
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}

/** A strategy's warnings for the answer, each once (a retried update computes them again), as
 *  Kubernetes' warning recorder keeps them. */
export function addWarnings(context: RequestContext, warnings: string[] | undefined): void {
  for (const warning of warnings ?? []) if (context.warnings && !context.warnings.includes(warning)) context.warnings.push(warning)
}

/** spec and status are Go structs, which Kubernetes always serialises: `{}` when empty. */
export function ensureTopLevelStructs(object: AnyObject, declaration: KindDeclaration): void {
  // nulls as Go's decoder leaves them: unset fields, zero map values and list items (never a null
  // where defaulting and validation read a string or an object)
  goNullsToZero(object, declaration.schema)
  for (const field of ['spec', 'status']) {
    if (declaration.schema.fields[field]?.type === 'object' && (object[field] === undefined || object[field] === null)) object[field] = {}
  }
}

export function isObject(value: unknown): value is AnyObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Kubernetes' checkName for an update or a patched object: it names the object of the URL (a body
 *  without a name does not), and a namespace it gives is the request's (`namespace`: '' for a
 *  cluster-scoped kind). */
export function checkName(object: AnyObject, name: string, namespace: string): void {
  const meta = object.metadata ?? {}
  if ((meta.name ?? '') !== name) {
    throw errors.badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`)
  }
  if (namespace && meta.namespace && meta.namespace !== namespace) {
    throw errors.badRequest(`the namespace of the object (${meta.namespace}) does not match the namespace on the request (${namespace})`)
  }
}

export function assertBodyObject(value: unknown): AnyObject {
  if (!isObject(value)) throw errors.badRequest('the request body must be an object')
  const metadata = value.metadata
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
    const type = Array.isArray(metadata) ? 'array' : typeof metadata === 'string' ? 'string' : typeof metadata === 'boolean' ? 'bool' : 'number'
    throw errors.badRequest(`json: cannot unmarshal ${type} into Go struct field .metadata of type v1.ObjectMeta`)
  }
  return value
}

/** Marking an object for deletion changes its generation, as Kubernetes' markAsDeleting and graceful
 *  BeforeDelete do, for kinds that keep one. */
export function bumpGeneration(object: AnyObject): void {
  const generation = object.metadata!.generation
  if (typeof generation === 'number' && generation > 0) object.metadata!.generation = generation + 1
}
