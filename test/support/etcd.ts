// Starts a throw-away etcd server for tests: free loopback ports picked at run time, a fresh data
// dir removed on stop, and a kill on process exit so that no etcd outlives the test process.
import {spawn, type ChildProcess} from 'node:child_process'
import {accessSync, constants, mkdtempSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {delimiter, join} from 'node:path'
import {cleanUpAtExit} from './children.js'

export interface RunningEtcd {
  /** client URL, e.g. http://127.0.0.1:40123 */
  endpoint: string
  /** SIGTERM, then SIGKILL when it does not exit in time; waits for the exit and removes the data dir */
  stop(): Promise<void>
}

const READY_TIMEOUT_MS = 30_000
const STOP_GRACE_MS = 5_000
const HEALTH_POLL_MS = 50

/** The etcd binary: $ETCD_BINARY, else `etcd` on PATH, else the usual install locations; null when none. */
export function findEtcdBinary(): string | null {
  const candidates: string[] = []
  if (process.env.ETCD_BINARY) candidates.push(process.env.ETCD_BINARY)
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'etcd'))
  candidates.push('/usr/bin/etcd', '/usr/local/bin/etcd', '/usr/sbin/etcd')
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not there or not executable: try the next one
    }
  }
  return null
}

/** A loopback port nobody listens on right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not find a free port'))))
    })
  })
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

async function isHealthy(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, {signal: AbortSignal.timeout(2_000)})
    const body = (await response.json()) as {health?: string}
    return response.ok && body.health === 'true'
  } catch {
    return false
  }
}

/** Starts a single-member etcd on free loopback ports and resolves once it answers /health. */
export async function startEtcd(): Promise<RunningEtcd> {
  const binary = findEtcdBinary()
  if (!binary) throw new Error('no etcd binary found (install the Debian package etcd-server or set ETCD_BINARY)')
  let lastError: Error | undefined
  // A port picked free can be taken before etcd binds it: try again with new ports.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(binary)
    } catch (error) {
      lastError = error as Error
      if (!/address already in use/i.test(lastError.message)) throw lastError
    }
  }
  throw lastError
}

async function startOnce(binary: string): Promise<RunningEtcd> {
  const clientPort = await freePort()
  let peerPort = await freePort()
  while (peerPort === clientPort) peerPort = await freePort()
  const endpoint = `http://127.0.0.1:${clientPort}`
  const peer = `http://127.0.0.1:${peerPort}`
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-etcd-'))
  const name = 'orch-test'
  const child = spawn(
    binary,
    [
      `--name=${name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${name}=${peer}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=orch-test-${process.pid}-${clientPort}`,
      // frequent progress notifications, so that a test can see them
      '--experimental-watch-progress-notify-interval=500ms',
      '--logger=zap',
      '--log-outputs=stderr',
      '--log-level=warn',
    ],
    {stdio: ['ignore', 'ignore', 'pipe']},
  )
  const forget = cleanUpAtExit(() => {
    child.kill('SIGKILL')
    rmSync(dataDir, {recursive: true, force: true})
  })

  // keep the tail of etcd's log for error messages
  let log = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    log = (log + chunk).slice(-8_000)
  })

  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
        await exited(child)
        clearTimeout(timer)
      }
      forget()
      rmSync(dataDir, {recursive: true, force: true})
    })()
    return stopped
  }

  let spawnError: Error | undefined
  child.once('error', (error) => {
    spawnError = error
  })
  const deadline = Date.now() + READY_TIMEOUT_MS
  try {
    while (true) {
      if (spawnError) throw new Error(`cannot run ${binary}: ${spawnError.message}`)
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`etcd exited during startup (${child.exitCode ?? child.signalCode}):\n${log.trim()}`)
      }
      if (await isHealthy(endpoint)) return {endpoint, stop}
      if (Date.now() > deadline) throw new Error(`etcd at ${endpoint} was not healthy after ${READY_TIMEOUT_MS} ms:\n${log.trim()}`)
      // wait for the next poll, or for etcd to die, whichever comes first
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, HEALTH_POLL_MS)
        child.once('exit', done)
        function done() {
          clearTimeout(timer)
          child.off('exit', done)
          resolve()
        }
      })
    }
  } catch (error) {
    await stop()
    throw error
  }
}
