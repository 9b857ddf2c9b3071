// The apps group.
import type {KindDeclaration} from '../types.js'
import {controllerRevision} from './controllerrevision.js'
import {statefulSet} from './statefulset.js'

export const declarations: KindDeclaration[] = [statefulSet, controllerRevision]
