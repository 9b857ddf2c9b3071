// Starts `orch server` as a real child process on a free loopback port, for end-to-end tests.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..')
export const orchBin = join(repoRoot, 'bin', 'run.js')

export interface RunningOrch {
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

const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export function tempDir(prefix = 'orch-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Runs the orch CLI to completion. */
export function runOrch(args: string[], options: {env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number} = {}): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [orchBin, ...args], {env: {...process.env, ...options.env}, stdio: ['pipe', 'pipe', 'pipe']})
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      running.delete(child)
      resolvePromise({code, stdout, stderr})
    })
    child.stdin.end(options.input ?? '')
  })
}

/** Starts `orch server --port 0` and resolves once it logs its URL and /readyz answers 200. */
export async function startOrchServer(args: string[] = [], options: {dataDir?: string; env?: NodeJS.ProcessEnv} = {}): Promise<RunningOrch> {
  const dataDir = options.dataDir ?? tempDir()
  const child = spawn(process.execPath, [orchBin, 'server', '--data-dir', dataDir, '--port', '0', ...args], {
    env: {...process.env, ...options.env},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let output = ''
  const exited = new Promise<number | null>((resolveExit) =>
    child.on('exit', (code) => {
      running.delete(child)
      resolveExit(code)
    }),
  )
  const url = await new Promise<string>((resolveUrl, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /serving url=(\S+)/.exec(output)
      if (match) resolveUrl(match[1])
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`orch server exited with ${code} before serving:\n${output}`)))
  })
  const server: RunningOrch = {
    url,
    dataDir,
    child,
    logs: () => output,
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
      if (!options.dataDir) rmSync(dataDir, {recursive: true, force: true})
    },
  }
  return server
}
