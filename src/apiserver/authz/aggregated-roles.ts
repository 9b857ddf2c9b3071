// The user-facing default ClusterRoles of Kubernetes' bootstrap policy: `admin`, `edit` and `view`,
// whose rules the clusterrole-aggregation controller fills from the ClusterRoles labelled
// rbac.authorization.orch.io/aggregate-to-admin, -edit and -view (edit is part of admin and view of
// edit through those labels), and the system:aggregate-to-* roles that give them Kubernetes' rules,
// kept to the resources orch serves. Lists are sorted, as Kubernetes' rule builder sorts them.
import {authorizationGroup} from '../../api/authorization/shared.js'
import {rbacGroup} from '../../api/rbac/shared.js'
import type {PolicyRule} from './rbac.js'

export const AGGREGATE_TO_ADMIN_LABEL = 'rbac.authorization.orch.io/aggregate-to-admin'
export const AGGREGATE_TO_EDIT_LABEL = 'rbac.authorization.orch.io/aggregate-to-edit'
export const AGGREGATE_TO_VIEW_LABEL = 'rbac.authorization.orch.io/aggregate-to-view'

const READ = ['get', 'list', 'watch']
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update']
const READ_WRITE = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

function rule(verbs: string[], apiGroup: string, resources: string[]): PolicyRule {
  return {apiGroups: [apiGroup], resources, verbs}
}

export interface AggregatedRoleSpec {
  name: string
  /** labels besides the bootstrapping one */
  labels?: Record<string, string>
  /** the label an aggregated role collects (it has no rules of its own) */
  aggregates?: string
  rules?: PolicyRule[]
}

/** admin, edit, view and their system:aggregate-to-* sources, in Kubernetes' order. */
export function aggregatedRoleSpecs(): AggregatedRoleSpec[] {
  return [
    {name: 'admin', aggregates: AGGREGATE_TO_ADMIN_LABEL},
    {name: 'edit', labels: {[AGGREGATE_TO_ADMIN_LABEL]: 'true'}, aggregates: AGGREGATE_TO_EDIT_LABEL},
    {name: 'view', labels: {[AGGREGATE_TO_EDIT_LABEL]: 'true'}, aggregates: AGGREGATE_TO_VIEW_LABEL},
    {
      name: 'system:aggregate-to-admin',
      labels: {[AGGREGATE_TO_ADMIN_LABEL]: 'true'},
      rules: [
        rule(['create'], authorizationGroup, ['localsubjectaccessreviews']),
        rule(READ_WRITE, rbacGroup, ['rolebindings', 'roles']),
      ],
    },
    {
      name: 'system:aggregate-to-edit',
      labels: {[AGGREGATE_TO_EDIT_LABEL]: 'true'},
      rules: [
        // impersonation asks for `impersonate` on serviceaccounts (./impersonation.ts) though none are served
        rule(['impersonate'], '', ['serviceaccounts']),
        rule(WRITE, '', ['pods']),
        rule(['create'], '', ['pods/eviction']),
        rule(WRITE, '', ['configmaps', 'events', 'persistentvolumeclaims', 'services']),
        rule(WRITE, 'apps', ['statefulsets', 'statefulsets/scale']),
        rule(READ_WRITE, 'coordination.orch.io', ['leases']),
      ],
    },
    {
      name: 'system:aggregate-to-view',
      labels: {[AGGREGATE_TO_VIEW_LABEL]: 'true'},
      rules: [
        rule(READ, '', ['configmaps', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'services', 'services/status']),
        rule(READ, '', ['bindings', 'events', 'namespaces/status', 'pods/log', 'pods/status']),
        // read access to namespaces at the namespace scope means reading *this* namespace
        rule(READ, '', ['namespaces']),
        rule(READ, 'apps', ['controllerrevisions', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
      ],
    },
  ]
}
