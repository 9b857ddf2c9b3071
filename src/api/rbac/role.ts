// Role (rbac.orch.io/v1, namespaced): Kubernetes' shape. Table: kubectl's default NAME CREATED AT.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {policyRule, rbacGroup} from './shared.js'

export const role: KindDeclaration = {
  group: rbacGroup,
  version: 'v1',
  kind: 'Role',
  resource: 'roles',
  singular: 'role',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  // names such as system:node hold colons: Kubernetes validates RBAC names as path segments
  nameRule: 'path-segment',
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'Role',
    fields: {
      metadata: {...objectMeta, proto: 1},
      rules: {type: 'array', items: policyRule, proto: 2, listType: 'atomic'},
    },
  },
}
