// The shape of a kind's declaration. Everything the generic machinery needs about a kind is declared
// once, in one file per kind under src/api, and read from there: names and scope, verbs and
// subresources, the schema (field types, protobuf field numbers as in Kubernetes' generated.proto,
// strategic-merge keys and list types), defaults, validation, table columns and field selectors.

// ---------- schema ----------

export type Schema =
  | {type: 'string'; enum?: readonly string[]; format?: 'byte' | 'date-time' | 'int-or-string'}
  | {type: 'integer'; format: 'int32' | 'int64'}
  | {type: 'number'}
  | {type: 'boolean'}
  /** RFC 3339 time, serialised as a string (metav1.Time / MicroTime) */
  | {type: 'time'; micro?: boolean}
  /** resource.Quantity, serialised as a string */
  | {type: 'quantity'}
  /** intstr.IntOrString */
  | {type: 'int-or-string'}
  /** a struct: named fields */
  | ObjectSchema
  /** map[string]X */
  | {type: 'map'; values: Schema; mapType?: 'atomic' | 'granular'}
  /** []X */
  | ArraySchema
  /** runtime.RawExtension / free-form JSON */
  | {type: 'raw'}

export interface ObjectSchema {
  type: 'object'
  /** the Go type name, used for OpenAPI definitions and protobuf message names */
  name: string
  /** fields by JSON name (an embedded Go struct's fields included, each marked with `embeddedIn`) */
  fields: Record<string, Field>
  /** x-kubernetes-map-type: atomic structs are replaced whole by apply and strategic merge */
  structType?: 'atomic' | 'granular'
}

export interface ArraySchema {
  type: 'array'
  items: Schema
  /** x-kubernetes-list-type; `atomic` = replaced whole on merge */
  listType?: 'atomic' | 'set' | 'map'
  /** x-kubernetes-list-map-keys (listType map) */
  listMapKeys?: readonly string[]
  /** strategic merge: the key lists are merged by (patchMergeKey) */
  patchMergeKey?: string
  /** strategic merge: 'merge' merges by key, absent or 'replace' replaces the list whole */
  patchStrategy?: 'merge' | 'retainKeys' | 'merge,retainKeys'
}

export type Field = Schema & {
  /** protobuf field number, as in Kubernetes' generated.proto */
  proto: number
  required?: boolean
  description?: string
  /** a field of an embedded Go struct (ProbeHandler in Probe, VolumeSource in Volume): JSON shows it
   *  flat in this object; protobuf puts it in the nested message at embeddedIn.proto */
  embeddedIn?: EmbeddedIn
  /** a Go pointer to a struct (`*T`): left out when nil, never encoded as `{}` */
  pointer?: boolean
  /** the field's own strategic-merge strategy (for maps or structs: retainKeys) */
  patchStrategy?: 'merge' | 'retainKeys' | 'merge,retainKeys' | 'replace'
}

/** Where an embedded Go struct sits in protobuf: its field number in the parent and its message name.
 *  `inner` is set when that struct embeds in turn the one holding the field (NamedRuleWithOperations
 *  embeds RuleWithOperations at 2, which embeds Rule at 2): the next step inward, inside `name`. */
export interface EmbeddedIn {
  proto: number
  name: string
  inner?: EmbeddedIn
}

// ---------- behaviour ----------

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'

export interface FieldError {
  type:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueDuplicate'
    | 'FieldValueTooMany'
  field: string
  message: string
  value?: unknown
}

/** Who is asking, for strategies that record the caller (CSR spec.username, …). */
export interface UserInfo {
  username: string
  uid?: string
  groups: string[]
  extra?: Record<string, string[]>
}

export interface RequestContext {
  user?: UserInfo
  /** the namespace from the path, for namespaced kinds */
  namespace?: string
  /** the subresource being written, if any */
  subresource?: string
  /** feature gates in force */
  gates?: Record<string, boolean>
  now: Date
  /** the request's audit annotations, to add to (admission policies' audit annotations) */
  audit?: Record<string, string>
  /** warnings for the answer's Warning header (admission adds to them) */
  warnings?: string[]
  /** the write's field manager, as the request named it */
  fieldManager?: string
  /** the write's options as the request gave them (CreateOptions / UpdateOptions fields from the query,
   *  DeleteOptions from the body or query), which admission webhooks see as `request.options` */
  requestOptions?: Record<string, unknown>
  /** an update or apply that finds no object and creates it must also be allowed to create (throws
   *  the 403 when not), as Kubernetes' withAuthorization asks the authorizer on create-on-update */
  authorizeCreate?(): void
}

export interface SubresourceDeclaration {
  name: string
  verbs: readonly Verb[]
  /** kind served by the subresource when it is not the parent kind (e.g. Binding, Scale) */
  kind?: {group: string; version: string; kind: string}
  /** the fields this subresource may change; the rest of the object stays as stored. `status` and
   *  `finalize` are the usual ones; a custom strategy can go further with prepareSubresourceUpdate */
  writes?: 'status' | 'finalize' | 'custom'
}

export interface TableColumn {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date'
  format?: 'name' | ''
  description: string
  /** 0 = shown by default, 1 = only with -o wide */
  priority: 0 | 1
  cell(object: any, now: Date): string | number | boolean | null
}

/** The Name column of a kind's Table, where kubectl's column definitions put it. */
export interface NameColumnPlacement {
  position: 'first' | 'last'
  /** 0 = shown by default, 1 = only with -o wide */
  priority: 0 | 1
  /** default 'name' (the column clients put `kind/` in front of); some of kubectl's tables leave it unmarked */
  format?: 'name' | ''
}

/** metav1.OwnerReference: the owner an object names in metadata.ownerReferences */
export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

export type AnyObject = Record<string, any> & {
  apiVersion?: string
  kind?: string
  metadata?: Record<string, any>
}

export interface KindDeclaration {
  /** '' for the core group */
  group: string
  version: string
  kind: string
  /** plural resource name in paths */
  resource: string
  singular: string
  shortNames?: readonly string[]
  categories?: readonly string[]
  namespaced: boolean
  verbs: readonly Verb[]
  subresources?: readonly SubresourceDeclaration[]
  /** the object's own fields besides apiVersion, kind, metadata (usually spec and status) */
  schema: ObjectSchema
  /** metadata.name rule: 'subdomain' (default), 'label', or 'path-segment' (anything without / or %) */
  nameRule?: 'subdomain' | 'label' | 'path-segment'
  /** PUT on a missing object creates it */
  allowCreateOnUpdate?: boolean
  /** PUT without metadata.resourceVersion is accepted (last writer wins) */
  allowUnconditionalUpdate?: boolean
  /** the top-level field(s) whose change bumps metadata.generation (default ['spec']; [] = none) */
  generationFields?: readonly string[]
  /** a status subresource: the main resource ignores status, /status ignores everything else */
  hasStatus?: boolean
  /** fill defaults in place (after decoding, before validation) */
  defaults?(object: AnyObject): void
  /** adjust a new object before validation: clear status, record the caller, … */
  prepareForCreate?(object: AnyObject, context: RequestContext): void
  /** adjust an update before validation (old is the stored object) */
  prepareForUpdate?(object: AnyObject, old: AnyObject, context: RequestContext): void
  validateCreate?(object: AnyObject, context: RequestContext): FieldError[]
  validateUpdate?(object: AnyObject, old: AnyObject, context: RequestContext): FieldError[]
  /** Warning headers for a create that passed validation (Kubernetes' strategy WarningsOnCreate) */
  warningsOnCreate?(object: AnyObject, context: RequestContext): string[]
  /** Warning headers for an update of the main resource that passed validation (WarningsOnUpdate;
   *  subresource strategies return none) */
  warningsOnUpdate?(object: AnyObject, old: AnyObject, context: RequestContext): string[]
  /** a writes:'custom' subresource: build the object to store from the request body and the stored object */
  prepareSubresourceUpdate?(subresource: string, object: AnyObject, old: AnyObject, context: RequestContext): AnyObject
  validateSubresourceUpdate?(subresource: string, object: AnyObject, old: AnyObject, context: RequestContext): FieldError[]
  /** spec.finalizers hold deletion like metadata.finalizers (Namespace) */
  specFinalizers?: boolean
  /** the garbage collector does not watch this kind (Event, as kube-controller-manager's default
   *  ignoredResources): a DELETE's propagation policy adds no orphan / foregroundDeletion finalizer,
   *  which nothing would ever remove */
  ignoredByGarbageCollector?: true
  /** adjust an object being marked for deletion (e.g. Namespace phase Terminating) */
  prepareForDelete?(object: AnyObject): void
  /** graceful deletion (Pod): the seconds the object stays, marked, before it goes; 0 or undefined = at once */
  deletionGracePeriod?(object: AnyObject, requested: number | undefined): number | undefined
  /** a delete that removes the object at once answers the deleted object instead of a success Status
   *  (Kubernetes' store option ReturnDeletedObject, set for pods) */
  returnDeletedObject?: true
  /** a create-only kind answered by the server and never stored (SubjectAccessReview, TokenReview) */
  virtual?: true
  /** false for kinds that cannot be shown as a Table (virtual kinds): Table-only Accept is 406 */
  table?: false
  /** Table columns besides NAME (kubectl's): absent = the default Name / Created At table */
  columns?: readonly TableColumn[]
  /** where the Name column goes: absent = first, shown by default, format `name` */
  nameColumn?: NameColumnPlacement
  /** field selectors beyond metadata.name and metadata.namespace: label -> value of the object */
  fieldSelectors?: Record<string, (object: AnyObject) => string>
}

/** group/version as written in apiVersion */
export function apiVersionOf(declaration: Pick<KindDeclaration, 'group' | 'version'>): string {
  return declaration.group === '' ? declaration.version : `${declaration.group}/${declaration.version}`
}
