// PersistentVolumeClaim (v1, namespaced). Spec and status schemas: persistentvolumeclaim-spec.ts.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../types.js'
import {defaultPersistentVolumeClaim, persistentVolumeClaimSpec, persistentVolumeClaimStatus} from './persistentvolumeclaim-spec.js'

/** The whole claim (also the item of a StatefulSet's volumeClaimTemplates). */
export const persistentVolumeClaimSchema: ObjectSchema = {
  type: 'object',
  name: 'PersistentVolumeClaim',
  fields: {
    metadata: {...objectMeta, proto: 1},
    spec: {...persistentVolumeClaimSpec, proto: 2},
    status: {...persistentVolumeClaimStatus, proto: 3},
  },
}

/** The beta annotation that names the storage class before spec.storageClassName. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.orch.io/storage-class'

/** helper.GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, comma separated */
export function accessModesText(modes: readonly string[] | undefined): string {
  const have = new Set(modes ?? [])
  const out: string[] = []
  if (have.has('ReadWriteOnce')) out.push('RWO')
  if (have.has('ReadOnlyMany')) out.push('ROX')
  if (have.has('ReadWriteMany')) out.push('RWX')
  if (have.has('ReadWriteOncePod')) out.push('RWOP')
  return out.join(',')
}

function storageClass(claim: AnyObject): string {
  const annotation = claim.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION]
  if (annotation !== undefined) return String(annotation)
  return claim.spec?.storageClassName ?? ''
}

export const persistentVolumeClaim: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  resource: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  shortNames: ['pvc'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'}],
  hasStatus: true,
  generationFields: [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: persistentVolumeClaimSchema,
  defaults: defaultPersistentVolumeClaim,
  prepareForCreate(object) {
    // status is the controller's; what defaulting would give on the next read is Pending
    object.status = {phase: 'Pending'}
  },
  columns: [
    {
      name: 'Status',
      type: 'string',
      description: 'phase represents the current phase of PersistentVolumeClaim.',
      priority: 0,
      cell: (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : o.status?.phase ?? ''),
    },
    {
      name: 'Volume',
      type: 'string',
      description: 'volumeName is the binding reference to the PersistentVolume backing this claim.',
      priority: 0,
      cell: (o) => o.spec?.volumeName ?? '',
    },
    {
      name: 'Capacity',
      type: 'string',
      description: 'capacity represents the actual resources of the underlying volume.',
      priority: 0,
      cell: (o) => (o.spec?.volumeName ? String(o.status?.capacity?.storage ?? '0') : ''),
    },
    {
      name: 'Access Modes',
      type: 'string',
      description: 'accessModes contains the actual access modes the volume backing the PVC has.',
      priority: 0,
      cell: (o) => (o.spec?.volumeName ? accessModesText(o.status?.accessModes) : ''),
    },
    {name: 'StorageClass', type: 'string', description: 'StorageClass of the pvc', priority: 0, cell: (o) => storageClass(o)},
    {
      name: 'VolumeAttributesClass',
      type: 'string',
      description: 'VolumeAttributesClass of the pvc',
      priority: 0,
      cell: (o) => o.spec?.volumeAttributesClassName ?? '<unset>',
    },
    ageColumn,
    {
      name: 'VolumeMode',
      type: 'string',
      description: 'volumeMode defines what type of volume is required by the claim.',
      priority: 1,
      cell: (o) => o.spec?.volumeMode ?? '<unset>',
    },
  ],
  fieldSelectors: {
    // Kubernetes keeps this non-prefixed selector for compatibility
    name: (o) => o.metadata?.name ?? '',
  },
}
