// PodSpec and PodTemplateSpec (core/v1), shared by Pod and the workload kinds' templates, with the
// scheduling types they hold (affinity, tolerations, topology spread) and Kubernetes' PodSpec defaults.
import {labelSelector, objectMeta} from '../meta.js'
import type {Field, ObjectSchema} from '../types.js'
import {appArmorProfile, container, defaultContainer, embedded, localObjectReference, resourceRequirements, seccompProfile, seLinuxOptions, windowsSecurityContextOptions} from './container.js'
import {defaultVolume, volume} from './volume.js'

/** The scheduler a pod gets when it names none (Kubernetes' `default-scheduler`, renamed). */
export const DEFAULT_SCHEDULER_NAME = 'orch-scheduler'

export const podSecurityContext: ObjectSchema = {
  type: 'object',
  name: 'PodSecurityContext',
  fields: {
    seLinuxOptions: {...seLinuxOptions, proto: 1},
    windowsOptions: {...windowsSecurityContextOptions, proto: 8},
    runAsUser: {type: 'integer', format: 'int64', proto: 2},
    runAsGroup: {type: 'integer', format: 'int64', proto: 6},
    runAsNonRoot: {type: 'boolean', proto: 3},
    supplementalGroups: {type: 'array', items: {type: 'integer', format: 'int64'}, proto: 4, listType: 'atomic'},
    supplementalGroupsPolicy: {type: 'string', proto: 12, enum: ['Merge', 'Strict']},
    fsGroup: {type: 'integer', format: 'int64', proto: 5},
    sysctls: {
      type: 'array',
      proto: 7,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'Sysctl',
        fields: {name: {type: 'string', proto: 1, required: true}, value: {type: 'string', proto: 2, required: true}},
      },
    },
    fsGroupChangePolicy: {type: 'string', proto: 9, enum: ['OnRootMismatch', 'Always']},
    seccompProfile: {...seccompProfile, proto: 10},
    appArmorProfile: {...appArmorProfile, proto: 11},
    seLinuxChangePolicy: {type: 'string', proto: 13},
  },
}

// ---------- affinity ----------

const nodeSelectorRequirement: ObjectSchema = {
  type: 'object',
  name: 'NodeSelectorRequirement',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    operator: {type: 'string', proto: 2, required: true, enum: ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']},
    values: {type: 'array', items: {type: 'string'}, proto: 3, listType: 'atomic'},
  },
}

const nodeSelectorTerm: ObjectSchema = {
  type: 'object',
  name: 'NodeSelectorTerm',
  structType: 'atomic',
  fields: {
    matchExpressions: {type: 'array', items: nodeSelectorRequirement, proto: 1, listType: 'atomic'},
    matchFields: {type: 'array', items: nodeSelectorRequirement, proto: 2, listType: 'atomic'},
  },
}

const podAffinityTerm: ObjectSchema = {
  type: 'object',
  name: 'PodAffinityTerm',
  fields: {
    labelSelector: {...labelSelector, proto: 1},
    namespaces: {type: 'array', items: {type: 'string'}, proto: 2, listType: 'atomic'},
    topologyKey: {type: 'string', proto: 3, required: true},
    namespaceSelector: {...labelSelector, proto: 4},
    matchLabelKeys: {type: 'array', items: {type: 'string'}, proto: 5, listType: 'atomic'},
    mismatchLabelKeys: {type: 'array', items: {type: 'string'}, proto: 6, listType: 'atomic'},
  },
}

function podAffinity(name: string, proto: number): Field {
  return {
    type: 'object',
    name,
    proto,
    fields: {
      requiredDuringSchedulingIgnoredDuringExecution: {type: 'array', items: podAffinityTerm, proto: 1, listType: 'atomic'},
      preferredDuringSchedulingIgnoredDuringExecution: {
        type: 'array',
        proto: 2,
        listType: 'atomic',
        items: {
          type: 'object',
          name: 'WeightedPodAffinityTerm',
          fields: {
            weight: {type: 'integer', format: 'int32', proto: 1, required: true},
            podAffinityTerm: {...podAffinityTerm, proto: 2, required: true},
          },
        },
      },
    },
  }
}

export const affinity: ObjectSchema = {
  type: 'object',
  name: 'Affinity',
  fields: {
    nodeAffinity: {
      type: 'object',
      name: 'NodeAffinity',
      proto: 1,
      fields: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          type: 'object',
          name: 'NodeSelector',
          structType: 'atomic',
          proto: 1,
          fields: {nodeSelectorTerms: {type: 'array', items: nodeSelectorTerm, proto: 1, required: true, listType: 'atomic'}},
        },
        preferredDuringSchedulingIgnoredDuringExecution: {
          type: 'array',
          proto: 2,
          listType: 'atomic',
          items: {
            type: 'object',
            name: 'PreferredSchedulingTerm',
            fields: {
              weight: {type: 'integer', format: 'int32', proto: 1, required: true},
              preference: {...nodeSelectorTerm, proto: 2, required: true},
            },
          },
        },
      },
    },
    podAffinity: podAffinity('PodAffinity', 2),
    podAntiAffinity: podAffinity('PodAntiAffinity', 3),
  },
}

export const toleration: ObjectSchema = {
  type: 'object',
  name: 'Toleration',
  fields: {
    key: {type: 'string', proto: 1},
    operator: {type: 'string', proto: 2},
    value: {type: 'string', proto: 3},
    effect: {type: 'string', proto: 4, enum: ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']},
    tolerationSeconds: {type: 'integer', format: 'int64', proto: 5},
  },
}

const topologySpreadConstraint: ObjectSchema = {
  type: 'object',
  name: 'TopologySpreadConstraint',
  fields: {
    maxSkew: {type: 'integer', format: 'int32', proto: 1, required: true},
    topologyKey: {type: 'string', proto: 2, required: true},
    whenUnsatisfiable: {type: 'string', proto: 3, required: true, enum: ['DoNotSchedule', 'ScheduleAnyway']},
    labelSelector: {...labelSelector, proto: 4},
    minDomains: {type: 'integer', format: 'int32', proto: 5},
    nodeAffinityPolicy: {type: 'string', proto: 6, enum: ['Ignore', 'Honor']},
    nodeTaintsPolicy: {type: 'string', proto: 7, enum: ['Ignore', 'Honor']},
    matchLabelKeys: {type: 'array', items: {type: 'string'}, proto: 8, listType: 'atomic'},
  },
}

/** EphemeralContainer: the Container fields (embedded EphemeralContainerCommon at 1) and the target. */
const ephemeralContainer: ObjectSchema = {
  type: 'object',
  name: 'EphemeralContainer',
  fields: {
    ...embedded({proto: 1, name: 'EphemeralContainerCommon'}, container.fields),
    targetContainerName: {type: 'string', proto: 2},
  },
}

// ---------- the pod spec ----------

export const podSpec: ObjectSchema = {
  type: 'object',
  name: 'PodSpec',
  fields: {
    volumes: {
      type: 'array',
      items: volume,
      proto: 1,
      patchMergeKey: 'name',
      patchStrategy: 'merge,retainKeys',
      listType: 'map',
      listMapKeys: ['name'],
    },
    initContainers: {type: 'array', items: container, proto: 20, patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name']},
    containers: {
      type: 'array',
      items: container,
      proto: 2,
      required: true,
      patchMergeKey: 'name',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['name'],
    },
    ephemeralContainers: {
      type: 'array',
      items: ephemeralContainer,
      proto: 34,
      patchMergeKey: 'name',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['name'],
    },
    restartPolicy: {type: 'string', proto: 3, enum: ['Always', 'OnFailure', 'Never']},
    terminationGracePeriodSeconds: {type: 'integer', format: 'int64', proto: 4},
    activeDeadlineSeconds: {type: 'integer', format: 'int64', proto: 5},
    dnsPolicy: {type: 'string', proto: 6, enum: ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']},
    nodeSelector: {type: 'map', values: {type: 'string'}, proto: 7, mapType: 'atomic'},
    serviceAccountName: {type: 'string', proto: 8},
    serviceAccount: {type: 'string', proto: 9},
    automountServiceAccountToken: {type: 'boolean', proto: 21},
    nodeName: {type: 'string', proto: 10},
    hostNetwork: {type: 'boolean', proto: 11},
    hostPID: {type: 'boolean', proto: 12},
    hostIPC: {type: 'boolean', proto: 13},
    shareProcessNamespace: {type: 'boolean', proto: 27},
    securityContext: {...podSecurityContext, proto: 14},
    imagePullSecrets: {
      type: 'array',
      items: localObjectReference,
      proto: 15,
      patchMergeKey: 'name',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['name'],
    },
    hostname: {type: 'string', proto: 16},
    subdomain: {type: 'string', proto: 17},
    affinity: {...affinity, proto: 18},
    schedulerName: {type: 'string', proto: 19},
    tolerations: {type: 'array', items: toleration, proto: 22, listType: 'atomic'},
    hostAliases: {
      type: 'array',
      proto: 23,
      patchMergeKey: 'ip',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['ip'],
      items: {
        type: 'object',
        name: 'HostAlias',
        fields: {
          ip: {type: 'string', proto: 1, required: true},
          hostnames: {type: 'array', items: {type: 'string'}, proto: 2, listType: 'atomic'},
        },
      },
    },
    priorityClassName: {type: 'string', proto: 24},
    priority: {type: 'integer', format: 'int32', proto: 25},
    dnsConfig: {
      type: 'object',
      name: 'PodDNSConfig',
      proto: 26,
      fields: {
        nameservers: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'},
        searches: {type: 'array', items: {type: 'string'}, proto: 2, listType: 'atomic'},
        options: {
          type: 'array',
          proto: 3,
          listType: 'atomic',
          items: {type: 'object', name: 'PodDNSConfigOption', fields: {name: {type: 'string', proto: 1}, value: {type: 'string', proto: 2}}},
        },
      },
    },
    readinessGates: {
      type: 'array',
      proto: 28,
      listType: 'atomic',
      items: {type: 'object', name: 'PodReadinessGate', fields: {conditionType: {type: 'string', proto: 1, required: true}}},
    },
    runtimeClassName: {type: 'string', proto: 29},
    enableServiceLinks: {type: 'boolean', proto: 30},
    preemptionPolicy: {type: 'string', proto: 31, enum: ['PreemptLowerPriority', 'Never']},
    overhead: {type: 'map', values: {type: 'quantity'}, proto: 32},
    topologySpreadConstraints: {
      type: 'array',
      items: topologySpreadConstraint,
      proto: 33,
      patchMergeKey: 'topologyKey',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['topologyKey', 'whenUnsatisfiable'],
    },
    setHostnameAsFQDN: {type: 'boolean', proto: 35},
    os: {type: 'object', name: 'PodOS', proto: 36, fields: {name: {type: 'string', proto: 1, required: true}}},
    hostUsers: {type: 'boolean', proto: 37},
    schedulingGates: {
      type: 'array',
      proto: 38,
      patchMergeKey: 'name',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['name'],
      items: {type: 'object', name: 'PodSchedulingGate', fields: {name: {type: 'string', proto: 1, required: true}}},
    },
    resourceClaims: {
      type: 'array',
      proto: 39,
      patchMergeKey: 'name',
      patchStrategy: 'merge,retainKeys',
      listType: 'map',
      listMapKeys: ['name'],
      items: {
        type: 'object',
        name: 'PodResourceClaim',
        fields: {
          name: {type: 'string', proto: 1, required: true},
          resourceClaimName: {type: 'string', proto: 3},
          resourceClaimTemplateName: {type: 'string', proto: 4},
        },
      },
    },
    // PodSpec.Resources is *ResourceRequirements (pod-level resources)
    resources: {...resourceRequirements, proto: 40, pointer: true},
    hostnameOverride: {type: 'string', proto: 41},
  },
}

export const podTemplateSpec: ObjectSchema = {
  type: 'object',
  name: 'PodTemplateSpec',
  fields: {
    metadata: {...objectMeta, proto: 1},
    spec: {...podSpec, proto: 2},
  },
}

/**
 * Kubernetes' defaults for a PodSpec wherever it appears (SetDefaults_PodSpec and those of the
 * containers, volumes, probes, ports it holds). Pod-only defaults are in pod.ts. Idempotent.
 */
export function defaultPodSpec(spec: any): void {
  if (!spec || typeof spec !== 'object') return
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst'
  if (!spec.restartPolicy) spec.restartPolicy = 'Always'
  spec.securityContext ??= {}
  spec.terminationGracePeriodSeconds ??= 30
  if (!spec.schedulerName) spec.schedulerName = DEFAULT_SCHEDULER_NAME
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    for (const c of Array.isArray(list) ? list : []) defaultContainer(c)
  }
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) defaultVolume(v)
}
