// Volume and the volume sources a pod uses (core/v1). The in-tree cloud and legacy network sources
// (gcePersistentDisk, awsElasticBlockStore, gitRepo, iscsi, glusterfs, rbd, flexVolume, cinder, cephfs,
// flocker, fc, azureFile, vsphereVolume, quobyte, azureDisk, photonPersistentDisk, portworxVolume,
// scaleIO, storageos) are not declared: the agent cannot mount them.
import {labelSelector, objectMeta} from '../meta.js'
import type {Field, ObjectSchema} from '../types.js'
import {defaultPullPolicy, embedded, localObjectReference, localObjectReferenceInline, objectFieldSelector, resourceFieldSelector} from './container.js'
import {defaultPersistentVolumeClaimSpec, persistentVolumeClaimSpec} from './persistentvolumeclaim-spec.js'

const keyToPath: ObjectSchema = {
  type: 'object',
  name: 'KeyToPath',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    path: {type: 'string', proto: 2, required: true},
    mode: {type: 'integer', format: 'int32', proto: 3},
    user: {type: 'integer', format: 'int64', proto: 4},
  },
}

const keyToPathList = (proto: number): Field => ({type: 'array', items: keyToPath, proto, listType: 'atomic'})

const downwardAPIVolumeFile: ObjectSchema = {
  type: 'object',
  name: 'DownwardAPIVolumeFile',
  fields: {
    path: {type: 'string', proto: 1, required: true},
    fieldRef: {...objectFieldSelector, proto: 2},
    resourceFieldRef: {...resourceFieldSelector, proto: 3},
    mode: {type: 'integer', format: 'int32', proto: 4},
    user: {type: 'integer', format: 'int64', proto: 5},
  },
}

const volumeProjection: ObjectSchema = {
  type: 'object',
  name: 'VolumeProjection',
  fields: {
    secret: {
      type: 'object',
      name: 'SecretProjection',
      proto: 1,
      fields: {...localObjectReferenceInline(1), items: keyToPathList(2), optional: {type: 'boolean', proto: 4}},
    },
    downwardAPI: {
      type: 'object',
      name: 'DownwardAPIProjection',
      proto: 2,
      fields: {items: {type: 'array', items: downwardAPIVolumeFile, proto: 1, listType: 'atomic'}},
    },
    configMap: {
      type: 'object',
      name: 'ConfigMapProjection',
      proto: 3,
      fields: {...localObjectReferenceInline(1), items: keyToPathList(2), optional: {type: 'boolean', proto: 4}},
    },
    serviceAccountToken: {
      type: 'object',
      name: 'ServiceAccountTokenProjection',
      proto: 4,
      fields: {
        audience: {type: 'string', proto: 1},
        expirationSeconds: {type: 'integer', format: 'int64', proto: 2},
        path: {type: 'string', proto: 3, required: true},
        user: {type: 'integer', format: 'int64', proto: 4},
      },
    },
    clusterTrustBundle: {
      type: 'object',
      name: 'ClusterTrustBundleProjection',
      proto: 5,
      fields: {
        name: {type: 'string', proto: 1},
        signerName: {type: 'string', proto: 2},
        labelSelector: {...labelSelector, proto: 3},
        optional: {type: 'boolean', proto: 5},
        path: {type: 'string', proto: 4, required: true},
        user: {type: 'integer', format: 'int64', proto: 6},
      },
    },
  },
}

/** The sources, as fields of VolumeSource (embedded in Volume at 2). */
const volumeSources: Record<string, Field> = {
  hostPath: {
    type: 'object',
    name: 'HostPathVolumeSource',
    proto: 1,
    fields: {
      path: {type: 'string', proto: 1, required: true},
      type: {type: 'string', proto: 2, enum: ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice']},
    },
  },
  emptyDir: {
    type: 'object',
    name: 'EmptyDirVolumeSource',
    proto: 2,
    fields: {
      medium: {type: 'string', proto: 1},
      sizeLimit: {type: 'quantity', proto: 2},
      mode: {type: 'integer', format: 'int32', proto: 3},
    },
  },
  secret: {
    type: 'object',
    name: 'SecretVolumeSource',
    proto: 6,
    fields: {
      secretName: {type: 'string', proto: 1},
      items: keyToPathList(2),
      defaultMode: {type: 'integer', format: 'int32', proto: 3},
      optional: {type: 'boolean', proto: 4},
      defaultUser: {type: 'integer', format: 'int64', proto: 5},
    },
  },
  nfs: {
    type: 'object',
    name: 'NFSVolumeSource',
    proto: 7,
    fields: {
      server: {type: 'string', proto: 1, required: true},
      path: {type: 'string', proto: 2, required: true},
      readOnly: {type: 'boolean', proto: 3},
    },
  },
  persistentVolumeClaim: {
    type: 'object',
    name: 'PersistentVolumeClaimVolumeSource',
    proto: 10,
    fields: {claimName: {type: 'string', proto: 1, required: true}, readOnly: {type: 'boolean', proto: 2}},
  },
  downwardAPI: {
    type: 'object',
    name: 'DownwardAPIVolumeSource',
    proto: 16,
    fields: {
      items: {type: 'array', items: downwardAPIVolumeFile, proto: 1, listType: 'atomic'},
      defaultMode: {type: 'integer', format: 'int32', proto: 2},
      defaultUser: {type: 'integer', format: 'int64', proto: 3},
    },
  },
  configMap: {
    type: 'object',
    name: 'ConfigMapVolumeSource',
    proto: 19,
    fields: {
      ...localObjectReferenceInline(1),
      items: keyToPathList(2),
      defaultMode: {type: 'integer', format: 'int32', proto: 3},
      optional: {type: 'boolean', proto: 4},
      defaultUser: {type: 'integer', format: 'int64', proto: 5},
    },
  },
  projected: {
    type: 'object',
    name: 'ProjectedVolumeSource',
    proto: 26,
    fields: {
      sources: {type: 'array', items: volumeProjection, proto: 1, listType: 'atomic'},
      defaultMode: {type: 'integer', format: 'int32', proto: 2},
      defaultUser: {type: 'integer', format: 'int64', proto: 3},
    },
  },
  csi: {
    type: 'object',
    name: 'CSIVolumeSource',
    proto: 28,
    fields: {
      driver: {type: 'string', proto: 1, required: true},
      readOnly: {type: 'boolean', proto: 2},
      fsType: {type: 'string', proto: 3},
      volumeAttributes: {type: 'map', values: {type: 'string'}, proto: 4},
      nodePublishSecretRef: {...localObjectReference, proto: 5},
    },
  },
  ephemeral: {
    type: 'object',
    name: 'EphemeralVolumeSource',
    proto: 29,
    fields: {
      volumeClaimTemplate: {
        type: 'object',
        name: 'PersistentVolumeClaimTemplate',
        proto: 1,
        fields: {
          metadata: {...objectMeta, proto: 1},
          spec: {...persistentVolumeClaimSpec, proto: 2, required: true},
        },
      },
    },
  },
  image: {
    type: 'object',
    name: 'ImageVolumeSource',
    proto: 30,
    fields: {
      reference: {type: 'string', proto: 1},
      pullPolicy: {type: 'string', proto: 2, enum: ['Always', 'Never', 'IfNotPresent']},
    },
  },
}

export const volume: ObjectSchema = {
  type: 'object',
  name: 'Volume',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    ...embedded({proto: 2, name: 'VolumeSource'}, volumeSources),
  },
}

/** Every member of VolumeSource, declared or not: a volume naming none of them gets an emptyDir. */
const allSourceNames = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc',
  'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected',
  'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
]

/** 0644, the default file mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_MODE = 0o644

/** Kubernetes' volume defaults (SetDefaults_Volume and its sources'); idempotent. */
export function defaultVolume(v: any): void {
  if (!v || typeof v !== 'object') return
  if (!allSourceNames.some((name) => v[name] !== undefined && v[name] !== null)) v.emptyDir = {}
  for (const name of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = v[name]
    if (source && typeof source === 'object') source.defaultMode ??= DEFAULT_MODE
  }
  if (v.hostPath && typeof v.hostPath === 'object') v.hostPath.type ??= ''
  for (const item of Array.isArray(v.downwardAPI?.items) ? v.downwardAPI.items : []) {
    if (item?.fieldRef && typeof item.fieldRef === 'object' && !item.fieldRef.apiVersion) item.fieldRef.apiVersion = 'v1'
  }
  for (const projection of Array.isArray(v.projected?.sources) ? v.projected.sources : []) {
    const token = projection?.serviceAccountToken
    if (token && typeof token === 'object') token.expirationSeconds ??= 3600
    for (const item of Array.isArray(projection?.downwardAPI?.items) ? projection.downwardAPI.items : []) {
      if (item?.fieldRef && typeof item.fieldRef === 'object' && !item.fieldRef.apiVersion) item.fieldRef.apiVersion = 'v1'
    }
  }
  if (v.image && typeof v.image === 'object' && !v.image.pullPolicy && v.image.reference !== undefined) {
    v.image.pullPolicy = defaultPullPolicy(v.image.reference)
  }
  const claimSpec = v.ephemeral?.volumeClaimTemplate?.spec
  if (claimSpec && typeof claimSpec === 'object') defaultPersistentVolumeClaimSpec(claimSpec)
}
