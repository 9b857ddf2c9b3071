// What the garbage collector watches and how it finds an owner reference's resource: the server's
// discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/{group}/{version}`), read once at start (orch
// has no CustomResourceDefinitions, so the set of kinds never changes while a server runs), as
// Kubernetes' collector uses GetDeletableResources and a REST mapper. Only whole resources (no
// subresources) of a group's preferred version that support list, watch and delete are watched; core
// `events` are ignored, as in kube-controller-manager's default GC configuration.
import type {RestClient} from '../../client/index.js'

export interface ApiResource {
  group: string
  version: string
  /** plural resource name, e.g. configmaps */
  resource: string
  kind: string
  namespaced: boolean
}

/** group/version as written in apiVersion */
export function apiVersionOfResource(resource: Pick<ApiResource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`
}

/** Resources the collector never watches (kube-controller-manager's DefaultIgnoredResources). */
// (src/api/core/event.ts declares the same: ignoredByGarbageCollector)
const IGNORED = new Set(['/events'])

const NEEDED_VERBS = ['list', 'watch', 'delete']

interface DiscoveredResource {
  name: string
  namespaced: boolean
  kind: string
  verbs?: string[]
}

export class ResourceMapper {
  private readonly byKind = new Map<string, ApiResource>()
  /** the resources to watch: every deletable one of a preferred version */
  readonly deletable: ApiResource[] = []

  /** Reads the server's discovery documents. */
  static async discover(client: RestClient): Promise<ResourceMapper> {
    const mapper = new ResourceMapper()
    const get = <T>(path: string) => client.requestJson<T>({method: 'GET', path})
    const groupVersions: {group: string; version: string; preferred: boolean}[] = []
    const core = await get<{versions?: string[]}>('/api')
    for (const version of core.versions ?? []) groupVersions.push({group: '', version, preferred: version === core.versions?.[0]})
    const groups = await get<{groups?: {name: string; versions?: {version: string}[]; preferredVersion?: {version: string}}[]}>('/apis')
    for (const group of groups.groups ?? []) {
      const preferred = group.preferredVersion?.version ?? group.versions?.[0]?.version
      for (const {version} of group.versions ?? []) groupVersions.push({group: group.name, version, preferred: version === preferred})
    }
    const lists = await Promise.all(
      groupVersions.map(async (gv) => ({
        ...gv,
        resources: (await get<{resources?: DiscoveredResource[]}>(gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`)).resources ?? [],
      })),
    )
    for (const {group, version, preferred, resources} of lists) {
      for (const discovered of resources) {
        if (discovered.name.includes('/')) continue
        const resource: ApiResource = {group, version, resource: discovered.name, kind: discovered.kind, namespaced: discovered.namespaced}
        mapper.byKind.set(`${apiVersionOfResource(resource)}|${resource.kind}`, resource)
        const verbs = discovered.verbs ?? []
        if (preferred && NEEDED_VERBS.every((v) => verbs.includes(v)) && !IGNORED.has(`${group}/${discovered.name}`)) mapper.deletable.push(resource)
      }
    }
    return mapper
  }

  /** The resource of an owner reference's apiVersion and kind; undefined when the server serves no such kind. */
  forKind(apiVersion: string, kind: string): ApiResource | undefined {
    return this.byKind.get(`${apiVersion}|${kind}`)
  }
}
