// The Store contract against the embedded SQLite backend, on a real state.db in a temp dir.
import {rmSync} from 'node:fs'
import {openSqliteStore} from '../../src/storage/sqlite.js'
import {tempDir} from '../support/server.js'
import {defineStoreContract} from './contract.js'

defineStoreContract('sqlite', async () => {
  const dataDir = tempDir('orch-sqlite-contract-')
  const store = openSqliteStore({dataDir})
  return {
    store,
    cleanup: async () => {
      await store.close()
      rmSync(dataDir, {recursive: true, force: true})
    },
  }
})
