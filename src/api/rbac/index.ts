// The rbac.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {clusterRole} from './clusterrole.js'
import {clusterRoleBinding} from './clusterrolebinding.js'
import {role} from './role.js'
import {roleBinding} from './rolebinding.js'

export const declarations: KindDeclaration[] = [role, clusterRole, roleBinding, clusterRoleBinding]
