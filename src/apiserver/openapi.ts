// OpenAPI generated from the kind declarations: /openapi/v2 (Swagger 2.0, every group) and /openapi/v3
// (an index plus one OpenAPI 3.0 document per group version), shaped as Kubernetes serves them: definitions
// named by Go package (io.orch.api.core.v1.ConfigMap, io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta),
// x-kubernetes-* extensions (list types, merge keys, group-version-kind), and one operation per verb with
// Kubernetes' operationIds (listCoreV1NamespacedConfigMap, patchAppsV1NamespacedStatefulSetStatus, ...).
//
// kubectl reads these for `explain`, for client-side apply (strategic merge keys, found through the
// x-kubernetes-group-version-kind of a schema) and to see whether PATCH takes `fieldValidation`.
// The handler must serve JSON.stringify(document) so that the `?hash=` in the v3 index matches (openAPIEtag).
import {createHash} from 'node:crypto'
import {deleteOptions, listMeta, objectMeta} from '../api/meta.js'
import type {Field, KindDeclaration, ObjectSchema, Schema, SubresourceDeclaration, Verb} from '../api/types.js'
import {podEviction} from '../api/core/pod.js'
import {KUBERNETES_MAJOR, KUBERNETES_MINOR, servedGroups} from './discovery.js'

export type Json = Record<string, any>
type Flavor = 'v2' | 'v3'
interface GVK {
  group: string
  version: string
  kind: string
}

export const OPENAPI_TITLE = 'orch'
const INFO_VERSION = `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0-orch`
const PROTOBUF = 'application/vnd.orch.protobuf'
const RESPONSE_TYPES = ['application/json', 'application/yaml', PROTOBUF]
const STREAM_TYPES = ['application/json;stream=watch', `${PROTOBUF};stream=watch`]
/** PATCH bodies: Kubernetes' four patch media types */
export const PATCH_MEDIA_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
]

// ---------- names ----------

const META_PACKAGE = 'io.orch.apimachinery.pkg.apis.meta.v1'
const META_TYPES = new Set([
  'APIResource', 'APIResourceList', 'Condition', 'DeleteOptions', 'FieldsV1', 'LabelSelector', 'LabelSelectorRequirement',
  'ListMeta', 'ManagedFieldsEntry', 'MicroTime', 'ObjectMeta', 'OwnerReference', 'Patch', 'Preconditions', 'Status',
  'StatusCause', 'StatusDetails', 'Time', 'WatchEvent',
])
/** core/v1 types other groups embed (a StatefulSet's pod template and claim templates); named in core wherever used */
const CORE_SHARED_TYPES = new Set(`Affinity AppArmorProfile AWSElasticBlockStoreVolumeSource AzureDiskVolumeSource
  AzureFileVolumeSource Capabilities CephFSVolumeSource CinderVolumeSource ClusterTrustBundleProjection ConfigMapEnvSource
  ConfigMapKeySelector ConfigMapProjection ConfigMapVolumeSource Container ContainerPort ContainerResizePolicy
  ContainerRestartRule ContainerRestartRuleOnExitCodes ContainerState ContainerStateRunning ContainerStateTerminated
  ContainerStateWaiting ContainerStatus CSIVolumeSource DownwardAPIProjection DownwardAPIVolumeFile DownwardAPIVolumeSource EmptyDirVolumeSource EnvFromSource
  EnvVar EnvVarSource EphemeralContainer EphemeralContainerCommon EphemeralVolumeSource FileKeySelector ExecAction FCVolumeSource FlexVolumeSource
  FlockerVolumeSource GCEPersistentDiskVolumeSource GitRepoVolumeSource GlusterfsVolumeSource GRPCAction HostAlias
  HostPathVolumeSource HTTPGetAction HTTPHeader ImageVolumeSource ISCSIVolumeSource KeyToPath Lifecycle
  LifecycleHandler LocalObjectReference ModifyVolumeStatus NFSVolumeSource NodeAffinity NodeSelector
  NodeSelectorRequirement NodeSelectorTerm ObjectFieldSelector ObjectReference PersistentVolumeClaim
  PersistentVolumeClaimCondition PersistentVolumeClaimSpec PersistentVolumeClaimStatus PersistentVolumeClaimTemplate
  PersistentVolumeClaimVolumeSource PhotonPersistentDiskVolumeSource PodAffinity PodAffinityTerm PodAntiAffinity
  PodDNSConfig PodDNSConfigOption PodOS PodReadinessGate PodResourceClaim PodSchedulingGate PodSecurityContext PodSpec
  PodTemplateSpec PortworxVolumeSource PreferredSchedulingTerm Probe ProbeHandler ProjectedVolumeSource QuobyteVolumeSource
  RBDVolumeSource ResourceClaim ResourceFieldSelector ResourceRequirements ScaleIOVolumeSource SeccompProfile
  SecretEnvSource SecretKeySelector SecretProjection SecretVolumeSource SecurityContext SELinuxOptions
  ServiceAccountTokenProjection SleepAction StorageOSVolumeSource Sysctl Taint TCPSocketAction Toleration
  TopologySpreadConstraint TypedLocalObjectReference TypedObjectReference Volume VolumeDevice VolumeMount
  VolumeMountStatus VolumeProjection VolumeResourceRequirements VolumeSource VsphereVirtualDiskVolumeSource WeightedPodAffinityTerm
  WindowsSecurityContextOptions`.split(/\s+/))

const PACKAGE_NAMES: Record<string, string> = {
  '': 'core',
  'rbac.authorization.orch.io': 'rbac',
  'flowcontrol.apiserver.orch.io': 'flowcontrol',
  'internal.apiserver.orch.io': 'apiserverinternal',
}

/** The OpenAPI package prefix of a group version: Kubernetes' Go package, `io.k8s` renamed to `io.orch`. */
export function openAPIPackage(group: string, version: string): string {
  if (group === 'meta.orch.io' || group === 'meta.k8s.io') return `io.orch.apimachinery.pkg.apis.meta.${version}`
  if (group === 'apiextensions.orch.io') return `io.orch.apiextensions-apiserver.pkg.apis.apiextensions.${version}`
  if (group === 'apiregistration.orch.io') return `io.orch.kube-aggregator.pkg.apis.apiregistration.${version}`
  return `io.orch.api.${PACKAGE_NAMES[group] ?? group.split('.')[0]}.${version}`
}

/** The definition name of a declared kind (io.orch.api.apps.v1.StatefulSet). */
export function definitionName(gvk: GVK): string {
  return `${openAPIPackage(gvk.group, gvk.version)}.${gvk.kind}`
}

// ---------- built-in meta schemas ----------

const s = (type: 'string' | 'boolean', proto: number): Field => ({type, proto})
const i32 = (proto: number): Field => ({type: 'integer', format: 'int32', proto})
const strings = (proto: number): Field => ({type: 'array', items: {type: 'string'}, proto, listType: 'atomic'})

const statusCause: ObjectSchema = {type: 'object', name: 'StatusCause', fields: {reason: s('string', 1), message: s('string', 2), field: s('string', 3)}}
const statusDetails: ObjectSchema = {
  type: 'object',
  name: 'StatusDetails',
  fields: {
    name: s('string', 1), group: s('string', 2), kind: s('string', 3), uid: s('string', 6),
    causes: {type: 'array', items: statusCause, proto: 4, listType: 'atomic'}, retryAfterSeconds: i32(5),
  },
}
const statusSchema: ObjectSchema = {
  type: 'object',
  name: 'Status',
  fields: {
    metadata: {...listMeta, proto: 1, description: 'Standard list metadata.'}, status: s('string', 2), message: s('string', 3), reason: s('string', 4),
    details: {...statusDetails, proto: 5, structType: 'atomic'}, code: i32(6),
  },
}
const watchEvent: ObjectSchema = {
  type: 'object',
  name: 'WatchEvent',
  fields: {type: {type: 'string', proto: 1, required: true}, object: {type: 'raw', proto: 2, required: true}},
}
const patchSchema: ObjectSchema = {type: 'object', name: 'Patch', fields: {}}
const apiResource: ObjectSchema = {
  type: 'object',
  name: 'APIResource',
  fields: {
    name: {...s('string', 1), required: true}, singularName: {...s('string', 6), required: true},
    namespaced: {...s('boolean', 2), required: true}, group: s('string', 8), version: s('string', 9),
    kind: {...s('string', 3), required: true}, verbs: {...strings(4), required: true}, shortNames: strings(5),
    categories: strings(7), storageVersionHash: s('string', 10),
  },
}
const apiResourceList: ObjectSchema = {
  type: 'object',
  name: 'APIResourceList',
  fields: {groupVersion: {...s('string', 1), required: true}, resources: {type: 'array', items: apiResource, proto: 2, required: true, listType: 'atomic'}},
}
/** autoscaling/v1 Scale: the body of `scale` subresources */
const scaleSchema: ObjectSchema = {
  type: 'object',
  name: 'Scale',
  fields: {
    metadata: {...objectMeta, proto: 1},
    spec: {type: 'object', name: 'ScaleSpec', proto: 2, fields: {replicas: i32(1)}},
    status: {type: 'object', name: 'ScaleStatus', proto: 3, fields: {replicas: {...i32(1), required: true}, selector: s('string', 2)}},
  },
}

const objectReference: ObjectSchema = {
  type: 'object',
  name: 'ObjectReference',
  structType: 'atomic',
  fields: {
    kind: s('string', 1), namespace: s('string', 2), name: s('string', 3), uid: s('string', 4),
    apiVersion: s('string', 5), resourceVersion: s('string', 6), fieldPath: s('string', 7),
  },
}
/** Kinds served only by subresources of other kinds (pods/binding, pods/eviction, scale) */
const SUBRESOURCE_KINDS: Record<string, ObjectSchema> = {
  'autoscaling/v1/Scale': scaleSchema,
  '/v1/Binding': {type: 'object', name: 'Binding', fields: {metadata: {...objectMeta, proto: 1}, target: {...objectReference, proto: 2, required: true}}},
  'policy/v1/Eviction': podEviction.schema,
}

const TYPE_META = {
  apiVersion: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  kind: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  metadata: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  listMetadata: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]]))
}

// ---------- schemas ----------

/** Builds the definitions (v2) or component schemas (v3) reachable from what is asked for. */
class Definitions {
  readonly schemas: Record<string, Json> = {}

  constructor(readonly flavor: Flavor, private readonly decls: readonly KindDeclaration[]) {}

  ref(name: string): Json {
    return {$ref: `${this.flavor === 'v3' ? '#/components/schemas/' : '#/definitions/'}${name}`}
  }

  /** A reference with sibling keywords: OpenAPI 3 ignores siblings of $ref, so Kubernetes wraps it in allOf. */
  refWith(name: string, siblings: Json): Json {
    if (Object.keys(siblings).length === 0) return this.ref(name)
    return this.flavor === 'v3' ? {allOf: [this.ref(name)], ...siblings} : {...this.ref(name), ...siblings}
  }

  /** Registers a named struct (first definition of a name wins) and returns its definition name. */
  object(schema: ObjectSchema, pkg: string, extra: Json = {}, typeMeta = false): string {
    const name = `${pkg}.${schema.name}`
    if (this.schemas[name]) return name
    const definition: Json = {}
    this.schemas[name] = definition // registered first: recursive types end here
    const properties: Json = {}
    const required: string[] = []
    if (typeMeta) {
      properties.apiVersion = {description: TYPE_META.apiVersion, type: 'string'}
      properties.kind = {description: TYPE_META.kind, type: 'string'}
    }
    for (const [fieldName, field] of Object.entries(schema.fields)) {
      const described = typeMeta && fieldName === 'metadata' && !field.description ? {...field, description: TYPE_META.metadata} : field
      properties[fieldName] = this.property(described, pkg)
      if (field.required) required.push(fieldName)
    }
    if (typeMeta && !schema.fields.metadata) properties.metadata = this.refWith(this.object(objectMeta, META_PACKAGE), {description: TYPE_META.metadata})
    if (required.length) definition.required = required
    definition.type = 'object'
    if (Object.keys(properties).length) definition.properties = sortedKeys(properties)
    if (schema.structType === 'atomic') definition['x-kubernetes-map-type'] = 'atomic'
    Object.assign(definition, extra)
    return name
  }

  /** A well-known scalar type, defined once (Time, MicroTime, Quantity, IntOrString). */
  private scalar(kind: 'Time' | 'MicroTime' | 'Quantity' | 'IntOrString'): string {
    const v3 = this.flavor === 'v3'
    const known: Record<typeof kind, [string, Json]> = {
      Time: [`${META_PACKAGE}.Time`, {description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.', type: 'string', format: 'date-time'}],
      MicroTime: [`${META_PACKAGE}.MicroTime`, {description: 'MicroTime is version of Time with microsecond level precision.', type: 'string', format: 'date-time'}],
      Quantity: [
        'io.orch.apimachinery.pkg.api.resource.Quantity',
        {description: "Quantity is a fixed-point representation of a number (e.g. '100m', '2Gi', '1.5').", ...(v3 ? {oneOf: [{type: 'string'}, {type: 'number'}]} : {type: 'string'})},
      ],
      IntOrString: [
        'io.orch.apimachinery.pkg.util.intstr.IntOrString',
        {
          description: 'IntOrString is a type that can hold an int32 or a string.',
          format: 'int-or-string',
          ...(v3 ? {oneOf: [{type: 'integer'}, {type: 'string'}]} : {type: 'string'}),
          'x-kubernetes-int-or-string': true,
        },
      ],
    }
    const [name, definition] = known[kind]
    this.schemas[name] ??= definition
    return name
  }

  /** The schema of a field (or of an array item / map value), with its field-level keywords. */
  property(schema: Schema & Partial<Field>, pkg: string): Json {
    const described: Json = schema.description ? {description: schema.description} : {}
    const ext: Json = {}
    if (schema.type === 'array') {
      if (schema.listType) ext['x-kubernetes-list-type'] = schema.listType
      if (schema.listMapKeys?.length) ext['x-kubernetes-list-map-keys'] = [...schema.listMapKeys]
      if (schema.patchMergeKey) ext['x-kubernetes-patch-merge-key'] = schema.patchMergeKey
    }
    if (schema.patchStrategy) ext['x-kubernetes-patch-strategy'] = schema.patchStrategy
    if (schema.type === 'map' && schema.mapType) ext['x-kubernetes-map-type'] = schema.mapType
    const ref = (name: string) => this.refWith(name, {...described, ...ext})
    const inline = (body: Json) => ({...described, ...body, ...ext})
    switch (schema.type) {
      case 'object':
        if (schema.name === 'DeleteOptions') return ref(this.metaKind(deleteOptions, true))
        return ref(this.object(schema, packageOf(schema.name, pkg)))
      case 'time':
        return ref(this.scalar(schema.micro ? 'MicroTime' : 'Time'))
      case 'quantity':
        return ref(this.scalar('Quantity'))
      case 'int-or-string':
        return ref(this.scalar('IntOrString'))
      case 'string':
        if (schema.format === 'int-or-string') return ref(this.scalar('IntOrString'))
        return inline({type: 'string', ...(schema.format ? {format: schema.format} : {}), ...(schema.enum ? {enum: [...schema.enum]} : {})})
      case 'integer':
        return inline({type: 'integer', format: schema.format})
      case 'number':
        return inline({type: 'number', format: 'double'})
      case 'boolean':
        return inline({type: 'boolean'})
      case 'raw':
        return inline({type: 'object', 'x-kubernetes-preserve-unknown-fields': true})
      case 'map':
        return inline({type: 'object', additionalProperties: this.property(schema.values, pkg)})
      case 'array':
        return inline({type: 'array', items: this.property(schema.items, pkg)})
    }
  }


  /** A top-level kind (with apiVersion, kind, metadata) and its group-version-kinds. */
  kind(schema: ObjectSchema, gvk: GVK, gvks: GVK[] = [gvk]): string {
    const ext = {'x-kubernetes-group-version-kind': gvks.map(({group, kind, version}) => ({group, kind, version}))}
    return this.object({...schema, name: gvk.kind}, openAPIPackage(gvk.group, gvk.version), ext, true)
  }

  /** The kind of a declaration. */
  declared(d: KindDeclaration): string {
    return this.kind(d.schema, d)
  }

  /** {Kind}List: apiVersion, items, kind, metadata (ListMeta). */
  list(d: KindDeclaration): string {
    const name = `${definitionName(d)}List`
    if (this.schemas[name]) return name
    const item = this.declared(d)
    this.schemas[name] = {
      description: `${d.kind}List is a list of ${d.kind}.`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: {description: TYPE_META.apiVersion, type: 'string'},
        items: {description: `List of ${d.resource}.`, type: 'array', items: this.ref(item)},
        kind: {description: TYPE_META.kind, type: 'string'},
        metadata: this.refWith(this.object(listMeta, META_PACKAGE), {description: TYPE_META.listMetadata}),
      },
      'x-kubernetes-group-version-kind': [{group: d.group, kind: `${d.kind}List`, version: d.version}],
    }
    return name
  }

  /** The kind a subresource reads and writes: a declared kind, Scale, or a free-form object. */
  subresourceKind(gvk: GVK): string {
    const declared = this.decls.find((d) => d.group === gvk.group && d.version === gvk.version && d.kind === gvk.kind)
    if (declared) return this.declared(declared)
    const known = SUBRESOURCE_KINDS[`${gvk.group}/${gvk.version}/${gvk.kind}`]
    if (known) return this.kind(known, gvk)
    const name = definitionName(gvk)
    this.schemas[name] ??= {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-group-version-kind': [{group: gvk.group, kind: gvk.kind, version: gvk.version}],
    }
    return name
  }

  /** A meta kind: Status (core v1 only), or DeleteOptions and WatchEvent (registered in every group version). */
  metaKind(schema: ObjectSchema, everyGroup: boolean): string {
    const gvks = new Map<string, GVK>([['/v1', {group: '', version: 'v1', kind: schema.name}]])
    if (everyGroup) {
      for (const [group, versions] of servedGroups(this.decls)) for (const version of versions) gvks.set(`${group}/${version}`, {group, version, kind: schema.name})
    }
    const sorted = [...gvks.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.version < b.version ? -1 : 1))
    return this.object(schema, META_PACKAGE, {'x-kubernetes-group-version-kind': sorted.map(({group, kind, version}) => ({group, kind, version}))}, true)
  }
}

function packageOf(name: string, enclosing: string): string {
  if (META_TYPES.has(name)) return META_PACKAGE
  if (CORE_SHARED_TYPES.has(name)) return openAPIPackage('', 'v1')
  return enclosing
}

// ---------- operations ----------

interface Param {
  name: string
  in: 'query' | 'path'
  description: string
  type: 'string' | 'integer' | 'boolean'
  required?: boolean
}

const q = (name: string, type: Param['type'], description: string): Param => ({name, in: 'query', type, description})
const P = {
  pretty: q('pretty', 'string', "If 'true', then the output is pretty printed."),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  continue: q('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  fieldSelector: q('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: q('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  resourceVersion: q('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', '`sendInitialEvents=true` may be set together with `watch=true`.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  watch: q('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.'),
  dryRun: q('dryRun', 'string', 'When present, indicates that modifications should not be persisted. The only valid value is: All.'),
  fieldManager: q('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  fieldValidation: q('fieldValidation', 'string', 'How the server handles unknown or duplicate fields in the body: Ignore, Warn (default) or Strict.'),
  force: q('force', 'boolean', 'Force is going to "force" Apply requests. It must be unset for non-apply patch requests.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  ignoreStoreReadError: q('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean', 'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy.'),
  propagationPolicy: q('propagationPolicy', 'string', "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."),
  namespace: {name: 'namespace', in: 'path', type: 'string', required: true, description: 'object name and auth scope, such as for teams and projects'} as Param,
}
const LIST_PARAMS = [P.allowWatchBookmarks, P.continue, P.fieldSelector, P.labelSelector, P.limit, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds, P.watch]
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation]
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy]
const DELETE_COLLECTION_PARAMS = [
  P.continue, P.dryRun, P.fieldSelector, P.gracePeriodSeconds, P.ignoreStoreReadError, P.labelSelector, P.limit,
  P.orphanDependents, P.propagationPolicy, P.resourceVersion, P.resourceVersionMatch, P.sendInitialEvents, P.timeoutSeconds,
]

/** Kubernetes' ToValidOperationID: letters kept, anything else dropped and capitalises the next letter. */
function toOperationID(text: string, capitalizeFirst: boolean): string {
  let out = ''
  let capitalize = capitalizeFirst
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (/[A-Za-z_]/.test(c) || (i !== 0 && /[0-9]/.test(c))) {
      out += capitalize ? c.toUpperCase() : c
      capitalize = false
    } else capitalize = true
  }
  return out
}

function groupWord(group: string): string {
  return group === '' ? 'core' : group.replace(/\.(orch|k8s)\.io$/, '')
}

interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** operationId prefix: list, read, create, replace, patch, delete, deletecollection, watch */
  verb: string
  /** rest of the operationId after the group version: NamespacedConfigMapStatus */
  name: string
  action: string
  description: string
  params: Param[]
  body?: 'object' | 'patch' | 'delete'
  responses: Record<string, string>
  /** what the operation returns (a definition name) */
  returns: string
  streams?: boolean
  /** a text answer (pods/log): schema type string, produced as text/plain among the others */
  text?: boolean
  gvk: GVK
}

class Paths {
  readonly paths: Record<string, Json> = {}

  constructor(private readonly defs: Definitions, private readonly tag: string, private readonly gvWord: string) {}

  add(path: string, pathParams: Param[], ops: Operation[]): void {
    if (ops.length === 0) return
    const item: Json = {}
    for (const op of ops) item[op.method] = this.operation(op)
    item.parameters = [...pathParams, P.pretty].map((p) => this.param(p))
    this.paths[path] = item
  }

  param(p: Param): Json {
    const base = {name: p.name, in: p.in, description: p.description, ...(p.required ? {required: true} : {})}
    return this.defs.flavor === 'v3' ? {...base, schema: {type: p.type, uniqueItems: true}} : {...base, type: p.type, uniqueItems: true}
  }

  operation(op: Operation): Json {
    const v3 = this.defs.flavor === 'v3'
    const produces = op.text ? ['text/plain', ...RESPONSE_TYPES] : [...RESPONSE_TYPES, ...(op.streams ? STREAM_TYPES : [])]
    const bodyName = op.body === 'patch' ? this.defs.object(patchSchema, META_PACKAGE) : op.body === 'delete' ? this.defs.metaKind(deleteOptions, true) : op.returns
    const consumes = op.body === 'patch' ? PATCH_MEDIA_TYPES : ['*/*']
    const out: Json = {tags: [this.tag], description: op.description}
    if (!v3) Object.assign(out, {consumes, produces, schemes: ['https']})
    out.operationId = `${op.verb}${this.gvWord}${op.name}`
    const params = op.params.map((p) => this.param(p))
    if (op.body && v3) {
      out.requestBody = {content: Object.fromEntries(consumes.map((t) => [t, {schema: this.defs.ref(bodyName)}])), ...(op.body === 'delete' ? {} : {required: true})}
    } else if (op.body) {
      params.unshift({name: 'body', in: 'body', ...(op.body === 'delete' ? {} : {required: true}), schema: this.defs.ref(bodyName)})
    }
    if (params.length) out.parameters = params
    const responses: Json = {}
    for (const [code, description] of Object.entries(op.responses)) {
      const schema = op.text ? {type: 'string'} : this.defs.ref(op.returns)
      responses[code] = v3 ? {description, content: Object.fromEntries(produces.map((t) => [t, {schema}]))} : {description, schema}
    }
    responses['401'] = {description: 'Unauthorized'}
    out.responses = responses
    out['x-kubernetes-action'] = op.action
    out['x-kubernetes-group-version-kind'] = {group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version}
    return out
  }
}

const OK = {'200': 'OK'}

function resourceOperations(paths: Paths, defs: Definitions, d: KindDeclaration, prefix: string): void {
  const has = (verb: Verb) => d.verbs.includes(verb)
  const gvk: GVK = {group: d.group, version: d.version, kind: d.kind}
  const self = defs.declared(d)
  const status = () => defs.metaKind(statusSchema, false)
  const nameParam: Param = {name: 'name', in: 'path', type: 'string', required: true, description: `name of the ${d.kind}`}
  const ns = d.namespaced ? 'Namespaced' : ''
  const nsPath = d.namespaced ? '/namespaces/{namespace}' : ''
  const nsParams = d.namespaced ? [P.namespace] : []
  const op = (o: Omit<Operation, 'gvk' | 'returns' | 'responses'> & Partial<Operation>): Operation => ({gvk, returns: self, responses: OK, ...o})

  const collection: Operation[] = []
  if (has('list')) collection.push(op({method: 'get', verb: 'list', name: `${ns}${d.kind}`, action: 'list', description: `list or watch objects of kind ${d.kind}`, params: LIST_PARAMS, returns: defs.list(d), streams: true}))
  if (has('create')) collection.push(op({method: 'post', verb: 'create', name: `${ns}${d.kind}`, action: 'post', description: `create ${article(d.kind)} ${d.kind}`, params: WRITE_PARAMS, body: 'object', responses: {'200': 'OK', '201': 'Created', '202': 'Accepted'}}))
  if (has('deletecollection')) collection.push(op({method: 'delete', verb: 'deletecollection', name: `${ns}${d.kind}`, action: 'deletecollection', description: `delete collection of ${d.kind}`, params: DELETE_COLLECTION_PARAMS, body: 'delete', returns: status()}))
  paths.add(`${prefix}${nsPath}/${d.resource}`, nsParams, collection)

  const item: Operation[] = []
  if (has('get')) item.push(op({method: 'get', verb: 'read', name: `${ns}${d.kind}`, action: 'get', description: `read the specified ${d.kind}`, params: []}))
  if (has('update')) item.push(op({method: 'put', verb: 'replace', name: `${ns}${d.kind}`, action: 'put', description: `replace the specified ${d.kind}`, params: WRITE_PARAMS, body: 'object', responses: {'200': 'OK', '201': 'Created'}}))
  if (has('patch')) item.push(op({method: 'patch', verb: 'patch', name: `${ns}${d.kind}`, action: 'patch', description: `partially update the specified ${d.kind}`, params: [...WRITE_PARAMS, P.force], body: 'patch', responses: {'200': 'OK', '201': 'Created'}}))
  if (has('delete')) item.push(op({method: 'delete', verb: 'delete', name: `${ns}${d.kind}`, action: 'delete', description: `delete ${article(d.kind)} ${d.kind}`, params: DELETE_PARAMS, body: 'delete', returns: status(), responses: {'200': 'OK', '202': 'Accepted'}}))
  paths.add(`${prefix}${nsPath}/${d.resource}/{name}`, [nameParam, ...nsParams], item)

  for (const sub of d.subresources ?? []) subresourceOperations(paths, defs, d, sub, {prefix: `${prefix}${nsPath}/${d.resource}/{name}`, params: [nameParam, ...nsParams], ns})

  if (d.namespaced && has('list')) {
    paths.add(`${prefix}/${d.resource}`, [], [op({method: 'get', verb: 'list', name: `${d.kind}ForAllNamespaces`, action: 'list', description: `list or watch objects of kind ${d.kind}`, params: LIST_PARAMS, returns: defs.list(d), streams: true})])
  }
  if (has('watch')) {
    const event = defs.metaKind(watchEvent, true)
    const watchOp = (name: string, action: string, description: string) => op({method: 'get', verb: 'watch', name, action, description, params: LIST_PARAMS, returns: event, streams: true})
    const deprecated = "deprecated: use the 'watch' parameter with a list operation instead"
    paths.add(`${prefix}/watch${nsPath}/${d.resource}`, nsParams, [watchOp(`${ns}${d.kind}List`, 'watchlist', `watch individual changes to a list of ${d.kind}. ${deprecated}.`)])
    paths.add(`${prefix}/watch${nsPath}/${d.resource}/{name}`, [nameParam, ...nsParams], [watchOp(`${ns}${d.kind}`, 'watch', `watch changes to an object of kind ${d.kind}. ${deprecated}, filtered to a single item with the 'fieldSelector' parameter.`)])
    if (d.namespaced) paths.add(`${prefix}/watch/${d.resource}`, [], [watchOp(`${d.kind}ListForAllNamespaces`, 'watchlist', `watch individual changes to a list of ${d.kind}. ${deprecated}.`)])
  }
}

function subresourceOperations(paths: Paths, defs: Definitions, d: KindDeclaration, sub: SubresourceDeclaration, at: {prefix: string; params: Param[]; ns: string}): void {
  const gvk: GVK = sub.kind ?? {group: d.group, version: d.version, kind: d.kind}
  const returns = sub.kind ? defs.subresourceKind(sub.kind) : defs.declared(d)
  const name = `${at.ns}${d.kind}${toOperationID(sub.name, true)}`
  const what = `${sub.name} of the specified ${d.kind}`
  const ops: Operation[] = []
  const base = {name, gvk, returns}
  if (sub.name === 'log' && d.kind === 'Pod') {
    // readCoreV1NamespacedPodLog: PodLogOptions as query parameters, the log as a string
    ops.push({...base, method: 'get', verb: 'read', action: 'get', description: `read log of the specified ${d.kind}`, params: POD_LOG_PARAMS, responses: OK, text: true})
  } else if (sub.verbs.includes('get')) ops.push({...base, method: 'get', verb: 'read', action: 'get', description: `read ${what}`, params: [], responses: OK})
  if (sub.verbs.includes('create')) ops.push({...base, method: 'post', verb: 'create', action: 'post', description: `create ${sub.name} of ${article(d.kind)} ${d.kind}`, params: WRITE_PARAMS, body: 'object', responses: {'200': 'OK', '201': 'Created', '202': 'Accepted'}})
  if (sub.verbs.includes('update')) ops.push({...base, method: 'put', verb: 'replace', action: 'put', description: `replace ${what}`, params: WRITE_PARAMS, body: 'object', responses: {'200': 'OK', '201': 'Created'}})
  if (sub.verbs.includes('patch')) ops.push({...base, method: 'patch', verb: 'patch', action: 'patch', description: `partially update ${what}`, params: [...WRITE_PARAMS, P.force], body: 'patch', responses: {'200': 'OK', '201': 'Created'}})
  paths.add(`${at.prefix}/${sub.name}`, at.params, ops)
}

/** PodLogOptions, as Kubernetes' OpenAPI lists them for pods/log */
const POD_LOG_PARAMS: Param[] = [
  q('container', 'string', 'The container for which to stream logs. Defaults to only container if there is one container in the pod.'),
  q('follow', 'boolean', 'Follow the log stream of the pod. Defaults to false.'),
  q('insecureSkipTLSVerifyBackend', 'boolean', "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving certificate of the backend it is connecting to."),
  q('limitBytes', 'integer', 'If set, the number of bytes to read from the server before terminating the log output.'),
  q('previous', 'boolean', 'Return previous terminated container logs. Defaults to false.'),
  q('sinceSeconds', 'integer', 'A relative time in seconds before the current time from which to show logs.'),
  q('tailLines', 'integer', 'If set, the number of lines from the end of the logs to show.'),
  q('timestamps', 'boolean', 'If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false.'),
]

function article(word: string): string {
  return /^[AEIOU]/.test(word) ? 'an' : 'a'
}

/** Definitions and paths of one group version (the `/api/v1/` or `/apis/g/v/` discovery path included). */
function buildGroupVersion(defs: Definitions, decls: readonly KindDeclaration[], group: string, version: string): Record<string, Json> {
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`
  const word = groupWord(group)
  const gvWord = `${toOperationID(word, true)}${toOperationID(version, true)}`
  const paths = new Paths(defs, `${toOperationID(word, false)}_${toOperationID(version, false)}`, gvWord)
  const resources = defs.object(apiResourceList, META_PACKAGE, {}, true)
  const discovery: Json = {tags: [`${toOperationID(word, false)}_${toOperationID(version, false)}`], description: 'get available resources', operationId: `get${gvWord}APIResources`}
  const ok = defs.flavor === 'v3'
    ? {description: 'OK', content: Object.fromEntries(RESPONSE_TYPES.map((t) => [t, {schema: defs.ref(resources)}]))}
    : {description: 'OK', schema: defs.ref(resources)}
  if (defs.flavor === 'v2') Object.assign(discovery, {consumes: RESPONSE_TYPES, produces: RESPONSE_TYPES, schemes: ['https']})
  discovery.responses = {'200': ok, '401': {description: 'Unauthorized'}}
  paths.paths[`${prefix}/`] = {get: discovery}
  for (const d of decls) if (d.group === group && d.version === version) resourceOperations(paths, defs, d, prefix)
  return paths.paths
}

// ---------- documents ----------

const SECURITY = {BearerToken: {type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header'}}

/** `/openapi/v3/api/v1`, `/openapi/v3/apis/{g}/{v}`: an OpenAPI 3.0 document; undefined if not served. */
export function openAPIV3Document(decls: readonly KindDeclaration[], group: string, version: string): Json | undefined {
  if (!decls.some((d) => d.group === group && d.version === version)) return undefined
  const defs = new Definitions('v3', decls)
  const paths = buildGroupVersion(defs, decls, group, version)
  return {
    openapi: '3.0.0',
    info: {title: OPENAPI_TITLE, version: INFO_VERSION},
    paths: sortedKeys(paths),
    components: {schemas: sortedKeys(defs.schemas), securitySchemes: structuredClone(SECURITY)},
  }
}

/** The path of a group version in the v3 index (api/v1, apis/apps/v1). */
export function openAPIV3Path(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`
}

/** The `hash` of a served document: uppercase hex SHA-512 of the bytes served (JSON.stringify(document)). */
export function openAPIEtag(document: unknown): string {
  return createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase()
}

/** `/openapi/v3`: {paths: {"api/v1": {serverRelativeURL: "/openapi/v3/api/v1?hash=..."}, ...}}. */
export function openAPIV3Root(decls: readonly KindDeclaration[]): {paths: Record<string, {serverRelativeURL: string}>} {
  const paths: Record<string, {serverRelativeURL: string}> = {}
  for (const [group, versions] of servedGroups(decls)) {
    for (const version of versions) {
      const path = openAPIV3Path(group, version)
      paths[path] = {serverRelativeURL: `/openapi/v3/${path}?hash=${openAPIEtag(openAPIV3Document(decls, group, version))}`}
    }
  }
  return {paths: sortedKeys(paths)}
}

/** `/openapi/v2`: one Swagger 2.0 document for every group version. */
export function openAPIV2(decls: readonly KindDeclaration[]): Json {
  const defs = new Definitions('v2', decls)
  const paths: Record<string, Json> = {}
  for (const [group, versions] of servedGroups(decls)) for (const version of versions) Object.assign(paths, buildGroupVersion(defs, decls, group, version))
  return {
    swagger: '2.0',
    info: {title: OPENAPI_TITLE, version: INFO_VERSION},
    paths: sortedKeys(paths),
    definitions: sortedKeys(defs.schemas),
    securityDefinitions: structuredClone(SECURITY),
    security: [{BearerToken: []}],
  }
}
