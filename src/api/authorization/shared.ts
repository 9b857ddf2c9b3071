// Types shared by the authorization.orch.io review kinds, with the field numbers of authorization/v1
// generated.proto.
import {labelSelectorRequirement} from '../meta.js'
import type {ObjectSchema, Verb} from '../types.js'

export const authorizationGroup = 'authorization.orch.io'

/** reviews are only created: the answer comes back in the response, nothing is stored */
export const reviewVerbs: readonly Verb[] = ['create']

const fieldSelectorRequirement: ObjectSchema = {
  type: 'object',
  name: 'FieldSelectorRequirement',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    operator: {type: 'string', proto: 2, required: true, enum: ['In', 'NotIn', 'Exists', 'DoesNotExist']},
    values: {type: 'array', items: {type: 'string'}, proto: 3, listType: 'atomic'},
  },
}

export const resourceAttributes: ObjectSchema = {
  type: 'object',
  name: 'ResourceAttributes',
  fields: {
    namespace: {type: 'string', proto: 1},
    verb: {type: 'string', proto: 2},
    group: {type: 'string', proto: 3},
    version: {type: 'string', proto: 4},
    resource: {type: 'string', proto: 5},
    subresource: {type: 'string', proto: 6},
    name: {type: 'string', proto: 7},
    fieldSelector: {
      type: 'object',
      name: 'FieldSelectorAttributes',
      proto: 8,
      fields: {
        rawSelector: {type: 'string', proto: 1},
        requirements: {type: 'array', items: fieldSelectorRequirement, proto: 2, listType: 'atomic'},
      },
    },
    labelSelector: {
      type: 'object',
      name: 'LabelSelectorAttributes',
      proto: 9,
      fields: {
        rawSelector: {type: 'string', proto: 1},
        requirements: {type: 'array', items: labelSelectorRequirement, proto: 2, listType: 'atomic'},
      },
    },
  },
}

export const nonResourceAttributes: ObjectSchema = {
  type: 'object',
  name: 'NonResourceAttributes',
  fields: {
    path: {type: 'string', proto: 1},
    verb: {type: 'string', proto: 2},
  },
}

export const subjectAccessReviewStatus: ObjectSchema = {
  type: 'object',
  name: 'SubjectAccessReviewStatus',
  fields: {
    allowed: {type: 'boolean', proto: 1, required: true},
    denied: {type: 'boolean', proto: 4},
    reason: {type: 'string', proto: 2},
    evaluationError: {type: 'string', proto: 3},
  },
}
