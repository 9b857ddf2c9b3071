// Discovery documents (/version, /api, /apis, /apis/{g}, /api/v1, /apis/{g}/{v}), generated from the kind
// declarations, in exactly Kubernetes' wire shapes.
//
// Aggregated discovery: kubectl 1.32 first asks `/api` and `/apis` with
//   Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...,application/json
// It only understands the group name `apidiscovery.k8s.io`, which the naming rule renames to
// `apidiscovery.orch.io` (served by discovery-aggregated.ts), so kubectl is answered the plain documents
// below with `Content-Type: application/json`; client-go, seeing a plain content type, parses them as
// APIVersions / APIGroupList and falls back to one `/api/v1` or `/apis/{g}/{v}` request per group
// version (the legacy discovery protocol).
import {createHash} from 'node:crypto'
import type {KindDeclaration, Verb} from '../api/types.js'

/** The Kubernetes release whose API this server speaks (kubectl's version-skew check reads major/minor). */
export const KUBERNETES_MAJOR = '1'
export const KUBERNETES_MINOR = '32'

export interface VersionInfo {
  major: string
  minor: string
  gitVersion: string
  gitCommit: string
  gitTreeState: string
  buildDate: string
  goVersion: string
  compiler: string
  platform: string
}

export interface VersionOptions {
  gitCommit?: string
  gitTreeState?: 'clean' | 'dirty' | ''
  /** RFC 3339, seconds precision */
  buildDate?: string
}

const ARCHES: Record<string, string> = {x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64'}

/** `/version`: version.Info. `gitVersion` is a semver kubectl parses (v1.32.0-orch); goVersion holds the Node version. */
export function versionInfo(options: VersionOptions = {}): VersionInfo {
  const os = process.platform === 'win32' ? 'windows' : process.platform
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    gitVersion: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0-orch`,
    gitCommit: options.gitCommit ?? '',
    gitTreeState: options.gitTreeState ?? '',
    buildDate: options.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'node',
    platform: `${os}/${ARCHES[process.arch] ?? process.arch}`,
  }
}

export interface ServerAddressByClientCIDR {
  clientCIDR: string
  serverAddress: string
}

export interface APIVersions {
  kind: 'APIVersions'
  versions: string[]
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[]
}

/** `/api`. Kubernetes serves this without apiVersion. serverAddress is host:port as clients reach it. */
export function apiVersions(serverAddress: string): APIVersions {
  return {kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{clientCIDR: '0.0.0.0/0', serverAddress}]}
}

export interface GroupVersionForDiscovery {
  groupVersion: string
  version: string
}

export interface APIGroup {
  name: string
  versions: GroupVersionForDiscovery[]
  preferredVersion: GroupVersionForDiscovery
}

export interface APIGroupList {
  kind: 'APIGroupList'
  apiVersion: 'v1'
  groups: APIGroup[]
}

// kube-aggregator's default priorities (GroupPriorityMinimum, VersionPriority), groups renamed. /apis lists
// groups by group priority (highest first), then by name; versions within a group by version priority, then
// by Kubernetes version order. Groups not listed come last, in name order.
const PRIORITIES: Record<string, {group: number; versions: Record<string, number>}> = {
  'apiregistration.orch.io': {group: 18000, versions: {v1: 15, v1beta1: 9}},
  apps: {group: 17800, versions: {v1: 15}},
  'events.orch.io': {group: 17750, versions: {v1: 15, v1beta1: 5}},
  'authentication.orch.io': {group: 17700, versions: {v1: 15, v1beta1: 9, v1alpha1: 1}},
  'authorization.orch.io': {group: 17600, versions: {v1: 15}},
  autoscaling: {group: 17500, versions: {v2: 30, v1: 15}},
  batch: {group: 17400, versions: {v1: 15}},
  'certificates.orch.io': {group: 17300, versions: {v1: 15, v1beta1: 9, v1alpha1: 1}},
  'networking.orch.io': {group: 17200, versions: {v1: 15, v1beta1: 9, v1alpha1: 1}},
  policy: {group: 17100, versions: {v1: 15}},
  'rbac.authorization.orch.io': {group: 17000, versions: {v1: 15}},
  'rbac.orch.io': {group: 17000, versions: {v1: 15}},
  'storage.orch.io': {group: 16800, versions: {v1: 15, v1beta1: 9, v1alpha1: 1}},
  'admissionregistration.orch.io': {group: 16700, versions: {v1: 15, v1beta1: 12, v1alpha1: 9}},
  'apiextensions.orch.io': {group: 16700, versions: {v1: 15}},
  'scheduling.orch.io': {group: 16600, versions: {v1: 15}},
  'coordination.orch.io': {group: 16500, versions: {v1: 15, v1beta1: 13, v1alpha2: 12}},
  'node.orch.io': {group: 16300, versions: {v1: 15}},
  'discovery.orch.io': {group: 16200, versions: {v1: 15}},
  'flowcontrol.apiserver.orch.io': {group: 16100, versions: {v1: 21, v1beta3: 18}},
  'internal.apiserver.orch.io': {group: 16000, versions: {v1alpha1: 9}},
  'resource.orch.io': {group: 15900, versions: {v1beta1: 9, v1alpha3: 9}},
  'storagemigration.orch.io': {group: 15800, versions: {v1beta1: 12, v1alpha1: 9}},
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/

/** Kubernetes' version.CompareKubeAwareVersionStrings as a sort comparator: v2 < v1 < v1beta2 < v1beta1 < v1alpha1 < other (a-z). */
export function compareKubeAwareVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a)
  const mb = KUBE_VERSION.exec(b)
  if (!ma || !mb) {
    if (ma) return -1
    if (mb) return 1
    return a < b ? -1 : a > b ? 1 : 0
  }
  const stage = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0)
  if (stage(ma) !== stage(mb)) return stage(mb) - stage(ma)
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1])
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0)
}

function sortedVersions(group: string, versions: Iterable<string>): string[] {
  const priority = PRIORITIES[group]?.versions ?? {}
  return [...new Set(versions)].sort((a, b) => (priority[b] ?? 0) - (priority[a] ?? 0) || compareKubeAwareVersions(a, b))
}

/** group -> served versions, preferred first (the core group '' included). */
export function servedGroups(decls: readonly KindDeclaration[]): Map<string, string[]> {
  const versions = new Map<string, string[]>()
  for (const d of decls) versions.set(d.group, [...(versions.get(d.group) ?? []), d.version])
  const groups = [...versions.keys()].sort((a, b) => {
    const pa = PRIORITIES[a]?.group ?? 0
    const pb = PRIORITIES[b]?.group ?? 0
    return pb - pa || (a < b ? -1 : a > b ? 1 : 0)
  })
  return new Map(groups.map((g) => [g, sortedVersions(g, versions.get(g) ?? [])]))
}

function groupEntry(group: string, versions: readonly string[]): APIGroup {
  const entries = versions.map((version) => ({groupVersion: `${group}/${version}`, version}))
  return {name: group, versions: entries, preferredVersion: entries[0]}
}

/** `/apis`: every named group (not the core group), in Kubernetes' priority order. */
export function apiGroupList(decls: readonly KindDeclaration[]): APIGroupList {
  const groups: APIGroup[] = []
  for (const [group, versions] of servedGroups(decls)) if (group !== '') groups.push(groupEntry(group, versions))
  return {kind: 'APIGroupList', apiVersion: 'v1', groups}
}

/** `/apis/{group}`; undefined when the group is not served (the handler answers 404). */
export function apiGroup(decls: readonly KindDeclaration[], group: string): ({kind: 'APIGroup'; apiVersion: 'v1'} & APIGroup) | undefined {
  if (group === '') return undefined
  const versions = servedGroups(decls).get(group)
  if (!versions) return undefined
  return {kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions)}
}

export interface APIResource {
  name: string
  singularName: string
  namespaced: boolean
  group?: string
  version?: string
  kind: string
  verbs: Verb[]
  shortNames?: string[]
  categories?: string[]
  storageVersionHash?: string
}

export interface APIResourceList {
  kind: 'APIResourceList'
  apiVersion?: 'v1'
  groupVersion: string
  resources: APIResource[]
}

/** discovery.StorageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind"). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64')
}

/** Declarations with persistent storage (virtual kinds such as reviews only accept create). */
function isStored(d: KindDeclaration): boolean {
  return d.verbs.includes('get') || d.verbs.includes('list')
}

/** The entries of one group version: resources and subresources, in name order as Kubernetes lists them. */
export function apiResources(decls: readonly KindDeclaration[], group: string, version: string): APIResource[] {
  const out: APIResource[] = []
  for (const d of decls) {
    if (d.group !== group || d.version !== version) continue
    const entry: APIResource = {name: d.resource, singularName: d.singular, namespaced: d.namespaced, kind: d.kind, verbs: [...d.verbs].sort()}
    if (d.shortNames?.length) entry.shortNames = [...d.shortNames]
    if (d.categories?.length) entry.categories = [...d.categories]
    if (isStored(d)) entry.storageVersionHash = storageVersionHash(d.group, d.version, d.kind)
    out.push(entry)
    for (const sub of d.subresources ?? []) {
      const kind = sub.kind ?? {group: d.group, version: d.version, kind: d.kind}
      const otherGroupVersion = kind.group !== group || kind.version !== version
      out.push({
        name: `${d.resource}/${sub.name}`,
        singularName: '',
        namespaced: d.namespaced,
        ...(otherGroupVersion ? {group: kind.group, version: kind.version} : {}),
        kind: kind.kind,
        verbs: [...sub.verbs].sort(),
      })
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * `/api/v1` and `/apis/{g}/{v}`; undefined when the group version is not served. Kubernetes writes the
 * core list without apiVersion and the named groups' lists with `apiVersion: v1`; so does this.
 */
export function apiResourceList(decls: readonly KindDeclaration[], group: string, version: string): APIResourceList | undefined {
  if (!decls.some((d) => d.group === group && d.version === version)) return undefined
  const resources = apiResources(decls, group, version)
  if (group === '') return {kind: 'APIResourceList', groupVersion: version, resources}
  return {kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources}
}
