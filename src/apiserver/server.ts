// The API server process: the HTTPS listener, then for every request authentication, authorization,
// and the health, resource and non-resource handlers.
import {setMaxListeners} from 'node:events'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {createServer, type Server} from 'node:https'
import type {AddressInfo, Socket} from 'node:net'
import type {TLSSocket} from 'node:tls'
import {allDeclarations, type AnyObject, type KindDeclaration} from '../api/index.js'
import type {UserInfo} from '../api/types.js'
import {defaultGates} from '../machinery/features.js'
import type {Logger} from '../machinery/log.js'
import {errors, qualified} from '../machinery/status.js'
import {Compactor, type Store} from '../storage/index.js'
import {storageErrorStatus} from './storage-errors.js'
import {ANONYMOUS_USER, clientCertServerOptions, isAnonymousAllowedPath, type Authenticator} from './authn.js'
import type {AdmissionChain} from '../admission/chain.js'
import {buildAdmissionChain} from './admission-setup.js'
import {allowAll, buildAuthorizer, DEFAULT_AUTHORIZATION_MODES, requestAuthorizer, type AuthorizationMode, type RequestAuthorizer} from './authorize.js'
import {defaultRBACObjects, PodNodeGraph, RBACAuthorizer, rbacWriteChecks, registrySource, type Authorizer, type RBACSource} from './authz/index.js'
import {virtualKindHandlers} from './virtual.js'
import {impersonate} from './impersonation.js'
import type {AuditLog} from './audit.js'
import type {AgentCredentials} from './node-proxy.js'
import type {RequestInfo} from './requestinfo.js'
import {Catalog} from './catalog.js'
import {createdObjectName, isPrettyPrint, ResourceHandler, statusResponse} from './handlers.js'
import {ResourceRegistry} from './registry.js'
import {parseRequestTarget, resolveRequestInfo} from './requestinfo.js'
import {ServiceAllocator} from './service-ips.js'
import {ServiceRepair} from './service-repair.js'
import {DefaultServiceCIDRController} from './default-servicecidr.js'
import {DEFAULT_NODE_PORT_RANGE, NodePortAllocator, type PortRange} from './service-nodeports.js'
import {NonResourceHandler} from './nonresource.js'
import {EventExpiry} from './event-ttl.js'
import {ApiMetrics} from './metrics.js'
import {HealthEndpoints, pingCheck, withDeadline, type HealthCheck, type HealthChecks} from './health.js'

export interface ApiServerOptions {
  store: Store
  address: string
  port: number
  logger: Logger
  /** watch history kept in storage (default 5 minutes) */
  historyRetentionMs?: number
  /** Kubernetes' --shutdown-delay-duration: how long stop() keeps serving, /readyz failing, before it closes */
  shutdownDelayMs?: number
  /** how often history is compacted (default 1 minute) */
  compactIntervalMs?: number
  /** --event-ttl: how long an Event lives after its last write (default 1 hour; 0 keeps them) */
  eventTtlMs?: number
  /** kinds served (default: all of src/api) */
  declarations?: readonly KindDeclaration[]
  /** feature gates in force */
  gates?: Record<string, boolean>
  /** the clock (tests move it) */
  now?: () => Date
  /** CIDRs of the default ServiceCIDR `orch` (--service-cluster-ip-range, default 10.96.0.0/12) */
  serviceClusterIPRange?: string[]
  /** node ports of NodePort and LoadBalancer Services (--service-node-port-range, default 30000-32767) */
  serviceNodePortRange?: PortRange
  /** how often node ports and cluster IPs are repaired (default 3 minutes; tests shorten it) */
  serviceRepairIntervalMs?: number
  /** how young an allocation no Service holds is still a create in flight (default 60 s; tests shorten it) */
  serviceRepairGraceMs?: number
  /** how often the default ServiceCIDR is looked at (default 10 s; tests shorten it) */
  defaultServiceCIDRIntervalMs?: number
  /** the serving certificate and key, and the client CA; may still be in the making (first start) */
  tls: ServerTLS | Promise<ServerTLS>
  /** who a request is from: client certificates and bearer tokens */
  authenticator: Authenticator
  /** --authorization-mode (default Node,RBAC) */
  authorizationModes?: readonly AuthorizationMode[]
  /** --audit-log-path: where each request is recorded (none: no audit log) */
  auditLog?: AuditLog
  /** the client certificate nodes/{name}/proxy presents to agents */
  agentCredentials?: () => AgentCredentials | undefined
}

/** Namespaces that exist from the first start, as Kubernetes' kube-system/kube-public/kube-node-lease/default. */
export {DEFAULT_SERVICE_CIDR} from './default-servicecidr.js'

export const SYSTEM_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease']

/** The serving certificate (PEM, may be a chain) and key; clientCA verifies client certificates. */
export interface ServerTLS {
  cert: string
  key: string
  clientCA?: string
}

/** Kubernetes' defaults: --etcd-healthcheck-timeout 2 s, --etcd-readiness-timeout 3 s */
const STORE_HEALTH_TIMEOUT_MS = 2_000
/** request line and headers: Go's http.DefaultMaxHeaderBytes, which kube-apiserver serves with */
const MAX_HEADER_BYTES = 1 << 20
const STORE_READINESS_TIMEOUT_MS = 3_000
const MAX_TIMER_MS = 2 ** 31 - 1

export class ApiServer {
  /** the HTTPS listener, made by start() once the TLS material is there */
  private server: Server | undefined
  /** TCP connections, to close on stop */
  private readonly sockets = new Set<Socket>()
  /** their TLS sockets once the handshake is done: an idle one (no request on it) is closed first on stop */
  private readonly secureSockets = new Set<TLSSocket>()
  /** the Node/RBAC chain; also answers SubjectAccessReviews */
  readonly authorizer: Authorizer
  private readonly authorizeRequest: RequestAuthorizer
  private readonly inFlight = new Set<Promise<void>>()
  private readonly health: HealthEndpoints
  private readonly metrics: ApiMetrics
  private readonly compactor: Compactor
  private stopping: Promise<void> | undefined
  /** set by beginShutdown: resolves when --shutdown-delay-duration has passed */
  private shutdownDelay: Promise<void> | undefined
  private readonly shuttingDown = new AbortController()
  private cachesSynced = false
  readonly catalog: Catalog
  readonly registries = new Map<KindDeclaration, ResourceRegistry>()
  /** what every user write goes through: built-in plugins, then policies and webhooks */
  readonly admission: AdmissionChain
  private readonly resources: ResourceHandler
  private readonly nonResources: NonResourceHandler
  private readonly now: () => Date
  /** cluster IPs and node ports of Services */
  private readonly serviceAllocator: ServiceAllocator
  /** their repair loops: at start, then periodically */
  private readonly serviceRepair: ServiceRepair
  private readonly eventExpiry: EventExpiry
  private readonly defaultServiceCIDR: DefaultServiceCIDRController

  constructor(private readonly options: ApiServerOptions) {
    this.compactor = new Compactor(options.store, {
      retentionMs: options.historyRetentionMs ?? 5 * 60_000,
      intervalMs: options.compactIntervalMs ?? 60_000,
      logger: options.logger,
    })
    this.now = options.now ?? (() => new Date())
    this.catalog = new Catalog(options.declarations ?? allDeclarations)
    const gates: Record<string, boolean> = options.gates ?? defaultGates()
    for (const declaration of this.catalog.declarations) {
      if (declaration.virtual) continue
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
    this.admission = buildAdmissionChain({
      registry: (group, resource) => this.registry(group, resource),
      registryForKind: (group, version, kind) =>
        [...this.registries.entries()].find(([d]) => d.group === group && d.version === version && d.kind === kind)?.[1],
      authorizer: (check) => {
        const user = {username: check.user.username, uid: check.user.uid, groups: check.user.groups, extra: check.user.extra}
        const attributes = check.path !== undefined
          ? {user, verb: check.verb, isResourceRequest: false, path: check.path}
          : {user, verb: check.verb, isResourceRequest: true, apiGroup: check.group ?? '', apiVersion: '*', resource: check.resource ?? '', subresource: check.subresource ?? '', namespace: check.namespace ?? '', name: check.name ?? ''}
        return this.authorizer.evaluate(attributes)
      },
      logger: options.logger,
    })
    for (const registry of this.registries.values()) registry.admission = this.admission
    this.serviceAllocator = new ServiceAllocator(
      this.registry('networking.orch.io', 'servicecidrs'),
      this.registry('networking.orch.io', 'ipaddresses'),
      new NodePortAllocator(options.store, options.serviceNodePortRange ?? DEFAULT_NODE_PORT_RANGE, this.now),
      this.now,
    )
    this.registry('', 'services').hooks = this.serviceAllocator.hooks()
    this.serviceRepair = new ServiceRepair({
      services: this.registry('', 'services'),
      ipAddresses: this.registry('networking.orch.io', 'ipaddresses'),
      serviceCIDRs: this.registry('networking.orch.io', 'servicecidrs'),
      events: this.registry('', 'events'),
      nodePorts: this.serviceAllocator.nodePorts,
      logger: options.logger,
      now: this.now,
      intervalMs: options.serviceRepairIntervalMs,
      graceMs: options.serviceRepairGraceMs,
      // SQLite moves every watch cache on with each commit; etcd only with writes to the resource
      cacheWaitMs: options.store.backend === 'sqlite' ? 1_000 : 0,
    })
    this.eventExpiry = new EventExpiry(options.store, this.registry('', 'events').cache, {
      ttlMs: options.eventTtlMs ?? 60 * 60_000,
      now: this.now,
      logger: options.logger,
    })
    this.defaultServiceCIDR = new DefaultServiceCIDRController({
      registry: this.registry('networking.orch.io', 'servicecidrs'),
      cidrs: options.serviceClusterIPRange ?? ['10.96.0.0/12'],
      logger: options.logger,
      now: this.now,
      intervalMs: options.defaultServiceCIDRIntervalMs,
    })
    const modes = options.authorizationModes ?? DEFAULT_AUTHORIZATION_MODES
    // only the Node authorizer reads the graph: without it, no pod event pays for its upkeep
    const nodeGraph = modes.includes('Node') ? PodNodeGraph.attach(this.registry('', 'pods')) : new PodNodeGraph()
    // one source of roles and bindings, and its indexes, for decisions and the escalation checks
    const rbacSource = registrySource(this.registries)
    this.authorizer = buildAuthorizer(modes, rbacSource, nodeGraph)
    this.authorizeRequest = modes.length === 1 && modes[0] === 'AlwaysAllow' ? allowAll : requestAuthorizer(this.authorizer)
    this.installEscalationChecks(rbacSource)
    this.resources = new ResourceHandler({
      catalog: this.catalog,
      registries: this.registries,
      gates,
      now: this.now,
      metaGroup: 'meta.orch.io',
      virtualKinds: virtualKindHandlers({authorizer: this.authorizer, authenticator: options.authenticator}),
      agentCredentials: options.agentCredentials,
      shutdown: this.shuttingDown.signal,
      authorizeRequest: this.authorizeRequest,
    })
    // every open watch listens for the shutdown
    setMaxListeners(0, this.shuttingDown.signal)
    this.nonResources = new NonResourceHandler(this.catalog)
    this.health = new HealthEndpoints(this.healthChecks(), options.logger)
    this.metrics = new ApiMetrics(this.catalog)
  }

  /** Kubernetes' checks, the store's named after its backend ("etcd" there, "sqlite" for the embedded one). */
  private healthChecks(): HealthChecks {
    const store = this.options.store
    const storeCheck = withDeadline(store.backend, STORE_HEALTH_TIMEOUT_MS, () => store.check(STORE_HEALTH_TIMEOUT_MS))
    const storeReadiness = withDeadline(`${store.backend}-readiness`, STORE_READINESS_TIMEOUT_MS, () => store.check(STORE_READINESS_TIMEOUT_MS))
    const informerSync: HealthCheck = {
      name: 'informer-sync',
      check: () => {
        const behind = [...this.registries.values()].filter((r) => !r.cache.synced).map((r) => qualified(r.groupResource))
        if (behind.length > 0) throw new Error(`${behind.length} watch caches not synced: ${behind.join(', ')}`)
      },
    }
    const shutdown: HealthCheck = {
      name: 'shutdown',
      check: () => {
        if (this.shutdownDelay) throw new Error('process is shutting down')
      },
    }
    return {livez: [pingCheck, storeCheck], readyz: [pingCheck, storeCheck, storeReadiness, informerSync, shutdown]}
  }

  /** RBAC's privilege-escalation checks on the four rbac registries (whatever the authorization
   *  modes: with AlwaysAllow the authorizer grants `escalate` and `bind`, as in Kubernetes). */
  private installEscalationChecks(source: RBACSource): void {
    const checks = rbacWriteChecks({
      authorize: (attributes) => this.authorizer.authorize(attributes),
      resolver: new RBACAuthorizer(source, 'registry'),
    })
    const resources = {Role: 'roles', ClusterRole: 'clusterroles', RoleBinding: 'rolebindings', ClusterRoleBinding: 'clusterrolebindings'} as const
    for (const [kind, resource] of Object.entries(resources) as [keyof typeof resources, string][]) {
      const registry = this.registry('rbac.orch.io', resource)
      registry.hooks = {...registry.hooks, authorizeWrite: checks[kind]}
    }
  }

  registry(group: string, resource: string): ResourceRegistry {
    for (const [declaration, registry] of this.registries) {
      if (declaration.group === group && declaration.resource === resource) return registry
    }
    throw new Error(`no registry for ${resource}.${group}`)
  }

  /** The Namespace of a request, from the watch cache as Kubernetes' NamespaceLifecycle reads it (a
   *  namespace not there yet, e.g. created a moment ago, is looked up in storage). */
  private async namespaceOf(name: string): Promise<AnyObject | null> {
    const namespaces = this.registry('', 'namespaces')
    const cached = this.cachesSynced ? namespaces.cache.get(namespaces.key('', name))?.object : undefined
    if (cached) return cached
    return (await namespaces.getIfExists('', name)) ?? null
  }

  /** Creates the system namespaces and the default ServiceCIDR when absent. */
  private async bootstrap(): Promise<void> {
    const createIfAbsent = async (registry: ResourceRegistry, object: AnyObject) => {
      try {
        await registry.create('', object, {context: {now: this.now()}})
      } catch (error) {
        if ((error as {reason?: string}).reason !== 'AlreadyExists') throw error
      }
    }
    // all at once: one group commit instead of one per object
    await Promise.all([
      ...SYSTEM_NAMESPACES.map((name) => createIfAbsent(this.registry('', 'namespaces'), {apiVersion: 'v1', kind: 'Namespace', metadata: {name}})),
      // created when absent, and again whenever it is gone (./default-servicecidr.ts)
      this.defaultServiceCIDR.first(),
      // the default roles and bindings: created when missing, never overwritten (an admin may edit them)
      ...defaultRBACObjects().map((object) =>
        createIfAbsent(this.registry('rbac.orch.io', object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'), object),
      ),
    ])
  }

  /** HTTPS only, HTTP/1.1. Client certificates are requested but not required: a request without one
   *  may still carry a bearer token, or be anonymous (and then refused outside the public paths). */
  private createListener(tls: ServerTLS): Server {
    const server = createServer(
      // request line and headers up to 1 MiB, as Go's http.Server (long selectors, large tokens)
      {cert: tls.cert, key: tls.key, maxHeaderSize: MAX_HEADER_BYTES, ...clientCertServerOptions(tls.clientCA)},
      (request, response) => this.track(this.handle(request, response)),
    )
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    server.on('secureConnection', (socket: TLSSocket) => {
      this.secureSockets.add(socket)
      socket.on('close', () => this.secureSockets.delete(socket))
    })
    server.on('tlsClientError', (error: Error) => this.options.logger.v(2, 'TLS handshake failed', {error}))
    return server
  }

  /** Creates the system objects and fills the caches while the TLS material is made (on a first start
   *  that is certificate generation), then listens. */
  async start(): Promise<AddressInfo> {
    const [tls, prepared] = await Promise.allSettled([
      this.options.tls,
      (async () => {
        await this.bootstrap()
        await Promise.all([...this.registries.values()].map((r) => r.cache.start()))
        // node ports and cluster IPs of the stored Services, repaired before the first request
        await this.serviceRepair.runOnce()
      })(),
    ])
    const stopCaches = () => {
      for (const registry of this.registries.values()) registry.cache.stop()
    }
    if (tls.status === 'rejected' || prepared.status === 'rejected') {
      stopCaches()
      throw tls.status === 'rejected' ? tls.reason : (prepared as PromiseRejectedResult).reason
    }
    const server = this.createListener(tls.value)
    this.server = server
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(this.options.port, this.options.address, () => {
          server.off('error', reject)
          resolve()
        })
      })
    } catch (error) {
      stopCaches()
      throw error
    }
    this.cachesSynced = true
    this.compactor.start()
    this.serviceRepair.start()
    this.eventExpiry.start()
    this.defaultServiceCIDR.start()
    return server.address() as AddressInfo
  }

  /** /readyz fails from now on (the shutdown check) while everything is still served; resolves once
   *  the shutdown delay (Kubernetes' --shutdown-delay-duration, default none) has passed. */
  beginShutdown(): Promise<void> {
    // setTimeout takes at most 2^31-1 ms (~24.8 days); the flag parser refuses longer delays
    const delay = Math.min(this.options.shutdownDelayMs ?? 0, MAX_TIMER_MS)
    this.shutdownDelay ??= delay > 0 ? new Promise((resolve) => setTimeout(resolve, delay)) : Promise.resolve()
    return this.shutdownDelay
  }

  /** Stops accepting (after the shutdown delay when beginShutdown began it), lets in-flight requests
   *  finish, then closes the store. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      // the delay is waited out only when beginShutdown asked for it (a signal), not on a failed start
      this.shutdownDelay ??= Promise.resolve()
      await this.shutdownDelay
      const server = this.server
      const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
      for (const socket of this.secureSockets) {
        // idle keep-alive connections would hold close() open; busy ones finish their request
        if (!(socket as TLSSocket & {_httpMessage?: unknown})._httpMessage) socket.destroy()
      }
      // watches would be in flight until their timeout: they end now
      this.shuttingDown.abort()
      await Promise.allSettled([...this.inFlight, this.serviceRepair.stop(), this.defaultServiceCIDR.stop()])
      for (const registry of this.registries.values()) registry.cache.stop()
      for (const socket of this.sockets) socket.destroy()
      await closed
      await this.compactor.stop()
      await this.eventExpiry.stop()
      await this.options.auditLog?.close()
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
    let user: UserInfo | undefined
    /** who the request goes on as, when it impersonates someone (Impersonate-User) */
    let impersonated: UserInfo | undefined
    let info: RequestInfo | undefined
    let failure: string | undefined
    let finished: ((code: number) => void) | undefined
    const annotations: Record<string, string> = {}
    try {
      const {path, query} = parseRequestTarget(request.url ?? '/')
      info = resolveRequestInfo(request.method ?? 'GET', path, query)
      finished = this.metrics.started(request, this.metrics.labelsOf(request, info, query))
      user = this.authenticate(request, path)
      impersonated = impersonate(request, user, (attributes) => this.authorizer.authorize(attributes))
      const actor = impersonated ?? user
      const denied = this.authorizeRequest(actor, info, annotations)
      if (denied) throw denied
      if (info.isResourceRequest) {
        await this.resources.handle(request, response, info, query, actor, annotations)
      } else if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD')) {
        await this.serveMetrics(response)
      } else if (!this.nonResources.handle(request, response, path, query) && !(await this.health.handle(path, query, response))) {
        throw errors.pathNotFound(path)
      }
    } catch (error) {
      if ((error as {code?: number}).code === undefined || !(error instanceof Error && error.name === 'ApiError')) {
        // a client that went away mid-request (its upload aborted) is no server failure to log loudly
        // (its socket is gone: `request.destroyed` alone is true too once a body has been read in full)
        if (request.socket.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
          this.options.logger.v(2, 'client went away during the request', {method: request.method, path: request.url, error: (error as Error).message})
        } else {
          this.options.logger.error('request failed', {method: request.method, path: request.url, error: (error as Error).stack ?? error})
        }
      }
      // a storage error goes out as Kubernetes answers it (etcd's own text, or 504), never with our
      // endpoints and keys, which the log above keeps
      const answered = storageErrorStatus(error) ?? error
      failure = answered instanceof Error && answered.name === 'ApiError' ? answered.message : 'Internal error occurred'
      if (!response.headersSent) statusResponse(response, answered, request.headers.accept, this.resources.serializers, prettyFor(request))
      else response.destroy()
    } finally {
      ;(finished ?? this.metrics.started(request, this.metrics.labelsOf(request, undefined, undefined)))(response.statusCode)
      this.options.auditLog?.record({
        request,
        info,
        user,
        impersonatedUser: impersonated,
        code: response.statusCode,
        message: failure,
        objectName: createdObjectName(response),
        annotations,
        received: new Date(started),
        finished: new Date(),
      })
      this.options.logger.v(3, 'request', {method: request.method, path: request.url, user: user?.username, ...(impersonated ? {as: impersonated.username} : {}), code: response.statusCode, ms: Date.now() - started})
    }
  }

  private async serveMetrics(response: ServerResponse): Promise<void> {
    // Kubernetes counts the objects in etcd, and reports -1 when the count cannot be obtained: the
    // watch caches hold the count, valid while etcd answers (it goes on serving from them without it)
    const store = this.options.store
    const counted = store.backend !== 'etcd' || (await store.check(STORE_READINESS_TIMEOUT_MS).then(() => true, () => false))
    // one series per resource: a resource served in two versions shares its storage
    const storage = () => {
      const counts = new Map<string, number>()
      for (const registry of this.registries.values()) counts.set(qualified(registry.groupResource), counted ? registry.cache.size : -1)
      return [...counts].map(([resource, count]) => ({resource, count}))
    }
    response.writeHead(200, {'Content-Type': 'text/plain; version=0.0.4; charset=utf-8'})
    response.end(this.metrics.render(storage))
  }

  /** The user a request is from. No credential: system:anonymous on the public paths (/healthz, /livez,
   *  /readyz, /version), 401 elsewhere. A credential that does not authenticate: 401 everywhere. */
  private authenticate(request: IncomingMessage, path: string): UserInfo {
    const result = this.options.authenticator.authenticate(request)
    if (result === null) {
      if (isAnonymousAllowedPath(path)) return ANONYMOUS_USER
      throw errors.unauthorized()
    }
    if ('error' in result) {
      this.options.logger.v(2, 'authentication failed', {method: request.method, path, remote: request.socket.remoteAddress, error: result.error})
      throw errors.unauthorized()
    }
    return result.user
  }
}

/** whether an error answer is pretty-printed, as any answer to this request (isPrettyPrint) */
function prettyFor(request: IncomingMessage): boolean {
  const url = request.url ?? ''
  const queryAt = url.indexOf('?')
  const query = queryAt >= 0 && url.includes('pretty', queryAt) ? new URLSearchParams(url.slice(queryAt + 1)) : undefined
  return isPrettyPrint(query, request.headers['user-agent'])
}
