#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's test runner (Node 20 takes no globs).
// Usage: node scripts/run-tests.js [substring ...]  — only files whose path contains one of the substrings.
import {readdirSync, statSync} from 'node:fs'
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
const concurrency = process.env.ORCH_TEST_CONCURRENCY ?? '2'
const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], {
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
