// The networking.orch.io kinds of this package.
import type {KindDeclaration} from '../types.js'
import {ipAddress} from './ipaddress.js'
import {serviceCIDR} from './servicecidr.js'

export const declarations: KindDeclaration[] = [serviceCIDR, ipAddress]
