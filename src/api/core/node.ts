// Node (v1, cluster-scoped): document 2. Field names follow the naming rule (kubeletVersion ->
// agentVersion, kubeProxyVersion -> orchProxyVersion, kubeletEndpoint -> agentEndpoint,
// kubeletConfigKey -> agentConfigKey); their protobuf numbers are Kubernetes'.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, Field, KindDeclaration, ObjectSchema} from '../types.js'

export const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const

export const taint: ObjectSchema = {
  type: 'object',
  name: 'Taint',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    value: {type: 'string', proto: 2},
    effect: {type: 'string', proto: 3, required: true, enum: taintEffects},
    timeAdded: {type: 'time', proto: 4},
  },
}

const nodeConfigSource: ObjectSchema = {
  type: 'object',
  name: 'NodeConfigSource',
  fields: {
    configMap: {
      type: 'object',
      name: 'ConfigMapNodeConfigSource',
      proto: 2,
      fields: {
        namespace: {type: 'string', proto: 1, required: true},
        name: {type: 'string', proto: 2, required: true},
        uid: {type: 'string', proto: 3},
        resourceVersion: {type: 'string', proto: 4},
        agentConfigKey: {type: 'string', proto: 5, required: true},
      },
    },
  },
}

const nodeCondition: ObjectSchema = {
  type: 'object',
  name: 'NodeCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    lastHeartbeatTime: {type: 'time', proto: 3},
    lastTransitionTime: {type: 'time', proto: 4},
    reason: {type: 'string', proto: 5},
    message: {type: 'string', proto: 6},
  },
}

const nodeAddress: ObjectSchema = {
  type: 'object',
  name: 'NodeAddress',
  fields: {
    type: {type: 'string', proto: 1, required: true, enum: ['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS']},
    address: {type: 'string', proto: 2, required: true},
  },
}

const requiredString = (proto: number): Field => ({type: 'string', proto, required: true})

const nodeSystemInfo: ObjectSchema = {
  type: 'object',
  name: 'NodeSystemInfo',
  fields: {
    machineID: requiredString(1),
    systemUUID: requiredString(2),
    bootID: requiredString(3),
    kernelVersion: requiredString(4),
    osImage: requiredString(5),
    containerRuntimeVersion: requiredString(6),
    agentVersion: requiredString(7),
    orchProxyVersion: requiredString(8),
    operatingSystem: requiredString(9),
    architecture: requiredString(10),
    swap: {type: 'object', name: 'NodeSwapStatus', proto: 11, fields: {capacity: {type: 'integer', format: 'int64', proto: 1}}},
  },
}

const nodeSpec: ObjectSchema = {
  type: 'object',
  name: 'NodeSpec',
  fields: {
    podCIDR: {type: 'string', proto: 1},
    podCIDRs: {type: 'array', items: {type: 'string'}, proto: 7, patchStrategy: 'merge', listType: 'set'},
    providerID: {type: 'string', proto: 3},
    unschedulable: {type: 'boolean', proto: 4},
    taints: {type: 'array', items: taint, proto: 5, listType: 'atomic'},
    configSource: {...nodeConfigSource, proto: 6},
    externalID: {type: 'string', proto: 2},
  },
}

const nodeStatus: ObjectSchema = {
  type: 'object',
  name: 'NodeStatus',
  fields: {
    capacity: {type: 'map', values: {type: 'quantity'}, proto: 1},
    allocatable: {type: 'map', values: {type: 'quantity'}, proto: 2},
    phase: {type: 'string', proto: 3, enum: ['Pending', 'Running', 'Terminated']},
    conditions: {type: 'array', items: nodeCondition, proto: 4, patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type']},
    addresses: {type: 'array', items: nodeAddress, proto: 5, patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type']},
    daemonEndpoints: {
      type: 'object',
      name: 'NodeDaemonEndpoints',
      proto: 6,
      fields: {
        agentEndpoint: {
          type: 'object',
          name: 'DaemonEndpoint',
          proto: 1,
          fields: {Port: {type: 'integer', format: 'int32', proto: 1, required: true}},
        },
      },
    },
    nodeInfo: {...nodeSystemInfo, proto: 7},
    images: {
      type: 'array',
      proto: 8,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'ContainerImage',
        fields: {
          names: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'},
          sizeBytes: {type: 'integer', format: 'int64', proto: 2},
        },
      },
    },
    volumesInUse: {type: 'array', items: {type: 'string'}, proto: 9, listType: 'atomic'},
    volumesAttached: {
      type: 'array',
      proto: 10,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'AttachedVolume',
        fields: {name: requiredString(1), devicePath: requiredString(2)},
      },
    },
    config: {
      type: 'object',
      name: 'NodeConfigStatus',
      proto: 11,
      fields: {
        assigned: {...nodeConfigSource, proto: 1},
        active: {...nodeConfigSource, proto: 2},
        lastKnownGood: {...nodeConfigSource, proto: 3},
        error: {type: 'string', proto: 4},
      },
    },
    runtimeHandlers: {
      type: 'array',
      proto: 12,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'NodeRuntimeHandler',
        fields: {
          name: {type: 'string', proto: 1},
          features: {
            type: 'object',
            name: 'NodeRuntimeHandlerFeatures',
            proto: 2,
            fields: {recursiveReadOnlyMounts: {type: 'boolean', proto: 1}, userNamespaces: {type: 'boolean', proto: 2}},
          },
        },
      },
    },
    features: {type: 'object', name: 'NodeFeatures', proto: 13, fields: {supplementalGroupsPolicy: {type: 'boolean', proto: 1}}},
    declaredFeatures: {type: 'array', items: {type: 'string'}, proto: 14, listType: 'atomic'},
  },
}

// ---------- columns (kubectl's printNode) ----------

export const NODE_ROLE_LABEL_PREFIX = 'node-role.orch.io/'
export const NODE_ROLE_LABEL = 'orch.io/role'

/** STATUS: Ready / NotReady from the Ready condition (Unknown without one), then SchedulingDisabled. */
export function nodeStatusText(node: AnyObject): string {
  const status: string[] = []
  const ready = (node.status?.conditions ?? []).find((c: any) => c?.type === 'Ready')
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady')
  else status.push('Unknown')
  if (node.spec?.unschedulable) status.push('SchedulingDisabled')
  return status.join(',')
}

/** ROLES: from `node-role.orch.io/<role>` label keys and the `orch.io/role` label value, sorted. */
export function nodeRoles(node: AnyObject): string {
  const roles = new Set<string>()
  for (const [key, value] of Object.entries<unknown>(node.metadata?.labels ?? {})) {
    if (key.startsWith(NODE_ROLE_LABEL_PREFIX)) {
      const role = key.slice(NODE_ROLE_LABEL_PREFIX.length)
      if (role) roles.add(role)
    } else if (key === NODE_ROLE_LABEL && value) {
      roles.add(String(value))
    }
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',')
}

function address(node: AnyObject, type: string): string {
  return (node.status?.addresses ?? []).find((a: any) => a?.type === type)?.address ?? '<none>'
}

const unknownIfEmpty = (value: unknown) => (value ? String(value) : '<unknown>')

const NODE_INFO_STRINGS = [
  'machineID',
  'systemUUID',
  'bootID',
  'kernelVersion',
  'osImage',
  'containerRuntimeVersion',
  'agentVersion',
  'orchProxyVersion',
  'operatingSystem',
  'architecture',
]

/**
 * podCIDR and podCIDRs as Kubernetes' v1 conversion keeps them: podCIDRs[0] is filled from a lone
 * podCIDR, and podCIDR from podCIDRs[0]. When both are given and differ they stay as sent, for
 * validation's "entry 0 equals podCIDR" rule (document 2) to refuse.
 */
function syncPodCIDRs(object: AnyObject): void {
  const spec = object.spec
  if (!spec || typeof spec !== 'object') return
  const cidrs: unknown[] = Array.isArray(spec.podCIDRs) ? spec.podCIDRs : []
  const podCIDR = typeof spec.podCIDR === 'string' ? spec.podCIDR : ''
  if (cidrs.length === 0 && podCIDR !== '') spec.podCIDRs = [podCIDR]
  else if (cidrs.length > 0 && podCIDR === '' && typeof cidrs[0] === 'string') spec.podCIDR = cidrs[0]
}

/** nodeStrategy's WarningsOnCreate / WarningsOnUpdate (fieldIsDeprecatedWarnings), for deprecated spec fields still set. */
function deprecatedFieldWarnings(object: AnyObject): string[] {
  const warnings: string[] = []
  if (object.spec?.configSource != null) warnings.push('spec.configSource: the feature is removed')
  if (typeof object.spec?.externalID === 'string' && object.spec.externalID !== '') {
    warnings.push('spec.externalID: this field is deprecated, and is unused by orch')
  }
  return warnings
}

export const node: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Node',
  resource: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    // connect-style: requests are forwarded to the node's agent, nothing of the Node is written
    {name: 'proxy', verbs: ['get', 'create', 'update', 'patch', 'delete'], writes: 'custom'},
  ],
  hasStatus: true,
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'Node',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {...nodeSpec, proto: 2},
      status: {...nodeStatus, proto: 3},
    },
  },
  defaults(object) {
    syncPodCIDRs(object)
    // SetDefaults_NodeStatus: allocatable defaults to capacity
    const status = object.status
    if (status && typeof status === 'object' && status.allocatable == null && status.capacity && typeof status.capacity === 'object') {
      status.allocatable = {...status.capacity}
    }
    // Kubernetes always serialises these non-pointer structs, with zero values
    if (status && typeof status === 'object') {
      status.daemonEndpoints ??= {agentEndpoint: {Port: 0}}
      status.nodeInfo ??= Object.fromEntries(NODE_INFO_STRINGS.map((f) => [f, '']))
    }
  },
  // nodeStrategy.PrepareForCreate (dropDisabledFields): the dynamic agent configuration feature is
  // gone, so a new node keeps neither spec.configSource nor status.config
  prepareForCreate(object) {
    if (object.spec && typeof object.spec === 'object') delete object.spec.configSource
    if (object.status && typeof object.status === 'object') delete object.status.config
  },
  // nodeStrategy.PrepareForUpdate drops spec.configSource unless the stored node has one;
  // nodeStatusStrategy.PrepareForUpdate drops status.config unless the stored node has one
  prepareForUpdate(object, old, context) {
    if (context.subresource === 'status') {
      if (old.status?.config == null && object.status && typeof object.status === 'object') delete object.status.config
      return
    }
    if (context.subresource) return
    if (old.spec?.configSource == null && object.spec && typeof object.spec === 'object') delete object.spec.configSource
  },
  warningsOnCreate: (object) => deprecatedFieldWarnings(object),
  warningsOnUpdate: (object) => deprecatedFieldWarnings(object),
  columns: [
    {name: 'Status', type: 'string', description: 'The status of the node', priority: 0, cell: (o) => nodeStatusText(o)},
    {name: 'Roles', type: 'string', description: 'The roles of the node', priority: 0, cell: (o) => nodeRoles(o)},
    ageColumn,
    {name: 'Version', type: 'string', description: 'Agent Version reported by the node.', priority: 0, cell: (o) => o.status?.nodeInfo?.agentVersion ?? ''},
    {name: 'Internal-IP', type: 'string', description: 'List of addresses reachable to the node.', priority: 1, cell: (o) => address(o, 'InternalIP')},
    {name: 'External-IP', type: 'string', description: 'List of addresses reachable to the node.', priority: 1, cell: (o) => address(o, 'ExternalIP')},
    {name: 'OS-Image', type: 'string', description: 'OS Image reported by the node from /etc/os-release.', priority: 1, cell: (o) => unknownIfEmpty(o.status?.nodeInfo?.osImage)},
    {name: 'Kernel-Version', type: 'string', description: "Kernel Version reported by the node from 'uname -r'.", priority: 1, cell: (o) => unknownIfEmpty(o.status?.nodeInfo?.kernelVersion)},
    {
      name: 'Container-Runtime',
      type: 'string',
      description: 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
      priority: 1,
      cell: (o) => unknownIfEmpty(o.status?.nodeInfo?.containerRuntimeVersion),
    },
  ],
  fieldSelectors: {'spec.unschedulable': (o) => String(o.spec?.unschedulable === true)},
}
