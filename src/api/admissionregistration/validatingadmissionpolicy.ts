// ValidatingAdmissionPolicy (admissionregistration.orch.io/v1, cluster-scoped): document 3.
import {ageColumn} from '../columns.js'
import {condition, objectMeta} from '../meta.js'
import type {KindDeclaration, ObjectSchema} from '../types.js'
import {
  admissionGroup,
  defaultMatchResources,
  failurePolicies,
  matchConditionList,
  matchResources,
  paramKind,
  paramKindColumn,
  variable,
} from './shared.js'

const validation: ObjectSchema = {
  type: 'object',
  name: 'Validation',
  fields: {
    expression: {type: 'string', proto: 1, required: true},
    message: {type: 'string', proto: 2},
    reason: {type: 'string', proto: 3, enum: ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge']},
    messageExpression: {type: 'string', proto: 4},
  },
}

const auditAnnotation: ObjectSchema = {
  type: 'object',
  name: 'AuditAnnotation',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    valueExpression: {type: 'string', proto: 2, required: true},
  },
}

const expressionWarning: ObjectSchema = {
  type: 'object',
  name: 'ExpressionWarning',
  fields: {
    fieldRef: {type: 'string', proto: 2, required: true},
    warning: {type: 'string', proto: 3, required: true},
  },
}

export const validatingAdmissionPolicy: KindDeclaration = {
  group: admissionGroup,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  resource: 'validatingadmissionpolicies',
  singular: 'validatingadmissionpolicy',
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'}],
  hasStatus: true,
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  schema: {
    type: 'object',
    name: 'ValidatingAdmissionPolicy',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'ValidatingAdmissionPolicySpec',
        proto: 2,
        fields: {
          paramKind: {...paramKind, proto: 1},
          matchConstraints: {...matchResources, proto: 2, required: true},
          validations: {type: 'array', items: validation, proto: 3, listType: 'atomic'},
          failurePolicy: {type: 'string', proto: 4, enum: failurePolicies},
          auditAnnotations: {type: 'array', items: auditAnnotation, proto: 5, listType: 'atomic'},
          matchConditions: matchConditionList(6),
          variables: {type: 'array', items: variable, proto: 7, patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name']},
        },
      },
      status: {
        type: 'object',
        name: 'ValidatingAdmissionPolicyStatus',
        proto: 3,
        fields: {
          observedGeneration: {type: 'integer', format: 'int64', proto: 1},
          typeChecking: {
            type: 'object',
            name: 'TypeChecking',
            proto: 2,
            fields: {expressionWarnings: {type: 'array', items: expressionWarning, proto: 1, listType: 'atomic'}},
          },
          // Kubernetes declares listType=map/listMapKey=type here but no patchStrategy: strategic merge replaces the list
          conditions: {type: 'array', items: condition, proto: 3, listType: 'map', listMapKeys: ['type']},
        },
      },
    },
  },
  /** SetDefaults_ValidatingAdmissionPolicySpec + SetDefaults_MatchResources + SetDefaults_Rule */
  defaults(object) {
    object.spec ??= {}
    object.spec.failurePolicy ??= 'Fail'
    defaultMatchResources(object.spec.matchConstraints)
  },
  columns: [
    {
      name: 'Validations',
      type: 'integer',
      description: 'the number of validation rules in this policy',
      priority: 0,
      cell: (o) => (Array.isArray(o.spec?.validations) ? o.spec.validations.length : 0),
    },
    paramKindColumn,
    ageColumn,
  ],
}
