// The API server process: HTTP listener, health endpoints, and (later) the API handlers.
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {allDeclarations, type AnyObject, type KindDeclaration} from '../api/index.js'
import {defaultGates} from '../machinery/features.js'
import type {Logger} from '../machinery/log.js'
import {errors} from '../machinery/status.js'
import {Compactor, type Store} from '../storage/index.js'
import {Catalog} from './catalog.js'
import {ResourceHandler, statusResponse} from './handlers.js'
import {ResourceRegistry, timestamp} from './registry.js'
import {resolveRequestInfo} from './requestinfo.js'
import {ServiceIPAllocator} from './service-ips.js'
import {NonResourceHandler} from './nonresource.js'

export interface ApiServerOptions {
  store: Store
  address: string
  port: number
  logger: Logger
  /** watch history kept in storage (default 5 minutes) */
  historyRetentionMs?: number
  /** how often history is compacted (default 1 minute) */
  compactIntervalMs?: number
  /** kinds served (default: all of src/api) */
  declarations?: readonly KindDeclaration[]
  /** feature gates in force */
  gates?: Record<string, boolean>
  /** the clock (tests move it) */
  now?: () => Date
  /** CIDRs of the default ServiceCIDR `orch` (--service-cluster-ip-range, default 10.96.0.0/12) */
  serviceClusterIPRange?: string[]
}

/** Namespaces that exist from the first start, as Kubernetes' kube-system/kube-public/kube-node-lease/default. */
/** the ServiceCIDR made from --service-cluster-ip-range */
export const DEFAULT_SERVICE_CIDR = 'orch'

export const SYSTEM_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease']

export interface Readiness {
  name: string
  ready(): boolean
}

export class ApiServer {
  private readonly server: Server
  private readonly sockets = new Set<Socket>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly readiness: Readiness[] = []
  private readonly compactor: Compactor
  private stopping: Promise<void> | undefined
  private listening = false
  private cachesSynced = false
  readonly catalog: Catalog
  readonly registries = new Map<KindDeclaration, ResourceRegistry>()
  private readonly resources: ResourceHandler
  private readonly nonResources: NonResourceHandler
  private readonly now: () => Date

  constructor(private readonly options: ApiServerOptions) {
    this.server = createServer((request, response) => this.track(this.handle(request, response)))
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    this.compactor = new Compactor(options.store, {
      retentionMs: options.historyRetentionMs ?? 5 * 60_000,
      intervalMs: options.compactIntervalMs ?? 60_000,
      logger: options.logger,
    })
    this.now = options.now ?? (() => new Date())
    this.catalog = new Catalog(options.declarations ?? allDeclarations)
    const gates: Record<string, boolean> = options.gates ?? defaultGates()
    for (const declaration of this.catalog.declarations) {
      this.registries.set(
        declaration,
        new ResourceRegistry(declaration, {
          store: options.store,
          now: this.now,
          namespaceOf: (name) => this.namespaceOf(name),
          watchHistoryMs: options.historyRetentionMs,
        }),
      )
    }
    this.registry('', 'services').hooks = new ServiceIPAllocator(
      this.registry('networking.orch.io', 'servicecidrs'),
      this.registry('networking.orch.io', 'ipaddresses'),
      this.now,
    ).hooks()
    this.resources = new ResourceHandler({catalog: this.catalog, registries: this.registries, gates, now: this.now, metaGroup: 'meta.orch.io'})
    this.nonResources = new NonResourceHandler(this.catalog)
    this.readiness.push({name: 'storage', ready: () => this.listening})
    this.readiness.push({name: 'caches', ready: () => this.cachesSynced})
  }

  registry(group: string, resource: string): ResourceRegistry {
    for (const [declaration, registry] of this.registries) {
      if (declaration.group === group && declaration.resource === resource) return registry
    }
    throw new Error(`no registry for ${resource}.${group}`)
  }

  private async namespaceOf(name: string): Promise<AnyObject | null> {
    try {
      return await this.registry('', 'namespaces').get('', name)
    } catch (error) {
      if ((error as {code?: number}).code === 404) return null
      throw error
    }
  }

  /** Creates the system namespaces and the default ServiceCIDR on first start. */
  private async bootstrap(): Promise<void> {
    const createIfAbsent = async (registry: ResourceRegistry, object: AnyObject) => {
      try {
        await registry.create('', object, {context: {now: this.now()}})
      } catch (error) {
        if ((error as {reason?: string}).reason !== 'AlreadyExists') throw error
      }
    }
    for (const name of SYSTEM_NAMESPACES) {
      await createIfAbsent(this.registry('', 'namespaces'), {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})
    }
    await createIfAbsent(this.registry('networking.orch.io', 'servicecidrs'), {
      apiVersion: 'networking.orch.io/v1',
      kind: 'ServiceCIDR',
      metadata: {name: DEFAULT_SERVICE_CIDR},
      spec: {cidrs: this.options.serviceClusterIPRange ?? ['10.96.0.0/12']},
    })
  }

  /** Something /readyz waits for (e.g. a watch cache that is not synced yet). */
  addReadinessCheck(check: Readiness): void {
    this.readiness.push(check)
  }

  async start(): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.options.port, this.options.address, () => {
        this.server.off('error', reject)
        resolve()
      })
    })
    await this.bootstrap()
    await Promise.all([...this.registries.values()].map((r) => r.cache.start()))
    this.cachesSynced = true
    this.listening = true
    this.compactor.start()
    return this.server.address() as AddressInfo
  }

  /** Stops accepting, lets in-flight requests finish, then closes the store. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.listening = false
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
      for (const socket of this.sockets) {
        // idle keep-alive connections would hold close() open; busy ones finish their request
        if (!(socket as Socket & {_httpMessage?: unknown})._httpMessage) socket.destroy()
      }
      await Promise.allSettled([...this.inFlight])
      for (const registry of this.registries.values()) registry.cache.stop()
      for (const socket of this.sockets) socket.destroy()
      await closed
      await this.compactor.stop()
      await this.options.store.close()
    })()
    return this.stopping
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work)
    void work.finally(() => this.inFlight.delete(work))
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = Date.now()
    try {
      const url = new URL(request.url ?? '/', 'http://orch')
      const path = url.pathname
      if (path === '/healthz' || path === '/livez') return this.health(response, [])
      if (path === '/readyz') return this.health(response, this.readiness)
      const info = resolveRequestInfo(request.method ?? 'GET', path, url.searchParams)
      if (info.isResourceRequest) {
        await this.resources.handle(request, response, info, url.searchParams)
      } else if (!this.nonResources.handle(request, response, path, url.searchParams)) {
        throw errors.pathNotFound(path)
      }
    } catch (error) {
      if ((error as {code?: number}).code === undefined || !(error instanceof Error && error.name === 'ApiError')) {
        this.options.logger.error('request failed', {method: request.method, path: request.url, error: (error as Error).stack ?? error})
      }
      if (!response.headersSent) statusResponse(response, error, request.headers.accept, this.resources.serializers)
      else response.destroy()
    } finally {
      this.options.logger.v(3, 'request', {method: request.method, path: request.url, code: response.statusCode, ms: Date.now() - started})
    }
  }

  private health(response: ServerResponse, checks: Readiness[]): void {
    const failing = checks.filter((c) => !c.ready())
    const body = failing.length === 0 ? 'ok' : failing.map((c) => `[-]${c.name} failed: not ready`).join('\n') + '\nreadyz check failed'
    response.writeHead(failing.length === 0 ? 200 : 503, {'Content-Type': 'text/plain; charset=utf-8'})
    response.end(body)
  }
}

export {timestamp}
