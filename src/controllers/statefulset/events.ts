// A small event recorder: core/v1 Event objects about an involved object, as client-go's recorder
// writes them (name `<object>.<unix nanoseconds in hex>`, source and reporting component, count 1).
// Recording never fails the caller: a write that fails is logged and dropped.
import type {AnyObject} from '../../api/types.js'
import {EventNames, type RestClient} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'
import {formatTime} from '../../machinery/managed-fields.js'

export type EventType = 'Normal' | 'Warning'

export class EventRecorder {
  private readonly names = new EventNames()

  constructor(
    private readonly client: RestClient,
    private readonly component: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async event(object: AnyObject, type: EventType, reason: string, message: string): Promise<void> {
    const ms = this.now()
    const meta = object.metadata ?? {}
    const namespace: string = meta.namespace || 'default'
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {name: this.names.next(meta.name, ms), namespace},
      involvedObject: {
        kind: object.kind,
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        apiVersion: object.apiVersion,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      source: {component: this.component},
      firstTimestamp: formatTime(new Date(ms)),
      lastTimestamp: formatTime(new Date(ms)),
      count: 1,
      type,
      reportingComponent: this.component,
      reportingInstance: '',
    }
    try {
      await this.client.create({group: '', version: 'v1', resource: 'events', namespace}, event)
    } catch (error) {
      this.logger.v(2, 'event not recorded', {reason, object: `${namespace}/${meta.name}`, error: (error as Error).message})
    }
  }
}
