// Every kind this server serves.
import {declarations as admissionregistration} from './admissionregistration/index.js'
import {declarations as certificates} from './certificates/index.js'
import {declarations as apps} from './apps/index.js'
import {declarations as authentication} from './authentication/index.js'
import {declarations as authorization} from './authorization/index.js'
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
  // virtual: answered by the authorizer and the authenticator, never stored
  ...authorization,
  ...authentication,
]

export * from './types.js'
