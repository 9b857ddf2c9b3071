// The controllers' event recorder (statefulset-controller, node-controller): core/v1 Events about an
// involved object as kube-controller-manager's client-go recorder writes them — the same event again
// bumps the count and lastTimestamp of the Event already written (the EventCorrelator), with client-go's
// default spam filter — through the client's EventRecorder, one write at a time so that a repeat
// always finds the Event before it. Recording never fails the caller: a write that fails is logged and
// dropped.
import type {AnyObject} from '../../api/types.js'
import {CLIENT_GO_SPAM_FILTER, EventRecorder as CorrelatingRecorder, type RestClient} from '../../client/index.js'
import type {Logger} from '../../machinery/log.js'

export type EventType = 'Normal' | 'Warning'

export class EventRecorder {
  private readonly recorder: CorrelatingRecorder

  constructor(client: RestClient, component: string, logger: Logger, now: () => number = Date.now) {
    // the core/v1 recorder's reportingInstance is its source host, which controllers leave empty
    this.recorder = new CorrelatingRecorder(client, logger, {component, instance: '', now, concurrency: 1, spam: CLIENT_GO_SPAM_FILTER})
  }

  /** Records the event; resolves once it (and every event queued before it) is written or dropped. */
  async event(object: AnyObject, type: EventType, reason: string, message: string): Promise<void> {
    this.recorder.record(object, type, reason, '', message)
    await this.recorder.drain()
  }
}
