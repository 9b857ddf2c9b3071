// The SQLite store's health check (what /livez/sqlite runs): a read of the database, failing while
// the last commit failed. The commit failure is real: the store lives on a small tmpfs that fills up.
import {execFileSync} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, rmSync, writeSync} from 'node:fs'
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

  it('fails while the last commit failed (the disk is full), not cleared by refused writes, and passes again once a write commits', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-full-'))
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], {stdio: 'pipe'})
    } catch (error) {
      rmSync(dir, {recursive: true, force: true})
      t.skip(`cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`)
      return
    }
    let store: ReturnType<typeof openSqliteStore> | undefined
    try {
      store = openSqliteStore({dataDir: join(dir, 'data')})
      const value = Buffer.alloc(16 * 1024, 'x')
      let failure: Error | undefined
      let written = 0
      for (; written < 200 && !failure; written++) {
        await store.create(`/registry/filler/${written}`, value).catch((error: Error) => (failure = error))
      }
      assert.match(failure?.message ?? 'no write failed', /full/)
      // take what space is left
      const filler = join(dir, 'filler')
      const chunk = Buffer.alloc(4096)
      const fd = openSync(filler, 'w')
      try {
        for (;;) writeSync(fd, chunk)
      } catch (error) {
        assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC')
      } finally {
        closeSync(fd)
      }
      await assert.rejects(store.check(), /the last commit to .*state\.db failed: .*full/)
      // a batch of writes that were all refused (here: the key exists) commits nothing and clears nothing
      await assert.rejects(store.create('/registry/filler/0', Buffer.from('again')), /key exists/)
      await assert.rejects(store.check(), /failed: .*full/)
      rmSync(filler)
      // still failed: only a write that commits says the disk takes writes again
      await assert.rejects(store.check(), /failed: .*full/)
      await store.create('/registry/after/0', Buffer.from('small'))
      await store.check()
    } finally {
      await store?.close()
      execFileSync('umount', [dir])
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
