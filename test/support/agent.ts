// `orch agent` as a child process, joined to a test server through a bootstrap token (or standalone),
// with its own root dir, lock file and a free port; resolves once it logs that it started.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {bootstrapKubeconfig} from '../../src/cli/config.js'
import {cleanUpAtExit} from './children.js'
import {orchBin, tempDir, type OrchServer} from './server.js'

/** The bootstrap token test servers are started with (`--bootstrap-token`). */
export const BOOTSTRAP_TOKEN = 'abcdef.0123456789abcdef'

export interface RunningAgent {
  nodeName: string
  rootDir: string
  child: ChildProcess
  /** the port of its HTTPS server */
  port: number
  logs(): string
  /** resolves when the log matches (looking at what was logged so far too) */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** stop and remove the root dir (unless kept) */
  cleanup(): Promise<void>
}

/** A kubeconfig holding the bootstrap token and the server's CA (what `orch config bootstrap-kubeconfig` prints). */
export function writeBootstrapKubeconfig(server: OrchServer, path: string, token = BOOTSTRAP_TOKEN): void {
  writeFileSync(path, bootstrapKubeconfig(server.url, Buffer.from(server.ca), token))
}

export interface AgentStartOptions {
  /** join this server with the bootstrap token; absent: standalone */
  server?: OrchServer
  nodeName?: string
  /** reuse a root dir (kept by cleanup) */
  rootDir?: string
  args?: string[]
  env?: NodeJS.ProcessEnv
}

export async function startAgent(options: AgentStartOptions = {}): Promise<RunningAgent> {
  const rootDir = options.rootDir ?? tempDir('orch-agent-')
  const nodeName = options.nodeName ?? `node-${Math.random().toString(36).slice(2, 8)}`
  mkdirSync(rootDir, {recursive: true})
  const args = [orchBin, 'agent', '--root-dir', rootDir, '--lock-file', join(rootDir, 'agent.lock'), '--hostname-override', nodeName, '--port', '0', '--relist-period', '200ms']
  if (options.server) {
    const bootstrap = join(rootDir, 'bootstrap.kubeconfig')
    writeBootstrapKubeconfig(options.server, bootstrap)
    args.push('--bootstrap-kubeconfig', bootstrap, '--kubeconfig', join(rootDir, 'agent.kubeconfig'))
  }
  args.push(...(options.args ?? []))
  const child = spawn(process.execPath, args, {env: {...process.env, ...options.env}, stdio: ['ignore', 'pipe', 'pipe']})
  const forget = cleanUpAtExit(() => child.kill('SIGKILL'))
  let output = ''
  const waiters = new Set<() => void>()
  const onData = (chunk: Buffer): void => {
    output += chunk.toString()
    for (const wake of waiters) wake()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      forget()
      for (const wake of waiters) wake()
      resolve(code)
    }),
  )
  const waitForLog = (pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`agent never logged ${pattern}:\n${output}`))
      }, timeoutMs)
      const check = (): void => {
        const match = pattern.exec(output)
        if (match) {
          clearTimeout(timer)
          waiters.delete(check)
          resolve(match)
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer)
          waiters.delete(check)
          reject(new Error(`agent exited (${child.exitCode ?? child.signalCode}) before logging ${pattern}:\n${output}`))
        }
      }
      waiters.add(check)
      check()
    })
  await waitForLog(/agent started/)
  const port = Number((await waitForLog(/serving address=https:\/\/[^\s]*:(\d+)/))[1])
  const agent: RunningAgent = {
    nodeName,
    rootDir,
    child,
    port,
    logs: () => output,
    waitForLog,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
    async cleanup() {
      await agent.stop()
      if (!options.rootDir) rmSync(rootDir, {recursive: true, force: true})
    },
  }
  return agent
}
