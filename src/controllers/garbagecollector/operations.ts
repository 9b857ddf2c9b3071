// The garbage collector's calls to the server (Kubernetes' operations.go and patch.go): metadata-only
// GETs, deletes with a uid (and resourceVersion) precondition, and patches that take owner references
// off an object, make them non-blocking, or remove a finalizer. A write whose uid precondition fails
// met another object of the same name: the one it meant is gone, which is what it wanted.
import {isApiStatusError, type ResourceLocator, type RestClient} from '../../client/index.js'
import {ownerRefsOf, type ObjectMeta, type ObjectReference, type OwnerReference} from './graph.js'
import type {ApiResource, ResourceMapper} from './resources.js'

/** Accept headers asking for PartialObjectMetadata (meta.orch.io/v1), plain JSON when not served. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1,application/json'
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1,application/json'

/** conflicts a finalizer removal retries at once before the item goes back to the queue */
const CONFLICT_RETRIES = 5

/** An owner reference names a kind the server does not serve: retried later, as Kubernetes does. */
export class RestMappingError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`no resource serves kind ${kind} in ${apiVersion}`)
    this.name = 'RestMappingError'
  }
}

export type Propagation = 'Orphan' | 'Background' | 'Foreground'

const isCode = (error: unknown, code: number): boolean => isApiStatusError(error) && error.code === code

export class ObjectOperations {
  constructor(
    private readonly client: RestClient,
    private readonly mapper: ResourceMapper,
  ) {}

  resourceOf(identity: Pick<ObjectReference, 'apiVersion' | 'kind'>): ApiResource {
    const resource = this.mapper.forKind(identity.apiVersion, identity.kind)
    if (!resource) throw new RestMappingError(identity.apiVersion, identity.kind)
    return resource
  }

  /** The object's locator; undefined for a namespaced kind without a namespace (nothing can be there). */
  private locator(identity: ObjectReference): ResourceLocator | undefined {
    const resource = this.resourceOf(identity)
    if (resource.namespaced && !identity.namespace) return undefined
    return {
      group: resource.group,
      version: resource.version,
      resource: resource.resource,
      namespace: resource.namespaced ? identity.namespace : undefined,
      name: identity.name,
    }
  }

  /** The object's metadata as the server has it now; undefined when there is none of that name. */
  async get(identity: ObjectReference): Promise<ObjectMeta | undefined> {
    const locator = this.locator(identity)
    if (!locator) return undefined
    try {
      const object = await this.client.get<{metadata?: ObjectMeta}>(locator, {headers: {accept: METADATA_ACCEPT}})
      return object.metadata ?? {}
    } catch (error) {
      if (isCode(error, 404)) return undefined
      throw error
    }
  }

  /**
   * Deletes the object if it is still this one (uid) at this resourceVersion; when only its
   * resourceVersion moved and its owner references are the same, without that precondition
   * (Kubernetes' deleteObject). Done when the object is gone.
   */
  async delete(identity: ObjectReference, policy: Propagation, resourceVersion: string | undefined, owners: OwnerReference[]): Promise<void> {
    const locator = this.locator(identity)
    if (!locator) return
    try {
      await this.client.delete(locator, {propagationPolicy: policy, preconditions: {uid: identity.uid, resourceVersion}})
      return
    } catch (error) {
      if (isCode(error, 404)) return
      if (!isCode(error, 409) || !resourceVersion) throw error
      const live = await this.get(identity)
      if (!live || live.uid !== identity.uid) return
      if (live.resourceVersion === resourceVersion || JSON.stringify(ownerRefsOf(live)) !== JSON.stringify(owners)) throw error
    }
    try {
      await this.client.delete(locator, {propagationPolicy: policy, preconditions: {uid: identity.uid}})
    } catch (error) {
      if (!isCode(error, 404) && !isCode(error, 409)) throw error
    }
  }

  /** Takes the references to these owner uids off the object (a strategic merge patch: `$patch: delete`). */
  async removeOwnerReferences(identity: ObjectReference, ownerUids: string[]): Promise<void> {
    const ownerReferences = ownerUids.map((uid) => ({$patch: 'delete', uid}))
    await this.patchIfSame(identity, {metadata: {uid: identity.uid, ownerReferences}})
  }

  /** Sets blockOwnerDeletion false on every reference of the object that blocks its owner. */
  async unblockOwnerReferences(identity: ObjectReference, owners: OwnerReference[]): Promise<void> {
    const ownerReferences = owners.filter((r) => r.blockOwnerDeletion === true).map((r) => ({...r, blockOwnerDeletion: false}))
    if (ownerReferences.length === 0) return
    await this.patchIfSame(identity, {metadata: {uid: identity.uid, ownerReferences}})
  }

  /** A strategic merge patch of the object while it is this one (its uid in the patch is a precondition). */
  private async patchIfSame(identity: ObjectReference, patch: unknown): Promise<void> {
    const locator = this.locator(identity)
    if (!locator) return
    try {
      await this.client.patch(locator, 'strategic', patch, {headers: {accept: METADATA_ACCEPT}})
    } catch (error) {
      // gone, or another object of that name now (the uid precondition failed)
      if (!isCode(error, 404) && !isCode(error, 409)) throw error
    }
  }

  /** Removes a finalizer from the object (a merge patch at the resourceVersion read; conflicts retried). */
  async removeFinalizer(identity: ObjectReference, finalizer: string): Promise<void> {
    const locator = this.locator(identity)
    if (!locator) return
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const latest = await this.get(identity)
      if (!latest || latest.uid !== identity.uid) return
      const finalizers = latest.finalizers ?? []
      if (!finalizers.includes(finalizer)) return
      const rest = finalizers.filter((f) => f !== finalizer)
      try {
        const patch = {metadata: {uid: identity.uid, resourceVersion: latest.resourceVersion, finalizers: rest.length > 0 ? rest : null}}
        await this.client.patch(locator, 'merge', patch, {headers: {accept: METADATA_ACCEPT}})
        return
      } catch (error) {
        if (isCode(error, 404)) return
        if (!isCode(error, 409)) throw error
      }
    }
    throw new Error(`removing the ${finalizer} finalizer met ${CONFLICT_RETRIES} conflicts in a row`)
  }
}
