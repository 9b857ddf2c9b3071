// The schemas the protobuf codec reads besides the declarations' own: the meta/v1 kinds (numbered as in
// Kubernetes' meta/v1 generated.proto) and each kind's list; and the message plans it walks.
import {listMeta, objectMeta} from '../api/meta.js'
import {apiVersionOf, type EmbeddedIn, type Field, type KindDeclaration, type ObjectSchema, type Schema} from '../api/types.js'

export const META_API_VERSION = 'meta.orch.io/v1'

const str = (proto: number): Field => ({type: 'string', proto})
const int32 = (proto: number): Field => ({type: 'integer', format: 'int32', proto})
export const listMetaField: Field = {...listMeta, proto: 1}

export const statusSchema: ObjectSchema = {
  type: 'object',
  name: 'Status',
  fields: {
    metadata: listMetaField,
    status: str(2),
    message: str(3),
    reason: str(4),
    details: {
      type: 'object',
      name: 'StatusDetails',
      proto: 5,
      fields: {
        name: str(1),
        group: str(2),
        kind: str(3),
        uid: str(6),
        causes: {
          type: 'array',
          proto: 4,
          items: {type: 'object', name: 'StatusCause', fields: {reason: str(1), message: str(2), field: str(3)}},
        },
        retryAfterSeconds: int32(5),
      },
    },
    code: int32(6),
  },
}

export const tableSchema: ObjectSchema = {
  type: 'object',
  name: 'Table',
  fields: {
    metadata: listMetaField,
    columnDefinitions: {
      type: 'array',
      proto: 2,
      items: {
        type: 'object',
        name: 'TableColumnDefinition',
        fields: {name: str(1), type: str(2), format: str(3), description: str(4), priority: int32(5)},
      },
    },
    rows: {
      type: 'array',
      proto: 3,
      items: {
        type: 'object',
        name: 'TableRow',
        fields: {
          cells: {type: 'array', items: {type: 'raw'}, proto: 1},
          conditions: {
            type: 'array',
            proto: 2,
            items: {type: 'object', name: 'TableRowCondition', fields: {type: str(1), status: str(2), reason: str(3), message: str(4)}},
          },
          object: {type: 'raw', proto: 3},
        },
      },
    },
  },
}

export const partialObjectMetadataSchema: ObjectSchema = {
  type: 'object',
  name: 'PartialObjectMetadata',
  fields: {metadata: {...objectMeta, proto: 1}},
}

/** the list kinds: their ListMeta is written even when empty, and they read back with metadata and items */
export const listKinds = new WeakSet<ObjectSchema>()

export const partialObjectMetadataListSchema: ObjectSchema = {
  type: 'object',
  name: 'PartialObjectMetadataList',
  fields: {metadata: listMetaField, items: {type: 'array', items: partialObjectMetadataSchema, proto: 2}},
}
listKinds.add(partialObjectMetadataListSchema)

export const deleteOptionsSchema: ObjectSchema = {
  type: 'object',
  name: 'DeleteOptions',
  fields: {
    gracePeriodSeconds: {type: 'integer', format: 'int64', proto: 1},
    preconditions: {type: 'object', name: 'Preconditions', proto: 2, fields: {uid: str(1), resourceVersion: str(2)}},
    orphanDependents: {type: 'boolean', proto: 3},
    propagationPolicy: str(4),
    dryRun: {type: 'array', items: {type: 'string'}, proto: 5},
    ignoreStoreReadErrorWithClusterBreakingPotential: {type: 'boolean', proto: 6},
  },
}

/** WatchEvent as declared for the .proto files; the codec writes it with encodeWatchEvent (object.raw is protobuf) */
export const watchEventSchema: ObjectSchema = {
  type: 'object',
  name: 'WatchEvent',
  fields: {type: str(1), object: {type: 'raw', proto: 2}},
}

/** the meta/v1 kinds with a protobuf form, by kind */
const metaKinds: Record<string, ObjectSchema> = {
  Status: statusSchema,
  Table: tableSchema,
  PartialObjectMetadata: partialObjectMetadataSchema,
  PartialObjectMetadataList: partialObjectMetadataListSchema,
  DeleteOptions: deleteOptionsSchema,
}

export const metaSchemas: readonly ObjectSchema[] = [...Object.values(metaKinds), watchEventSchema]

/** autoscaling/v1 Scale, the payload of the /scale subresources (field numbers of its generated.proto) */
export const scaleSchema: ObjectSchema = {
  type: 'object',
  name: 'Scale',
  fields: {
    metadata: {...objectMeta, proto: 1},
    spec: {type: 'object', name: 'ScaleSpec', proto: 2, fields: {replicas: {type: 'integer', format: 'int32', proto: 1}}},
    status: {
      type: 'object',
      name: 'ScaleStatus',
      proto: 3,
      fields: {replicas: {type: 'integer', format: 'int32', proto: 1}, selector: {type: 'string', proto: 2}},
    },
  },
}

const listSchemas = new WeakMap<KindDeclaration, ObjectSchema>()

/** `<Kind>List`: metadata ListMeta = 1, items = 2 */
export function listSchemaOf(declaration: KindDeclaration): ObjectSchema {
  let schema = listSchemas.get(declaration)
  if (!schema) {
    const items: Field = {type: 'array', items: declaration.schema, proto: 2}
    schema = {type: 'object', name: `${declaration.kind}List`, fields: {metadata: listMetaField, items}}
    listSchemas.set(declaration, schema)
    listKinds.add(schema)
  }
  return schema
}

/** the schema of `kind` in the context of `declaration`: its kind, its list, or a meta/v1 kind */
export function schemaForKind(declaration: KindDeclaration | undefined, kind: string): ObjectSchema | undefined {
  if (declaration && kind === declaration.kind) return declaration.schema
  if (declaration && kind === `${declaration.kind}List`) return listSchemaOf(declaration)
  if (kind === 'Scale') return scaleSchema
  return Object.hasOwn(metaKinds, kind) ? metaKinds[kind] : undefined
}

export function defaultApiVersion(declaration: KindDeclaration | undefined, kind: string): string {
  if (declaration && (kind === declaration.kind || kind === `${declaration.kind}List`)) return apiVersionOf(declaration)
  if (kind === 'Scale') return 'autoscaling/v1'
  return kind === 'Status' ? 'v1' : META_API_VERSION
}

// ---------- message plans: the schema's fields by number, embedded structs as nested messages ----------

export interface Slot {
  number: number
  /** a field: its JSON name and schema */
  name?: string
  field?: Schema
  /** an embedded Go struct: a nested message whose fields sit in the same JSON object */
  embedded?: Plan
}

export interface Plan {
  slots: Slot[]
  byNumber: Map<number, Slot>
  /** every JSON name the message covers, embedded ones included */
  names: string[]
  /** fields whose zero value ('' or 0) Go reads as unset and leaves out of JSON (non-pointer, omitempty):
   *  Kubernetes writes them always, so a decoded message drops them when zero */
  omitZero?: readonly string[]
}

/** ObjectMeta's non-pointer omitempty scalars: kubectl's protobuf bodies carry them as '' and 0 */
const OBJECT_META_OMIT_ZERO = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation']

const plans = new WeakMap<ObjectSchema, Plan>()

export function planOf(schema: ObjectSchema): Plan {
  let plan = plans.get(schema)
  if (!plan) {
    plan = buildPlan(Object.entries(schema.fields).map(([name, field]) => [name, field, field.embeddedIn]), schema.name)
    if (schema.name === 'ObjectMeta') plan.omitZero = OBJECT_META_OMIT_ZERO
    plans.set(schema, plan)
  }
  return plan
}

function buildPlan(entries: Array<[string, Field, EmbeddedIn | undefined]>, where: string): Plan {
  const slots: Slot[] = []
  const groups = new Map<number, Array<[string, Field, EmbeddedIn | undefined]>>()
  for (const [name, field, embedding] of entries) {
    if (!embedding) slots.push({number: field.proto, name, field})
    else if (groups.has(embedding.proto)) groups.get(embedding.proto)!.push([name, field, embedding.inner])
    else groups.set(embedding.proto, [[name, field, embedding.inner]])
  }
  for (const [number, group] of groups) slots.push({number, embedded: buildPlan(group, `${where}.${number}`)})
  slots.sort((a, b) => a.number - b.number)
  const byNumber = new Map<number, Slot>()
  for (const slot of slots) {
    if (byNumber.has(slot.number)) throw new Error(`protobuf: ${where} uses field number ${slot.number} twice`)
    byNumber.set(slot.number, slot)
  }
  const names = slots.flatMap((s) => (s.embedded ? s.embedded.names : [s.name!]))
  return {slots, byNumber, names}
}
