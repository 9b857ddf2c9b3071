// Aggregated discovery (Kubernetes' apidiscovery/v2, renamed apidiscovery.orch.io): `/api` and `/apis`
// answer every group version's resources in one document when the client asks for it with
//   Accept: application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList
// (or v2beta1), with an ETag so that a client can revalidate with If-None-Match. Any other Accept gets
// the plain documents of discovery.ts. kubectl asks for apidiscovery.k8s.io, which orch does not serve
// (the naming rule), so kubectl keeps to the plain documents.
import {createHash} from 'node:crypto'
import type {KindDeclaration, Verb} from '../api/types.js'
import {negotiate} from '../machinery/negotiation.js'
import {JSON_TYPE} from './serializers.js'
import {apiResources, servedGroups} from './discovery.js'

export const DISCOVERY_GROUP = 'apidiscovery.orch.io'
export const DISCOVERY_VERSIONS = ['v2', 'v2beta1'] as const
export type DiscoveryVersion = (typeof DISCOVERY_VERSIONS)[number]

/** metav1.GroupVersionKind: group and version empty when they are the group version's own */
interface ResponseKind {
  group: string
  version: string
  kind: string
}

interface APISubresourceDiscovery {
  subresource: string
  responseKind?: ResponseKind
  verbs: Verb[]
}

interface APIResourceDiscovery {
  resource: string
  responseKind?: ResponseKind
  scope: 'Namespaced' | 'Cluster'
  singularResource: string
  verbs: Verb[]
  shortNames?: string[]
  categories?: string[]
  subresources?: APISubresourceDiscovery[]
}

interface APIGroupDiscovery {
  /** ObjectMeta as Go writes a zero one with a name (none for the core group) */
  metadata: {name?: string; creationTimestamp: null}
  versions: {version: string; resources?: APIResourceDiscovery[]; freshness: 'Current'}[]
}

export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList'
  apiVersion: string
  metadata: Record<string, never>
  items: APIGroupDiscovery[]
}

/** The media type of an aggregated document of this version. */
export function aggregatedMediaType(version: DiscoveryVersion): string {
  return `application/json;g=${DISCOVERY_GROUP};v=${version};as=APIGroupDiscoveryList`
}

/**
 * What an Accept header asks of `/api` or `/apis`, in its order of preference: the aggregated document
 * (and its version), the plain one, or nothing servable (undefined: 406).
 */
export function discoveryFormat(accept: string | undefined): {aggregated: DiscoveryVersion} | 'plain' | undefined {
  const negotiated = negotiate(accept, {mediaTypes: [JSON_TYPE], viewGroups: [DISCOVERY_GROUP], views: ['APIGroupDiscoveryList'], viewVersions: DISCOVERY_VERSIONS})
  if (!negotiated) return undefined
  return negotiated.view ? {aggregated: negotiated.view.version as DiscoveryVersion} : 'plain'
}

/** One group version's resources with their subresources inside them, converted from its legacy
 *  APIResources (`/apis/{g}/{v}`), as Kubernetes' ConvertGroupVersionIntoToDiscovery does: those are
 *  sorted by name, so a resource comes before its `resource/subresource` entries. */
function resourcesOf(decls: readonly KindDeclaration[], group: string, version: string): APIResourceDiscovery[] {
  const out = new Map<string, APIResourceDiscovery>()
  for (const entry of apiResources(decls, group, version)) {
    const [resource, subresource] = entry.name.split('/') as [string, string | undefined]
    const responseKind = {group: entry.group ?? '', version: entry.version ?? '', kind: entry.kind}
    if (subresource !== undefined) {
      const parent = out.get(resource)
      if (parent) (parent.subresources ??= []).push({subresource, responseKind, verbs: entry.verbs})
      continue
    }
    out.set(resource, {
      resource,
      responseKind,
      scope: entry.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: entry.singularName,
      verbs: entry.verbs,
      ...(entry.shortNames ? {shortNames: entry.shortNames} : {}),
      ...(entry.categories ? {categories: entry.categories} : {}),
    })
  }
  return [...out.values()]
}

/** `/api` (the core group) or `/apis` (every named group, in the priority order of `/apis`). */
export function aggregatedDiscovery(decls: readonly KindDeclaration[], root: 'api' | 'apis', version: DiscoveryVersion): APIGroupDiscoveryList {
  const items: APIGroupDiscovery[] = []
  for (const [group, versions] of servedGroups(decls)) {
    if ((group === '') !== (root === 'api')) continue
    items.push({
      metadata: group === '' ? {creationTimestamp: null} : {name: group, creationTimestamp: null},
      versions: versions.map((v) => ({version: v, resources: resourcesOf(decls, group, v), freshness: 'Current' as const})),
    })
  }
  return {kind: 'APIGroupDiscoveryList', apiVersion: `${DISCOVERY_GROUP}/${version}`, metadata: {}, items}
}

/** The ETag of a discovery document: a hash of its bytes, quoted. */
export function discoveryETag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`
}
