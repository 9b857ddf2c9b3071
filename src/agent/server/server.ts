// The agent's HTTPS server on address:port: /healthz, and `POST /checkpoint/{namespace}/{pod}/{container}`
// (gate ContainerCheckpoint) behind the agent's own authentication (401) and authorization (403).
// The checkpoint asks the runtime (CRI CheckpointContainer) for
// `{root}/checkpoints/checkpoint-<pod>_<namespace>-<container>-<RFC3339 time>.tar` and answers 200 with
// `{"items": [path]}`; an unknown namespace, pod or container (or a name that could not be one, such
// as `..`) is 404; a runtime error or a runtime without checkpointing is 500 with its message.
// Checkpoints of one container run one after another (a second request waits for the first).
import {mkdirSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {isDNS1123Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {AgentAuth, subresourceOf, verbOf, type AgentAuthOptions} from './auth.js'

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
      return status(response, 404, 'NotFound', '404 page not found')
    } catch (error) {
      if (!response.headersSent) status(response, 500, 'InternalError', `Internal error occurred: ${(error as Error).message}`)
    }
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
