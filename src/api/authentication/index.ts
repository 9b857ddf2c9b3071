// The authentication.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {selfSubjectReview} from './selfsubjectreview.js'
import {tokenReview} from './tokenreview.js'

export const declarations: KindDeclaration[] = [tokenReview, selfSubjectReview]
