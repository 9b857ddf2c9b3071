// Lease (coordination.orch.io/v1, namespaced): node heartbeats and leader election.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'

/** The namespace of the agents' heartbeat Leases (Kubernetes' kube-node-lease). */
export const NODE_LEASE_NAMESPACE = 'orch-node-lease'

export const lease: KindDeclaration = {
  group: 'coordination.orch.io',
  version: 'v1',
  kind: 'Lease',
  resource: 'leases',
  singular: 'lease',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'Lease',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'LeaseSpec',
        proto: 2,
        fields: {
          holderIdentity: {type: 'string', proto: 1},
          leaseDurationSeconds: {type: 'integer', format: 'int32', proto: 2},
          acquireTime: {type: 'time', micro: true, proto: 3},
          renewTime: {type: 'time', micro: true, proto: 4},
          leaseTransitions: {type: 'integer', format: 'int32', proto: 5},
          strategy: {type: 'string', proto: 6},
          preferredHolder: {type: 'string', proto: 7},
        },
      },
    },
  },
  columns: [
    {
      name: 'Holder',
      type: 'string',
      description: 'holderIdentity contains the identity of the holder of a current lease.',
      priority: 0,
      cell: (o) => o.spec?.holderIdentity ?? '',
    },
    ageColumn,
  ],
}
