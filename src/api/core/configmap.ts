// ConfigMap (v1, namespaced): document 2.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'

export const configMap: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: {
    type: 'object',
    name: 'ConfigMap',
    fields: {
      metadata: {...objectMeta, proto: 1},
      data: {type: 'map', values: {type: 'string'}, proto: 2},
      binaryData: {type: 'map', values: {type: 'string', format: 'byte'}, proto: 3},
      immutable: {type: 'boolean', proto: 4},
    },
  },
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  columns: [
    {
      name: 'Data',
      type: 'integer',
      description: 'number of entries in data and binaryData',
      priority: 0,
      cell: (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length,
    },
    ageColumn,
  ],
}
