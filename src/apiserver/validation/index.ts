// The kind validators of this directory, by `<group>/<Kind>` ('' for the core group: `/ConfigMap`,
// `apps/StatefulSet`). The registry runs a kind's validator after the declaration's own
// validateCreate / validateUpdate. Update validators receive the request context: with
// `context.subresource` set they check what that subresource may write (or nothing).
import type {ExpressionCompiler} from './admission-common.js'
import {mutatingBindingValidator, mutatingPolicyValidator, validatingBindingValidator, validatingPolicyValidator} from './admissionpolicies.js'
import {certificateSigningRequestValidator} from './certificatesigningrequest.js'
import {configMapValidator} from './configmap.js'
import type {KindValidator} from './common.js'
import {eventValidator} from './event.js'
import {leaseValidator} from './lease.js'
import {namespaceValidator} from './namespace.js'
import {nodeValidator} from './node.js'
import {podValidator} from './pod.js'
import {clusterRoleBindingValidator, clusterRoleValidator, roleBindingValidator, roleValidator} from './rbac.js'
import {serviceValidator} from './service.js'
import {serviceCIDRValidator} from './servicecidr.js'
import {statefulSetValidator} from './statefulset.js'
import {storageVersionMigrationValidator} from './storageversionmigration.js'
import {webhookConfigurationValidator} from './webhookconfiguration.js'

export type {KindValidator}

/** The map key of a kind: `<group>/<Kind>`. */
export function kindValidatorKey(group: string, kind: string): string {
  return `${group}/${kind}`
}

/** The CEL compiler that admission objects' expressions are checked with (the admission layer's). */
let expressionCompiler: ExpressionCompiler | undefined
export function setExpressionCompiler(compiler: ExpressionCompiler | undefined): void {
  expressionCompiler = compiler
}
const compiler = () => expressionCompiler

export const kindValidators: Map<string, KindValidator> = new Map([
  ['admissionregistration.orch.io/ValidatingWebhookConfiguration', webhookConfigurationValidator(compiler)],
  ['admissionregistration.orch.io/ValidatingAdmissionPolicy', validatingPolicyValidator(compiler)],
  ['admissionregistration.orch.io/ValidatingAdmissionPolicyBinding', validatingBindingValidator],
  ['admissionregistration.orch.io/MutatingAdmissionPolicy', mutatingPolicyValidator(compiler)],
  ['admissionregistration.orch.io/MutatingAdmissionPolicyBinding', mutatingBindingValidator],
  ['/ConfigMap', configMapValidator],
  ['/Event', eventValidator],
  ['/Namespace', namespaceValidator],
  ['/Node', nodeValidator],
  ['/Pod', podValidator],
  ['/Service', serviceValidator],
  ['apps/StatefulSet', statefulSetValidator],
  ['certificates.orch.io/CertificateSigningRequest', certificateSigningRequestValidator],
  ['coordination.orch.io/Lease', leaseValidator],
  ['networking.orch.io/ServiceCIDR', serviceCIDRValidator],
  ['rbac.orch.io/Role', roleValidator],
  ['rbac.orch.io/ClusterRole', clusterRoleValidator],
  ['rbac.orch.io/RoleBinding', roleBindingValidator],
  ['rbac.orch.io/ClusterRoleBinding', clusterRoleBindingValidator],
  ['storagemigration.orch.io/StorageVersionMigration', storageVersionMigrationValidator],
])
