// RoleBinding (rbac.orch.io/v1, namespaced): Kubernetes' shape.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {bindingColumns, defaultBinding, rbacGroup, roleRef, subject} from './shared.js'

export const roleBinding: KindDeclaration = {
  group: rbacGroup,
  version: 'v1',
  kind: 'RoleBinding',
  resource: 'rolebindings',
  singular: 'rolebinding',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  // names such as system:node hold colons: Kubernetes validates RBAC names as path segments
  nameRule: 'path-segment',
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'RoleBinding',
    fields: {
      metadata: {...objectMeta, proto: 1},
      subjects: {type: 'array', items: subject, proto: 2, listType: 'atomic'},
      roleRef: {...roleRef, proto: 3, required: true},
    },
  },
  defaults: defaultBinding,
  columns: bindingColumns('roleBinding'),
}
