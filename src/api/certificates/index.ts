// The certificates.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {certificateSigningRequest} from './certificatesigningrequest.js'

export const declarations: KindDeclaration[] = [certificateSigningRequest]
