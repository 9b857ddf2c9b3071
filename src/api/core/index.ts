// The core group (v1).
import type {KindDeclaration} from '../types.js'
import {configMap} from './configmap.js'
import {event} from './event.js'
import {namespace} from './namespace.js'
import {node} from './node.js'
import {persistentVolumeClaim} from './persistentvolumeclaim.js'
import {pod} from './pod.js'
import {service} from './service.js'

export const declarations: KindDeclaration[] = [namespace, configMap, node, pod, service, event, persistentVolumeClaim]
