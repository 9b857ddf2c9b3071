// Helpers for CLI tests: start a server, run `orch` against it with an isolated HOME and no $KUBECONFIG,
// reach its API directly, and read a long-running command's stdout line by line. When the server writes
// an admin kubeconfig (<data-dir>/admin.kubeconfig: its CA and an admin client certificate), the CLI is
// given it with --kubeconfig and the direct API calls use its credentials, so the tests hold for plain HTTP
// and for TLS alike.
import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process'
import {existsSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {RestClient, configFromKubeconfig, loadKubeconfig, type ClientConfig, type HttpMethod} from '../../src/client/index.js'
import {orchBin, runOrch, startOrchServer, tempDir, type RunningOrch} from '../support/server.js'

/** A HOME without ~/.orch/config, so only --server / --kubeconfig decide where the CLI goes. */
export const isolatedHome = tempDir('orch-cli-home-')
mkdirSync(join(isolatedHome, '.orch'), {recursive: true})
export const isolatedEnv = {HOME: isolatedHome, KUBECONFIG: ''}

export type OrchResult = Awaited<ReturnType<typeof runOrch>>

/** Starts `orch server` with a HOME of its own, so the kubeconfig it may write there stays out of the way. */
export function startCliServer(): Promise<RunningOrch> {
  return startOrchServer([], {env: {HOME: tempDir('orch-cli-server-home-')}})
}

/** The admin kubeconfig the server wrote, if it writes one. */
export function adminKubeconfig(server: RunningOrch): string | undefined {
  const path = join(server.dataDir, 'admin.kubeconfig')
  return existsSync(path) ? path : undefined
}

/** The flags that point the CLI at a test server: --server, and its admin kubeconfig when there is one. */
export function serverFlags(server: RunningOrch): string[] {
  const kubeconfig = adminKubeconfig(server)
  return ['--server', server.url, ...(kubeconfig ? ['--kubeconfig', kubeconfig] : [])]
}

/** Runs the CLI against a server to completion. */
export function orchAt(server: RunningOrch) {
  return (args: string[], input?: string): Promise<OrchResult> => runOrch([...args, ...serverFlags(server)], {env: isolatedEnv, input})
}

function clientConfigOf(server: RunningOrch): ClientConfig {
  const kubeconfig = adminKubeconfig(server)
  return kubeconfig ? configFromKubeconfig(loadKubeconfig(kubeconfig), {server: server.url}) : {server: server.url, namespace: 'default'}
}

export interface ApiResult {
  status: number
  text: string
  json: any
}

/** Direct API calls to a test server (as its admin when it has credentials). */
export function apiOf(server: RunningOrch): {call(method: HttpMethod, path: string, body?: unknown): Promise<ApiResult>; close(): Promise<void>} {
  const client = new RestClient(clientConfigOf(server))
  return {
    async call(method, path, body) {
      const response = await client.request({method, path, body})
      const text = response.body.toString('utf8')
      let json: any
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return {status: response.status, text, json}
    },
    close: () => client.destroy(),
  }
}

/** Runs the CLI without --server (the kubeconfig decides). */
export function orchPlain(args: string[], input?: string): Promise<OrchResult> {
  return runOrch(args, {env: isolatedEnv, input})
}

/** The non-empty lines of an output. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '')
}

export interface LineStream {
  child: ChildProcessWithoutNullStreams
  /** every complete stdout line so far */
  lines: string[]
  stderr(): string
  /** resolves with the first line (from index `from` on) that matches; rejects if the process exits first */
  waitFor(match: RegExp | ((line: string) => boolean), from?: number): Promise<{line: string; index: number}>
  /** SIGTERM, and wait for exit */
  stop(): Promise<void>
}

/** Starts a long-running orch command (watch, get -w) and collects its stdout lines as they come. */
export function spawnOrch(args: string[]): LineStream {
  const child = spawn(process.execPath, [orchBin, ...args], {env: {...process.env, ...isolatedEnv}, stdio: ['pipe', 'pipe', 'pipe']})
  const collected: string[] = []
  let partial = ''
  let errors = ''
  let exited = false
  const waiters: (() => void)[] = []
  const wake = () => waiters.splice(0).forEach((w) => w())
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString()
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    collected.push(...parts)
    wake()
  })
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const exit = new Promise<void>((resolve) =>
    child.on('exit', () => {
      exited = true
      wake()
      resolve()
    }),
  )
  return {
    child,
    lines: collected,
    stderr: () => errors,
    waitFor(match, from = 0) {
      const test = typeof match === 'function' ? match : (line: string) => match.test(line)
      return new Promise((resolve, reject) => {
        const check = () => {
          for (let i = from; i < collected.length; i++) {
            if (test(collected[i])) return resolve({line: collected[i], index: i})
          }
          if (exited) return reject(new Error(`orch ${args.join(' ')} exited before printing a matching line; stdout:\n${collected.join('\n')}\nstderr:\n${errors}`))
          waiters.push(check)
        }
        check()
      })
    },
    async stop() {
      if (!exited) child.kill('SIGTERM')
      await exit
    },
  }
}
