// ValidatingWebhookConfiguration (admissionregistration.orch.io/v1, cluster-scoped): document 3.
import {ageColumn} from '../columns.js'
import {labelSelector, objectMeta} from '../meta.js'
import type {KindDeclaration, ObjectSchema} from '../types.js'
import {
  admissionGroup,
  defaultRule,
  defaultServiceReference,
  failurePolicies,
  matchConditionList,
  matchPolicies,
  ruleWithOperations,
  sideEffectClasses,
  webhookClientConfig,
} from './shared.js'

const validatingWebhook: ObjectSchema = {
  type: 'object',
  name: 'ValidatingWebhook',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    clientConfig: {...webhookClientConfig, proto: 2, required: true},
    rules: {type: 'array', items: ruleWithOperations, proto: 3, listType: 'atomic'},
    failurePolicy: {type: 'string', proto: 4, enum: failurePolicies},
    matchPolicy: {type: 'string', proto: 9, enum: matchPolicies},
    namespaceSelector: {...labelSelector, proto: 5},
    objectSelector: {...labelSelector, proto: 10},
    sideEffects: {type: 'string', proto: 6, required: true, enum: sideEffectClasses},
    timeoutSeconds: {type: 'integer', format: 'int32', proto: 7},
    admissionReviewVersions: {type: 'array', items: {type: 'string'}, proto: 8, listType: 'atomic', required: true},
    matchConditions: matchConditionList(11),
  },
}

/** Kubernetes' SetDefaults_ValidatingWebhook (v1; sideEffects has no default), plus the rule and service defaults. */
export function defaultValidatingWebhook(w: any): void {
  if (!w || typeof w !== 'object') return
  w.failurePolicy ??= 'Fail'
  w.matchPolicy ??= 'Equivalent'
  w.namespaceSelector ??= {}
  w.objectSelector ??= {}
  w.timeoutSeconds ??= 10
  defaultServiceReference(w.clientConfig?.service)
  for (const r of Array.isArray(w.rules) ? w.rules : []) defaultRule(r)
}

export const validatingWebhookConfiguration: KindDeclaration = {
  group: admissionGroup,
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  resource: 'validatingwebhookconfigurations',
  singular: 'validatingwebhookconfiguration',
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: {
    type: 'object',
    name: 'ValidatingWebhookConfiguration',
    fields: {
      metadata: {...objectMeta, proto: 1},
      webhooks: {type: 'array', items: validatingWebhook, proto: 2, patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name']},
    },
  },
  generationFields: ['webhooks'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  defaults(object) {
    for (const w of Array.isArray(object.webhooks) ? object.webhooks : []) defaultValidatingWebhook(w)
  },
  columns: [
    {
      name: 'Webhooks',
      type: 'integer',
      description: 'the number of webhooks in this configuration',
      priority: 0,
      cell: (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0),
    },
    ageColumn,
  ],
}
