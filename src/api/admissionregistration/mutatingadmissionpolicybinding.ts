// MutatingAdmissionPolicyBinding (admissionregistration.orch.io/v1beta1, cluster-scoped): document 3; the
// fields after matchResources.excludeResourceRules (policyName, paramRef) are Kubernetes'. No status.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {admissionGroup, defaultMatchResources, matchResources, paramRef, paramRefColumn, policyNameColumn} from './shared.js'

export const mutatingAdmissionPolicyBinding: KindDeclaration = {
  group: admissionGroup,
  version: 'v1beta1',
  kind: 'MutatingAdmissionPolicyBinding',
  resource: 'mutatingadmissionpolicybindings',
  singular: 'mutatingadmissionpolicybinding',
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'MutatingAdmissionPolicyBinding',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'MutatingAdmissionPolicyBindingSpec',
        proto: 2,
        fields: {
          policyName: {type: 'string', proto: 1},
          paramRef: {...paramRef, proto: 2},
          matchResources: {...matchResources, proto: 3},
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
