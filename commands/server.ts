import {Command, Flags} from '@oclif/core'
import {CONTROLLER_NAMES, parseControllers, type ControllerName} from '../src/apiserver/controllers.js'
import {parseAuthorizationModes, type AuthorizationMode} from '../src/apiserver/authorize.js'
import {defaultDataDir, runServer} from '../src/apiserver/main.js'
import {parsePortRange, type PortRange} from '../src/apiserver/service-nodeports.js'
import {parseDuration} from '../src/machinery/duration.js'
import {FEATURES, parseFeatureGates, type FeatureGates} from '../src/machinery/features.js'
import {fail} from '../src/cli/fail.js'
import {StoreUnavailableError} from '../src/storage/index.js'

export default class Server extends Command {
  static override summary = 'Run the API server and its controllers.'
  static override description = `Serves the cluster API over HTTPS on ADDRESS:PORT. The state lives in an embedded SQLite store
(<data-dir>/state.db) unless --storage etcd points at an etcd cluster. The first start creates a CA, a serving
certificate and an admin client certificate in <data-dir>/pki, then writes <data-dir>/admin.kubeconfig (and
~/.orch/config when there is none). Requests need a client certificate or a bearer token, except /healthz,
/livez, /readyz and /version. Health as Kubernetes serves it: /livez and /healthz check the store (named
"sqlite" or "etcd"), /readyz also its readiness, the watch caches' sync and shutdown; ?verbose lists the
checks, ?exclude=NAME skips one, /livez/NAME runs one. Stops cleanly on SIGINT or SIGTERM, after
--shutdown-delay-duration with /readyz failing.`
  static override examples = [
    '<%= config.bin %> server',
    '<%= config.bin %> server --data-dir /var/lib/orch --port 6443 --tls-san api.example.com',
    '<%= config.bin %> server --storage etcd --etcd-servers http://127.0.0.1:2379',
    '<%= config.bin %> server --token-auth-file tokens.csv --bootstrap-token abcdef.0123456789abcdef',
  ]

  static override flags = {
    'data-dir': Flags.string({description: 'directory for the embedded store and generated files', default: defaultDataDir()}),
    address: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({description: 'port to listen on (0 = any free port)', default: 6443, min: 0, max: 65535}),
    storage: Flags.option({options: ['sqlite', 'etcd'] as const, description: 'storage backend', default: 'sqlite'})(),
    'etcd-servers': Flags.string({description: 'comma-separated etcd client URLs (with --storage etcd)', default: ''}),
    'watch-history': Flags.string({description: 'how much change history to keep for watches (e.g. 5m)', default: '5m'}),
    'event-ttl': Flags.string({description: 'how long an Event is kept after its last write (0 keeps them)', default: '1h0m0s'}),
    'shutdown-delay-duration': Flags.string({
      description: 'after SIGTERM or SIGINT, keep serving this long (e.g. 10s) with /readyz failing, so load balancers take the server out first',
      default: '0s',
    }),
    'feature-gates': Flags.string({
      description: `comma-separated name=true|false pairs; alpha gates are off by default, beta and stable on. Known: ${Object.keys(FEATURES).sort().join(', ')}`,
      default: '',
    }),
    controllers: Flags.string({
      description: `controllers to run in this process: a comma list, "*" for all, empty for none (known: ${CONTROLLER_NAMES.join(', ')})`,
      default: '*',
    }),
    'service-cluster-ip-range': Flags.string({
      description: 'CIDR(s) of the default ServiceCIDR "orch" that Service cluster IPs come from (one per IP family, comma-separated)',
      default: '10.96.0.0/12',
    }),
    'service-node-port-range': Flags.string({
      description: 'the ports NodePort and LoadBalancer Services get node ports from: FIRST-LAST, FIRST+COUNT or one port',
      default: '30000-32767',
    }),
    // test-only (Kubernetes has no flag for either): how often the Service node port and cluster IP
    // repair runs (its repairLoopInterval, 3m) and how young an allocation no Service holds is still
    // a create in flight (60s)
    'service-repair-interval': Flags.string({hidden: true, description: 'how often Service node ports and cluster IPs are repaired', default: '3m'}),
    'service-repair-grace': Flags.string({hidden: true, description: 'how old an allocation no Service holds must be before the repair frees it', default: '60s'}),
    'leader-elect': Flags.boolean({
      description: 'run the controllers only while this server holds the orch-system/orch-controller-manager Lease (servers sharing one etcd)',
      default: true,
      allowNo: true,
    }),
    'leader-elect-lease-duration': Flags.string({description: 'how long a non-leader waits after the last renewal it observed before taking the Lease over', default: '15s'}),
    'leader-elect-renew-deadline': Flags.string({description: 'how long the leader keeps trying to renew before it stops leading', default: '10s'}),
    'leader-elect-retry-period': Flags.string({description: 'how often candidates try to acquire and the leader renews', default: '2s'}),
    // test-only as well (Kubernetes has no flags): how often the default ServiceCIDR is checked (10s),
    // how long a deleted ServiceCIDR no IPAddress needs keeps its finalizer (deletionGracePeriod, 10s),
    // how long a StorageVersionMigration of a resource discovery does not know is retried (1m)
    'default-service-cidr-interval': Flags.string({hidden: true, description: 'how often the default ServiceCIDR is checked and recreated', default: '10s'}),
    'service-cidr-deletion-grace': Flags.string({hidden: true, description: 'how long a deleted ServiceCIDR keeps its finalizer', default: '10s'}),
    'storage-migration-discovery-wait': Flags.string({hidden: true, description: 'how long a migration of an unknown resource is retried before it fails', default: '1m'}),
    'node-monitor-grace-period': Flags.string({
      description: 'how long a node may go without a Lease renewal or status heartbeat before it is marked Unknown',
      default: '50s',
    }),
    'node-startup-grace-period': Flags.string({
      description: 'how long a new node may go without posting a Ready condition before it is marked Unknown',
      default: '60s',
    }),
    'tls-san': Flags.string({
      description: 'an extra IP address or DNS name for the generated serving certificate (repeatable, or a comma list)',
      multiple: true,
      default: [],
    }),
    'tls-cert-file': Flags.string({description: 'serve with this certificate (PEM, may hold a chain) instead of the generated one', dependsOn: ['tls-private-key-file']}),
    'tls-private-key-file': Flags.string({description: 'the private key of --tls-cert-file (PEM)', dependsOn: ['tls-cert-file']}),
    'client-ca-file': Flags.string({description: 'verify client certificates against this CA bundle (PEM) instead of <data-dir>/pki/client-ca.crt'}),
    'token-auth-file': Flags.string({description: 'static bearer tokens, one `token,user,uid[,"group1,group2"]` line each (Kubernetes\' format)'}),
    'bootstrap-token': Flags.string({
      description: 'a bootstrap token <id>.<secret> ([a-z0-9]{6}.[a-z0-9]{16}), user system:bootstrap:<id> (repeatable, or a comma list)',
      multiple: true,
      default: [],
    }),
    'bootstrap-token-file': Flags.string({description: 'bootstrap tokens, one a line (# comments and blank lines skipped)'}),
    'authorization-mode': Flags.string({
      description: 'authorizers in order, comma-separated: Node, RBAC, AlwaysAllow',
      default: 'Node,RBAC',
    }),
    'audit-log-path': Flags.string({description: 'append one JSON line per request (user, verb, resource, name, code, annotations) to this file; - = stdout'}),
    'cluster-signing-duration': Flags.string({
      description: 'the longest validity the csrsigning controller gives a certificate (a CSR may ask for less)',
      default: '8760h',
    }),
    v: Flags.integer({description: 'log verbosity (0 = info only)', default: 0, min: 0}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Server)
    let historyRetentionMs: number
    let eventTtlMs: number
    let gates: FeatureGates
    let controllers: ControllerName[]
    let nodeMonitorGracePeriodMs: number
    let leaderElection: {leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number} | undefined
    let nodeStartupGracePeriodMs: number
    let authorizationModes: AuthorizationMode[]
    let clusterSigningDurationMs: number
    let shutdownDelayMs: number
    let serviceNodePortRange: PortRange
    let serviceRepairIntervalMs: number
    let serviceRepairGraceMs: number
    let defaultServiceCIDRIntervalMs: number
    let serviceCIDRDeletionGraceMs: number
    let storageMigrationDiscoveryWaitMs: number
    try {
      try {
        serviceNodePortRange = parsePortRange(flags['service-node-port-range'])
      } catch (error) {
        throw new Error(`invalid argument ${JSON.stringify(flags['service-node-port-range'])} for "--service-node-port-range" flag: ${(error as Error).message}`)
      }
      shutdownDelayMs = parseDuration(flags['shutdown-delay-duration'])
      if (shutdownDelayMs > 2 ** 31 - 1) throw new Error(`--shutdown-delay-duration ${flags['shutdown-delay-duration']} is too long (at most 596h)`)
      authorizationModes = parseAuthorizationModes(flags['authorization-mode'])
      clusterSigningDurationMs = parseDuration(flags['cluster-signing-duration'])
      controllers = parseControllers(flags.controllers)
      nodeMonitorGracePeriodMs = parseDuration(flags['node-monitor-grace-period'])
      leaderElection = flags['leader-elect'] ? leaderElectionTimes(flags) : undefined
      nodeStartupGracePeriodMs = parseDuration(flags['node-startup-grace-period'])
      serviceRepairIntervalMs = parseDuration(flags['service-repair-interval'])
      serviceRepairGraceMs = parseDuration(flags['service-repair-grace'])
      if (serviceRepairIntervalMs <= 0 || serviceRepairIntervalMs > 2 ** 31 - 1) throw new Error(`--service-repair-interval ${flags['service-repair-interval']} is out of range`)
      defaultServiceCIDRIntervalMs = parseDuration(flags['default-service-cidr-interval'])
      if (defaultServiceCIDRIntervalMs <= 0 || defaultServiceCIDRIntervalMs > 2 ** 31 - 1) throw new Error(`--default-service-cidr-interval ${flags['default-service-cidr-interval']} is out of range`)
      serviceCIDRDeletionGraceMs = parseDuration(flags['service-cidr-deletion-grace'])
      storageMigrationDiscoveryWaitMs = parseDuration(flags['storage-migration-discovery-wait'])
      historyRetentionMs = parseDuration(flags['watch-history'])
      eventTtlMs = parseDuration(flags['event-ttl'])
      gates = parseFeatureGates(flags['feature-gates'])
    } catch (error) {
      fail((error as Error).message, 2)
    }
    try {
      await runServer({
        dataDir: flags['data-dir'],
        address: flags.address,
        port: flags.port,
        storage: flags.storage,
        etcdServers: flags['etcd-servers'].split(',').map((s) => s.trim()).filter(Boolean),
        historyRetentionMs,
        eventTtlMs,
        shutdownDelayMs,
        verbosity: flags.v,
        gates,
        controllers,
        nodeMonitorGracePeriodMs,
        leaderElection,
        nodeStartupGracePeriodMs,
        serviceClusterIPRange: flags['service-cluster-ip-range'].split(',').map((s) => s.trim()).filter(Boolean),
        serviceNodePortRange,
        serviceRepairIntervalMs,
        serviceRepairGraceMs,
        defaultServiceCIDRIntervalMs,
        serviceCIDRDeletionGraceMs,
        storageMigrationDiscoveryWaitMs,
        tlsSANs: splitList(flags['tls-san']),
        tlsCertFile: flags['tls-cert-file'],
        tlsKeyFile: flags['tls-private-key-file'],
        clientCAFile: flags['client-ca-file'],
        tokenAuthFile: flags['token-auth-file'],
        bootstrapTokens: splitList(flags['bootstrap-token']),
        bootstrapTokenFile: flags['bootstrap-token-file'],
        authorizationModes,
        auditLogPath: flags['audit-log-path'],
        clusterSigningDurationMs,
      })
    } catch (error) {
      const message = error instanceof StoreUnavailableError ? error.message : `cannot start: ${(error as Error).message}`
      fail(message, 1)
    }
  }
}

/** The --leader-elect-* durations, checked as kube-controller-manager checks them. */
function leaderElectionTimes(flags: Record<string, unknown>): {leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number} {
  const leaseDurationMs = parseDuration(String(flags['leader-elect-lease-duration']))
  const renewDeadlineMs = parseDuration(String(flags['leader-elect-renew-deadline']))
  const retryPeriodMs = parseDuration(String(flags['leader-elect-retry-period']))
  if (retryPeriodMs <= 0) throw new Error('--leader-elect-retry-period must be greater than zero')
  if (leaseDurationMs <= renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline')
  if (renewDeadlineMs <= retryPeriodMs * 1.2) throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor')
  return {leaseDurationMs, renewDeadlineMs, retryPeriodMs}
}

/** Values of a repeatable flag, each possibly a comma list. */
function splitList(values: readonly string[]): string[] {
  return values.flatMap((value) => value.split(',')).map((s) => s.trim()).filter(Boolean)
}
