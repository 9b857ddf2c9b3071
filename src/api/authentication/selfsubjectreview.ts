// SelfSubjectReview (authentication.orch.io/v1, cluster-scoped, create only): "who am I?" — the
// caller's user info as the server authenticated it (`orch auth whoami`, `kubectl auth whoami`).
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {userInfoSchema} from './tokenreview.js'

export const selfSubjectReview: KindDeclaration = {
  group: 'authentication.orch.io',
  version: 'v1',
  kind: 'SelfSubjectReview',
  resource: 'selfsubjectreviews',
  singular: 'selfsubjectreview',
  namespaced: false,
  verbs: ['create'],
  generationFields: [],
  virtual: true,
  table: false,
  schema: {
    type: 'object',
    name: 'SelfSubjectReview',
    fields: {
      metadata: {...objectMeta, proto: 1},
      status: {
        type: 'object',
        name: 'SelfSubjectReviewStatus',
        proto: 2,
        fields: {userInfo: {...userInfoSchema, proto: 1}},
      },
    },
  },
}
