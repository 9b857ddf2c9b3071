// A typed, promise-based CRI client (runtime.v1) over a UNIX socket, with a deadline on every call
// and errors that say which call failed, with the gRPC status name and the runtime's message.
import * as grpc from '@grpc/grpc-js'
import {criServices, grpcTarget, socketPathOf} from './proto.js'
import type {
  AuthConfig,
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerStatusResponse,
  DeepPartial,
  ExecSyncResponse,
  Image,
  ImageFsInfoResponse,
  ImageSpec,
  ImageStatusResponse,
  LinuxContainerResources,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatusResponse,
  StatusResponse,
  VersionResponse,
} from './types.js'

/** The CRI API version this client speaks (sent in VersionRequest). */
export const CRI_API_VERSION = 'v1'

/** Default deadline of a call: the agent's runtime request timeout (Kubernetes' default, 2 minutes). */
export const DEFAULT_CRI_TIMEOUT_MS = 2 * 60_000
/** Default deadline of PullImage, which may legitimately take long. */
export const DEFAULT_IMAGE_PULL_TIMEOUT_MS = 10 * 60_000
/** Largest message accepted from the runtime (the agent's limit: 16 MiB). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** A failed CRI call: gRPC status code and name, the method and the runtime's message. */
export class CriError extends Error {
  override readonly name = 'CriError'
  constructor(
    /** gRPC status code (grpc.status) */
    readonly code: number,
    /** the status code's name, e.g. `NOT_FOUND`, `UNIMPLEMENTED`, `DEADLINE_EXCEEDED` */
    readonly codeName: string,
    /** the CRI method, e.g. `CheckpointContainer` */
    readonly method: string,
    /** the runtime's own message */
    readonly details: string,
  ) {
    super(`CRI ${method}: ${codeName}: ${details || '(no message)'}`)
  }
}

/** The name of a gRPC status code (`5` -> `NOT_FOUND`). */
export function statusName(code: number): string {
  return (grpc.status as unknown as Record<number, string>)[code] ?? `CODE_${code}`
}

export function isCriError(error: unknown, code?: grpc.status): error is CriError {
  return error instanceof CriError && (code === undefined || error.code === code)
}

export interface CriClientOptions {
  /** runtime service endpoint: `unix:///path/to.sock` (or a bare absolute path) */
  endpoint: string
  /** image service endpoint; the runtime endpoint when absent */
  imageEndpoint?: string
  /** deadline of every call but PullImage and the ones with their own timeout (ms); default 2 min */
  timeoutMs?: number
  /** deadline of PullImage (ms); default 10 min */
  imagePullTimeoutMs?: number
}

type Callback = (error: grpc.ServiceError | null, response?: any) => void

export class CriClient {
  readonly endpoint: string
  readonly imageEndpoint: string
  private readonly runtime: grpc.Client
  private readonly images: grpc.Client
  private readonly timeoutMs: number
  private readonly pullTimeoutMs: number
  private readonly sharedChannel: boolean

  constructor(options: CriClientOptions) {
    const services = criServices()
    const channelOptions: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    }
    this.endpoint = options.endpoint
    this.imageEndpoint = options.imageEndpoint ?? options.endpoint
    this.sharedChannel = this.imageEndpoint === this.endpoint
    const credentials = grpc.credentials.createInsecure()
    this.runtime = new services.RuntimeService(grpcTarget(socketPathOf(this.endpoint)), credentials, channelOptions)
    this.images = this.sharedChannel
        ? new services.ImageService(grpcTarget(socketPathOf(this.endpoint)), credentials, {
            ...channelOptions,
            // share the runtime service's connection
            channelOverride: this.runtime.getChannel(),
          })
        : new services.ImageService(grpcTarget(socketPathOf(this.imageEndpoint)), credentials, channelOptions)
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CRI_TIMEOUT_MS
    this.pullTimeoutMs = options.imagePullTimeoutMs ?? DEFAULT_IMAGE_PULL_TIMEOUT_MS
  }

  /** Closes the connections; calls in flight fail with CANCELLED/UNAVAILABLE. */
  close(): void {
    this.runtime.close()
    if (!this.sharedChannel) this.images.close()
  }

  /** Resolves once the runtime's socket accepts a connection, rejects after timeoutMs. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.runtime.waitForReady(Date.now() + timeoutMs, (error) => {
        if (error) reject(new Error(`CRI runtime at ${this.endpoint} not reachable within ${timeoutMs} ms: ${error.message}`))
        else resolve()
      })
    })
  }

  private call<T>(client: grpc.Client, method: string, request: object, timeoutMs = this.timeoutMs): Promise<T> {
    const fn = (client as any)[method] as ((req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Callback) => void) | undefined
    if (typeof fn !== 'function') return Promise.reject(new Error(`CRI client has no method ${method}`))
    return new Promise<T>((resolve, reject) => {
      fn.call(client, request, new grpc.Metadata(), {deadline: Date.now() + timeoutMs}, (error, response) => {
        if (error) reject(new CriError(error.code ?? grpc.status.UNKNOWN, statusName(error.code ?? grpc.status.UNKNOWN), method, error.details ?? error.message))
        else resolve(response as T)
      })
    })
  }

  // ---- RuntimeService ----

  version(): Promise<VersionResponse> {
    return this.call(this.runtime, 'Version', {version: CRI_API_VERSION})
  }

  status(verbose = false): Promise<StatusResponse> {
    return this.call(this.runtime, 'Status', {verbose})
  }

  /** Creates and starts a pod sandbox; returns its id. */
  async runPodSandbox(config: DeepPartial<PodSandboxConfig>, runtimeHandler = ''): Promise<string> {
    const response = await this.call<{podSandboxId: string}>(this.runtime, 'RunPodSandbox', {config, runtimeHandler})
    return response.podSandboxId
  }

  /** Stops the sandbox and force-kills its containers; succeeds for an already stopped or unknown sandbox. */
  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.call(this.runtime, 'StopPodSandbox', {podSandboxId})
  }

  /** Removes the sandbox and its containers; succeeds for an unknown sandbox. */
  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.call(this.runtime, 'RemovePodSandbox', {podSandboxId})
  }

  podSandboxStatus(podSandboxId: string, verbose = false): Promise<PodSandboxStatusResponse> {
    return this.call(this.runtime, 'PodSandboxStatus', {podSandboxId, verbose})
  }

  async listPodSandbox(filter?: DeepPartial<PodSandboxFilter>): Promise<PodSandbox[]> {
    const response = await this.call<{items: PodSandbox[]}>(this.runtime, 'ListPodSandbox', {filter: filter ?? null})
    return response.items
  }

  /** Creates a container in a sandbox; returns its id. */
  async createContainer(podSandboxId: string, config: DeepPartial<ContainerConfig>, sandboxConfig: DeepPartial<PodSandboxConfig>): Promise<string> {
    // KeyValue.value is `bytes`: protobufjs would read a string as base64, so send the UTF-8 bytes
    const envs = config.envs?.map((env) => ({...env, value: typeof env?.value === 'string' ? Buffer.from(env.value, 'utf8') : env?.value}))
    const request = {podSandboxId, config: envs ? {...config, envs} : config, sandboxConfig}
    const response = await this.call<{containerId: string}>(this.runtime, 'CreateContainer', request)
    return response.containerId
  }

  async startContainer(containerId: string): Promise<void> {
    await this.call(this.runtime, 'StartContainer', {containerId})
  }

  /**
   * Sends the stop signal, then SIGKILL after timeoutSeconds (0: at once). The call's deadline is the
   * client timeout plus timeoutSeconds, as the agent does.
   */
  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.call(this.runtime, 'StopContainer', {containerId, timeout: timeoutSeconds}, this.timeoutMs + timeoutSeconds * 1000)
  }

  /** Removes the container (stopping it first if needed); succeeds for an unknown container. */
  async removeContainer(containerId: string): Promise<void> {
    await this.call(this.runtime, 'RemoveContainer', {containerId})
  }

  async listContainers(filter?: DeepPartial<ContainerFilter>): Promise<Container[]> {
    const response = await this.call<{containers: Container[]}>(this.runtime, 'ListContainers', {filter: filter ?? null})
    return response.containers
  }

  containerStatus(containerId: string, verbose = false): Promise<ContainerStatusResponse> {
    return this.call(this.runtime, 'ContainerStatus', {containerId, verbose})
  }

  async updateContainerResources(containerId: string, linux: DeepPartial<LinuxContainerResources>, annotations: Record<string, string> = {}): Promise<void> {
    await this.call(this.runtime, 'UpdateContainerResources', {containerId, linux, annotations})
  }

  /** Asks the runtime to reopen the container's log file (after the agent rotated it). */
  async reopenContainerLog(containerId: string): Promise<void> {
    await this.call(this.runtime, 'ReopenContainerLog', {containerId})
  }

  /** Runs a command in the container and returns its output; timeoutSeconds 0 means no limit. */
  execSync(containerId: string, cmd: string[], timeoutSeconds = 0): Promise<ExecSyncResponse> {
    const deadline = timeoutSeconds > 0 ? this.timeoutMs + timeoutSeconds * 1000 : this.timeoutMs
    return this.call(this.runtime, 'ExecSync', {containerId, cmd, timeout: timeoutSeconds}, deadline)
  }

  /**
   * Writes a checkpoint archive of the container to `location` (an absolute path of a .tar file).
   * timeoutSeconds 0 means the runtime's default; the call's deadline is the client timeout plus it.
   */
  async checkpointContainer(containerId: string, location: string, timeoutSeconds = 0): Promise<void> {
    await this.call(this.runtime, 'CheckpointContainer', {containerId, location, timeout: timeoutSeconds}, this.timeoutMs + timeoutSeconds * 1000)
  }

  // ---- ImageService ----

  async listImages(filter?: DeepPartial<ImageSpec>): Promise<Image[]> {
    const response = await this.call<{images: Image[]}>(this.images, 'ListImages', {filter: filter ? {image: filter} : null})
    return response.images
  }

  /** The image's status; `image` is null when the image is not present. */
  imageStatus(image: string | DeepPartial<ImageSpec>, verbose = false): Promise<ImageStatusResponse> {
    return this.call(this.images, 'ImageStatus', {image: imageSpec(image), verbose})
  }

  /** Pulls an image; returns the image reference (id or digest) the runtime now holds. */
  async pullImage(image: string | DeepPartial<ImageSpec>, auth?: DeepPartial<AuthConfig>, sandboxConfig?: DeepPartial<PodSandboxConfig>): Promise<string> {
    const request = {image: imageSpec(image), auth: auth ?? null, sandboxConfig: sandboxConfig ?? null}
    const response = await this.call<{imageRef: string}>(this.images, 'PullImage', request, this.pullTimeoutMs)
    return response.imageRef
  }

  async removeImage(image: string | DeepPartial<ImageSpec>): Promise<void> {
    await this.call(this.images, 'RemoveImage', {image: imageSpec(image)})
  }

  imageFsInfo(): Promise<ImageFsInfoResponse> {
    return this.call(this.images, 'ImageFsInfo', {})
  }
}

function imageSpec(image: string | DeepPartial<ImageSpec>): DeepPartial<ImageSpec> {
  return typeof image === 'string' ? {image} : image
}
