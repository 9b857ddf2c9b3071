// The generic registry: every kind is stored, read, listed and written by this one piece of code,
// driven by the kind's declaration (src/api). Kind-specific behaviour lives in the declarations.
import {randomUUID} from 'node:crypto'
import type {AnyObject, FieldError, KindDeclaration, RequestContext} from '../api/types.js'
import {apiVersionOf} from '../api/types.js'
import {errors, type GroupResource, successStatus} from '../machinery/status.js'
import type {AdmissionChain} from '../admission/chain.js'
import type {AdmissionAttributes, Operation} from '../admission/types.js'
import {validateListMapKeys, validateObjectMeta} from './meta-validation.js'
import {admissionAttributesOf} from './admission-attributes.js'
import {finalizersForDeletion} from '../machinery/deletion-propagation.js'
import {ConflictError, KeyExistsError, KeyNotFoundError, type KeyValue, WatchCache} from '../storage/index.js'
import {formatTime, resetFields, updateManagedFields} from '../machinery/managed-fields.js'
import {compileSelectors, type Selectors} from './selectors.js'
import {parseResourceVersion, ResourceLister, type ListParams, type ListResult} from './registry-list.js'
import {decodeStored, decodeStoredShared, encodeStored, rememberStored} from './stored-json.js'
import {kindValidatorKey, kindValidators, type KindValidator} from './validation/index.js'
import {beforeUpdate, checkResourceVersion, checkUidPrecondition, updatedObject} from './registry-update.js'
import {replicasFromScale, SCALE_KIND, toScale} from './scale.js'
import {scaleSchema} from '../machinery/protobuf-schemas.js'
import {
  addWarnings,
  bumpGeneration,
  checkName,
  clone,
  type DeleteOptions,
  ensureTopLevelStructs,
  finishWrite,
  type FinishWrite,
  GENERATE_NAME_ATTEMPTS,
  GENERATE_NAME_MAX_BASE,
  generateNameSuffix,
  IMMORTAL_NAMESPACES,
  type RegistryDependencies,
  type RegistryHooks,
  writesNothing,
  type WriteOptions,
} from './registry-support.js'

export {assertBodyObject, checkName, generateNameSuffix, IMMORTAL_NAMESPACES, isObject} from './registry-support.js'
export type {DeleteOptions, FinishWrite, RegistryDependencies, RegistryHooks, WriteOptions} from './registry-support.js'

/** An update's object as prepareUpdate built it, validated once admission has mutated it and the
 *  beginUpdate hook has run (Kubernetes validates in BeforeUpdate, after BeginUpdate). */
interface PendingValidation {
  subresource: string
  context: RequestContext
}

export class ResourceRegistry {
  hooks: RegistryHooks = {}
  /** what prepareUpdate built and completeUpdate validates (keyed by the object) */
  private readonly pendingValidation = new WeakMap<AnyObject, PendingValidation>()
  /** the admission chain user writes go through (set by the server; none in unit tests) */
  admission: AdmissionChain | undefined
  /** the kind's validation rules (src/apiserver/validation) */
  private readonly kindValidator: KindValidator | undefined
  readonly groupResource: GroupResource
  readonly cache: WatchCache<AnyObject>
  private readonly lister: ResourceLister
  readonly apiVersion: string
  private readonly rootPrefix: string

  constructor(
    readonly declaration: KindDeclaration,
    private readonly deps: RegistryDependencies,
  ) {
    this.groupResource = {group: declaration.group, resource: declaration.resource}
    this.apiVersion = apiVersionOf(declaration)
    this.kindValidator = kindValidators.get(kindValidatorKey(declaration.group, declaration.kind))
    this.rootPrefix = `/registry/${declaration.group || 'core'}/${declaration.resource}/`
    this.cache = new WatchCache<AnyObject>(deps.store, this.rootPrefix, {
      decode: decodeStoredShared,
      retentionMs: deps.watchHistoryMs ?? 5 * 60_000,
    })
    this.lister = new ResourceLister(deps.store, this.cache, deps.now, deps.continueTokenTtlMs)
  }

  key(namespace: string, name: string): string {
    return this.declaration.namespaced ? `${this.rootPrefix}${namespace}/${name}` : `${this.rootPrefix}${name}`
  }

  /** the key prefix of a namespace's objects, or of all of them */
  prefix(namespace: string): string {
    return this.declaration.namespaced && namespace ? `${this.rootPrefix}${namespace}/` : this.rootPrefix
  }

  selectors(params: {labelSelector?: string; fieldSelector?: string}): Selectors {
    return compileSelectors(this.declaration, params)
  }

  currentStoreRevision(): Promise<number> {
    return this.deps.store.currentRevision()
  }

  /** The object; `resourceVersion` (a client's GET): not older than that revision, which may wait */
  async get(namespace: string, name: string, resourceVersion?: string): Promise<AnyObject> {
    const requested = parseResourceVersion(resourceVersion)
    if (requested !== undefined) await this.lister.waitFresh(requested)
    const kv = await this.deps.store.get(this.key(namespace, name))
    if (!kv) throw errors.notFound(this.groupResource, name)
    return decodeStored(kv)
  }

  /** The object as stored now, or undefined when there is none. */
  async getIfExists(namespace: string, name: string): Promise<AnyObject | undefined> {
    const kv = await this.deps.store.get(this.key(namespace, name))
    return kv ? decodeStored(kv) : undefined
  }

  list(namespace: string, params: ListParams): Promise<ListResult> {
    return this.lister.list(this.prefix(namespace), this.selectors(params), params)
  }

  /** 504 Timeout (cause ResourceVersionTooLarge) when storage has not reached `requested`. */
  notAhead(requested: number): Promise<void> {
    return this.lister.notAhead(requested)
  }

  private async checkNamespace(namespace: string, verb: 'create', name: string): Promise<void> {
    if (!this.declaration.namespaced) return
    const ns = await this.deps.namespaceOf(namespace)
    if (!ns) throw errors.notFound({group: '', resource: 'namespaces'}, namespace)
    if (verb === 'create' && (ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating')) {
      // Kubernetes' NamespaceLifecycle admission: admission.NewForbidden names the object, and a
      // NamespaceTerminating cause lets clients tell this refusal from an authorization one
      const error = errors.forbidden(this.groupResource, name, `unable to create new content in namespace ${namespace} because it is being terminated`)
      error.details!.causes = [{reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace'}]
      throw error
    }
  }

  private invalid(name: string, causes: FieldError[]) {
    return errors.invalid({group: this.declaration.group, kind: this.declaration.kind}, name, causes)
  }

  /** Checks apiVersion/kind of a body against this resource; absent ones are taken from the URL,
   *  as Kubernetes' decoder defaults them. */
  checkTypeMeta(object: AnyObject): void {
    object.apiVersion ??= this.apiVersion
    object.kind ??= this.declaration.kind
    if (object.apiVersion !== this.apiVersion) {
      throw errors.badRequest(
        `the API version in the data (${object.apiVersion}) does not match the expected API version (${this.apiVersion})`,
      )
    }
    if (object.kind !== this.declaration.kind) {
      throw errors.badRequest(`the kind in the data (${object.kind}) does not match the expected kind (${this.declaration.kind})`)
    }
  }

  async create(namespace: string, body: AnyObject, options: WriteOptions): Promise<AnyObject> {
    // only the type and metadata are set here (a body's metadata is an object: assertBodyObject);
    // prepareCreate works on a deep copy unless the caller gave the body up
    const meta: AnyObject = {...body.metadata}
    const object: AnyObject = {...body, metadata: meta}
    this.checkTypeMeta(object)
    if (this.declaration.namespaced) {
      if (meta.namespace && meta.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request')
      }
      meta.namespace = namespace
    } else {
      delete meta.namespace
    }
    const {object: admitted, attributes} = await this.admitCreate(options.bodyOwned ? object : clone(object), options)
    this.hooks.authorizeWrite?.(admitted, undefined, {context: options.context, name: options.createOnUpdate ? (admitted.metadata!.name ?? '') : ''})
    const generated = !admitted.metadata!.name && admitted.metadata!.generateName
    for (let attempt = 0; ; attempt++) {
      // a generated name may need another attempt, which starts again from the object as admission
      // left it (what the attempt before took is given back first); admission does not run again
      const candidate = generated ? clone(admitted) : admitted
      if (generated) candidate.metadata!.name = `${String(admitted.metadata!.generateName).slice(0, GENERATE_NAME_MAX_BASE)}${generateNameSuffix()}`
      const {object: prepared, finish} = await this.prepareCreate(candidate, options, attributes)
      let stored = false
      try {
        const key = this.key(namespace, prepared.metadata!.name)
        if (options.dryRun) {
          // DryRunnableStorage.Create: an object that exists is AlreadyExists in a dry run too
          if (await this.deps.store.get(key)) throw new KeyExistsError(key)
          return prepared
        }
        // the storage's Create refuses a version that parses as a non-zero number
        // (storage.ErrResourceVersionSetOnCreate; Kubernetes answers that with a 500, a client's
        // mistake is a 400 here); a create through PUT or apply goes through Store.Update, which drops it
        const version = prepared.metadata!.resourceVersion
        if (version !== undefined) {
          if (!options.createOnUpdate && /^\d+$/.test(String(version)) && BigInt(version) !== 0n) throw errors.badRequest('resourceVersion should not be set on objects to be created')
          delete prepared.metadata!.resourceVersion
        }
        const encoded = encodeStored(prepared)
        const revision = await this.deps.store.create(key, encoded)
        prepared.metadata!.resourceVersion = String(revision)
        rememberStored(prepared, encoded, revision)
        stored = true
        return prepared
      } catch (error) {
        if (error instanceof KeyExistsError) {
          if (generated && attempt + 1 < GENERATE_NAME_ATTEMPTS) continue
          throw errors.alreadyExists(this.groupResource, prepared.metadata!.name)
        }
        throw error
      } finally {
        await finishWrite(finish, stored)
      }
    }
  }

  /**
   * A create up to and including mutating admission, which runs once, as in Kubernetes' create
   * handler: the namespace's lifecycle, decoding's defaults, the manager's managedFields, then the
   * mutating plugins. The
   * server's own metadata (uid, creationTimestamp, a generated name, generation) is not there yet,
   * as Store.Create fills it after admission. Works on (and changes) `object`.
   */
  private async admitCreate(object: AnyObject, options: WriteOptions): Promise<{object: AnyObject; attributes: AdmissionAttributes | undefined}> {
    // NamespaceLifecycle, the first mutating plugin: a missing namespace is 404, a terminating one
    // 403, before anything else looks at the object (or a Service's hook allocates for it)
    if (this.declaration.namespaced) await this.checkNamespace(object.metadata!.namespace, 'create', object.metadata!.name ?? '')
    ensureTopLevelStructs(object, this.declaration)
    this.declaration.defaults?.(object)
    this.recordManagedFields(undefined, object, options, '')
    object.apiVersion = this.apiVersion
    object.kind = this.declaration.kind
    const attributes = this.admission ? this.admissionAttributes('CREATE', object, null, object.metadata!.name ?? '', '', options.context, options.dryRun) : undefined
    if (attributes && this.admission!.mutates) object = this.afterMutation(await this.admission!.admit(attributes))
    return {object, attributes}
  }

  /**
   * Builds the object to store from what admission left; works on (and changes) `object`.
   * Kubernetes' Store.Create order: the system fields (uid, creationTimestamp), the beginCreate hook
   * (a Service's cluster IPs and node ports), the strategy's PrepareForCreate (generation 1, a
   * status of its own), validation, validating admission — so validation and validating admission
   * see what the hook set. The hook's finish is the caller's to call; when this throws it has
   * already been called.
   */
  private async prepareCreate(object: AnyObject, options: WriteOptions, attributes: AdmissionAttributes | undefined): Promise<{object: AnyObject; finish: FinishWrite | undefined}> {
    const meta = object.metadata!
    meta.uid = randomUUID()
    meta.creationTimestamp = formatTime(options.context.now)
    if (meta.resourceVersion === '') delete meta.resourceVersion
    delete meta.deletionTimestamp
    delete meta.deletionGracePeriodSeconds
    delete meta.selfLink
    const finish = await this.hooks.beginCreate?.(object, {dryRun: options.dryRun})
    try {
      // a kind that counts no generation keeps what the client set (BeforeCreate leaves it alone)
      if ((this.declaration.generationFields ?? ['spec']).length > 0) meta.generation = 1
      this.declaration.prepareForCreate?.(object, options.context)
      const causes = [
        ...validateObjectMeta(object, this.declaration, {creating: true}),
        ...(this.declaration.validateCreate?.(object, options.context) ?? []),
        ...(this.kindValidator?.create?.(object, options.context) ?? []),
      ]
      causes.push(...validateListMapKeys(object, this.declaration, causes))
      if (causes.length > 0) throw this.invalid(object.metadata?.name ?? object.metadata?.generateName ?? '', causes)
      if (options.createOnUpdate) options.context.authorizeCreate?.()
      addWarnings(options.context, this.declaration.warningsOnCreate?.(object, options.context))
      if (attributes) {
        attributes.object = object
        await this.admission!.validate(attributes)
      }
    } catch (error) {
      await finishWrite(finish, false)
      throw error
    }
    return {object, finish}
  }

  /** The object a mutating plugin left: still this kind, its identity as the server set it. */
  private afterMutation(object: AnyObject | null): AnyObject {
    if (!object || typeof object !== 'object') throw errors.internal('admission left no object to store')
    object.apiVersion = this.apiVersion
    object.kind = this.declaration.kind
    // what a plugin wrote is decoded into the Go type and defaulted again, as Kubernetes' mutating
    // dispatchers leave it (nulls as Go reads them, canonical quantities, the kind's defaults)
    ensureTopLevelStructs(object, this.declaration)
    this.declaration.defaults?.(object)
    return object
  }

  /** An update's attributes; one through /scale is admitted as the autoscaling/v1 Scale it writes
   *  (its kind, objects and schema), as Kubernetes' scale REST admits it. */
  private updateAttributes(next: AnyObject, old: AnyObject, admit: {context: RequestContext; subresource: string}, dryRun: boolean | undefined): AdmissionAttributes {
    const name = old.metadata!.name
    if (admit.subresource !== 'scale') return this.admissionAttributes('UPDATE', next, old, name, admit.subresource, admit.context, dryRun)
    const attributes = this.admissionAttributes('UPDATE', toScale(next), toScale(old), name, 'scale', admit.context, dryRun)
    return {...attributes, kind: SCALE_KIND, declaration: {...this.declaration, schema: scaleSchema}}
  }

  /** Kubernetes' admission.Attributes for a write of this kind. */
  admissionAttributes(
    operation: Operation,
    object: AnyObject | null,
    old: AnyObject | null,
    name: string,
    subresource: string,
    context: RequestContext,
    dryRun: boolean | undefined,
  ): AdmissionAttributes {
    return admissionAttributesOf(this.declaration, (namespace) => this.deps.namespaceOf(namespace), {operation, object, old, name, subresource, context, dryRun})
  }

  /**
   * PUT: replaces the object (or its status / finalize / custom subresource part). Creates it when
   * absent if the kind allows. A resourceVersion in the body is a precondition (409 when stale).
   */
  async update(
    namespace: string,
    name: string,
    body: AnyObject,
    options: WriteOptions & {subresource?: string},
  ): Promise<{object: AnyObject; created: boolean}> {
    body = {...body}
    this.checkTypeMeta(body)
    const meta = body.metadata ?? {}
    checkName(body, name, this.declaration.namespaced ? namespace : '')
    const subresource = options.subresource ?? ''
    const precondition = meta.resourceVersion ? String(meta.resourceVersion) : ''
    const key = this.key(namespace, name)
    for (;;) {
      const current = await this.deps.store.get(key)
      if (!current) {
        if (subresource || !this.declaration.allowCreateOnUpdate) throw errors.notFound(this.groupResource, name)
        checkUidPrecondition(this.groupResource, key, name, meta.uid, undefined)
        const object = await this.create(namespace, {...body, metadata: {...meta, name}}, {...options, createOnUpdate: true}).catch((error) => {
          // a concurrent create: go round again as an update
          if ((error as {reason?: string}).reason === 'AlreadyExists') return undefined
          throw error
        })
        if (object) return {object, created: true}
        continue
      }
      const old = decodeStored(current)
      // the storage's uid precondition first, then Store.Update's resourceVersion check
      checkUidPrecondition(this.groupResource, key, name, meta.uid, old)
      checkResourceVersion(this.groupResource, name, precondition, old)
      if (!precondition && !this.declaration.allowUnconditionalUpdate && !subresource) {
        throw this.invalid(name, [
          {type: 'FieldValueInvalid', field: 'metadata.resourceVersion', value: '0x0', message: 'must be specified for an update'},
        ])
      }
      const prepared = this.prepareUpdate(old, body, subresource, options)
      const result = await this.completeUpdate(key, current, old, prepared, {dryRun: options.dryRun, admit: {context: options.context, subresource}})
      if (result === 'conflict') {
        if (precondition) throw errors.staleResourceVersion(this.groupResource, name)
        continue
      }
      return {object: result, created: false}
    }
  }

  /** Builds the object to store from the stored one and the request body; completeUpdate (update,
   *  guaranteedUpdate) validates it after admission and the beginUpdate hook. */
  prepareUpdate(old: AnyObject, body: AnyObject, subresource: string, options: WriteOptions): AnyObject {
    const object = updatedObject(this.declaration, old, body, subresource, options)
    this.recordManagedFields(old, object, options, subresource)
    this.pendingValidation.set(object, {subresource, context: options.context})
    return object
  }

  /** What is wrong with an update (empty when nothing). */
  private updateCauses(object: AnyObject, old: AnyObject, subresource: string, requestContext: RequestContext): FieldError[] {
    const declaration = this.declaration
    const context = {...requestContext, subresource: subresource || undefined}
    const causes = [
      ...validateObjectMeta(object, declaration, {creating: false, old}),
      ...(subresource && subresource !== 'status' && subresource !== 'finalize'
        ? (declaration.validateSubresourceUpdate?.(subresource, object, old, context) ?? [])
        : (declaration.validateUpdate?.(object, old, context) ?? [])),
      ...(this.kindValidator?.update?.(object, old, context) ?? []),
    ]
    causes.push(...validateListMapKeys(object, declaration, causes))
    return causes
  }

  /** An ordinary write's manager owns the fields it changed (Kubernetes' Update operation). */
  private recordManagedFields(old: AnyObject | undefined, object: AnyObject, options: WriteOptions, subresource: string): void {
    if (options.managedFieldsDone || !options.fieldManager) return
    if (old) object.metadata!.managedFields ??= old.metadata?.managedFields
    const entrySubresource = options.managedSubresource ?? subresource
    const result = updateManagedFields(old, object, this.declaration.schema, options.fieldManager, {
      now: options.context.now,
      apiVersion: this.apiVersion,
      subresource: entrySubresource || undefined,
      ignoredFields: resetFields(this.declaration, subresource || undefined) as string[][],
    })
    if (result.object.metadata?.managedFields) object.metadata!.managedFields = result.object.metadata.managedFields
    else delete object.metadata!.managedFields
  }

  /**
   * The rest of an update once its object is built, in Kubernetes' order (Store.Update): mutating
   * admission, the beginUpdate hook (a Service's node ports and cluster IPs), BeforeUpdate (the
   * strategy's PrepareForUpdate, generation, validation) for what prepareUpdate built, validating
   * admission, then the compare-and-swap write of next over current and the hook's finish. Answers 'conflict' when someone wrote first (the caller reads again).
   */
  private async completeUpdate(
    key: string,
    current: KeyValue,
    old: AnyObject,
    next: AnyObject,
    options: {dryRun?: boolean; admit?: {context: RequestContext; subresource: string}},
  ): Promise<AnyObject | 'conflict'> {
    const pending = this.pendingValidation.get(next)
    const {admit} = options
    const scaled = admit?.subresource === 'scale'
    const attributes = admit && this.admission ? this.updateAttributes(next, old, admit, options.dryRun) : undefined
    if (attributes && this.admission!.mutates) {
      const admitted = await this.admission!.admit(attributes)
      // a Scale's replicas are what a mutated Scale gives the object (in place: next is what was prepared)
      if (scaled) next.spec = {...next.spec, replicas: replicasFromScale(admitted ?? {}, old.metadata!.name)}
      else next = this.afterMutation(admitted)
    }
    if (admit && !admit.subresource) this.hooks.authorizeWrite?.(next, old, {context: admit.context, name: old.metadata!.name})
    const finish = await this.hooks.beginUpdate?.(next, old, {dryRun: options.dryRun})
    let result: AnyObject | 'conflict' = 'conflict'
    try {
      if (pending) {
        beforeUpdate(this.declaration, next, old, pending.subresource, pending.context)
        const causes = this.updateCauses(next, old, pending.subresource, pending.context)
        if (causes.length > 0) throw this.invalid(old.metadata!.name, causes)
        if (!pending.subresource) addWarnings(pending.context, this.declaration.warningsOnUpdate?.(next, old, pending.context))
      }
      if (attributes) {
        attributes.object = scaled ? toScale(next) : next
        await this.admission!.validate(attributes)
      }
      result = await this.writeUpdate(key, current, old, next, options)
    } finally {
      await finishWrite(finish, result !== 'conflict' && !options.dryRun)
    }
    return result
  }

  /** Writes next over current (compare-and-swap); 'conflict' when someone wrote first. Removing the
   *  last finalizer of an object being deleted deletes it. */
  private async writeUpdate(
    key: string,
    current: KeyValue,
    old: AnyObject,
    next: AnyObject,
    options: {dryRun?: boolean},
  ): Promise<AnyObject | 'conflict'> {
    if (writesNothing(next, old)) return old
    // Kubernetes' ShouldDeleteDuringUpdate: the stored object is being deleted with no grace period
    // left (a pod in graceful termination stays until its agent deletes it with grace 0)
    const finishesDeletion =
      old.metadata?.deletionTimestamp &&
      !old.metadata.deletionGracePeriodSeconds &&
      (next.metadata?.finalizers ?? []).length === 0 &&
      this.lifecycleFinalizers(next).length === 0
    if (options.dryRun) return next
    try {
      if (finishesDeletion) {
        const {revision} = await this.deps.store.delete(key, current.modRevision)
        next.metadata!.resourceVersion = String(revision)
        await this.hooks.afterDelete?.(next)
        return next
      }
      const stored = encodeStored(next)
      const revision = await this.deps.store.update(key, stored, current.modRevision)
      next.metadata!.resourceVersion = String(revision)
      rememberStored(next, stored, revision)
      return next
    } catch (error) {
      if (error instanceof ConflictError) return 'conflict'
      if (error instanceof KeyNotFoundError) throw errors.notFound(this.groupResource, old.metadata!.name)
      throw error
    }
  }

  /**
   * Reads, transforms and writes an object until the write wins (Kubernetes' GuaranteedUpdate).
   * transform gets a copy of the stored object and returns the object to store.
   */
  async guaranteedUpdate(
    namespace: string,
    name: string,
    transform: (current: AnyObject) => AnyObject | Promise<AnyObject>,
    options: {dryRun?: boolean; precondition?: string; admit?: {context: RequestContext; subresource: string}},
  ): Promise<AnyObject> {
    const key = this.key(namespace, name)
    for (;;) {
      const current = await this.deps.store.get(key)
      if (!current) throw errors.notFound(this.groupResource, name)
      const old = decodeStored(current)
      if (options.precondition && options.precondition !== old.metadata!.resourceVersion) {
        throw errors.staleResourceVersion(this.groupResource, name)
      }
      const next = await transform(clone(old))
      const result = await this.completeUpdate(key, current, old, next, options)
      if (result !== 'conflict') return result
      if (options.precondition) throw errors.staleResourceVersion(this.groupResource, name)
    }
  }

  /** DELETE, as Kubernetes answers it: an object that goes at once answers a success Status; one
   *  that finalizers hold is only marked and answers the marked object. Both 200 — 202 only when
   *  the caller asked for cascading deletion with orphanDependents=false. */
  async delete(
    namespace: string,
    name: string,
    options: DeleteOptions,
  ): Promise<{status: ReturnType<typeof successStatus>; code: number; object: AnyObject; deleted: boolean}> {
    const key = this.key(namespace, name)
    if (this.declaration.group === '' && this.declaration.resource === 'namespaces' && IMMORTAL_NAMESPACES.has(name)) {
      throw errors.forbidden(this.groupResource, name, 'this namespace may not be deleted')
    }
    for (;;) {
      const current = await this.deps.store.get(key)
      if (!current) throw errors.notFound(this.groupResource, name)
      const old = decodeStored(current)
      const pre = options.preconditions
      // rest.BeforeDelete's early check and its words (a precondition given, even "", must hold); the
      // conflict names the kind, as there
      const kindResource = {group: this.declaration.group, resource: this.declaration.kind}
      if (typeof pre?.uid === 'string' && pre.uid !== old.metadata!.uid) {
        throw errors.conflict(kindResource, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${old.metadata!.uid}). The object might have been deleted and then recreated`)
      }
      if (typeof pre?.resourceVersion === 'string' && pre.resourceVersion !== old.metadata!.resourceVersion) {
        throw errors.conflict(kindResource, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${old.metadata!.resourceVersion}). The object might have been modified`)
      }
      if (this.admission && !options.admitted) {
        await this.admission.validate(this.admissionAttributes('DELETE', null, old, options.inCollection ? '' : name, '', options.context, options.dryRun))
      }
      const details = {name, group: this.declaration.group || undefined, kind: this.declaration.resource, uid: old.metadata!.uid}
      const grace = this.declaration.deletionGracePeriod?.(old, options.gracePeriodSeconds)
      if (grace !== undefined && grace > 0) {
        const marked = old.metadata!.deletionGracePeriodSeconds
        if (old.metadata!.deletionTimestamp && marked !== undefined && marked <= grace) return {status: successStatus(details), code: 200, object: old, deleted: false}
        const next = clone(old)
        if (!old.metadata!.deletionTimestamp) bumpGeneration(next)
        next.metadata!.deletionTimestamp = formatTime(new Date(options.context.now.getTime() + grace * 1000))
        next.metadata!.deletionGracePeriodSeconds = grace
        if (options.dryRun) return {status: successStatus(details), code: 200, object: next, deleted: false}
        try {
          const revision = await this.deps.store.update(key, encodeStored(next), current.modRevision)
          next.metadata!.resourceVersion = String(revision)
          return {status: successStatus(details), code: 200, object: next, deleted: false}
        } catch (error) {
          if (error instanceof ConflictError) continue
          throw error
        }
      }
      // the request's propagation policy may add or swap the orphan / foregroundDeletion finalizer, on
      // every kind and even on an object already being deleted (deletionFinalizersForGarbageCollection);
      // the garbage collector removes it once it has orphaned or deleted the object's dependents
      const stored: readonly string[] = old.metadata!.finalizers ?? []
      const metadataFinalizers = this.declaration.ignoredByGarbageCollector ? stored : finalizersForDeletion(stored, options)
      const finalizers = [...metadataFinalizers, ...this.lifecycleFinalizers(old)]
      if (finalizers.length > 0) {
        const pendingCode = options.orphanDependents === false ? 202 : 200
        const marked = Boolean(old.metadata!.deletionTimestamp)
        if (marked && metadataFinalizers === stored) return {status: successStatus(details), code: pendingCode, object: old, deleted: false}
        const next = clone(old)
        if (metadataFinalizers !== stored) next.metadata!.finalizers = [...metadataFinalizers]
        if (!marked) {
          bumpGeneration(next)
          next.metadata!.deletionTimestamp = formatTime(options.context.now)
          next.metadata!.deletionGracePeriodSeconds = 0
          this.declaration.prepareForDelete?.(next)
        }
        if (options.dryRun) return {status: successStatus(details), code: pendingCode, object: next, deleted: false}
        try {
          const revision = await this.deps.store.update(key, encodeStored(next), current.modRevision)
          next.metadata!.resourceVersion = String(revision)
          return {status: successStatus(details), code: pendingCode, object: next, deleted: false}
        } catch (error) {
          if (error instanceof ConflictError) continue
          throw error
        }
      }
      if (options.dryRun) return {status: successStatus(details), code: 200, object: old, deleted: true}
      try {
        await this.deps.store.delete(key, current.modRevision)
        await this.hooks.afterDelete?.(old)
        return {status: successStatus(details), code: 200, object: old, deleted: true}
      } catch (error) {
        if (error instanceof ConflictError) continue
        if (error instanceof KeyNotFoundError) throw errors.notFound(this.groupResource, name)
        throw error
      }
    }
  }

  /** finalizers a kind keeps outside metadata (Namespace: spec.finalizers) */
  private lifecycleFinalizers(object: AnyObject): string[] {
    return this.declaration.specFinalizers ? (object.spec?.finalizers ?? []) : []
  }

  async deleteCollection(namespace: string, params: ListParams, options: DeleteOptions): Promise<ReturnType<typeof successStatus>> {
    const {labelSelector, fieldSelector, limit, continue: token, resourceVersion, resourceVersionMatch} = params
    const listed = await this.list(namespace, {labelSelector, fieldSelector, limit, continue: token, resourceVersion, resourceVersionMatch})
    for (const object of listed.items) {
      try {
        await this.delete(object.metadata!.namespace ?? '', object.metadata!.name, {...options, inCollection: true})
      } catch (error) {
        if ((error as {code?: number}).code !== 404) throw error
      }
    }
    return successStatus()
  }
}

export {ConflictError}
export type {ListParams, ListResult} from './registry-list.js'
