// The agent's HTTPS server on address:port: /healthz, and `POST /checkpoint/{namespace}/{pod}/{container}`
// (gate ContainerCheckpoint) behind the agent's own authentication (401) and authorization (403).
// The checkpoint asks the runtime (CRI CheckpointContainer) for
// `{root}/checkpoints/checkpoint-<pod>_<namespace>-<container>-<RFC3339 time>.tar` and answers 200 with
// `{"items": [path]}`; an unknown namespace, pod or container (or a name that could not be one, such
// as `..`) is 404; a runtime error or a runtime without checkpointing is 500 with its message.
// Checkpoints of one container run one after another (a second request waits for the first).
// `GET /containerLogs/{namespace}/{pod}/{container}` (the kubelet's; authorized as nodes/proxy) streams
// the container's CRI log file as text (see container-logs.ts), with the kubelet's answers: 400
// `{"message": "Unable to decode query."}` and 422 `{"message": "Invalid request."}` for bad options, 404
// for a pod or container it does not run, 400 with the reason the container has no log (waiting to
// start, no previous instance).
import {mkdirSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import type {AnyObject} from '../../api/types.js'
import {isDNS1123Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {AgentAuth, subresourceOf, verbOf, type AgentAuthOptions} from './auth.js'
import {decodePodLogOptions, validatePodLogOptions, type PodLogOptions} from '../../machinery/pod-log-options.js'
import {streamContainerLog} from './container-logs.js'

export interface CheckpointTarget {
  containerId: string
}

export interface AgentServerOptions extends Omit<AgentAuthOptions, 'now'> {
  address: string
  port: number
  rootDir: string
  /** serving certificate and key (PEM) */
  cert: string
  key: string
  /** CA bundle that verifies client certificates */
  clientCA?: string
  /** gate ContainerCheckpoint (beta, on by default) */
  checkpointEnabled: boolean
  /** the running container of a pod this agent manages, or undefined */
  findContainer(namespace: string, pod: string, container: string): CheckpointTarget | undefined
  /** CRI CheckpointContainer; rejects with the runtime's error */
  checkpoint(containerId: string, location: string, timeoutSeconds: number): Promise<void>
  /** the clock naming archives */
  clock?: () => Date
  /** the pod namespace/name this agent runs, with its current status (for containerLogs) */
  findPod?(namespace: string, name: string): AnyObject | undefined
  /** CRI ContainerStatus of a container: its log file and whether it runs; rejects with the runtime's error */
  containerLog?(containerId: string): Promise<{logPath: string; running: boolean}>
}

function plainError(response: ServerResponse, code: number, message: string): void {
  response.writeHead(code, {'Content-Type': 'text/plain; charset=utf-8'})
  response.end(message)
}

/** PodLogOptions from the query as the kubelet decodes and validates them; which step refused them when one did. */
export function containerLogOptions(query: URLSearchParams): PodLogOptions | 'decode' | 'invalid' {
  let options: PodLogOptions
  try {
    options = decodePodLogOptions(query)
  } catch {
    return 'decode'
  }
  return validatePodLogOptions(options).length > 0 ? 'invalid' : options
}

/** The kubelet's validateContainerLogStatus: the id of the container instance whose log is read, or why there is none. */
export function logContainerId(pod: AnyObject, container: string, previous: boolean): {id: string} | {error: string} {
  const name = pod.metadata?.name
  const statuses: AnyObject[] = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])]
  const status = statuses.find((s) => s.name === container)
  if (!status) return {error: `container ${JSON.stringify(container)} in pod ${JSON.stringify(name)} is not available`}
  const last = status.lastState?.terminated
  const {waiting, running, terminated} = status.state ?? {}
  const quoted = `${JSON.stringify(container)} in pod ${JSON.stringify(name)}`
  if (previous) {
    if (!last?.containerID) return {error: `previous terminated container ${quoted} not found`}
    return {id: last.containerID}
  }
  if (running) return {id: status.containerID}
  if (terminated) {
    if (terminated.containerID) return {id: terminated.containerID}
    if (last?.containerID) return {id: last.containerID}
    return {error: `container ${quoted} is terminated`}
  }
  if (last) return last.containerID ? {id: last.containerID} : {error: `container ${quoted} is terminated`}
  if (waiting) {
    if (waiting.reason === 'ErrImagePull') return {error: `container ${quoted} is waiting to start: image can't be pulled`}
    if (waiting.reason === 'ImagePullBackOff') return {error: `container ${quoted} is waiting to start: trying and failing to pull image`}
    return {error: `container ${quoted} is waiting to start: ${waiting.reason ?? ''}`}
  }
  return {error: `container ${quoted} is waiting to start - no logs yet`}
}

function status(response: ServerResponse, code: number, reason: string, message: string): void {
  const body = JSON.stringify({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code})
  response.writeHead(code, {'Content-Type': 'application/json'})
  response.end(body)
}

/** `2026-11-22T10:00:00Z` → `2026-11-22T10:00:00Z` without characters a file name should not carry. */
function stamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

export class AgentServer {
  private server: Server | undefined
  private readonly auth: AgentAuth
  private readonly running = new Map<string, Promise<void>>()

  constructor(private readonly options: AgentServerOptions) {
    this.auth = new AgentAuth(options)
  }

  async start(): Promise<AddressInfo> {
    mkdirSync(join(this.options.rootDir, 'checkpoints'), {recursive: true, mode: 0o700})
    const server = createServer(
      {cert: this.options.cert, key: this.options.key, ca: this.options.clientCA, requestCert: true, rejectUnauthorized: false},
      (request, response) => void this.handle(request, response),
    )
    this.server = server
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.options.port, this.options.address, () => resolve())
    })
    return server.address() as AddressInfo
  }

  /** Serves with a new certificate from now on (an issued agent-serving certificate, a renewal). */
  updateCertificate(cert: string, key: string): void {
    this.server?.setSecureContext({cert, key, ca: this.options.clientCA})
  }

  async stop(): Promise<void> {
    const server = this.server
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const url = new URL(request.url ?? '/', 'https://agent')
      if (url.pathname === '/healthz') {
        response.writeHead(200, {'Content-Type': 'text/plain'})
        response.end('ok')
        return
      }
      const user = await this.auth.authenticate(request)
      if (!user) return status(response, 401, 'Unauthorized', 'Unauthorized')
      const verb = verbOf(request.method)
      const subresource = subresourceOf(url.pathname)
      const decision = await this.auth.authorize(user, verb, subresource)
      if (!decision.allowed) {
        const why = decision.reason ? `: ${decision.reason}` : ''
        return status(response, 403, 'Forbidden', `Forbidden (user=${user.username}, verb=${verb}, resource=nodes, subresource=${subresource})${why}`)
      }
      const parts = url.pathname.split('/').slice(1)
      if (parts[0] === 'checkpoint' && this.options.checkpointEnabled) {
        if (request.method !== 'POST') return status(response, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource')
        return await this.checkpoint(parts.slice(1), url.searchParams, response)
      }
      if (parts[0] === 'containerLogs' && this.options.findPod && this.options.containerLog) {
        if (request.method !== 'GET') return status(response, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource')
        return await this.containerLogs(parts.slice(1), url.searchParams, request, response)
      }
      return status(response, 404, 'NotFound', '404 page not found')
    } catch (error) {
      if (!response.headersSent) status(response, 500, 'InternalError', `Internal error occurred: ${(error as Error).message}`)
    }
  }

  private async containerLogs(parts: string[], query: URLSearchParams, request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (parts.length !== 3) return status(response, 404, 'NotFound', '404 page not found')
    const [namespace, podName, container] = parts.map((p) => decodeURIComponent(p))
    const options = containerLogOptions(query)
    if (options === 'decode') return plainError(response, 400, '{"message": "Unable to decode query."}')
    if (options === 'invalid') return plainError(response, 422, '{"message": "Invalid request."}')
    const pod = this.options.findPod!(namespace, podName)
    if (!pod) return plainError(response, 404, `pod ${JSON.stringify(podName)} does not exist\n`)
    const declared = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].some((c: AnyObject) => c.name === container)
    if (!declared) return plainError(response, 404, `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(podName)}\n`)
    const chosen = logContainerId(pod, container, options.previous === true)
    if ('error' in chosen) return plainError(response, 400, chosen.error)
    const id = String(chosen.id).replace(/^[^:]*:\/\//, '')
    let logPath: string
    try {
      logPath = (await this.options.containerLog!(id)).logPath
    } catch (error) {
      return plainError(response, 400, `failed to get container status ${JSON.stringify(chosen.id)}: ${(error as Error).message}`)
    }
    const abort = new AbortController()
    response.on('close', () => abort.abort())
    request.on('close', () => {
      if (!response.writableFinished) abort.abort()
    })
    try {
      await streamContainerLog(
        logPath,
        options,
        (chunk) => response.write(chunk),
        {signal: abort.signal, running: async () => (await this.options.containerLog!(id).catch(() => ({running: false}))).running},
        () => response.writeHead(200, {'Content-Type': 'text/plain; charset=utf-8', 'Transfer-Encoding': 'chunked'}),
      )
    } catch (error) {
      if (!response.headersSent) return plainError(response, 400, (error as Error).message)
    }
    response.end()
  }

  private async checkpoint(parts: string[], query: URLSearchParams, response: ServerResponse): Promise<void> {
    if (parts.length !== 3) return status(response, 404, 'NotFound', '404 page not found')
    const [namespace, pod, container] = parts.map((p) => decodeURIComponent(p))
    // names that could not exist (`..`, slashes, over-long) are simply not found: nothing is written
    if (isDNS1123Label(namespace).length > 0 || isDNS1123Subdomain(pod).length > 0 || isDNS1123Label(container).length > 0) {
      return status(response, 404, 'NotFound', `pod "${pod}" in namespace "${namespace}" not found`)
    }
    const timeoutText = query.get('timeout')
    const timeout = timeoutText === null || timeoutText === '' ? 0 : Number(timeoutText)
    if (!Number.isInteger(timeout) || timeout < 0) return status(response, 400, 'BadRequest', `invalid timeout "${timeoutText}"`)
    const target = this.options.findContainer(namespace, pod, container)
    if (!target) return status(response, 404, 'NotFound', `container "${container}" of pod "${pod}" in namespace "${namespace}" not found`)
    const location = join(this.options.rootDir, 'checkpoints', `checkpoint-${pod}_${namespace}-${container}-${stamp(this.options.clock?.() ?? new Date())}.tar`)
    // one checkpoint of a container at a time: a second request waits for the first
    const before = this.running.get(target.containerId) ?? Promise.resolve()
    const mine = before.catch(() => undefined).then(() => this.options.checkpoint(target.containerId, location, timeout))
    this.running.set(target.containerId, mine)
    try {
      await mine
    } catch (error) {
      return status(response, 500, 'InternalError', `checkpointing of ${namespace}/${pod}/${container} failed (${(error as Error).message})`)
    } finally {
      if (this.running.get(target.containerId) === mine) this.running.delete(target.containerId)
    }
    response.writeHead(200, {'Content-Type': 'application/json'})
    response.end(JSON.stringify({items: [location]}))
  }
}
