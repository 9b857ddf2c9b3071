// Event (core v1, namespaced): an object with no spec and no status.
import {age} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../types.js'

export const objectReference: ObjectSchema = {
  type: 'object',
  name: 'ObjectReference',
  structType: 'atomic',
  fields: {
    kind: {type: 'string', proto: 1},
    namespace: {type: 'string', proto: 2},
    name: {type: 'string', proto: 3},
    uid: {type: 'string', proto: 4},
    apiVersion: {type: 'string', proto: 5},
    resourceVersion: {type: 'string', proto: 6},
    fieldPath: {type: 'string', proto: 7},
  },
}

/** kubectl's event timestamps: the first seen, the last seen and the count, as printEvent reads them. */
export function eventTimes(event: AnyObject, now: Date): {firstSeen: string; lastSeen: string; count: number} {
  const firstSeen = event.firstTimestamp ? age(event.firstTimestamp, now) : age(event.eventTime, now)
  let lastSeen = event.lastTimestamp ? age(event.lastTimestamp, now) : firstSeen
  let count: number = event.count ?? 0
  if (event.series) {
    lastSeen = age(event.series.lastObservedTime, now)
    count = event.series.count ?? 0
  } else if (count === 0) {
    count = 1 // singleton events of the new API carry no count
  }
  return {firstSeen, lastSeen, count}
}

/** `kind/name` in lower case (the kind alone without a name) */
function target(event: AnyObject): string {
  const kind = String(event.involvedObject?.kind ?? '').toLowerCase()
  return event.involvedObject?.name ? `${kind}/${event.involvedObject.name}` : kind
}

/** Source component (else reportingComponent), then `, host` (else reportingInstance) when there is one. */
function source(event: AnyObject): string {
  const component = event.source?.component || event.reportingComponent || ''
  const instance = event.source?.host || event.reportingInstance || ''
  return instance ? `${component}, ${instance}` : component
}

export const event: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  // core v1 writes skip ValidateObjectMeta (ValidateEventCreate): only the generic path-segment check
  nameRule: 'path-segment',
  ignoredByGarbageCollector: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  generationFields: [],
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'Event',
    fields: {
      metadata: {...objectMeta, proto: 1, required: true},
      involvedObject: {...objectReference, proto: 2, required: true},
      reason: {type: 'string', proto: 3},
      message: {type: 'string', proto: 4},
      source: {
        type: 'object',
        name: 'EventSource',
        proto: 5,
        fields: {component: {type: 'string', proto: 1}, host: {type: 'string', proto: 2}},
      },
      firstTimestamp: {type: 'time', proto: 6},
      lastTimestamp: {type: 'time', proto: 7},
      count: {type: 'integer', format: 'int32', proto: 8},
      type: {type: 'string', proto: 9},
      eventTime: {type: 'time', micro: true, proto: 10},
      series: {
        type: 'object',
        name: 'EventSeries',
        proto: 11,
        fields: {
          count: {type: 'integer', format: 'int32', proto: 1},
          lastObservedTime: {type: 'time', micro: true, proto: 2},
        },
      },
      action: {type: 'string', proto: 12},
      related: {...objectReference, proto: 13},
      reportingComponent: {type: 'string', proto: 14},
      reportingInstance: {type: 'string', proto: 15},
    },
  },
  // kubectl's eventColumnDefinitions end with the name, shown only with -o wide
  nameColumn: {position: 'last', priority: 1},
  columns: [
    {name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0, cell: (o, now) => eventTimes(o, now).lastSeen},
    {name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future', priority: 0, cell: (o) => o.type ?? ''},
    {name: 'Reason', type: 'string', description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", priority: 0, cell: (o) => o.reason ?? ''},
    {name: 'Object', type: 'string', description: 'The object that this event is about.', priority: 0, cell: (o) => target(o)},
    {
      name: 'Subobject',
      type: 'string',
      description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
      priority: 1,
      cell: (o) => o.involvedObject?.fieldPath ?? '',
    },
    {name: 'Source', type: 'string', description: 'The component reporting this event. Should be a short machine understandable string.', priority: 1, cell: (o) => source(o)},
    {name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', priority: 0, cell: (o) => String(o.message ?? '').trim()},
    {name: 'First Seen', type: 'string', description: 'The time at which the event was first recorded.', priority: 1, cell: (o, now) => eventTimes(o, now).firstSeen},
    {name: 'Count', type: 'string', description: 'The number of times this event has occurred.', priority: 1, cell: (o, now) => eventTimes(o, now).count},
  ],
  fieldSelectors: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingComponent: (o) => o.reportingComponent ?? '',
    source: (o) => o.source?.component || o.reportingComponent || '',
    type: (o) => o.type ?? '',
  },
}
