#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's test runner (Node 20 takes no globs).
// Usage: node scripts/run-tests.js [substring ...]  — only files whose path contains one of the substrings.
import {mkdtempSync, readdirSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {spawnSync} from 'node:child_process'

function walk(dir, out) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) walk(path, out)
    else if (path.endsWith('.test.js')) out.push(path)
  }
  return out
}

const filters = process.argv.slice(2)
const files = walk('dist/test', []).sort().filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
if (files.length === 0) {
  console.error('no test files found under dist/test')
  process.exit(1)
}
// built with the tests: the mount check the containerd test support uses
const {mountsUnder} = await import('../dist/test/support/mounts.js')
const concurrency = process.env.ORCH_TEST_CONCURRENCY ?? '2'
// A test file that hangs (a wait for an event that never comes) fails after this long instead of
// holding CI until its own limit; on Node 20 the limit is per file. The slowest file takes ~70 s here.
const timeoutMs = process.env.ORCH_TEST_TIMEOUT_MS ?? '420000'
// Every temporary directory the tests (and the servers, agents, etcd and containerd they start) make
// goes under one directory of this run, removed at the end whatever the outcome, so runs leave no
// litter in /tmp. Set ORCH_KEEP_TEST_TMP=1 to keep it for a post-mortem.
const runTmp = mkdtempSync(join(tmpdir(), 'orch-tests-'))
let status = 1
try {
  const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, '--test-reporter=spec', ...files], {
    stdio: 'inherit',
    env: {...process.env, TMPDIR: runTmp},
  })
  status = result.status ?? 1
} finally {
  // a test killed half-way may leave a mount (a container's rootfs or shm) under it: never remove
  // through a mount
  const mounted = mountsUnder(runTmp)
  if (process.env.ORCH_KEEP_TEST_TMP) console.error(`test temporary files kept in ${runTmp}`)
  else if (mounted.length > 0) console.error(`test temporary files kept in ${runTmp}: still mounted there: ${mounted.join(', ')}`)
  else {
    try {
      rmSync(runTmp, {recursive: true, force: true, maxRetries: 3})
    } catch (error) {
      console.error(`could not remove ${runTmp}: ${error.message}`)
    }
  }
}
process.exit(status)
