// The scheduler's events (Scheduled, FailedScheduling) as core/v1 Events, through the client layer's
// recorder (src/client/events.ts): a bounded queue written by a few workers (scheduling a burst of pods
// must not wait for its own paperwork; when 1,000 are waiting new ones are dropped, as client-go's
// broadcaster drops them), and the same event about the same pod again (a pod that still fits nowhere)
// bumps the count of the event already written, as client-go's correlator does.
export {EventRecorder, type EventRecorderOptions, type EventType} from '../../client/events.js'
