// ValidatingAdmissionPolicyBinding (admissionregistration.orch.io/v1, cluster-scoped): document 3; the
// fields after matchResources (policyName, paramRef, validationActions) are Kubernetes'.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {admissionGroup, defaultMatchResources, matchResources, paramRef, paramRefColumn, policyNameColumn} from './shared.js'

export const validatingAdmissionPolicyBinding: KindDeclaration = {
  group: admissionGroup,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  resource: 'validatingadmissionpolicybindings',
  singular: 'validatingadmissionpolicybinding',
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'ValidatingAdmissionPolicyBinding',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'ValidatingAdmissionPolicyBindingSpec',
        proto: 2,
        required: true,
        fields: {
          policyName: {type: 'string', proto: 1, required: true},
          paramRef: {...paramRef, proto: 2},
          matchResources: {...matchResources, proto: 3},
          validationActions: {type: 'array', items: {type: 'string', enum: ['Deny', 'Warn', 'Audit']}, proto: 4, listType: 'set', required: true},
        },
      },
    },
  },
  /** SetDefaults_MatchResources + SetDefaults_Rule, when matchResources is set */
  defaults(object) {
    defaultMatchResources(object.spec?.matchResources)
  },
  columns: [policyNameColumn, paramRefColumn, ageColumn],
}
