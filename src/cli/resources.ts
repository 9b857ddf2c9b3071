// Resource words to API resources through the server's discovery documents (/api/v1, /apis,
// /apis/{group}/{version}), as kubectl's RESTMapper does: a word is a plural, a singular, a short name or a
// Kind, case-insensitive, optionally qualified by group (`statefulsets.apps`) or version and group
// (`statefulsets.v1.apps`). Nothing is compiled in, so the CLI works against any server. The documents are
// read once per process and server.
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type RestClient} from '../client/index.js'

/** One API resource as discovery describes it. */
export interface ResourceInfo {
  /** '' for the core group */
  group: string
  version: string
  /** plural, e.g. configmaps */
  resource: string
  kind: string
  namespaced: boolean
  singular: string
  shortNames: string[]
  verbs: string[]
  /** the subresources discovery lists for it, e.g. ['status'] */
  subresources: string[]
  /** true for the group's preferred version */
  preferred: boolean
}

/** An unknown resource word or kind: kubectl's wording. */
export class UnknownResourceError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnknownResourceError'
  }
}

const cache = new Map<string, Promise<ResourceInfo[]>>()

interface APIResource {
  name: string
  singularName?: string
  namespaced?: boolean
  kind: string
  verbs?: string[]
  shortNames?: string[]
}

function entriesOf(list: AnyObject, group: string, version: string, preferred: boolean): ResourceInfo[] {
  const resources: APIResource[] = (Array.isArray(list?.resources) ? list.resources : []).filter((r: APIResource) => typeof r.name === 'string')
  const subresources = (name: string) => resources.filter((r) => r.name.startsWith(`${name}/`)).map((r) => r.name.slice(name.length + 1))
  return resources
    .filter((r) => !r.name.includes('/'))
    .map((r) => ({
      group,
      version,
      resource: r.name,
      kind: r.kind,
      namespaced: r.namespaced === true,
      singular: r.singularName || r.kind.toLowerCase(),
      shortNames: r.shortNames ?? [],
      verbs: r.verbs ?? [],
      subresources: subresources(r.name),
      preferred,
    }))
}

/** A discovery document, or undefined when the server has none at that path (a 4xx/5xx answer). */
async function document(client: RestClient, path: string): Promise<AnyObject | undefined> {
  try {
    return await client.requestJson({method: 'GET', path})
  } catch (error) {
    if (isApiStatusError(error)) return undefined
    throw error
  }
}

async function discover(client: RestClient): Promise<ResourceInfo[]> {
  const [core, groups] = await Promise.all([document(client, '/api/v1'), document(client, '/apis')])
  if (!core && !groups) {
    // neither answered: let the real error (e.g. 401, 404 on a wrong server path) speak
    await client.requestJson({method: 'GET', path: '/api/v1'})
  }
  const lists: Promise<ResourceInfo[]>[] = [Promise.resolve(core ? entriesOf(core, '', 'v1', true) : [])]
  for (const group of Array.isArray(groups?.groups) ? groups.groups : []) {
    const preferred: string | undefined = group.preferredVersion?.version
    const versions: string[] = (Array.isArray(group.versions) ? group.versions : []).map((v: AnyObject) => v.version)
    // the preferred version first, so a bare word resolves to it
    versions.sort((a, b) => Number(b === preferred) - Number(a === preferred))
    for (const version of versions) {
      lists.push(
        document(client, `/apis/${group.name}/${version}`).then((list) => (list ? entriesOf(list, group.name, version, version === preferred) : [])),
      )
    }
  }
  return (await Promise.all(lists)).flat()
}

/** Every resource the server serves (cached per process and server). */
export function discoverResources(client: RestClient): Promise<ResourceInfo[]> {
  let found = cache.get(client.server)
  if (!found) {
    found = discover(client)
    cache.set(client.server, found)
    found.catch(() => cache.delete(client.server))
  }
  return found
}

/** How well a word names a resource: 1 plural, 2 singular, 3 short name, 4 kind; 0 not at all. */
function matchRank(info: ResourceInfo, word: string): number {
  if (info.resource.toLowerCase() === word) return 1
  if (info.singular.toLowerCase() === word) return 2
  if (info.shortNames.some((s) => s.toLowerCase() === word)) return 3
  if (info.kind.toLowerCase() === word) return 4
  return 0
}

/** The ways to read a word: bare, resource.group, resource.version.group. */
function readings(word: string): {name: string; group?: string; version?: string}[] {
  const out: {name: string; group?: string; version?: string}[] = [{name: word}]
  const parts = word.split('.')
  if (parts.length >= 2) out.push({name: parts[0], group: parts.slice(1).join('.')})
  if (parts.length >= 3) out.push({name: parts[0], version: parts[1], group: parts.slice(2).join('.')})
  return out
}

/** Picks the resource a word names among discovered resources; undefined when none. */
export function pickResource(resources: readonly ResourceInfo[], word: string): ResourceInfo | undefined {
  const lower = word.trim().toLowerCase()
  for (const reading of readings(lower)) {
    // without a version: the group's preferred version first, then (as kubectl's RESTMapper) a
    // resource that only another version serves (mutatingadmissionpolicies in v1beta1)
    for (const preferredOnly of reading.version === undefined ? [true, false] : [false]) {
      let best: ResourceInfo | undefined
      let bestRank = Infinity
      for (const info of resources) {
        if (reading.group !== undefined && info.group.toLowerCase() !== reading.group) continue
        if (reading.version !== undefined && info.version.toLowerCase() !== reading.version) continue
        if (preferredOnly && !info.preferred) continue
        const rank = matchRank(info, reading.name)
        if (rank > 0 && rank < bestRank) {
          best = info
          bestRank = rank
        }
      }
      if (best) return best
    }
  }
  return undefined
}

/** The resource a user's word names (`configmaps`, `cm`, `ConfigMap`, `statefulsets.apps`, ...). */
export async function resolveResource(client: RestClient, word: string): Promise<ResourceInfo> {
  const found = pickResource(await discoverResources(client), word)
  if (!found) throw new UnknownResourceError(`the server doesn't have a resource type "${word}"`)
  return found
}

/** The resource serving a kind in an apiVersion (`v1`, `apps/v1`), as a manifest names them. */
export async function resourceForKind(client: RestClient, apiVersion: string, kind: string): Promise<ResourceInfo> {
  const slash = apiVersion.indexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash)
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
  const found = (await discoverResources(client)).find((r) => r.group === group && r.version === version && r.kind === kind)
  if (!found) throw new UnknownResourceError(`no matches for kind "${kind}" in version "${apiVersion}"`)
  return found
}

/** kubectl's name of a resource's objects: the kind lower-cased, with `.group` outside the core group. */
export function kindName(info: Pick<ResourceInfo, 'kind' | 'group'>): string {
  const kind = info.kind.toLowerCase()
  return info.group ? `${kind}.${info.group}` : kind
}

/** `configmap/x`, `statefulset.apps/web`: how -o name and apply print an object. */
export function objectName(info: Pick<ResourceInfo, 'kind' | 'group'>, name: string): string {
  return `${kindName(info)}/${name}`
}

/** The apiVersion of a resource's objects: `v1`, `apps/v1`. */
export function apiVersionOf(info: Pick<ResourceInfo, 'group' | 'version'>): string {
  return info.group ? `${info.group}/${info.version}` : info.version
}
