// LocalSubjectAccessReview (authorization.orch.io/v1, namespaced, create only): a SubjectAccessReview
// limited to one namespace, the one of its path. Kubernetes' shape.
import type {KindDeclaration} from '../types.js'
import {subjectAccessReview} from './subjectaccessreview.js'

export const localSubjectAccessReview: KindDeclaration = {
  ...subjectAccessReview,
  kind: 'LocalSubjectAccessReview',
  resource: 'localsubjectaccessreviews',
  singular: 'localsubjectaccessreview',
  namespaced: true,
  schema: {...subjectAccessReview.schema, name: 'LocalSubjectAccessReview'},
}
