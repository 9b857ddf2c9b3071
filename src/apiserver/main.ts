// `orch server`: open the store, set up the PKI (first start: CA, serving and admin certificates), serve
// the API over HTTPS, write the admin kubeconfigs, stop cleanly on SIGINT/SIGTERM.
import {randomBytes, randomUUID} from 'node:crypto'
import {homedir, hostname} from 'node:os'
import {join} from 'node:path'
import type {ClientConfig} from '../client/index.js'
import {defaultKubeconfigPath} from '../client/kubeconfig.js'
import type {FeatureGates} from '../machinery/features.js'
import {createLogger, type Logger} from '../machinery/log.js'
import {verifyCertificate} from '../machinery/pki.js'
import {openStore, type StorageBackend} from '../storage/index.js'
import {
  Authenticator,
  loadBootstrapTokenFile,
  loadTokenFile,
  parseBootstrapTokens,
  type BootstrapToken,
  type StaticToken,
} from './authn.js'
import {startControllerThread} from './controller-thread.js'
import {type ControllerName, CONTROLLER_NAMES} from './controllers.js'
import {ensureServerPKI, writeAdminKubeconfigs, type ServerPKI} from './pki-bootstrap.js'
import {AuditLog} from './audit.js'
import {MASTERS_GROUP} from './authz/defaults.js'
import type {AuthorizationMode} from './authorize.js'
import {ApiServer} from './server.js'
import type {PortRange} from './service-nodeports.js'

export interface ServerConfig {
  dataDir: string
  address: string
  port: number
  storage: StorageBackend
  etcdServers: string[]
  historyRetentionMs: number
  /** --event-ttl (0 keeps events) */
  eventTtlMs?: number
  /** --shutdown-delay-duration: keep serving this long after SIGTERM, /readyz failing */
  shutdownDelayMs?: number
  verbosity: number
  gates: FeatureGates
  /** controllers to run in-process (default all) */
  controllers?: ControllerName[]
  /** --node-monitor-grace-period */
  nodeMonitorGracePeriodMs?: number
  /** --leader-elect and its durations (undefined: --leader-elect=false) */
  leaderElection?: {leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number}
  /** --node-startup-grace-period */
  nodeStartupGracePeriodMs?: number
  /** --service-cluster-ip-range, split on commas */
  serviceClusterIPRange?: string[]
  /** --service-node-port-range (default 30000-32767) */
  serviceNodePortRange?: PortRange
  /** hidden, for tests: how often node ports and cluster IPs are repaired (default 3 minutes) */
  serviceRepairIntervalMs?: number
  /** hidden, for tests: the age before an allocation no Service holds may be freed (default 60 s) */
  serviceRepairGraceMs?: number
  /** hidden, for tests: how often the default ServiceCIDR is looked at (default 10 s) */
  defaultServiceCIDRIntervalMs?: number
  /** hidden, for tests: how long a deleted ServiceCIDR no IP needs keeps its finalizer (default 10 s) */
  serviceCIDRDeletionGraceMs?: number
  /** hidden, for tests: how long a StorageVersionMigration of a resource not served is retried (default 1 minute) */
  storageMigrationDiscoveryWaitMs?: number
  /** --tls-san: extra IPs and DNS names of the generated serving certificate */
  tlsSANs?: string[]
  /** --tls-cert-file and --tls-private-key-file: serve with this pair instead of the generated one */
  tlsCertFile?: string
  tlsKeyFile?: string
  /** --client-ca-file: verify client certificates against this bundle instead of <data-dir>/pki/client-ca.crt */
  clientCAFile?: string
  /** --token-auth-file: static bearer tokens (Kubernetes' CSV format) */
  tokenAuthFile?: string
  /** --bootstrap-token values (`<id>.<secret>`) */
  bootstrapTokens?: string[]
  /** --bootstrap-token-file: one bootstrap token a line */
  bootstrapTokenFile?: string
  /** --authorization-mode (default Node,RBAC) */
  authorizationModes?: readonly AuthorizationMode[]
  /** --audit-log-path: JSON lines, one per request ('-' = stdout) */
  auditLogPath?: string
  /** --cluster-signing-duration: the longest certificate the csrsigning controller issues (default 1 year) */
  clusterSigningDurationMs?: number
  /** the home directory whose .orch/config is written when absent (default: os.homedir(), i.e. $HOME) */
  home?: string
}

export function defaultDataDir(): string {
  return join(homedir(), '.orch', 'data')
}

export interface RunningServer {
  server: ApiServer
  url: string
  logger: Logger
  stop(): Promise<void>
}

/** The user of the loopback token. */
const LOOPBACK_USER = 'system:apiserver'

/** Reads the credential flags: static tokens and bootstrap tokens. Errors name the flag. */
function loadTokens(config: ServerConfig): {tokens: StaticToken[]; bootstrapTokens: BootstrapToken[]} {
  const tokens = config.tokenAuthFile !== undefined ? loadTokenFile(config.tokenAuthFile) : []
  const bootstrapTokens = parseBootstrapTokens(config.bootstrapTokens ?? [])
  if (config.bootstrapTokenFile !== undefined) bootstrapTokens.push(...loadBootstrapTokenFile(config.bootstrapTokenFile))
  return {tokens, bootstrapTokens}
}

/** The URL clients use: the listen address, or loopback when it is a wildcard (0.0.0.0, ::). */
function clientURL(address: {address: string; family: string; port: number}): string {
  const ip = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address
  return `https://${ip.includes(':') ? `[${ip}]` : ip}:${address.port}`
}

/** How the in-process controllers reach the server: the admin certificate (else the loopback token),
 *  trusting the cluster CA. */
function controllerCredentials(url: string, pki: ServerPKI, loopbackToken: string | undefined): Omit<ClientConfig, 'namespace'> {
  const config: Omit<ClientConfig, 'namespace'> = {server: url}
  // With --tls-cert-file the server's CA is not ours to know; the connection is to this process over
  // loopback, so the serving certificate is not verified then.
  if (pki.servingCA !== undefined) config.ca = Buffer.from(pki.servingCA)
  else config.insecureSkipTLSVerify = true
  if (loopbackToken === undefined) {
    config.cert = Buffer.from(pki.admin.cert)
    config.key = Buffer.from(pki.admin.key)
  } else {
    config.token = loopbackToken
  }
  return config
}

export async function startServer(config: ServerConfig, logger = createLogger({verbosity: config.verbosity})): Promise<RunningServer> {
  const started = Date.now()
  const {tokens, bootstrapTokens} = loadTokens(config)
  const store = await openStore({backend: config.storage, dataDir: config.dataDir, etcdServers: config.etcdServers, logger})
  logger.info('store opened', {backend: store.backend, ...(store.backend === 'sqlite' ? {dataDir: config.dataDir} : {etcd: config.etcdServers.join(',')})})
  // The PKI is made (first start) or loaded while the server fills its caches; it listens once both are done.
  const pkiReady = ensureServerPKI({
    dataDir: config.dataDir,
    serverAddresses: [config.address],
    tlsSANs: config.tlsSANs,
    tlsCertFile: config.tlsCertFile,
    tlsKeyFile: config.tlsKeyFile,
    clientCAFile: config.clientCAFile,
  })
  // Kubernetes' loopback token: random, known to this process only; the controllers use it when the
  // admin certificate cannot authenticate (a --client-ca-file that did not sign it).
  const loopbackToken = randomBytes(32).toString('base64url')
  tokens.push({token: loopbackToken, user: {username: LOOPBACK_USER, uid: randomUUID(), groups: [MASTERS_GROUP]}})
  const authenticator = new Authenticator({tokens, bootstrapTokens})
  // nodes/{name}/proxy presents the admin certificate to agents (Kubernetes: its kubelet client certificate)
  let agentCredentials: {cert: string; key: string} | undefined
  void pkiReady.then((pki) => (agentCredentials = {cert: pki.admin.cert, key: pki.admin.key}), () => undefined)
  let server: ApiServer
  let address
  try {
    server = new ApiServer({
      store,
      address: config.address,
      port: config.port,
      logger,
      historyRetentionMs: config.historyRetentionMs,
      eventTtlMs: config.eventTtlMs,
      shutdownDelayMs: config.shutdownDelayMs,
      gates: config.gates,
      serviceClusterIPRange: config.serviceClusterIPRange,
      serviceNodePortRange: config.serviceNodePortRange,
      serviceRepairIntervalMs: config.serviceRepairIntervalMs,
      serviceRepairGraceMs: config.serviceRepairGraceMs,
      defaultServiceCIDRIntervalMs: config.defaultServiceCIDRIntervalMs,
      tls: pkiReady.then((pki) => ({cert: pki.serving.cert, key: pki.serving.key, clientCA: pki.clientCA.certPem})),
      authenticator,
      authorizationModes: config.authorizationModes,
      auditLog: config.auditLogPath ? new AuditLog(config.auditLogPath) : undefined,
      agentCredentials: () => agentCredentials,
    })
    address = await server.start()
  } catch (error) {
    await store.close()
    throw error
  }
  const pki = await pkiReady
  if (pki.generated.length > 0) logger.info('certificates generated', {dir: pki.paths.dir, files: pki.generated.length})
  for (const warning of pki.warnings) logger.warn(warning)
  const adminAccepted = verifyCertificate(pki.admin.cert, pki.clientCA.certPem)
  const url = clientURL(address)
  // the kubeconfigs are written while the controllers start (both before `serving` is logged)
  const [written, controllersStarted] = await Promise.allSettled([
    writeKubeconfigs(config, url, pki, logger),
    startControllerThread(
      controllerCredentials(url, pki, adminAccepted ? undefined : loopbackToken),
      config.controllers ?? [...CONTROLLER_NAMES],
      logger,
      {
        nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriodMs,
        // with SQLite the store's lock already makes this server the only one: no election
        leaderElection: config.leaderElection && config.storage === 'etcd' ? {...config.leaderElection, identity: candidateIdentity()} : undefined,
        serviceCIDRDeletionGraceMs: config.serviceCIDRDeletionGraceMs,
        storageMigrationDiscoveryWaitMs: config.storageMigrationDiscoveryWaitMs,
        nodeStartupGracePeriodMs: config.nodeStartupGracePeriodMs,
        signingCA: pki.ca,
        clusterSigningDurationMs: config.clusterSigningDurationMs,
        gates: config.gates,
      },
      config.verbosity,
    ),
  ])
  if (written.status === 'rejected' || controllersStarted.status === 'rejected') {
    if (controllersStarted.status === 'fulfilled') await controllersStarted.value.stop()
    await server.stop()
    throw written.status === 'rejected' ? written.reason : (controllersStarted as PromiseRejectedResult).reason
  }
  const controllers = controllersStarted.value
  logger.info('admin kubeconfig written', {path: written.value[0], ...(written.value.length > 1 ? {userConfig: written.value[1]} : {})})
  logger.info('serving', {url, readyInMs: Date.now() - started})
  return {
    server,
    url,
    logger,
    async stop() {
      // the controllers keep working while the server still serves (the shutdown delay)
      await server.beginShutdown()
      await controllers.stop()
      await server.stop()
    },
  }
}

/** <data-dir>/admin.kubeconfig, and ~/.orch/config when there is none. A home config that cannot be
 *  written is a warning: the server runs without it. Returns the paths written. */
async function writeKubeconfigs(config: ServerConfig, url: string, pki: ServerPKI, logger: Logger): Promise<string[]> {
  const options = {dataDir: config.dataDir, serverUrl: url, caPem: pki.servingCA, certPem: pki.admin.cert, keyPem: pki.admin.key}
  const homeConfigPath = defaultKubeconfigPath(config.home ?? homedir())
  try {
    return await writeAdminKubeconfigs({...options, homeConfigPath})
  } catch (error) {
    const written = await writeAdminKubeconfigs(options)
    logger.warn('cannot write the user kubeconfig', {path: homeConfigPath, error})
    return written
  }
}

/** Runs until SIGINT or SIGTERM, then shuts down: in-flight writes are committed, the store closed.
 *  The handlers are installed before the server starts, so a signal during start-up is not lost. A
 *  second signal ends the process at once with status 1, as Kubernetes' signal handler does (e.g.
 *  during a long --shutdown-delay-duration). */
export async function runServer(config: ServerConfig): Promise<void> {
  let first: (signal: string) => void = () => {}
  const signal = new Promise<string>((resolve) => (first = resolve))
  let received: string | undefined
  let logger: Logger | undefined
  const onSignal = (name: string) => {
    if (received === undefined) {
      received = name
      first(name)
      return
    }
    if (logger) logger.warn('second signal: exiting now', {signal: name})
    else process.stderr.write(`second signal (${name}): exiting now\n`)
    process.exit(1)
  }
  const onInt = () => onSignal('SIGINT')
  const onTerm = () => onSignal('SIGTERM')
  process.on('SIGINT', onInt)
  process.on('SIGTERM', onTerm)
  try {
    const running = await startServer(config)
    logger = running.logger
    await signal
    running.logger.info('shutting down', {signal: received})
    try {
      await running.stop()
    } catch (error) {
      running.logger.error('shutdown failed', {error})
    }
    running.logger.info('stopped')
  } finally {
    process.off('SIGINT', onInt)
    process.off('SIGTERM', onTerm)
  }
}

/** Who this server is in the controllers' leader election: kube-controller-manager's hostname_uuid, new
 *  with each start (a restarted server takes over once its earlier self released the Lease, or once the
 *  Lease has gone unrenewed for its duration). */
function candidateIdentity(): string {
  return `${hostname()}_${randomUUID()}`
}
