// StatefulSet (apps/v1, namespaced): document 2.
import {ageColumn} from '../columns.js'
import {labelSelector, objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema, RequestContext} from '../types.js'
import {persistentVolumeClaimSchema} from '../core/persistentvolumeclaim.js'
import {defaultPersistentVolumeClaim} from '../core/persistentvolumeclaim-spec.js'
import {defaultPodSpec, podTemplateSpec} from '../core/pod-spec.js'

const statefulSetSpec: ObjectSchema = {
  type: 'object',
  name: 'StatefulSetSpec',
  fields: {
    replicas: {type: 'integer', format: 'int32', proto: 1},
    selector: {...labelSelector, proto: 2, required: true},
    template: {...podTemplateSpec, proto: 3, required: true},
    volumeClaimTemplates: {type: 'array', items: persistentVolumeClaimSchema, proto: 4, listType: 'atomic'},
    serviceName: {type: 'string', proto: 5},
    podManagementPolicy: {type: 'string', proto: 6, enum: ['OrderedReady', 'Parallel']},
    updateStrategy: {
      type: 'object',
      name: 'StatefulSetUpdateStrategy',
      proto: 7,
      fields: {
        type: {type: 'string', proto: 1, enum: ['RollingUpdate', 'OnDelete']},
        rollingUpdate: {
          type: 'object',
          name: 'RollingUpdateStatefulSetStrategy',
          proto: 2,
          fields: {
            partition: {type: 'integer', format: 'int32', proto: 1},
            maxUnavailable: {type: 'int-or-string', proto: 2},
          },
        },
      },
    },
    revisionHistoryLimit: {type: 'integer', format: 'int32', proto: 8},
    minReadySeconds: {type: 'integer', format: 'int32', proto: 9},
    persistentVolumeClaimRetentionPolicy: {
      type: 'object',
      name: 'StatefulSetPersistentVolumeClaimRetentionPolicy',
      proto: 10,
      fields: {
        whenDeleted: {type: 'string', proto: 1, enum: ['Retain', 'Delete']},
        whenScaled: {type: 'string', proto: 2, enum: ['Retain', 'Delete']},
      },
    },
    ordinals: {
      type: 'object',
      name: 'StatefulSetOrdinals',
      proto: 11,
      fields: {start: {type: 'integer', format: 'int32', proto: 1}},
    },
  },
}

const statefulSetCondition: ObjectSchema = {
  type: 'object',
  name: 'StatefulSetCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    lastTransitionTime: {type: 'time', proto: 3},
    reason: {type: 'string', proto: 4},
    message: {type: 'string', proto: 5},
  },
}

const statefulSetStatus: ObjectSchema = {
  type: 'object',
  name: 'StatefulSetStatus',
  fields: {
    observedGeneration: {type: 'integer', format: 'int64', proto: 1},
    replicas: {type: 'integer', format: 'int32', proto: 2, required: true},
    readyReplicas: {type: 'integer', format: 'int32', proto: 3},
    currentReplicas: {type: 'integer', format: 'int32', proto: 4},
    updatedReplicas: {type: 'integer', format: 'int32', proto: 5},
    currentRevision: {type: 'string', proto: 6},
    updateRevision: {type: 'string', proto: 7},
    collisionCount: {type: 'integer', format: 'int32', proto: 9},
    conditions: {
      type: 'array',
      items: statefulSetCondition,
      proto: 10,
      patchMergeKey: 'type',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['type'],
    },
    availableReplicas: {type: 'integer', format: 'int32', proto: 11},
  },
}

/**
 * SetDefaults_StatefulSet, then the template's PodSpec and the claim templates' defaults. Idempotent.
 * rollingUpdate.maxUnavailable is not set here: its default (1) depends on the MaxUnavailableStatefulSet
 * gate, which defaults cannot see, so prepareMaxUnavailable applies it on create and update.
 */
function defaultStatefulSet(object: AnyObject): void {
  const spec = (object.spec ??= {})
  if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady'
  spec.updateStrategy ??= {}
  const strategy = spec.updateStrategy
  if (!strategy.type) {
    strategy.type = 'RollingUpdate'
    strategy.rollingUpdate ??= {}
  }
  if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate && typeof strategy.rollingUpdate === 'object') {
    strategy.rollingUpdate.partition ??= 0
  }
  spec.persistentVolumeClaimRetentionPolicy ??= {}
  const retention = spec.persistentVolumeClaimRetentionPolicy
  if (!retention.whenDeleted) retention.whenDeleted = 'Retain'
  if (!retention.whenScaled) retention.whenScaled = 'Retain'
  spec.replicas ??= 1
  spec.revisionHistoryLimit ??= 10
  spec.template ??= {}
  spec.template.spec ??= {}
  defaultPodSpec(spec.template.spec)
  for (const claim of Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : []) defaultPersistentVolumeClaim(claim)
}

/**
 * spec.updateStrategy.rollingUpdate.maxUnavailable and the MaxUnavailableStatefulSet gate (document 2:
 * "default 1; beta, enabled by default"). Gate on: SetDefaults_StatefulSet's default of 1 for a
 * RollingUpdate strategy with a rollingUpdate block. Gate off: dropStatefulSetDisabledFields clears the
 * field on create, and on update unless the stored object (`old`) already uses it.
 */
function prepareMaxUnavailable(object: AnyObject, old: AnyObject | undefined, context: RequestContext): void {
  const rollingUpdate = object.spec?.updateStrategy?.rollingUpdate
  if (!rollingUpdate || typeof rollingUpdate !== 'object') return
  // beta, so on unless --feature-gates turned it off
  if (context.gates?.['MaxUnavailableStatefulSet'] !== false) {
    if (object.spec.updateStrategy.type === 'RollingUpdate') rollingUpdate.maxUnavailable ??= 1
    return
  }
  if (old?.spec?.updateStrategy?.rollingUpdate?.maxUnavailable != null) return
  delete rollingUpdate.maxUnavailable
}

/** kubectl's wide CONTAINERS and IMAGES: the template's container names and images, comma separated */
function containerCells(o: AnyObject): {names: string; images: string} {
  const containers: any[] = o.spec?.template?.spec?.containers ?? []
  return {names: containers.map((c) => c?.name ?? '').join(','), images: containers.map((c) => c?.image ?? '').join(',')}
}

export const statefulSet: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  resource: 'statefulsets',
  singular: 'statefulset',
  shortNames: ['sts'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    {name: 'scale', verbs: ['get', 'patch', 'update'], kind: {group: 'autoscaling', version: 'v1', kind: 'Scale'}, writes: 'custom'},
  ],
  hasStatus: true,
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'StatefulSet',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {...statefulSetSpec, proto: 2},
      status: {...statefulSetStatus, proto: 3},
    },
  },
  defaults: defaultStatefulSet,
  prepareForCreate(object, context) {
    // an empty StatefulSetStatus: its two non-omitempty counters
    object.status = {replicas: 0, availableReplicas: 0}
    prepareMaxUnavailable(object, undefined, context)
  },
  prepareForUpdate(object, old, context) {
    // /status keeps the stored spec
    if (!context.subresource) prepareMaxUnavailable(object, old, context)
  },
  prepareSubresourceUpdate(subresource, object, old) {
    // scale: a Scale body sets spec.replicas; everything else stays as stored
    if (subresource === 'scale') {
      old.spec ??= {}
      old.spec.replicas = object.spec?.replicas ?? 0
    }
    return old
  },
  columns: [
    {
      name: 'Ready',
      type: 'string',
      description: 'Number of the pod with ready state',
      priority: 0,
      cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
    },
    ageColumn,
    {name: 'Containers', type: 'string', description: 'Names of each container in the template.', priority: 1, cell: (o) => containerCells(o).names},
    {name: 'Images', type: 'string', description: 'Images referenced by each container in the template.', priority: 1, cell: (o) => containerCells(o).images},
  ],
}
