// ServiceCIDR (networking.orch.io/v1, cluster-scoped): document 2.
import {ageColumn} from '../columns.js'
import {conditionList, objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'

export const SERVICE_CIDR_FINALIZER = 'networking.orch.io/service-cidr-finalizer'

export const serviceCIDR: KindDeclaration = {
  group: 'networking.orch.io',
  version: 'v1',
  kind: 'ServiceCIDR',
  resource: 'servicecidrs',
  singular: 'servicecidr',
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'}],
  hasStatus: true,
  prepareForCreate(object) {
    // IPs allocated from the range hold its deletion until they are released
    const finalizers: string[] = object.metadata!.finalizers ?? []
    if (!finalizers.includes(SERVICE_CIDR_FINALIZER)) object.metadata!.finalizers = [...finalizers, SERVICE_CIDR_FINALIZER]
    object.status = {}
  },
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'ServiceCIDR',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'ServiceCIDRSpec',
        proto: 2,
        fields: {cidrs: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'}},
      },
      status: {
        type: 'object',
        name: 'ServiceCIDRStatus',
        proto: 3,
        fields: {conditions: conditionList(1)},
      },
    },
  },
  columns: [
    {
      name: 'CIDRs',
      type: 'string',
      description: 'the IP blocks, in CIDR notation, from which service cluster IPs are assigned',
      priority: 0,
      cell: (o) => (Array.isArray(o.spec?.cidrs) ? o.spec.cidrs.join(',') : ''),
    },
    ageColumn,
  ],
}
