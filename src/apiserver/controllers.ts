// The controllers `orch server` runs in-process. They talk to the server through src/client only,
// exactly as they would from another process.
import {RestClient, type ClientConfig} from '../client/index.js'
import {PolicyStatusController} from '../admission/policy/status-controller.js'
import {ClusterRoleAggregationController} from '../controllers/clusterroleaggregation.js'
import {CSRApprovingController} from '../controllers/csrapproving.js'
import {CSRSigningController} from '../controllers/csrsigning.js'
import {LeaderElector, type LeaderElectionConfig} from '../controllers/leader-election.js'
import {GarbageCollector} from '../controllers/garbagecollector/garbagecollector.js'
import {NamespaceController} from '../controllers/namespace.js'
import {NodeLifecycleController} from '../controllers/nodelifecycle.js'
import {PodGCController} from '../controllers/podgc.js'
import {Scheduler} from '../controllers/scheduler/scheduler.js'
import {ServiceCIDRController} from '../controllers/servicecidr.js'
import {StatefulSetController} from '../controllers/statefulset.js'
import {StorageMigrationController} from '../controllers/storagemigration.js'
import type {Logger} from '../machinery/log.js'
import type {CertKeyPair} from '../machinery/pki.js'

export const CONTROLLER_NAMES = [
  'admissionpolicystatus',
  'clusterrole-aggregation',
  'csrapproving',
  'csrsigning',
  'garbagecollector',
  'namespace',
  'nodelifecycle',
  'podgc',
  'scheduler',
  'servicecidr',
  'statefulset',
  'storageversionmigration',
] as const
export type ControllerName = (typeof CONTROLLER_NAMES)[number]

export interface ControllerSettings {
  /** --node-monitor-grace-period (default 50 s) */
  nodeMonitorGracePeriodMs?: number
  /** how long a deleted ServiceCIDR no IPAddress needs keeps its finalizer (default 10 s) */
  serviceCIDRDeletionGraceMs?: number
  /** how long a StorageVersionMigration of a resource discovery does not know is retried (default 1 minute) */
  storageMigrationDiscoveryWaitMs?: number
  /** --node-startup-grace-period (default 60 s) */
  nodeStartupGracePeriodMs?: number
  /** the cluster CA, which csrsigning signs with (csrsigning does not start without it) */
  signingCA?: CertKeyPair
  /** --cluster-signing-duration (default 1 year) */
  clusterSigningDurationMs?: number
  /** --feature-gates in force (a gate left out has its default) */
  gates?: Partial<Record<string, boolean>>
  /** --leader-elect: run the controllers only while holding the controller-manager Lease */
  leaderElection?: LeaderElectionConfig
}

export interface RunningControllers {
  stop(): Promise<void>
}

/** Parses --controllers: a comma list of names, `*` for all; empty = none. */
export function parseControllers(text: string | undefined): ControllerName[] {
  if (text === undefined || text.trim() === '*') return [...CONTROLLER_NAMES]
  const names = text.split(',').map((s) => s.trim()).filter(Boolean)
  const selected: ControllerName[] = []
  for (const name of names) {
    if (name === '*') return [...CONTROLLER_NAMES]
    if (!(CONTROLLER_NAMES as readonly string[]).includes(name)) {
      throw new Error(`unknown controller "${name}" (known: ${CONTROLLER_NAMES.join(', ')})`)
    }
    selected.push(name as ControllerName)
  }
  return selected
}

export async function startControllers(
  config: Omit<ClientConfig, 'namespace'>,
  names: readonly ControllerName[],
  logger: Logger,
  settings: ControllerSettings = {},
): Promise<RunningControllers> {
  // every informer holds one connection for its watch (the garbage collector's one per resource, some
  // two dozen): leave plenty for the requests besides them
  const client = new RestClient({...config, namespace: 'default'}, {userAgent: 'orch-controller-manager', connections: 128})
  const started: {stop(): Promise<void>}[] = []
  try {
    if (names.includes('admissionpolicystatus')) {
      const controller = new PolicyStatusController(client, logger.child({controller: 'admissionpolicystatus'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('clusterrole-aggregation')) {
      const controller = new ClusterRoleAggregationController(client, logger.child({controller: 'clusterrole-aggregation'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('csrapproving')) {
      const controller = new CSRApprovingController(client, logger.child({controller: 'csrapproving'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('csrsigning') && settings.signingCA) {
      const controller = new CSRSigningController(client, logger.child({controller: 'csrsigning'}), {
        ca: settings.signingCA,
        maxDurationMs: settings.clusterSigningDurationMs,
      })
      await controller.start()
      started.push(controller)
    }
    if (names.includes('garbagecollector')) {
      const gcLogger = logger.child({controller: 'garbagecollector'})
      const controller = new GarbageCollector(client, gcLogger)
      // its lists of every resource must not hold up the controllers after it (one that keeps failing
      // would hold them for good); stop() also ends a start still under way
      started.push(controller)
      controller.start().catch((error: Error) => gcLogger.error('garbage collector stopped starting', {error: error.message}))
    }
    if (names.includes('namespace')) {
      const controller = new NamespaceController(client, logger.child({controller: 'namespace'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('nodelifecycle')) {
      const controller = new NodeLifecycleController(client, logger.child({controller: 'nodelifecycle'}), {
        gracePeriodMs: settings.nodeMonitorGracePeriodMs,
        startupGracePeriodMs: settings.nodeStartupGracePeriodMs,
      })
      await controller.start()
      started.push(controller)
    }
    if (names.includes('podgc')) {
      const controller = new PodGCController(client, logger.child({controller: 'podgc'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('scheduler')) {
      const controller = new Scheduler(client, logger.child({controller: 'scheduler'}))
      await controller.start()
      started.push(controller)
    }
    if (names.includes('servicecidr')) {
      const controller = new ServiceCIDRController(client, logger.child({controller: 'servicecidr'}), {
        deletionGracePeriodMs: settings.serviceCIDRDeletionGraceMs,
      })
      await controller.start()
      started.push(controller)
    }
    if (names.includes('statefulset')) {
      const controller = new StatefulSetController(client, logger.child({controller: 'statefulset'}), {
        maxUnavailableStatefulSet: settings.gates?.['MaxUnavailableStatefulSet'],
      })
      await controller.start()
      started.push(controller)
    }
    if (names.includes('storageversionmigration')) {
      const controller = new StorageMigrationController(client, logger.child({controller: 'storageversionmigration'}), {
        discoveryWaitMs: settings.storageMigrationDiscoveryWaitMs,
      })
      await controller.start()
      started.push(controller)
    }
  } catch (error) {
    // the ones already started must not run on (nor their client stay open) when a later one cannot start
    await Promise.allSettled(started.map((c) => c.stop()))
    await client.close()
    throw error
  }
  if (names.length > 0) logger.info('controllers started', {controllers: names.join(',')})
  return {
    async stop() {
      await Promise.allSettled(started.map((c) => c.stop()))
      await client.close()
    },
  }
}

/**
 * The controllers under leader election (kube-controller-manager's --leader-elect): started while this
 * server holds the controller-manager Lease, stopped when it loses it, started again when it wins it
 * back. Resolves after the first attempt to acquire (a sole server is then leading).
 */
export async function startElectedControllers(
  config: Omit<ClientConfig, 'namespace'>,
  names: readonly ControllerName[],
  logger: Logger,
  settings: ControllerSettings = {},
): Promise<RunningControllers> {
  if (!settings.leaderElection || names.length === 0) return startControllers(config, names, logger, settings)
  const client = new RestClient({...config, namespace: 'default'}, {userAgent: 'orch-controller-manager/leader-election', connections: 2})
  const elector = new LeaderElector(client, settings.leaderElection, logger.child({component: 'leaderelection'}))
  await elector.run(async () => {
    const running = await startControllers(config, names, logger, settings)
    return () => running.stop()
  })
  return {
    async stop() {
      await elector.stop()
      await client.close()
    },
  }
}
