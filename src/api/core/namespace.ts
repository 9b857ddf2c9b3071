// Namespace (v1, cluster-scoped): document 2.
import {ageColumn} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../types.js'

/** The label every namespace carries with its own name (Kubernetes' `kubernetes.io/metadata.name`). */
export const NAMESPACE_NAME_LABEL = 'orch.io/metadata.name'

function labelWithName(object: AnyObject): void {
  const name = object.metadata?.name
  if (typeof name === 'string' && name !== '') {
    object.metadata!.labels = {...(object.metadata!.labels ?? {}), [NAMESPACE_NAME_LABEL]: name}
  }
}

const namespaceCondition: ObjectSchema = {
  type: 'object',
  name: 'NamespaceCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 2, required: true, enum: ['True', 'False', 'Unknown']},
    lastTransitionTime: {type: 'time', proto: 4},
    reason: {type: 'string', proto: 5},
    message: {type: 'string', proto: 6},
  },
}

export const namespace: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  nameRule: 'label',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    {name: 'finalize', verbs: ['update'], writes: 'finalize'},
  ],
  hasStatus: true,
  // Kubernetes' namespaceStrategy: a PUT without metadata.resourceVersion is last-writer-wins
  allowUnconditionalUpdate: true,
  specFinalizers: true,
  prepareForDelete(object) {
    object.status = {...(object.status ?? {}), phase: 'Terminating'}
  },
  // Kubernetes' namespaceStrategy.PrepareForCreate: a new namespace is Active whatever status it was
  // sent with (protobuf clients send status.phase ""), and always carries the orch finalizer
  prepareForCreate(object) {
    labelWithName(object)
    object.status = {phase: 'Active'}
    const finalizers: unknown[] = Array.isArray(object.spec?.finalizers) ? object.spec.finalizers : []
    if (!finalizers.includes('orch')) object.spec = {...object.spec, finalizers: [...finalizers, 'orch']}
  },
  // Kubernetes' namespaceStrategy.PrepareForUpdate: an update of the namespace itself (PUT, PATCH,
  // apply) keeps the stored spec.finalizers, which only /finalize changes (status, as for every kind
  // with a status subresource, changes only through /status). Otherwise a plain update could drop
  // the orch finalizer, and deleting the namespace would then leave its content behind.
  prepareForUpdate(object, old, context) {
    if (context.subresource) return
    const spec = (object.spec ??= {})
    if (old.spec?.finalizers === undefined) delete spec.finalizers
    else spec.finalizers = structuredClone(old.spec.finalizers)
  },
  generationFields: [],
  schema: {
    type: 'object',
    name: 'Namespace',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'NamespaceSpec',
        proto: 2,
        fields: {finalizers: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'}},
      },
      status: {
        type: 'object',
        name: 'NamespaceStatus',
        proto: 3,
        fields: {
          phase: {type: 'string', proto: 1, enum: ['Active', 'Terminating']},
          conditions: {type: 'array', items: namespaceCondition, proto: 2, patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type']},
        },
      },
    },
  },
  defaults(object) {
    // SetDefaults_Namespace: every namespace is labelled with its own name, on create and again on
    // every update, whatever the request said (a generated name is not known yet on create:
    // prepareForCreate labels it, as namespaceStrategy.Canonicalize does)
    labelWithName(object)
    // (spec.finalizers is not defaulted: prepareForCreate adds the orch finalizer, and /finalize may
    // leave none, which Go's omitempty then leaves out)
    object.spec ??= {}
    object.status ??= {}
    object.status.phase ??= 'Active'
  },
  columns: [
    {name: 'Status', type: 'string', description: 'the phase of the namespace', priority: 0, cell: (o) => o.status?.phase ?? ''},
    ageColumn,
  ],
  fieldSelectors: {'status.phase': (o) => o.status?.phase ?? ''},
}
