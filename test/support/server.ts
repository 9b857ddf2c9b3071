// Starts `orch server` as a real child process on a free loopback port, for end-to-end tests. The server
// serves HTTPS; its HOME is a temporary directory (so its ~/.orch/config lands there, never in the real
// one), and its admin credentials are registered with test/support/http.ts so that call(), rawGet() and
// openWatch() to its URL authenticate as the admin without further ado.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {configFromKubeconfig, loadKubeconfig} from '../../src/client/kubeconfig.js'
import {cleanUpAtExit} from './children.js'
import {forgetServer, registerServer} from './http.js'

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..')
export const orchBin = join(repoRoot, 'bin', 'run.js')

/** A server process: what a harness that starts `orch server` itself (bench/api.ts) provides. */
export interface RunningOrch {
  /** https://127.0.0.1:PORT */
  url: string
  dataDir: string
  child: ChildProcess
  /** everything the server logged so far */
  logs(): string
  /** SIGTERM, wait for exit; returns the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** stop and remove the data dir */
  cleanup(): Promise<void>
}

/** A server started by startOrchServer: the process plus how to reach it as its admin. */
export interface OrchServer extends RunningOrch {
  /** the server's HOME (a temporary directory unless the caller's env set HOME) */
  home: string
  /** <data-dir>/admin.kubeconfig */
  kubeconfig: string
  /** the CA the serving certificate verifies against (PEM) */
  ca: string
  /** the admin client certificate and key (PEM) */
  cert: string
  key: string
  /** environment for running the CLI against this server: KUBECONFIG = admin.kubeconfig, HOME = home */
  cliEnv: {KUBECONFIG: string; HOME: string}
  /** resolves with the first match of `pattern` in the log, once the server has logged it (rejects when
   *  it exits first or after timeoutMs) */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** what the server has logged so far */
  output(): string
}


export function tempDir(prefix = 'orch-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** The admin.kubeconfig of each server started here, by URL. */
const kubeconfigs = new Map<string, string>()

/** Environment that points the CLI at the server with this URL (KUBECONFIG = its admin.kubeconfig); {} for other URLs. */
export function kubeconfigEnv(url: string): {KUBECONFIG?: string} {
  const path = kubeconfigs.get(url.replace(/\/+$/, ''))
  return path === undefined ? {} : {KUBECONFIG: path}
}

let defaultHome: string | undefined
/** HOME for children whose caller did not choose one: never the real home. */
function isolatedHome(): string {
  if (defaultHome === undefined) {
    const home = tempDir('orch-home-')
    defaultHome = home
    cleanUpAtExit(() => rmSync(home, {recursive: true, force: true}))
  }
  return defaultHome
}

/** Runs the orch CLI to completion. HOME is a temporary directory unless options.env sets it; pass
 *  `{env: server.cliEnv}` (or `{kubeconfig: server.kubeconfig}`) to talk to a server started by startOrchServer. */
export function runOrch(
  args: string[],
  options: {env?: NodeJS.ProcessEnv; kubeconfig?: string; input?: string; timeoutMs?: number} = {},
): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolvePromise, reject) => {
    const env = {
      ...process.env,
      HOME: options.env?.HOME ?? isolatedHome(),
      ...options.env,
      ...(options.kubeconfig !== undefined ? {KUBECONFIG: options.kubeconfig} : {}),
    }
    const child = spawn(process.execPath, [orchBin, ...args], {env, stdio: ['pipe', 'pipe', 'pipe']})
    const forget = cleanUpAtExit(() => child.kill('SIGKILL'))
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      forget()
      resolvePromise({code, stdout, stderr})
    })
    child.stdin.end(options.input ?? '')
  })
}

export interface StartOptions {
  /** reuse a data dir (not removed by cleanup) */
  dataDir?: string
  /** extra environment; a HOME here replaces the temporary one (and is not removed by cleanup) */
  env?: NodeJS.ProcessEnv
  /** the CA to trust for the serving certificate when it is not in admin.kubeconfig (--tls-cert-file) */
  ca?: string
  /** listen on this port (default 0: any free one), e.g. to restart a server where its clients expect it */
  port?: number
  /** options for node itself, e.g. --cpu-prof (not allowed in NODE_OPTIONS) */
  nodeArgs?: string[]
}

/** Starts `orch server --port 0` and resolves once it logs its URL (it is ready then). */
export async function startOrchServer(args: string[] = [], options: StartOptions = {}): Promise<OrchServer> {
  const dataDir = options.dataDir ?? tempDir()
  const home = options.env?.HOME ?? tempDir('orch-home-')
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), orchBin, 'server', '--data-dir', dataDir, '--port', String(options.port ?? 0), ...args], {
    env: {...process.env, ...options.env, HOME: home},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const forget = cleanUpAtExit(() => child.kill('SIGKILL'))
  let output = ''
  /** the pending waitForLog checks, run on every chunk of output and on exit */
  const waiters = new Set<() => void>()
  const exited = new Promise<number | null>((resolveExit) =>
    child.on('exit', (code) => {
      forget()
      for (const wake of waiters) wake()
      resolveExit(code)
    }),
  )
  const waitForLog = (pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`orch server never logged ${pattern}:\n${output}`))
      }, timeoutMs)
      const check = (): void => {
        const match = pattern.exec(output)
        if (match) {
          done()
          resolve(match)
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done()
          reject(new Error(`orch server exited (${child.exitCode ?? child.signalCode}) before logging ${pattern}:\n${output}`))
        }
      }
      waiters.add(check)
      check()
    })
  const url = await new Promise<string>((resolveUrl, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      for (const wake of waiters) wake()
      const match = /serving url=(\S+)/.exec(output)
      if (match) resolveUrl(match[1])
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`orch server exited with ${code} before serving:\n${output}`)))
  })
  const kubeconfig = join(dataDir, 'admin.kubeconfig')
  const access = configFromKubeconfig(loadKubeconfig(kubeconfig))
  const ca = access.ca?.toString('utf8') ?? options.ca ?? ''
  const cert = access.cert?.toString('utf8') ?? ''
  const key = access.key?.toString('utf8') ?? ''
  registerServer(url, {ca: ca || undefined, cert, key})
  kubeconfigs.set(url, kubeconfig)
  const server: OrchServer = {
    url,
    dataDir,
    home,
    kubeconfig,
    ca,
    cert,
    key,
    cliEnv: {KUBECONFIG: kubeconfig, HOME: home},
    child,
    logs: () => output,
    waitForLog,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
    async cleanup() {
      await server.stop()
      forgetServer(url)
      kubeconfigs.delete(url)
      if (!options.dataDir) rmSync(dataDir, {recursive: true, force: true})
      if (options.env?.HOME === undefined) rmSync(home, {recursive: true, force: true})
    },
  }
  return server
}
