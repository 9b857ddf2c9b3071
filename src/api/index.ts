// Every kind this server serves.
import {declarations as admissionregistration} from './admissionregistration/index.js'
import {declarations as certificates} from './certificates/index.js'
import {declarations as apps} from './apps/index.js'
import {declarations as coordination} from './coordination/index.js'
import {declarations as core} from './core/index.js'
import {declarations as networking} from './networking/index.js'
import {declarations as rbac} from './rbac/index.js'
import {declarations as storagemigration} from './storagemigration/index.js'
import type {KindDeclaration} from './types.js'

export const allDeclarations: readonly KindDeclaration[] = [
  ...core,
  ...apps,
  ...coordination,
  ...networking,
  ...storagemigration,
  ...certificates,
  ...admissionregistration,
  ...rbac,
]
// authorization.orch.io and authentication.orch.io (SubjectAccessReview, TokenReview) are virtual:
// they are served by the authorizer and authenticator, not stored, and join this list with them.

export * from './types.js'
