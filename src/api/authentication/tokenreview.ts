// TokenReview (authentication.orch.io/v1, cluster-scoped, create only): Kubernetes' shape.
import {objectMeta} from '../meta.js'
import type {KindDeclaration, ObjectSchema} from '../types.js'

export const userInfoSchema: ObjectSchema = {
  type: 'object',
  name: 'UserInfo',
  fields: {
    username: {type: 'string', proto: 1},
    uid: {type: 'string', proto: 2},
    groups: {type: 'array', items: {type: 'string'}, proto: 3, listType: 'atomic'},
    // map[string]ExtraValue: in protobuf each value is an ExtraValue message (repeated string items = 1)
    extra: {type: 'map', values: {type: 'array', items: {type: 'string'}}, proto: 4},
  },
}

export const tokenReview: KindDeclaration = {
  group: 'authentication.orch.io',
  version: 'v1',
  kind: 'TokenReview',
  resource: 'tokenreviews',
  singular: 'tokenreview',
  namespaced: false,
  verbs: ['create'],
  generationFields: [],
  virtual: true,
  schema: {
    type: 'object',
    name: 'TokenReview',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'TokenReviewSpec',
        proto: 2,
        required: true,
        fields: {
          token: {type: 'string', proto: 1, required: true},
          audiences: {type: 'array', items: {type: 'string'}, proto: 2, listType: 'atomic'},
        },
      },
      status: {
        type: 'object',
        name: 'TokenReviewStatus',
        proto: 3,
        fields: {
          authenticated: {type: 'boolean', proto: 1},
          user: {...userInfoSchema, proto: 2},
          audiences: {type: 'array', items: {type: 'string'}, proto: 4, listType: 'atomic'},
          error: {type: 'string', proto: 3},
        },
      },
    },
  },
}
