// ClusterRole (rbac.orch.io/v1, cluster-scoped): Kubernetes' shape. Table: kubectl's default NAME CREATED AT.
import {labelSelector, objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {policyRule, rbacGroup} from './shared.js'

export const clusterRole: KindDeclaration = {
  group: rbacGroup,
  version: 'v1',
  kind: 'ClusterRole',
  resource: 'clusterroles',
  singular: 'clusterrole',
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  // names such as system:node hold colons: Kubernetes validates RBAC names as path segments
  nameRule: 'path-segment',
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'ClusterRole',
    fields: {
      metadata: {...objectMeta, proto: 1},
      rules: {type: 'array', items: policyRule, proto: 2, listType: 'atomic'},
      aggregationRule: {
        type: 'object',
        name: 'AggregationRule',
        proto: 3,
        fields: {clusterRoleSelectors: {type: 'array', items: labelSelector, proto: 1, listType: 'atomic'}},
      },
    },
  },
}
