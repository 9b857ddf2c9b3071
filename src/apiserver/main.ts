// `orch server`: open the store, serve the API, stop cleanly on SIGINT/SIGTERM.
import {homedir} from 'node:os'
import {join} from 'node:path'
import type {FeatureGates} from '../machinery/features.js'
import {createLogger, type Logger} from '../machinery/log.js'
import {openStore, type StorageBackend} from '../storage/index.js'
import {type ControllerName, CONTROLLER_NAMES, startControllers} from './controllers.js'
import {ApiServer} from './server.js'

export interface ServerConfig {
  dataDir: string
  address: string
  port: number
  storage: StorageBackend
  etcdServers: string[]
  historyRetentionMs: number
  verbosity: number
  gates: FeatureGates
  /** controllers to run in-process (default all) */
  controllers?: ControllerName[]
  /** --node-monitor-grace-period */
  nodeMonitorGracePeriodMs?: number
  /** --service-cluster-ip-range, split on commas */
  serviceClusterIPRange?: string[]
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

export async function startServer(config: ServerConfig, logger = createLogger({verbosity: config.verbosity})): Promise<RunningServer> {
  const started = Date.now()
  const store = await openStore({backend: config.storage, dataDir: config.dataDir, etcdServers: config.etcdServers})
  logger.info('store opened', {backend: store.backend, ...(store.backend === 'sqlite' ? {dataDir: config.dataDir} : {etcd: config.etcdServers.join(',')})})
  const server = new ApiServer({store, address: config.address, port: config.port, logger, historyRetentionMs: config.historyRetentionMs, gates: config.gates, serviceClusterIPRange: config.serviceClusterIPRange})
  let address
  try {
    address = await server.start()
  } catch (error) {
    await store.close()
    throw error
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host}:${address.port}`
  let controllers
  try {
    controllers = await startControllers({server: url}, config.controllers ?? [...CONTROLLER_NAMES], logger, {
      nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriodMs,
    })
  } catch (error) {
    await server.stop()
    throw error
  }
  logger.info('serving', {url, readyInMs: Date.now() - started})
  return {
    server,
    url,
    logger,
    async stop() {
      await controllers.stop()
      await server.stop()
    },
  }
}

/** Runs until SIGINT or SIGTERM, then shuts down: in-flight writes are committed, the store closed.
 *  The handlers are installed before the server starts, so a signal during start-up is not lost. */
export async function runServer(config: ServerConfig): Promise<void> {
  let signalled: (signal: string) => void = () => {}
  const signal = new Promise<string>((resolve) => (signalled = resolve))
  const onInt = () => signalled('SIGINT')
  const onTerm = () => signalled('SIGTERM')
  process.on('SIGINT', onInt)
  process.on('SIGTERM', onTerm)
  try {
    const running = await startServer(config)
    const received = await signal
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
