// Opens the configured backend.
import type {Logger} from '../machinery/log.js'
import {openEtcdStore} from './etcd.js'
import {openSqliteStore} from './sqlite.js'
import {StoreUnavailableError, type Store} from './store.js'

export type StorageBackend = 'sqlite' | 'etcd'

export interface StoreConfig {
  backend: StorageBackend
  /** sqlite: the data dir holding state.db */
  dataDir: string
  /** etcd: client URLs */
  etcdServers?: string[]
  logger?: Logger
}

export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.backend === 'etcd') {
    const endpoints = config.etcdServers ?? []
    if (endpoints.length === 0) throw new StoreUnavailableError('--storage etcd needs --etcd-servers URL[,URL...]')
    return openEtcdStore({endpoints, logger: config.logger})
  }
  return openSqliteStore({dataDir: config.dataDir})
}

export * from './store.js'
export {WatchCache, TooOldResourceVersionError} from './watch-cache.js'
export type {CacheEvent, CacheEntry, CacheWatcher} from './watch-cache.js'
export {Compactor} from './compactor.js'
