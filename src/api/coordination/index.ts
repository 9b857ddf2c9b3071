// The coordination.orch.io group.
import type {KindDeclaration} from '../types.js'
import {lease} from './lease.js'

export const declarations: KindDeclaration[] = [lease]
