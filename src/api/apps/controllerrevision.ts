// ControllerRevision (apps/v1, namespaced): an immutable snapshot of a controller's state.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration} from '../types.js'

/** kubectl's CONTROLLER: the controlling owner as `kind.group/name` in lower case, `<none>` without one. */
export function controllerOf(object: AnyObject): string {
  const ref = (object.metadata?.ownerReferences ?? []).find((r: any) => r?.controller === true)
  if (!ref) return '<none>'
  const apiVersion = String(ref.apiVersion ?? '')
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : ''
  const groupKind = group ? `${ref.kind}.${group}` : String(ref.kind ?? '')
  return groupKind ? `${groupKind.toLowerCase()}/${ref.name}` : String(ref.name ?? '')
}

export const controllerRevision: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  resource: 'controllerrevisions',
  singular: 'controllerrevision',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'ControllerRevision',
    fields: {
      metadata: {...objectMeta, proto: 1},
      data: {type: 'raw', proto: 2, required: true},
      revision: {type: 'integer', format: 'int64', proto: 3},
    },
  },
  columns: [
    {name: 'Controller', type: 'string', description: 'Controller of the object', priority: 0, cell: (o) => controllerOf(o)},
    {name: 'Revision', type: 'string', description: 'Revision indicates the revision of the state represented by Data.', priority: 0, cell: (o) => o.revision ?? 0},
    ageColumn,
  ],
}
