// The agent's link to the API for pods: the pods bound to this node (a watch on spec.nodeName) feed
// the pod manager; the pod manager's status changes are written through `pods/{name}/status`
// (the latest one per pod, one write at a time); pods whose deletion finished are deleted with grace
// 0; static pods get mirror pods (annotation orch.io/config.mirror) so the API shows them, and their
// status is written to the mirror. Mirror pods themselves are never run: they only reflect.
import type {AnyObject} from '../api/types.js'
import {Informer, isApiStatusError, objectKey, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, CONFIG_SOURCE_ANNOTATION, mirrorPodOf} from './static-pods.js'

export const PODS = {group: '', version: 'v1', resource: 'pods'}

/** What this module needs of the pod manager. */
export interface PodSink {
  upsertPod(source: string, pod: AnyObject): void
  deletePod(source: string, uid: string): void
  setPods(source: string, pods: AnyObject[]): void
}

export const isMirrorPod = (pod: AnyObject): boolean => pod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined
export const isStaticPod = (pod: AnyObject): boolean => pod.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION] === 'file'

export interface ApiPodsOptions {
  client: () => RestClient
  nodeName: string
  nodeUID: () => string | undefined
  /** mirror pods are owned by the Node: wait until it is registered */
  waitForNode?: boolean
  sink: PodSink
  logger: Logger
}

export class ApiPods {
  private informer: Informer | undefined
  private readonly mirrors = new Map<string, AnyObject>()
  private staticPods: AnyObject[] = []
  private readonly pendingStatus = new Map<string, AnyObject>()
  private readonly writing = new Set<string>()
  private stopped = false
  /** true once the pods bound to this node were listed and handed to the pod manager */
  synced = false
  private mirrorTimer: NodeJS.Timeout | undefined

  constructor(private readonly options: ApiPodsOptions) {}

  start(): void {
    const {sink, nodeName, logger} = this.options
    const informer = new Informer(
      this.options.client(),
      PODS,
      {
        onAdd: (pod) => this.seen(pod),
        onUpdate: (_old, pod) => this.seen(pod),
        onDelete: (pod) => {
          if (isMirrorPod(pod)) {
            this.mirrors.delete(objectKey(pod))
            this.scheduleMirrors()
          } else {
            sink.deletePod('api', pod.metadata!.uid)
          }
        },
      },
      {fieldSelector: `spec.nodeName=${nodeName}`, onError: (error) => logger.warn('pod watch failed; retrying', {error: error.message})},
    )
    this.informer = informer
    informer.start()
    void informer
      .waitForSync()
      .then(() => {
        if (this.stopped) return
        sink.setPods('api', informer.list().filter((pod) => !isMirrorPod(pod)))
        this.synced = true
        this.scheduleMirrors()
      })
      .catch(() => undefined)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.mirrorTimer) clearTimeout(this.mirrorTimer)
    await this.informer?.stop()
  }

  private seen(pod: AnyObject): void {
    if (isMirrorPod(pod)) {
      this.mirrors.set(objectKey(pod), pod)
      if (pod.metadata!.deletionTimestamp) this.scheduleMirrors()
      return
    }
    this.options.sink.upsertPod('api', pod)
  }

  /** The current static pods: their mirror pods are created, replaced or removed to match. */
  setStaticPods(pods: AnyObject[]): void {
    this.staticPods = pods
    this.scheduleMirrors()
  }

  private scheduleMirrors(): void {
    if (this.stopped || this.mirrorTimer) return
    this.mirrorTimer = setTimeout(() => {
      this.mirrorTimer = undefined
      void this.syncMirrors().catch((error) => {
        this.options.logger.warn('could not sync mirror pods; retrying', {error: (error as Error).message})
        if (!this.stopped) this.mirrorTimer = setTimeout(() => ((this.mirrorTimer = undefined), this.scheduleMirrors()), 2000)
      })
    }, 0)
  }

  private async syncMirrors(): Promise<void> {
    if (!this.informer?.hasSynced()) return
    if (this.options.waitForNode && !this.options.nodeUID() && this.staticPods.length > 0) throw new Error('the Node is not registered yet')
    const client = this.options.client()
    const wanted = new Map(this.staticPods.map((pod) => [objectKey(pod), pod]))
    for (const [podKey, mirror] of this.mirrors) {
      const staticPod = wanted.get(podKey)
      const stale = !staticPod || mirror.metadata!.annotations[CONFIG_MIRROR_ANNOTATION] !== staticPod.metadata!.annotations[CONFIG_HASH_ANNOTATION]
      if (stale || mirror.metadata!.deletionTimestamp) {
        await ignoreNotFound(
          client.delete({...PODS, namespace: mirror.metadata!.namespace, name: mirror.metadata!.name}, {gracePeriodSeconds: 0, preconditions: {uid: mirror.metadata!.uid}}),
        )
        this.mirrors.delete(podKey)
      }
    }
    for (const [podKey, staticPod] of wanted) {
      if (this.mirrors.has(podKey)) continue
      try {
        const created = await client.create<AnyObject>({...PODS, namespace: staticPod.metadata!.namespace}, mirrorPodOf(staticPod, {name: this.options.nodeName, uid: this.options.nodeUID()}))
        this.mirrors.set(podKey, created)
        this.options.logger.info('created mirror pod', {pod: podKey})
      } catch (error) {
        if (isApiStatusError(error) && error.status.code === 409) continue
        if (isApiStatusError(error) && error.status.code === 404) {
          this.options.logger.warn('mirror pod not created: its namespace does not exist', {pod: podKey})
          continue
        }
        throw error
      }
    }
    const latest = this.staticPods.map((pod) => this.pendingStatus.get(pod.metadata!.uid)).filter((pod): pod is AnyObject => pod !== undefined)
    for (const pod of latest) this.writeStatus(pod)
  }

  /** The pod manager computed a new status: write it (the latest wins; one write per pod at a time). */
  writeStatus(pod: AnyObject): void {
    const uid = pod.metadata!.uid as string
    this.pendingStatus.set(uid, pod)
    if (this.writing.has(uid) || this.stopped) return
    this.writing.add(uid)
    void this.drain(uid)
  }

  private async drain(uid: string): Promise<void> {
    try {
      for (;;) {
        const pod = this.pendingStatus.get(uid)
        if (!pod || this.stopped) return
        const target = isStaticPod(pod) ? this.mirrors.get(objectKey(pod)) : pod
        if (!target) return // no mirror yet: written once it exists
        try {
          await this.options.client().patch(
            {...PODS, namespace: target.metadata!.namespace, name: target.metadata!.name, subresource: 'status'},
            'merge',
            {metadata: {uid: target.metadata!.uid}, status: pod.status},
          )
          if (this.pendingStatus.get(uid) === pod) this.pendingStatus.delete(uid)
        } catch (error) {
          // the pod is gone or is another pod by now (same name, new uid): nothing to write (the
          // Node authorizer answers 403 for a pod it no longer finds bound to this node: look)
          if ((isApiStatusError(error) && [404, 409, 422].includes(error.status.code)) || (await this.isGone(error, target))) {
            if (this.pendingStatus.get(uid) === pod) this.pendingStatus.delete(uid)
            this.options.logger.v(2, 'pod gone: its status is dropped', {pod: objectKey(pod)})
            continue
          }
          this.options.logger.warn('could not write pod status; retrying', {pod: objectKey(pod), error: (error as Error).message})
          await new Promise((resolve) => setTimeout(resolve, 1000).unref())
        }
      }
    } finally {
      this.writing.delete(uid)
    }
  }

  /** A pod finished terminating: an API pod is deleted for good (grace 0); a static pod's mirror goes. */
  async terminated(pod: AnyObject): Promise<void> {
    if (isStaticPod(pod)) {
      this.scheduleMirrors()
      return
    }
    if (!pod.metadata?.deletionTimestamp) return
    try {
      await ignoreNotFound(
        this.options.client().delete({...PODS, namespace: pod.metadata!.namespace, name: pod.metadata!.name}, {gracePeriodSeconds: 0, preconditions: {uid: pod.metadata!.uid}}),
      )
    } catch (error) {
      // already deleted (a forced deletion, a finished pod deleted at once): nothing left to do
      if (await this.isGone(error, pod)) return
      throw error
    }
  }

  /**
   * After a refused write (403: the Node authorizer finds no pod of that name bound to this node), the
   * kubelet's status manager's check: a GET, and the pod is gone when it is not found or has another
   * uid. The GET is the Node authorizer's too: a pod no longer bound here is refused (403), not 404.
   */
  private async isGone(error: unknown, pod: AnyObject): Promise<boolean> {
    if (!isApiStatusError(error) || error.status.code !== 403) return false
    try {
      const current = await this.options.client().get<AnyObject>({...PODS, namespace: pod.metadata!.namespace, name: pod.metadata!.name})
      return current.metadata?.uid !== pod.metadata!.uid || current.spec?.nodeName !== this.options.nodeName
    } catch (lookup) {
      return isApiStatusError(lookup) && (lookup.status.code === 404 || lookup.status.code === 403)
    }
  }
}

async function ignoreNotFound(promise: Promise<unknown>): Promise<void> {
  try {
    await promise
  } catch (error) {
    if (isApiStatusError(error) && (error.status.code === 404 || error.status.code === 409)) return
    throw error
  }
}
