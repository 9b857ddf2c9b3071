// SubjectAccessReview (authorization.orch.io/v1, cluster-scoped, create only): Kubernetes' shape.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {authorizationGroup, nonResourceAttributes, resourceAttributes, reviewVerbs, subjectAccessReviewStatus} from './shared.js'

export const subjectAccessReview: KindDeclaration = {
  group: authorizationGroup,
  version: 'v1',
  kind: 'SubjectAccessReview',
  resource: 'subjectaccessreviews',
  singular: 'subjectaccessreview',
  namespaced: false,
  verbs: reviewVerbs,
  generationFields: [],
  virtual: true,
  schema: {
    type: 'object',
    name: 'SubjectAccessReview',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'SubjectAccessReviewSpec',
        proto: 2,
        required: true,
        fields: {
          resourceAttributes: {...resourceAttributes, proto: 1},
          nonResourceAttributes: {...nonResourceAttributes, proto: 2},
          user: {type: 'string', proto: 3},
          groups: {type: 'array', items: {type: 'string'}, proto: 4, listType: 'atomic'},
          // map[string]ExtraValue: in protobuf each value is an ExtraValue message (repeated string items = 1)
          extra: {type: 'map', values: {type: 'array', items: {type: 'string'}}, proto: 5},
          uid: {type: 'string', proto: 6},
        },
      },
      status: {...subjectAccessReviewStatus, proto: 3},
    },
  },
}
