// Shared meta types (k8s.io/apimachinery/pkg/apis/meta/v1), with generated.proto field numbers.
import type {ArraySchema, Field, ObjectSchema} from './types.js'

export const ownerReference: ObjectSchema = {
  type: 'object',
  name: 'OwnerReference',
  structType: 'atomic',
  fields: {
    apiVersion: {type: 'string', proto: 5, required: true},
    kind: {type: 'string', proto: 1, required: true},
    name: {type: 'string', proto: 3, required: true},
    uid: {type: 'string', proto: 4, required: true},
    controller: {type: 'boolean', proto: 6},
    blockOwnerDeletion: {type: 'boolean', proto: 7},
  },
}

export const managedFieldsEntry: ObjectSchema = {
  type: 'object',
  name: 'ManagedFieldsEntry',
  fields: {
    manager: {type: 'string', proto: 1},
    operation: {type: 'string', proto: 2},
    apiVersion: {type: 'string', proto: 3},
    time: {type: 'time', proto: 4},
    fieldsType: {type: 'string', proto: 6},
    fieldsV1: {type: 'raw', proto: 7},
    subresource: {type: 'string', proto: 8},
  },
}

export const objectMeta: ObjectSchema = {
  type: 'object',
  name: 'ObjectMeta',
  fields: {
    name: {type: 'string', proto: 1},
    generateName: {type: 'string', proto: 2},
    namespace: {type: 'string', proto: 3},
    selfLink: {type: 'string', proto: 4},
    uid: {type: 'string', proto: 5},
    resourceVersion: {type: 'string', proto: 6},
    generation: {type: 'integer', format: 'int64', proto: 7},
    creationTimestamp: {type: 'time', proto: 8},
    deletionTimestamp: {type: 'time', proto: 9},
    deletionGracePeriodSeconds: {type: 'integer', format: 'int64', proto: 10},
    labels: {type: 'map', values: {type: 'string'}, proto: 11},
    annotations: {type: 'map', values: {type: 'string'}, proto: 12},
    ownerReferences: {type: 'array', items: ownerReference, proto: 13, patchMergeKey: 'uid', patchStrategy: 'merge', listType: 'map', listMapKeys: ['uid']},
    finalizers: {type: 'array', items: {type: 'string'}, proto: 14, patchStrategy: 'merge', listType: 'set'},
    managedFields: {type: 'array', items: managedFieldsEntry, proto: 17},
  },
}

export const listMeta: ObjectSchema = {
  type: 'object',
  name: 'ListMeta',
  fields: {
    selfLink: {type: 'string', proto: 1},
    resourceVersion: {type: 'string', proto: 2},
    continue: {type: 'string', proto: 3},
    remainingItemCount: {type: 'integer', format: 'int64', proto: 4},
  },
}

export const labelSelectorRequirement: ObjectSchema = {
  type: 'object',
  name: 'LabelSelectorRequirement',
  fields: {
    key: {type: 'string', proto: 1, required: true},
    operator: {type: 'string', proto: 2, required: true},
    values: {type: 'array', items: {type: 'string'}, proto: 3, listType: 'atomic'},
  },
}

export const labelSelector: ObjectSchema = {
  type: 'object',
  name: 'LabelSelector',
  structType: 'atomic',
  fields: {
    matchLabels: {type: 'map', values: {type: 'string'}, proto: 1},
    matchExpressions: {type: 'array', items: labelSelectorRequirement, proto: 2, listType: 'atomic'},
  },
}

/** metav1.Condition: the shared condition shape of document 1 */
export const condition: ObjectSchema = {
  type: 'object',
  name: 'Condition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    observedGeneration: {type: 'integer', format: 'int64', proto: 3},
    lastTransitionTime: {type: 'time', proto: 4, required: true},
    reason: {type: 'string', proto: 5, required: true},
    message: {type: 'string', proto: 6, required: true},
  },
}

/** conditions: []Condition merged by type */
export function conditionList(proto: number, item: ObjectSchema = condition): Field & ArraySchema {
  return {type: 'array', items: item, proto, patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type']}
}

export const deleteOptions: ObjectSchema = {
  type: 'object',
  name: 'DeleteOptions',
  fields: {
    gracePeriodSeconds: {type: 'integer', format: 'int64', proto: 1},
    preconditions: {
      type: 'object',
      name: 'Preconditions',
      proto: 2,
      fields: {uid: {type: 'string', proto: 1}, resourceVersion: {type: 'string', proto: 2}},
    },
    orphanDependents: {type: 'boolean', proto: 3},
    propagationPolicy: {type: 'string', proto: 4},
    dryRun: {type: 'array', items: {type: 'string'}, proto: 5},
    ignoreStoreReadErrorWithClusterBreakingPotential: {type: 'boolean', proto: 6},
  },
}
