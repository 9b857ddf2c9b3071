// The agent's own state files under {root} (the seed's "agent local files"; an implementation detail):
//  - gate KubeletEnsureSecretPulledImages (beta, on): image pull records, as the kubelet's pull manager
//    keeps them — `image_manager/pulling/sha256-<sha256(image)>` (an ImagePullIntent) while a pull is
//    in progress, `image_manager/pulled/sha256-<sha256(imageRef)>` (an ImagePulledRecord with the
//    credentials it was pulled with; orch pulls without credentials, so every record says
//    `nodePodsAccessible: true`) once it succeeded;
//  - gate InPlacePodVerticalScaling (stable, on): `allocated_pods_state` (the resources allocated to
//    each pod's containers when it was admitted) and `actuated_pods_state` (the resources each container
//    was created with by the runtime), one JSON document each, entries removed with their pod.
// Every file is written whole to `<name>.tmp` (0600) and renamed over the old one.
import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {AnyObject} from '../../api/types.js'
import {AGENT_CONFIG_API_VERSION} from '../config/schema.js'

const PREFIX = 'sha256-'

function writeAtomically(path: string, content: string): void {
  mkdirSync(dirname(path), {recursive: true, mode: 0o700})
  const tmp = `${path}.tmp`
  try {
    writeFileSync(tmp, content, {mode: 0o600})
    renameSync(tmp, path)
  } catch (error) {
    rmSync(tmp, {force: true})
    throw error
  }
}

/** The kubelet's cacheFilename: `sha256-<hex sha256 of the string>`. */
export function recordFileName(key: string): string {
  return PREFIX + createHash('sha256').update(key).digest('hex')
}

/** An image reference without its tag or digest (the credential mapping's key). */
export function imageWithoutTagOrDigest(image: string): string {
  const at = image.indexOf('@')
  const name = at >= 0 ? image.slice(0, at) : image
  const colon = name.lastIndexOf(':')
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name
}

/** The kubelet's image pull manager records (intents while pulling, records of successful pulls). */
export class PullRecords {
  readonly pullingDir: string
  readonly pulledDir: string
  /** pulls in progress per image: the intent is removed when the last one ends */
  private readonly intents = new Map<string, number>()

  constructor(imageManagerDir: string) {
    this.pullingDir = join(imageManagerDir, 'pulling')
    this.pulledDir = join(imageManagerDir, 'pulled')
    mkdirSync(this.pullingDir, {recursive: true, mode: 0o700})
    mkdirSync(this.pulledDir, {recursive: true, mode: 0o700})
  }

  /** Before a pull: an ImagePullIntent for the image. */
  recordPullIntent(image: string): void {
    this.intents.set(image, (this.intents.get(image) ?? 0) + 1)
    writeAtomically(join(this.pullingDir, recordFileName(image)), JSON.stringify({kind: 'ImagePullIntent', apiVersion: AGENT_CONFIG_API_VERSION, image}) + '\n')
  }

  /** After a successful pull: the ImagePulledRecord of its image ref, then the intent goes. */
  recordImagePulled(image: string, imageRef: string, now: Date): void {
    const path = join(this.pulledDir, recordFileName(imageRef))
    let credentialMapping: AnyObject = {}
    try {
      const previous = JSON.parse(readFileSync(path, 'utf8'))
      if (previous?.imageRef === imageRef && previous.credentialMapping) credentialMapping = previous.credentialMapping
    } catch {
      // no record yet
    }
    credentialMapping[imageWithoutTagOrDigest(image)] = {nodePodsAccessible: true}
    const record = {kind: 'ImagePulledRecord', apiVersion: AGENT_CONFIG_API_VERSION, lastUpdatedTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), imageRef, credentialMapping}
    writeAtomically(path, JSON.stringify(record) + '\n')
    this.endIntent(image)
  }

  /** After a failed pull: the intent goes when no other pull of the image is in progress. */
  recordImagePullFailed(image: string): void {
    this.endIntent(image)
  }

  private endIntent(image: string): void {
    const count = (this.intents.get(image) ?? 1) - 1
    if (count > 0) {
      this.intents.set(image, count)
      return
    }
    this.intents.delete(image)
    rmSync(join(this.pullingDir, recordFileName(image)), {force: true})
  }
}

/** Container name → its resource requirements ({requests, limits}), per pod UID. */
export type PodResources = Record<string, {containerResources: Record<string, AnyObject>}>

/** The resources of a container spec as the kubelet records them (ResourceRequirements). */
export function resourcesOf(container: AnyObject): AnyObject {
  const out: AnyObject = {}
  const requests = container.resources?.requests
  const limits = container.resources?.limits
  if (limits && Object.keys(limits).length > 0) out.limits = {...limits}
  if (requests && Object.keys(requests).length > 0) out.requests = {...requests}
  return out
}

/** allocated_pods_state / actuated_pods_state: `{entries: {uid: {containerResources}}, checksum}`. */
export class PodResourceState {
  private entries: PodResources = {}

  constructor(readonly path: string) {
    try {
      const document = JSON.parse(readFileSync(path, 'utf8'))
      if (document?.entries && typeof document.entries === 'object' && document.checksum === PodResourceState.checksum(document.entries)) this.entries = document.entries
    } catch {
      // none yet (or unreadable: start afresh, as the kubelet does with a corrupt checkpoint)
    }
    this.save()
  }

  /** fnv-1a (32 bit) of the entries' JSON: a torn or edited file is not trusted */
  static checksum(entries: PodResources): number {
    let hash = 0x811c9dc5
    for (const byte of Buffer.from(JSON.stringify(entries))) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0
    return hash
  }

  has(uid: string): boolean {
    return uid in this.entries
  }

  get(uid: string): PodResources[string] | undefined {
    return this.entries[uid]
  }

  uids(): string[] {
    return Object.keys(this.entries)
  }

  /** Records every container of the pod (init and app). */
  setPod(uid: string, pod: AnyObject): void {
    const containerResources: Record<string, AnyObject> = {}
    for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as AnyObject[]) containerResources[container.name] = resourcesOf(container)
    this.entries[uid] = {containerResources}
    this.save()
  }

  setContainer(uid: string, container: AnyObject): void {
    const entry = (this.entries[uid] ??= {containerResources: {}})
    const resources = resourcesOf(container)
    if (JSON.stringify(entry.containerResources[container.name]) === JSON.stringify(resources)) return
    entry.containerResources[container.name] = resources
    this.save()
  }

  removePod(uid: string): void {
    if (!(uid in this.entries)) return
    delete this.entries[uid]
    this.save()
  }

  private save(): void {
    writeAtomically(this.path, JSON.stringify({entries: this.entries, checksum: PodResourceState.checksum(this.entries)}) + '\n')
  }
}
