// The SQLite store's health check (what /livez/sqlite runs): a read of the database, failing while
// the last commit failed. The commit failure is real: the store lives on a small tmpfs that fills up.
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {openSqliteStore} from '../../src/storage/sqlite.js'

describe('sqlite store health check', () => {
  it('passes on an open store and fails once it is closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-health-'))
    try {
      const store = openSqliteStore({dataDir: dir})
      await store.check()
      await store.close()
      await assert.rejects(store.check(), /is closed/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('fails while the last commit failed (the disk is full), and passes again after a commit succeeds', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-full-'))
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], {stdio: 'pipe'})
    } catch (error) {
      rmSync(dir, {recursive: true, force: true})
      t.skip(`cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`)
      return
    }
    try {
      // space to give back later
      const filler = join(dir, 'filler')
      writeFileSync(filler, Buffer.alloc(512 * 1024))
      const store = openSqliteStore({dataDir: join(dir, 'data')})
      const value = Buffer.alloc(16 * 1024, 'x')
      let failure: Error | undefined
      for (let i = 0; i < 200 && !failure; i++) {
        await store.create(`/registry/filler/${i}`, value).catch((error: Error) => (failure = error))
      }
      assert.match(failure?.message ?? 'no write failed', /full/)
      await assert.rejects(store.check(), /the last commit to .*state\.db failed: .*full/)
      rmSync(filler)
      await store.create('/registry/after/0', Buffer.from('small'))
      await store.check()
      await store.close()
    } finally {
      execFileSync('umount', [dir])
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
