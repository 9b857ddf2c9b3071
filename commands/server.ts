import {Command, Flags} from '@oclif/core'
import {CONTROLLER_NAMES, parseControllers, type ControllerName} from '../src/apiserver/controllers.js'
import {defaultDataDir, runServer} from '../src/apiserver/main.js'
import {parseDuration} from '../src/machinery/duration.js'
import {FEATURES, parseFeatureGates, type FeatureGates} from '../src/machinery/features.js'
import {fail} from '../src/cli/fail.js'
import {StoreUnavailableError} from '../src/storage/index.js'

export default class Server extends Command {
  static override summary = 'Run the API server and its controllers.'
  static override description = `Serves the cluster API on ADDRESS:PORT. The state lives in an embedded SQLite store
(<data-dir>/state.db) unless --storage etcd points at an etcd cluster. Stops cleanly on SIGINT or SIGTERM.`
  static override examples = [
    '<%= config.bin %> server',
    '<%= config.bin %> server --data-dir /var/lib/orch --port 6443',
    '<%= config.bin %> server --storage etcd --etcd-servers http://127.0.0.1:2379',
  ]

  static override flags = {
    'data-dir': Flags.string({description: 'directory for the embedded store and generated files', default: defaultDataDir()}),
    address: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({description: 'port to listen on (0 = any free port)', default: 6443, min: 0, max: 65535}),
    storage: Flags.option({options: ['sqlite', 'etcd'] as const, description: 'storage backend', default: 'sqlite'})(),
    'etcd-servers': Flags.string({description: 'comma-separated etcd client URLs (with --storage etcd)', default: ''}),
    'watch-history': Flags.string({description: 'how much change history to keep for watches (e.g. 5m)', default: '5m'}),
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
    'node-monitor-grace-period': Flags.string({
      description: 'how long a node may go without a Lease renewal or status heartbeat before it is marked Unknown',
      default: '50s',
    }),
    v: Flags.integer({description: 'log verbosity (0 = info only)', default: 0, min: 0}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Server)
    let historyRetentionMs: number
    let gates: FeatureGates
    let controllers: ControllerName[]
    let nodeMonitorGracePeriodMs: number
    try {
      controllers = parseControllers(flags.controllers)
      nodeMonitorGracePeriodMs = parseDuration(flags['node-monitor-grace-period'])
      historyRetentionMs = parseDuration(flags['watch-history'])
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
        verbosity: flags.v,
        gates,
        controllers,
        nodeMonitorGracePeriodMs,
        serviceClusterIPRange: flags['service-cluster-ip-range'].split(',').map((s) => s.trim()).filter(Boolean),
      })
    } catch (error) {
      const message = error instanceof StoreUnavailableError ? error.message : `cannot start: ${(error as Error).message}`
      fail(message, 1)
    }
  }
}
