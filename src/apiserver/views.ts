// Table and metadata-only views of objects and lists (meta.orch.io/v1, or meta.k8s.io/v1 for a
// Kubernetes client that names that group).
import type {AnyObject, KindDeclaration, TableColumn} from '../api/types.js'
import type {ListResult} from './registry.js'

export interface ViewRequest {
  as: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList'
  group: string
  version: string
}

const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
  cell: (o) => o.metadata?.name ?? '',
}

const createdAtColumn: TableColumn = {
  name: 'Created At',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC.',
  priority: 0,
  cell: (o) => o.metadata?.creationTimestamp ?? null,
}

/** What a Table of a kind is made of: a kind's declaration, or the columns of a subresource's kind. */
export type TableShape = Pick<KindDeclaration, 'columns' | 'nameColumn'>

/** Every column of the table, the Name column where the shape places it. */
function columnsOf(shape: TableShape): readonly TableColumn[] {
  const placement = shape.nameColumn ?? {position: 'first', priority: 0}
  const name = {...nameColumn, priority: placement.priority, format: placement.format ?? 'name'}
  const others = shape.columns ?? [createdAtColumn]
  return placement.position === 'last' ? [...others, name] : [name, ...others]
}

export function partialObjectMetadata(object: AnyObject, view: {group: string; version: string}): AnyObject {
  return {kind: 'PartialObjectMetadata', apiVersion: `${view.group}/${view.version}`, metadata: object.metadata ?? {}}
}

function row(columns: readonly TableColumn[], object: AnyObject, now: Date, includeObject: string, view: ViewRequest) {
  const cells = columns.map((c) => c.cell(object, now))
  const out: AnyObject = {cells}
  if (includeObject === 'Object') out.object = object
  else if (includeObject !== 'None') out.object = partialObjectMetadata(object, view)
  return out
}

export function table(
  shape: TableShape,
  objects: AnyObject[],
  listMeta: AnyObject,
  view: ViewRequest,
  now: Date,
  includeObject = 'Metadata',
): AnyObject {
  const columns = columnsOf(shape)
  return {
    kind: 'Table',
    apiVersion: `${view.group}/${view.version}`,
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description,
      priority: c.priority,
    })),
    rows: objects.map((o) => row(columns, o, now, includeObject, view)),
  }
}

export function listMetaOf(result: ListResult): AnyObject {
  const meta: AnyObject = {resourceVersion: result.resourceVersion}
  if (result.continue) meta.continue = result.continue
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount
  return meta
}

/** The body for a list response in the requested view. */
export function listView(
  declaration: KindDeclaration,
  apiVersion: string,
  result: ListResult,
  view: ViewRequest | undefined,
  now: Date,
  includeObject?: string,
): AnyObject {
  const meta = listMetaOf(result)
  if (!view) return {kind: `${declaration.kind}List`, apiVersion, metadata: meta, items: result.items}
  if (view.as === 'Table') return table(declaration, result.items, meta, view, now, includeObject)
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `${view.group}/${view.version}`,
    metadata: meta,
    items: result.items.map((o) => partialObjectMetadata(o, view)),
  }
}

/** The body for a single object in the requested view. */
export function objectView(
  shape: TableShape,
  object: AnyObject,
  view: ViewRequest | undefined,
  now: Date,
  includeObject?: string,
): AnyObject {
  if (!view) return object
  if (view.as === 'Table') return table(shape, [object], {resourceVersion: object.metadata?.resourceVersion ?? ''}, view, now, includeObject)
  return partialObjectMetadata(object, view)
}
