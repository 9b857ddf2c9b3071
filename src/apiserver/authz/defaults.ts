// The roles and bindings the server creates on first start, as Kubernetes' bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy) does, cut down to what orch serves. Each is
// labelled orch.io/bootstrapping=rbac-defaults and annotated rbac.authorization.orch.io/autoupdate
// "true", as Kubernetes marks its own.
import {rbacGroup} from '../../api/rbac/shared.js'
import {SIGNER_AGENT_CLIENT, SIGNER_AGENT_SERVING, SIGNER_APISERVER_CLIENT} from '../../api/certificates/certificatesigningrequest.js'
import type {AnyObject} from '../../api/types.js'
import {ANONYMOUS_USER, AUTHENTICATED_GROUP, BOOTSTRAPPERS_GROUP} from '../authn.js'
import {aggregatedRoleSpecs} from './aggregated-roles.js'
import {nodeRules, NODES_GROUP} from './node.js'
import type {PolicyRule} from './rbac.js'

export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.orch.io/autoupdate'
export const BOOTSTRAPPING_LABEL = 'orch.io/bootstrapping'
export const BOOTSTRAPPING_VALUE = 'rbac-defaults'
export const MASTERS_GROUP = 'system:masters'
export const UNAUTHENTICATED_GROUP = ANONYMOUS_USER.groups[0]

export const CLUSTER_ADMIN = 'cluster-admin'
export const SYSTEM_NODE = 'system:node'
export const NODE_BOOTSTRAPPER = 'system:node-bootstrapper'
export const NODE_CLIENT_APPROVER = 'system:certificates.orch.io:certificatesigningrequests:nodeclient'
export const SELF_NODE_CLIENT_APPROVER = 'system:certificates.orch.io:certificatesigningrequests:selfnodeclient'
/** Kubernetes' system:certificates.k8s.io:<signer>-approver roles, one per well-known signer, bound
 *  to nobody: bind one to let a user approve that signer's requests (CertificateApproval). */
export const SIGNER_APPROVERS: Readonly<Record<string, string>> = {
  [SIGNER_APISERVER_CLIENT]: 'system:certificates.orch.io:apiserver-client-approver',
  [SIGNER_AGENT_CLIENT]: 'system:certificates.orch.io:apiserver-client-agent-approver',
  [SIGNER_AGENT_SERVING]: 'system:certificates.orch.io:agent-serving-approver',
}
export const BASIC_USER = 'system:basic-user'
export const DISCOVERY = 'system:discovery'
export const PUBLIC_INFO_VIEWER = 'system:public-info-viewer'
export const MONITORING = 'system:monitoring'

const apiVersion = `${rbacGroup}/v1`

function metadata(name: string, labels: Record<string, string> = {}): AnyObject {
  return {name, labels: {[BOOTSTRAPPING_LABEL]: BOOTSTRAPPING_VALUE, ...labels}, annotations: {[AUTOUPDATE_ANNOTATION]: 'true'}}
}

function clusterRole(name: string, rules: PolicyRule[]): AnyObject {
  return {apiVersion, kind: 'ClusterRole', metadata: metadata(name), rules}
}

/** A ClusterRoleBinding of the ClusterRole of the same name to groups (none: a binding kept for
 *  admins to fill, as Kubernetes leaves system:node). */
function clusterRoleBinding(name: string, groups: string[]): AnyObject {
  const binding: AnyObject = {
    apiVersion,
    kind: 'ClusterRoleBinding',
    metadata: metadata(name),
    roleRef: {apiGroup: rbacGroup, kind: 'ClusterRole', name},
  }
  if (groups.length > 0) binding.subjects = groups.map((group) => ({kind: 'Group', apiGroup: rbacGroup, name: group}))
  return binding
}

const healthAndVersion = ['/healthz', '/livez', '/readyz', '/version', '/version/']

/** The default ClusterRoles (fresh objects on every call). */
export function defaultClusterRoles(): AnyObject[] {
  return [
    clusterRole(CLUSTER_ADMIN, [
      {verbs: ['*'], apiGroups: ['*'], resources: ['*']},
      {verbs: ['*'], nonResourceURLs: ['*']},
    ]),
    clusterRole(SYSTEM_NODE, nodeRules()),
    clusterRole(NODE_BOOTSTRAPPER, [
      {verbs: ['create', 'get', 'list', 'watch'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests']},
    ]),
    clusterRole(NODE_CLIENT_APPROVER, [
      {verbs: ['create'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests/nodeclient']},
    ]),
    clusterRole(SELF_NODE_CLIENT_APPROVER, [
      {verbs: ['create'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests/selfnodeclient']},
    ]),
    ...Object.entries(SIGNER_APPROVERS).map(([signer, name]) =>
      clusterRole(name, [{verbs: ['approve'], apiGroups: ['certificates.orch.io'], resources: ['signers'], resourceNames: [signer]}]),
    ),
    clusterRole(BASIC_USER, [
      {verbs: ['create'], apiGroups: ['authorization.orch.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']},
      {verbs: ['create'], apiGroups: ['authentication.orch.io'], resources: ['selfsubjectreviews']},
    ]),
    clusterRole(DISCOVERY, [
      {verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', ...healthAndVersion]},
    ]),
    clusterRole(PUBLIC_INFO_VIEWER, [{verbs: ['get'], nonResourceURLs: [...healthAndVersion]}]),
    // metrics and the individual health checks, for monitoring systems (bound to the group of the same name)
    clusterRole(MONITORING, [{verbs: ['get'], nonResourceURLs: ['/metrics', '/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*']}]),
    // admin, edit, view (rules filled by the clusterrole-aggregation controller) and their sources
    ...aggregatedRoleSpecs().map((spec) => {
      const role: AnyObject = {apiVersion, kind: 'ClusterRole', metadata: metadata(spec.name, spec.labels)}
      if (spec.aggregates) role.aggregationRule = {clusterRoleSelectors: [{matchLabels: {[spec.aggregates]: 'true'}}]}
      if (spec.rules) role.rules = spec.rules
      return role
    }),
  ]
}

/** The default ClusterRoleBindings (fresh objects on every call). */
export function defaultClusterRoleBindings(): AnyObject[] {
  return [
    clusterRoleBinding(CLUSTER_ADMIN, [MASTERS_GROUP]),
    // No subjects, as Kubernetes since 1.8: bound to system:nodes, this role would let every node
    // write every other node's Node, Lease and pod status (RBAC cannot say "its own"), undoing the
    // Node authorizer, which grants system:nodes the same rules limited to their own objects.
    clusterRoleBinding(SYSTEM_NODE, []),
    clusterRoleBinding(NODE_BOOTSTRAPPER, [BOOTSTRAPPERS_GROUP]),
    clusterRoleBinding(NODE_CLIENT_APPROVER, [BOOTSTRAPPERS_GROUP]),
    // agents renew their own client certificates (kubeadm binds this; orch does it by default)
    clusterRoleBinding(SELF_NODE_CLIENT_APPROVER, [NODES_GROUP]),
    clusterRoleBinding(BASIC_USER, [AUTHENTICATED_GROUP]),
    clusterRoleBinding(DISCOVERY, [AUTHENTICATED_GROUP]),
    clusterRoleBinding(PUBLIC_INFO_VIEWER, [AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP]),
    clusterRoleBinding(MONITORING, [MONITORING]),
  ]
}

/** Everything to create on first start, roles before the bindings that name them. */
export function defaultRBACObjects(): AnyObject[] {
  return [...defaultClusterRoles(), ...defaultClusterRoleBindings()]
}
