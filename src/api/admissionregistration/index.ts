// The admissionregistration.orch.io kinds.
import type {KindDeclaration} from '../types.js'
import {mutatingAdmissionPolicy} from './mutatingadmissionpolicy.js'
import {mutatingAdmissionPolicyBinding} from './mutatingadmissionpolicybinding.js'
import {validatingAdmissionPolicy} from './validatingadmissionpolicy.js'
import {validatingAdmissionPolicyBinding} from './validatingadmissionpolicybinding.js'
import {validatingWebhookConfiguration} from './validatingwebhookconfiguration.js'

export const declarations: KindDeclaration[] = [
  validatingWebhookConfiguration,
  validatingAdmissionPolicy,
  validatingAdmissionPolicyBinding,
  mutatingAdmissionPolicy,
  mutatingAdmissionPolicyBinding,
]
