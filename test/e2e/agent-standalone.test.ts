// `orch agent` with no server at all: standalone mode runs the static pods of staticPodPath (a
// malformed manifest beside them is logged and skipped), serves /healthz with a self-signed
// certificate, and refuses a second agent on the same lock file.
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {request} from 'node:https'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createRequire} from 'node:module'
import {startAgent, type RunningAgent} from '../support/agent.js'
import {orchBin, runOrch, tempDir} from '../support/server.js'

const require = createRequire(import.meta.url)
const unixDgram = require('unix-dgram') as {
  createSocket(type: 'unix_dgram', listener: (message: Buffer) => void): {bind(path: string): void; close(): void}
}

function processesWith(text: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(text)) pids.push(Number(entry))
    } catch {
      // gone
    }
  }
  return pids
}

describe('orch agent standalone (no server)', {timeout: 90_000}, () => {
  let agent: RunningAgent
  let manifests: string
  let notifyPath = ''
  let notifySocket: {bind(path: string): void; close(): void} | undefined
  const notifications: string[] = []
  const notifyWaiters = new Set<() => void>()

  before(async () => {
    manifests = tempDir('orch-manifests-')
    mkdirSync(manifests, {recursive: true})
    writeFileSync(
      join(manifests, 'web.yaml'),
      ['apiVersion: v1', 'kind: Pod', 'metadata:', '  name: static-web', 'spec:', '  containers:', '  - name: app', '    image: busybox', '    command: [sleep, "7071"]', ''].join('\n'),
    )
    writeFileSync(join(manifests, 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: [\n')
    notifySocket = unixDgram.createSocket('unix_dgram', (message: Buffer) => {
      notifications.push(message.toString())
      for (const wake of notifyWaiters) wake()
    })
    notifyPath = join(tempDir('orch-notify-'), 'notify.sock')
    notifySocket.bind(notifyPath)
    agent = await startAgent({
      args: ['--pod-manifest-path', manifests, '--feature-gates', 'PodsAPI=true'],
      env: {NOTIFY_SOCKET: notifyPath, WATCHDOG_USEC: '1000000'},
    })
  })
  after(async () => {
    await agent?.cleanup()
    notifySocket?.close()
    if (notifyPath) rmSync(join(notifyPath, '..'), {recursive: true, force: true})
    rmSync(manifests, {recursive: true, force: true})
  })

  it('a static pod from staticPodPath runs in standalone mode with no server at all', async () => {
    const socket = join(agent.rootDir, 'pods', 'agent.sock')
    // `orch pods --watch` on the pod-info socket prints the pod once its container runs
    const watcher = spawn(process.execPath, [orchBin, 'pods', '--socket', socket, '--watch'], {stdio: ['ignore', 'pipe', 'pipe']})
    let seen = ''
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no Running static pod in:\n${seen}\n${agent.logs().slice(-3000)}`)), 60_000)
        const onData = (chunk: Buffer): void => {
          seen += chunk.toString()
          if (/default\s+static-web-\S+\s+[0-9a-f-]{36}\s+Running/.test(seen)) {
            clearTimeout(timer)
            resolve()
          }
        }
        watcher.stdout.on('data', onData)
        watcher.stderr.on('data', onData)
      })
    } finally {
      watcher.kill('SIGINT')
    }
    assert.ok(processesWith('sleep 7071').length > 0, 'the static pod runs a real process')
    assert.match(agent.logs(), /standalone mode/)
  })

  it('A malformed manifest in staticPodPath is logged and skipped, others still run', async () => {
    await agent.waitForLog(/skipping static pod manifest .*file=\S*broken\.yaml/)
  })

  it('standalone, the agent serves /healthz with a self-signed certificate', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({host: '127.0.0.1', port: agent.port, path: '/healthz', rejectUnauthorized: false}, (res) => {
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve(`${res.statusCode} ${text}`))
      })
      req.on('error', reject)
      req.end()
    })
    assert.equal(body, '200 ok')
  })

  it('with NOTIFY_SOCKET and WATCHDOG_USEC set, the agent sends READY=1 and WATCHDOG=1 every WatchdogSec / 2 (datagrams on our own socket)', async () => {
    await new Promise<void>((resolve) => {
      const look = (): void => {
        if (notifications.includes('READY=1') && notifications.filter((m) => m === 'WATCHDOG=1').length >= 3) {
          notifyWaiters.delete(look)
          resolve()
        }
      }
      notifyWaiters.add(look)
      look()
    })
  })

  it('--lock-file: a second agent on the same lock refuses to start', async () => {
    const second = await runOrch(['agent', '--root-dir', tempDir('orch-agent-2-'), '--lock-file', join(agent.rootDir, 'agent.lock'), '--port', '0'])
    assert.equal(second.code, 1)
    assert.match(second.stderr, /^error: agent cannot start: lock file .* is held by another agent \(pid \d+\)\n$/)
  })
})
