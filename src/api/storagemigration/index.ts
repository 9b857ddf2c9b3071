// The storagemigration.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {storageVersionMigration} from './storageversionmigration.js'

export const declarations: KindDeclaration[] = [storageVersionMigration]
