// `orch pods --socket`: the CLI against a real pod-info gRPC socket.
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {startPodInfoServer, type PodInfoServer, type PodSource} from '../../src/agent/podinfo/server.js'
import type {AnyObject} from '../../src/api/types.js'
import {orchBin, runOrch} from '../support/server.js'

function pod(name: string, uid: string, phase: string): AnyObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'shop', uid}, spec: {containers: [{name: 'app', image: 'busybox'}]}, status: {phase, podIP: '10.0.0.7'}}
}

describe('orch pods --socket', () => {
  let dir: string
  let server: PodInfoServer
  let pods = [pod('web', 'uid-web', 'Running'), pod('db', 'uid-db', 'Pending')]
  const listeners = new Set<(p: AnyObject) => void>()
  const source: PodSource = {
    synced: () => true,
    pods: () => pods,
    subscribe: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-pods-cli-'))
    server = await startPodInfoServer(join(dir, 'agent.sock'), source)
  })
  after(async () => {
    await server.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('prints NAMESPACE NAME UID PHASE IP; --uid one pod; -o json with --fields only those fields', async () => {
    const table = await runOrch(['pods', '--socket', server.socketPath])
    assert.equal(table.code, 0, table.stderr)
    const lines = table.stdout.trimEnd().split('\n')
    assert.match(lines[0], /^NAMESPACE\s+NAME\s+UID\s+PHASE\s+IP$/)
    assert.match(lines[1], /^shop\s+web\s+uid-web\s+Running\s+10\.0\.0\.7$/)
    assert.equal(lines.length, 3)
    const one = await runOrch(['pods', '--socket', server.socketPath, '--uid', 'uid-db', '-o', 'json', '--fields', 'metadata.name,status.phase'])
    assert.equal(one.code, 0, one.stderr)
    const object = JSON.parse(one.stdout)
    assert.equal(object.metadata.name, 'db')
    assert.equal(object.status.phase, 'Pending')
    assert.equal(object.status.podIP, undefined)
    const missing = await runOrch(['pods', '--socket', server.socketPath, '--uid', 'nope'])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^error: pod with UID "nope" not found\n$/)
    const nowhere = await runOrch(['pods', '--socket', join(dir, 'absent.sock')])
    assert.equal(nowhere.code, 1)
    assert.match(nowhere.stderr, /^error: cannot reach the agent's pod-info socket/)
  })

  it('--socket takes a relative path (its first step is not an authority); --fields naming no Pod field is one error line and exit 1', async () => {
    const child = spawn(process.execPath, [orchBin, 'pods', '--socket', join(basename(dir), 'agent.sock')], {cwd: dirname(dir), stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    const code = await new Promise((r) => child.once('exit', r))
    assert.equal(code, 0, err)
    assert.match(out, /uid-web\s+Running/)
    const unknown = await runOrch(['pods', '--socket', server.socketPath, '--fields', 'metadata.name,spec.nosuch'])
    assert.equal(unknown.code, 1)
    assert.equal(unknown.stdout, '')
    assert.equal(unknown.stderr, 'error: invalid field mask path "spec.nosuch": no such field in message Pod\n')
  })

  it('--watch prints each change live until interrupted', async () => {
    const child = spawn(process.execPath, [orchBin, 'pods', '--socket', server.socketPath, '--watch'], {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    child.stdout.on('data', (c) => (out += c))
    try {
      const deadline = Date.now() + 15_000
      let n = 0
      while (!/uid-db\s+Failed/.test(out)) {
        if (Date.now() > deadline) assert.fail(`no change seen: ${out}`)
        pods = [pods[0], pod('db', 'uid-db', 'Failed')]
        for (const l of listeners) l(pods[1])
        n++
        await new Promise((r) => setTimeout(r, 50))
      }
      assert.ok(n > 0)
      assert.match(out, /^NAMESPACE\s+NAME\s+UID\s+PHASE\s+IP\n/)
    } finally {
      child.kill('SIGINT')
      await new Promise((r) => child.once('exit', r))
    }
  })
})
