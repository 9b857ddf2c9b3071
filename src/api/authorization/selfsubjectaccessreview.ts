// SelfSubjectAccessReview (authorization.orch.io/v1, cluster-scoped, create only): Kubernetes' shape.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {authorizationGroup, nonResourceAttributes, resourceAttributes, reviewVerbs, subjectAccessReviewStatus} from './shared.js'

export const selfSubjectAccessReview: KindDeclaration = {
  group: authorizationGroup,
  version: 'v1',
  kind: 'SelfSubjectAccessReview',
  resource: 'selfsubjectaccessreviews',
  singular: 'selfsubjectaccessreview',
  namespaced: false,
  verbs: reviewVerbs,
  generationFields: [],
  virtual: true,
  schema: {
    type: 'object',
    name: 'SelfSubjectAccessReview',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'SelfSubjectAccessReviewSpec',
        proto: 2,
        required: true,
        fields: {
          resourceAttributes: {...resourceAttributes, proto: 1},
          nonResourceAttributes: {...nonResourceAttributes, proto: 2},
        },
      },
      status: {...subjectAccessReviewStatus, proto: 3},
    },
  },
}
