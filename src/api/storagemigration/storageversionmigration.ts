// StorageVersionMigration (storagemigration.orch.io/v1beta1, cluster-scoped): document 2.
import {conditionList, objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'

export const storageVersionMigration: KindDeclaration = {
  group: 'storagemigration.orch.io',
  version: 'v1beta1',
  kind: 'StorageVersionMigration',
  resource: 'storageversionmigrations',
  singular: 'storageversionmigration',
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'}],
  hasStatus: true,
  // Kubernetes' strategy.PrepareForCreate: a new migration starts with an empty status whatever it
  // was sent with, so a forged Succeeded / Failed condition or resourceVersion cannot stop or skew it
  prepareForCreate(object) {
    object.status = {}
  },
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'StorageVersionMigration',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'StorageVersionMigrationSpec',
        proto: 2,
        fields: {
          resource: {
            type: 'object',
            name: 'GroupResource',
            proto: 1,
            required: true,
            fields: {
              group: {type: 'string', proto: 1, required: true},
              resource: {type: 'string', proto: 2, required: true},
            },
          },
        },
      },
      status: {
        type: 'object',
        name: 'StorageVersionMigrationStatus',
        proto: 3,
        fields: {
          conditions: conditionList(1),
          resourceVersion: {type: 'string', proto: 2},
        },
      },
    },
  },
  columns: [
    {
      name: 'Resource',
      type: 'string',
      description: 'the fully qualified resource to migrate',
      priority: 0,
      cell: (o) => {
        const r = o.spec?.resource ?? {}
        return r.group ? `${r.resource ?? ''}.${r.group}` : (r.resource ?? '')
      },
    },
  ],
}
