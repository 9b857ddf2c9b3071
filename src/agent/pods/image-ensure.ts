// Making sure a container's image is there before it is created, as the kubelet's image manager does:
// the pull policy (Always for :latest or no tag), ErrImageNeverPull, pulls through the ImagePuller
// (serialised or not) with their records, and ErrImagePull / ImagePullBackOff with a doubling back-off.
// With `events`, the image manager's events about the container: Pulling, Pulled (or "already present"),
// Failed, BackOff, ErrImageNeverPull, and the `Error: <reason>` the kubelet adds when the image is not there.
import type {AnyObject} from '../../api/types.js'
import {goDuration} from '../../machinery/duration.js'
import type {ContainerEvents} from '../events.js'
import type {CriClient} from '../cri/client.js'
import type {ImagePuller} from './image-puller.js'
import type {PullRecords} from './state-files.js'
import type {Waiting} from './status.js'

export interface Backoff {
  delay: number
  until: number
}

export interface ImageDependencies {
  cri: CriClient
  puller: ImagePuller
  records: PullRecords | undefined
  persist(what: string, write: () => void): void
  now(): Date
  backoffInitialMs: number
  backoffMaxMs: number
}

/** true when the container can be created; otherwise its waiting reason is set, and retryInMs says when
 *  to look again (none: only a change of the pod helps) */
export async function ensureImage(
  deps: ImageDependencies,
  entry: {waiting: Map<string, Waiting>; backoff: Map<string, Backoff>},
  spec: AnyObject,
  events?: ContainerEvents,
): Promise<true | {retryInMs?: number}> {
  const {cri, records} = deps
  const image = String(spec.image ?? '')
  const policy = spec.imagePullPolicy ?? (image.endsWith(':latest') || !/[:@][^/]*$/.test(image) ? 'Always' : 'IfNotPresent')
  let present = false
  try {
    present = (await cri.imageStatus(image)).image !== null
  } catch {
    present = false
  }
  if (present && policy !== 'Always') {
    events?.('Normal', 'Pulled', `Container image "${image}" already present on machine`)
    return true
  }
  if (!present && policy === 'Never') {
    const message = `Container image "${image}" is not present with pull policy of Never`
    entry.waiting.set(spec.name, {reason: 'ErrImageNeverPull', message})
    events?.('Warning', 'ErrImageNeverPull', message)
    events?.('Warning', 'Failed', 'Error: ErrImageNeverPull')
    return {}
  }
  const key = `pull/${spec.name}`
  const backoff = entry.backoff.get(key)
  const now = Date.now()
  if (backoff && now < backoff.until) {
    if (present) return true
    entry.waiting.set(spec.name, {reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"`})
    events?.('Normal', 'BackOff', `Back-off pulling image "${image}"`)
    events?.('Warning', 'Failed', 'Error: ImagePullBackOff')
    return {retryInMs: backoff.until - now}
  }
  events?.('Normal', 'Pulling', `Pulling image "${image}"`)
  let pullMs = 0
  try {
    await deps.puller.pull(async () => {
      const began = Date.now()
      if (records) deps.persist('image pull intent', () => records.recordPullIntent(image))
      let imageRef: string
      try {
        imageRef = await cri.pullImage(image)
      } catch (error) {
        if (records) deps.persist('image pull intent', () => records.recordImagePullFailed(image))
        throw error
      }
      pullMs = Date.now() - began
      if (records) deps.persist('image pulled record', () => records.recordImagePulled(image, imageRef, deps.now()))
    })
    entry.backoff.delete(key)
    if (events) events('Normal', 'Pulled', `Successfully pulled image "${image}" in ${goDuration(pullMs)} (${goDuration(Date.now() - now)} including waiting). Image size: ${await imageSize(cri, image)} bytes.`)
    return true
  } catch (error) {
    events?.('Warning', 'Failed', `Failed to pull image "${image}": ${criMessage(error)}`)
    if (present) return true
    const delay = backoff ? Math.min(backoff.delay * 2, deps.backoffMaxMs) : deps.backoffInitialMs
    entry.backoff.set(key, {delay, until: now + delay})
    entry.waiting.set(spec.name, {reason: 'ErrImagePull', message: `failed to pull image "${image}": ${criMessage(error)}`})
    events?.('Warning', 'Failed', 'Error: ErrImagePull')
    return {retryInMs: delay}
  }
}

/** The pulled image's size as the runtime reports it (0 when it does not say). */
async function imageSize(cri: CriClient, image: string): Promise<number> {
  try {
    return Number((await cri.imageStatus(image)).image?.size ?? 0)
  } catch {
    return 0
  }
}

/** A CRI error's message without the gRPC status prefix (`2 UNKNOWN: `). */
export function criMessage(error: unknown): string {
  return (error as Error).message.replace(/^\d+ [A-Z_]+: /, '')
}
