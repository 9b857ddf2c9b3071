// The authorization.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {selfSubjectAccessReview} from './selfsubjectaccessreview.js'
import {subjectAccessReview} from './subjectaccessreview.js'

export const declarations: KindDeclaration[] = [subjectAccessReview, selfSubjectAccessReview]
