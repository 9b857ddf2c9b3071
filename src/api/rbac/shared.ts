// Types shared by the rbac.orch.io kinds, with the field numbers of rbac/v1 generated.proto.
import {ageColumn} from '../columns.js'
import type {AnyObject, ObjectSchema, TableColumn} from '../types.js'

export const rbacGroup = 'rbac.orch.io'

const atomicStrings = (proto: number) => ({type: 'array', items: {type: 'string'}, proto, listType: 'atomic'}) as const

export const policyRule: ObjectSchema = {
  type: 'object',
  name: 'PolicyRule',
  fields: {
    verbs: {...atomicStrings(1), required: true},
    apiGroups: atomicStrings(2),
    resources: atomicStrings(3),
    resourceNames: atomicStrings(4),
    nonResourceURLs: atomicStrings(5),
  },
}

export const subject: ObjectSchema = {
  type: 'object',
  name: 'Subject',
  structType: 'atomic',
  fields: {
    kind: {type: 'string', proto: 1, required: true},
    apiGroup: {type: 'string', proto: 2},
    name: {type: 'string', proto: 3, required: true},
    namespace: {type: 'string', proto: 4},
  },
}

export const roleRef: ObjectSchema = {
  type: 'object',
  name: 'RoleRef',
  structType: 'atomic',
  fields: {
    apiGroup: {type: 'string', proto: 1},
    kind: {type: 'string', proto: 2, required: true},
    name: {type: 'string', proto: 3, required: true},
  },
}

/** Kubernetes' SetDefaults_RoleBinding / _ClusterRoleBinding / _Subject. */
export function defaultBinding(object: AnyObject): void {
  if (object.roleRef && typeof object.roleRef === 'object' && !object.roleRef.apiGroup) object.roleRef.apiGroup = rbacGroup
  for (const s of Array.isArray(object.subjects) ? object.subjects : []) {
    if (!s || typeof s !== 'object' || s.apiGroup) continue
    // a ServiceAccount subject's group stays the core group (empty)
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup
  }
}

/** Kubernetes' SubjectsStrings: users, groups and namespace/name of service accounts (others dropped). */
export function subjectsStrings(subjects: unknown): {users: string[]; groups: string[]; serviceAccounts: string[]} {
  const out = {users: [] as string[], groups: [] as string[], serviceAccounts: [] as string[]}
  for (const s of Array.isArray(subjects) ? subjects : []) {
    if (s?.kind === 'ServiceAccount') out.serviceAccounts.push(`${s.namespace ?? ''}/${s.name ?? ''}`)
    else if (s?.kind === 'User') out.users.push(s.name ?? '')
    else if (s?.kind === 'Group') out.groups.push(s.name ?? '')
  }
  return out
}

/** ROLE AGE, and with -o wide USERS GROUPS SERVICEACCOUNTS, as kubectl prints bindings. */
export function bindingColumns(kind: string): TableColumn[] {
  const wide = (name: string, description: string, pick: (s: ReturnType<typeof subjectsStrings>) => string[]): TableColumn => ({
    name,
    type: 'string',
    description,
    priority: 1,
    cell: (o) => pick(subjectsStrings(o.subjects)).join(', '),
  })
  return [
    {
      name: 'Role',
      type: 'string',
      description: `the role the ${kind} grants, as kind/name`,
      priority: 0,
      cell: (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`,
    },
    ageColumn,
    wide('Users', `Users in the ${kind}`, (s) => s.users),
    wide('Groups', `Groups in the ${kind}`, (s) => s.groups),
    wide('ServiceAccounts', `ServiceAccounts in the ${kind}`, (s) => s.serviceAccounts),
  ]
}
