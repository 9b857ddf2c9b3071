// SelfSubjectRulesReview (authorization.orch.io/v1, cluster-scoped, create only): the rules the
// caller has in spec.namespace. Kubernetes' shape, with authorization/v1's field numbers.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'
import {authorizationGroup, reviewVerbs} from './shared.js'

const atomicStrings = (proto: number) => ({type: 'array', items: {type: 'string'}, proto, listType: 'atomic'}) as const

export const selfSubjectRulesReview: KindDeclaration = {
  group: authorizationGroup,
  version: 'v1',
  kind: 'SelfSubjectRulesReview',
  resource: 'selfsubjectrulesreviews',
  singular: 'selfsubjectrulesreview',
  namespaced: false,
  verbs: reviewVerbs,
  generationFields: [],
  virtual: true,
  schema: {
    type: 'object',
    name: 'SelfSubjectRulesReview',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'SelfSubjectRulesReviewSpec',
        proto: 2,
        required: true,
        fields: {namespace: {type: 'string', proto: 1}},
      },
      status: {
        type: 'object',
        name: 'SubjectRulesReviewStatus',
        proto: 3,
        fields: {
          resourceRules: {
            type: 'array',
            proto: 1,
            required: true,
            listType: 'atomic',
            items: {
              type: 'object',
              name: 'ResourceRule',
              fields: {
                verbs: {...atomicStrings(1), required: true},
                apiGroups: atomicStrings(2),
                resources: atomicStrings(3),
                resourceNames: atomicStrings(4),
              },
            },
          },
          nonResourceRules: {
            type: 'array',
            proto: 2,
            required: true,
            listType: 'atomic',
            items: {
              type: 'object',
              name: 'NonResourceRule',
              fields: {
                verbs: {...atomicStrings(1), required: true},
                nonResourceURLs: atomicStrings(2),
              },
            },
          },
          incomplete: {type: 'boolean', proto: 3, required: true},
          evaluationError: {type: 'string', proto: 4},
        },
      },
    },
  },
}
