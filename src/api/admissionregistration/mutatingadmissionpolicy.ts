// MutatingAdmissionPolicy (admissionregistration.orch.io/v1beta1, cluster-scoped): document 3. Kubernetes'
// v1beta1 has no status for this kind.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {Field, KindDeclaration, ObjectSchema} from '../types.js'
import {
  admissionGroup,
  defaultMatchResources,
  failurePolicies,
  matchConditionList,
  matchResources,
  paramKind,
  paramKindColumn,
  reinvocationPolicies,
  variable,
} from './shared.js'

/** ApplyConfiguration and JSONPatch: one CEL expression each */
function expressionOnly(name: string, proto: number): Field {
  return {type: 'object', name, proto, fields: {expression: {type: 'string', proto: 1}}}
}

const mutation: ObjectSchema = {
  type: 'object',
  name: 'Mutation',
  fields: {
    patchType: {type: 'string', proto: 2, required: true, enum: ['ApplyConfiguration', 'JSONPatch']},
    applyConfiguration: expressionOnly('ApplyConfiguration', 3),
    jsonPatch: expressionOnly('JSONPatch', 4),
  },
}

export const mutatingAdmissionPolicy: KindDeclaration = {
  group: admissionGroup,
  version: 'v1beta1',
  kind: 'MutatingAdmissionPolicy',
  resource: 'mutatingadmissionpolicies',
  singular: 'mutatingadmissionpolicy',
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'MutatingAdmissionPolicy',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'MutatingAdmissionPolicySpec',
        proto: 2,
        fields: {
          paramKind: {...paramKind, proto: 1},
          matchConstraints: {...matchResources, proto: 2, required: true},
          variables: {type: 'array', items: variable, proto: 3, listType: 'atomic'},
          mutations: {type: 'array', items: mutation, proto: 4, listType: 'atomic'},
          failurePolicy: {type: 'string', proto: 5, enum: failurePolicies},
          matchConditions: matchConditionList(6),
          reinvocationPolicy: {type: 'string', proto: 7, required: true, enum: reinvocationPolicies},
        },
      },
    },
  },
  /** SetDefaults_MutatingAdmissionPolicySpec + SetDefaults_MatchResources + SetDefaults_Rule */
  defaults(object) {
    object.spec ??= {}
    object.spec.failurePolicy ??= 'Fail'
    defaultMatchResources(object.spec.matchConstraints)
  },
  columns: [
    {
      name: 'Mutations',
      type: 'integer',
      description: 'the number of mutations in this policy',
      priority: 0,
      cell: (o) => (Array.isArray(o.spec?.mutations) ? o.spec.mutations.length : 0),
    },
    paramKindColumn,
    ageColumn,
  ],
}
