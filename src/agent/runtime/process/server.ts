// Serves the process runtime as a CRI gRPC server (runtime.v1 RuntimeService + ImageService) on a
// local UNIX socket, so the agent talks to it exactly as to containerd. The socket is created with
// mode 0600: it is bound inside a fresh 0700 directory, chmodded and only then moved into place,
// so no other user can ever connect to it.
import {chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, unlinkSync} from 'node:fs'
import {connect} from 'node:net'
import {dirname, join} from 'node:path'
import * as grpc from '@grpc/grpc-js'
import {criServices, grpcTarget, socketPathOf} from '../../cri/proto.js'
import {toCriImage} from './images.js'
import {RuntimeError, errnoCode} from './errors.js'
import {ProcessRuntime, type ProcessRuntimeOptions} from './runtime.js'

export interface ProcessRuntimeServerOptions extends ProcessRuntimeOptions {
  /** where to serve: an absolute socket path or `unix:///path`; default `<rootDir>/process-runtime.sock` */
  socket?: string
  /** called with every failed call (method, error), e.g. for the agent's log */
  onError?: (method: string, error: Error) => void
}

export interface ProcessRuntimeServer {
  /** the CRI endpoint to give a CriClient: `unix:///...` */
  endpoint: string
  socketPath: string
  runtime: ProcessRuntime
  /** stops serving, kills every container and removes the socket */
  close(): Promise<void>
}

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024
const MAX_SOCKET_PATH = 107
/** the socket is first bound at `<dir>/.orch-XXXXXX/sock`: this many bytes after `<dir>` */
const PRIVATE_DIR_EXTRA = '/.orch-XXXXXX/sock'.length

type Handler = (request: any) => unknown

function unary(method: string, handler: Handler, onError?: (method: string, error: Error) => void): grpc.handleUnaryCall<any, any> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => handler(call.request))
      .then(
        (response) => callback(null, response as object),
        (error: Error) => {
          onError?.(method, error)
          const code = error instanceof RuntimeError ? error.code : grpc.status.INTERNAL
          callback({code, details: error.message, name: error.name, message: error.message})
        },
      )
  }
}

function runtimeHandlers(runtime: ProcessRuntime): Record<string, Handler> {
  return {
    Version: () => runtime.version(),
    Status: (request) => runtime.status(request.verbose),
    RunPodSandbox: (request) => runtime.runPodSandbox(request.config, request.runtimeHandler),
    StopPodSandbox: (request) => runtime.stopPodSandbox(request.podSandboxId),
    RemovePodSandbox: (request) => runtime.removePodSandbox(request.podSandboxId),
    PodSandboxStatus: (request) => runtime.podSandboxStatus(request.podSandboxId, request.verbose),
    ListPodSandbox: (request) => runtime.listPodSandbox(request.filter),
    CreateContainer: (request) => runtime.createContainer(request.podSandboxId, request.config),
    StartContainer: (request) => runtime.startContainer(request.containerId),
    StopContainer: (request) => runtime.stopContainer(request.containerId, Number(request.timeout)),
    RemoveContainer: (request) => runtime.removeContainer(request.containerId),
    ListContainers: (request) => runtime.listContainers(request.filter),
    ContainerStatus: (request) => runtime.containerStatus(request.containerId, request.verbose),
    UpdateContainerResources: (request) => runtime.updateContainerResources(request.containerId, request.linux),
    ReopenContainerLog: (request) => runtime.reopenContainerLog(request.containerId),
    ExecSync: (request) => runtime.execSync(request.containerId, request.cmd, Number(request.timeout)),
    CheckpointContainer: async (request) => {
      await runtime.checkpointContainer(request.containerId, request.location, Number(request.timeout))
      return {}
    },
  }
}

function imageHandlers(runtime: ProcessRuntime): Record<string, Handler> {
  return {
    ListImages: (request) => ({images: runtime.images.list(request.filter?.image).map(toCriImage)}),
    ImageStatus: (request) => {
      const record = runtime.images.find(request.image?.image ?? '')
      return {image: record ? toCriImage(record) : null, info: {}}
    },
    PullImage: (request) => ({imageRef: runtime.images.pull(request.image).id}),
    RemoveImage: (request) => {
      runtime.images.remove(request.image)
      return {}
    },
    ImageFsInfo: () => runtime.imageFsInfo(),
  }
}

function implementation(service: grpc.ServiceDefinition, handlers: Record<string, Handler>, onError?: (method: string, error: Error) => void): grpc.UntypedServiceImplementation {
  const result: grpc.UntypedServiceImplementation = {}
  for (const [name, definition] of Object.entries(service)) {
    const method = definition.path.slice(definition.path.lastIndexOf('/') + 1)
    const handler = handlers[method]
    result[name] = handler
      ? unary(method, handler, onError)
      : (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback({code: grpc.status.UNIMPLEMENTED, details: `${method} is not implemented by the process runtime`})
  }
  return result
}

/** Refuses to take over a socket another server still answers on; removes a stale one. */
async function clearStaleSocket(path: string): Promise<void> {
  try {
    if (!statSync(path).isSocket()) throw new Error(`${path} exists and is not a socket`)
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return
    throw error
  }
  const alive = await new Promise<boolean>((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
  if (alive) throw new Error(`another server is listening on ${path}`)
  unlinkSync(path)
}

/**
 * Starts the built-in process runtime and serves it on a UNIX socket (mode 0600). The agent runs it
 * in-process when no runtime endpoint is configured (`orch agent --runtime=process`) and connects a
 * CriClient to the returned endpoint.
 */
export async function startProcessRuntime(options: ProcessRuntimeServerOptions): Promise<ProcessRuntimeServer> {
  const socketPath = options.socket ? socketPathOf(options.socket) : join(options.rootDir, 'process-runtime.sock')
  const runtime = await ProcessRuntime.create(options)
  const services = criServices()
  const server = new grpc.Server({'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES})
  server.addService(services.RuntimeService.service, implementation(services.RuntimeService.service, runtimeHandlers(runtime), options.onError))
  server.addService(services.ImageService.service, implementation(services.ImageService.service, imageHandlers(runtime), options.onError))

  mkdirSync(dirname(socketPath), {recursive: true, mode: 0o755})
  await clearStaleSocket(socketPath)
  // sun_path holds 107 bytes: say so instead of failing with an obscure bind error
  const longest = Math.max(Buffer.byteLength(socketPath), Buffer.byteLength(dirname(socketPath)) + PRIVATE_DIR_EXTRA)
  if (longest > MAX_SOCKET_PATH) throw new Error(`socket path ${socketPath} is too long for a UNIX socket (${longest} > ${MAX_SOCKET_PATH} bytes)`)
  const privateDir = mkdtempSync(join(dirname(socketPath), '.orch-'))
  const boundPath = join(privateDir, 'sock')
  try {
    chmodSync(privateDir, 0o700)
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(grpcTarget(boundPath), grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve()))
    })
    chmodSync(boundPath, 0o600)
    renameSync(boundPath, socketPath)
  } catch (error) {
    server.forceShutdown()
    await runtime.close()
    throw error
  } finally {
    rmSync(privateDir, {recursive: true, force: true})
  }

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        // let calls in flight finish briefly; then cut them off
        const timer = setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, 2_000)
        server.tryShutdown(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      await runtime.close()
      rmSync(socketPath, {force: true})
    })()
    return closing
  }
  return {endpoint: `unix://${socketPath}`, socketPath, runtime, close}
}
