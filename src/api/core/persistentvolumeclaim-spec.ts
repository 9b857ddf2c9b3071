// PersistentVolumeClaimSpec and PersistentVolumeClaimStatus (core/v1), shared by PersistentVolumeClaim,
// StatefulSet volumeClaimTemplates and ephemeral volumes.
import {labelSelector} from '../meta.js'
import type {ObjectSchema} from '../types.js'

export const accessModes = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const

export const persistentVolumeClaimSpec: ObjectSchema = {
  type: 'object',
  name: 'PersistentVolumeClaimSpec',
  fields: {
    accessModes: {type: 'array', items: {type: 'string', enum: accessModes}, proto: 1, listType: 'atomic'},
    selector: {...labelSelector, proto: 4},
    resources: {
      type: 'object',
      name: 'VolumeResourceRequirements',
      proto: 2,
      fields: {
        limits: {type: 'map', values: {type: 'quantity'}, proto: 1},
        requests: {type: 'map', values: {type: 'quantity'}, proto: 2},
      },
    },
    volumeName: {type: 'string', proto: 3},
    storageClassName: {type: 'string', proto: 5},
    volumeMode: {type: 'string', proto: 6, enum: ['Block', 'Filesystem']},
    dataSource: {
      type: 'object',
      name: 'TypedLocalObjectReference',
      structType: 'atomic',
      proto: 7,
      fields: {
        apiGroup: {type: 'string', proto: 1},
        kind: {type: 'string', proto: 2, required: true},
        name: {type: 'string', proto: 3, required: true},
      },
    },
    dataSourceRef: {
      type: 'object',
      name: 'TypedObjectReference',
      proto: 8,
      fields: {
        apiGroup: {type: 'string', proto: 1},
        kind: {type: 'string', proto: 2, required: true},
        name: {type: 'string', proto: 3, required: true},
        namespace: {type: 'string', proto: 4},
      },
    },
    volumeAttributesClassName: {type: 'string', proto: 9},
  },
}

const persistentVolumeClaimCondition: ObjectSchema = {
  type: 'object',
  name: 'PersistentVolumeClaimCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    lastProbeTime: {type: 'time', proto: 3},
    lastTransitionTime: {type: 'time', proto: 4},
    reason: {type: 'string', proto: 5},
    message: {type: 'string', proto: 6},
  },
}

export const persistentVolumeClaimStatus: ObjectSchema = {
  type: 'object',
  name: 'PersistentVolumeClaimStatus',
  fields: {
    phase: {type: 'string', proto: 1, enum: ['Pending', 'Bound', 'Lost']},
    accessModes: {type: 'array', items: {type: 'string', enum: accessModes}, proto: 2, listType: 'atomic'},
    capacity: {type: 'map', values: {type: 'quantity'}, proto: 3},
    conditions: {
      type: 'array',
      items: persistentVolumeClaimCondition,
      proto: 4,
      patchMergeKey: 'type',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['type'],
    },
    allocatedResources: {type: 'map', values: {type: 'quantity'}, proto: 5},
    allocatedResourceStatuses: {type: 'map', values: {type: 'string'}, proto: 7, mapType: 'granular'},
    currentVolumeAttributesClassName: {type: 'string', proto: 8},
    modifyVolumeStatus: {
      type: 'object',
      name: 'ModifyVolumeStatus',
      proto: 9,
      fields: {
        targetVolumeAttributesClassName: {type: 'string', proto: 1},
        status: {type: 'string', proto: 2, required: true, enum: ['Pending', 'InProgress', 'Infeasible']},
      },
    },
  },
}

/** SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem. */
export function defaultPersistentVolumeClaimSpec(spec: any): void {
  if (!spec || typeof spec !== 'object') return
  spec.volumeMode ??= 'Filesystem'
}

/** SetDefaults_PersistentVolumeClaim (+ its spec): status.phase Pending, spec.volumeMode Filesystem. */
export function defaultPersistentVolumeClaim(claim: any): void {
  if (!claim || typeof claim !== 'object') return
  claim.spec ??= {}
  defaultPersistentVolumeClaimSpec(claim.spec)
  claim.status ??= {}
  if (!claim.status.phase) claim.status.phase = 'Pending'
}
