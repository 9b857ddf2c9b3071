// The agent's ConfigMaps: read from the API with the node's credentials (the Node authorizer lets a
// node get the ConfigMaps its pods reference), for env, envFrom and configMap volumes; and the
// refresh of configMap volumes: every syncFrequency (the kubelet's resync, which re-runs the volume
// SetUp) the files of each running pod's configMap volumes are brought up to date with the ConfigMap,
// atomically, when it changed. A ConfigMap gone or unreadable leaves the files as they were.
import {existsSync} from 'node:fs'
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, objectKey, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {configMapVolumeDirectory, configMapVolumes, setUpConfigMapVolume, type ConfigMapSource} from './pods/configmap-volume.js'

export const CONFIGMAPS = {group: '', version: 'v1', resource: 'configmaps'}

/** ConfigMaps by GET: undefined when the API answers 404, any other failure thrown. */
export class ApiConfigMaps implements ConfigMapSource {
  constructor(private readonly client: () => RestClient) {}

  async get(namespace: string, name: string): Promise<AnyObject | undefined> {
    try {
      return await this.client().get<AnyObject>({...CONFIGMAPS, namespace, name})
    } catch (error) {
      if (isApiStatusError(error) && error.status.code === 404) return undefined
      throw error
    }
  }
}

export interface ConfigMapRefreshOptions {
  rootDir: string
  source: ConfigMapSource
  /** the pods the agent runs (with their status) */
  pods: () => AnyObject[]
  periodMs: number
  logger: Logger
}

/** Brings the configMap volumes that were set up for running pods up to date; returns how many were rewritten. */
export async function refreshConfigMapVolumes(options: Omit<ConfigMapRefreshOptions, 'periodMs'>): Promise<number> {
  let written = 0
  for (const pod of options.pods()) {
    const phase = pod.status?.phase
    if (pod.metadata?.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') continue
    for (const volume of configMapVolumes(pod)) {
      // only volumes a container start already set up: the others are written when a container starts
      if (!existsSync(configMapVolumeDirectory(options.rootDir, pod.metadata!.uid, volume.name))) continue
      try {
        if ((await setUpConfigMapVolume(options.rootDir, pod, volume, options.source)).written) written++
      } catch (error) {
        options.logger.warn('could not refresh a configMap volume; its files stay as they were', {pod: objectKey(pod), volume: volume.name, error: (error as Error).message})
      }
    }
  }
  return written
}

/** Runs refreshConfigMapVolumes every periodMs until stopped. */
export class ConfigMapRefresher {
  private timer: NodeJS.Timeout | undefined
  private stopped = false

  constructor(private readonly options: ConfigMapRefreshOptions) {}

  start(): void {
    this.schedule()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      void refreshConfigMapVolumes(this.options)
        .catch((error) => this.options.logger.warn('configMap volume refresh failed', {error: (error as Error).message}))
        .finally(() => this.schedule())
    }, this.options.periodMs)
    this.timer.unref()
  }
}
