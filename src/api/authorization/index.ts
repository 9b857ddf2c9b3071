// The authorization.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {localSubjectAccessReview} from './localsubjectaccessreview.js'
import {selfSubjectAccessReview} from './selfsubjectaccessreview.js'
import {selfSubjectRulesReview} from './selfsubjectrulesreview.js'
import {subjectAccessReview} from './subjectaccessreview.js'

export const declarations: KindDeclaration[] = [subjectAccessReview, selfSubjectAccessReview, localSubjectAccessReview, selfSubjectRulesReview]
