// Every kind this server serves.
import {configMap} from './core/configmap.js'
import {namespace} from './core/namespace.js'
import type {KindDeclaration} from './types.js'

export const allDeclarations: readonly KindDeclaration[] = [namespace, configMap]

export * from './types.js'
