// IPAddress (networking.orch.io/v1, cluster-scoped): Kubernetes' shape (not in the documents). The name
// is the IP address itself in canonical form, so the name rule is the loose one.
import {objectMeta} from '../meta.js'
import type {KindDeclaration} from '../types.js'

/** GroupResource.String(): `resource.group`, or `resource` in the core group */
export function groupResourceString(group: string | undefined, resource: string | undefined): string {
  return group ? `${resource ?? ''}.${group}` : (resource ?? '')
}

/** kubectl's ParentRef cell: `<none>`, or `resource.group[/namespace]/name` in lower case */
export function parentRefCell(ref: any): string {
  if (!ref) return '<none>'
  let text = groupResourceString(ref.group, ref.resource).toLowerCase()
  if (ref.namespace) text += `/${ref.namespace}`
  return `${text}/${ref.name ?? ''}`
}

export const ipAddress: KindDeclaration = {
  group: 'networking.orch.io',
  version: 'v1',
  kind: 'IPAddress',
  resource: 'ipaddresses',
  singular: 'ipaddress',
  namespaced: false,
  nameRule: 'path-segment',
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'IPAddress',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'IPAddressSpec',
        proto: 2,
        required: true,
        fields: {
          parentRef: {
            type: 'object',
            name: 'ParentReference',
            proto: 1,
            required: true,
            fields: {
              group: {type: 'string', proto: 1},
              resource: {type: 'string', proto: 2, required: true},
              namespace: {type: 'string', proto: 3},
              name: {type: 'string', proto: 4, required: true},
            },
          },
        },
      },
    },
  },
  // kubectl's IPAddress table has no Age column
  columns: [
    {
      name: 'ParentRef',
      type: 'string',
      description: 'the resource this IP address is attached to',
      priority: 0,
      cell: (o) => parentRefCell(o.spec?.parentRef),
    },
  ],
}
