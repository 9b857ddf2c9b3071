// ExecSync of the process runtime: runs a command the way the container runs (its environment,
// working directory, user and cgroup) and returns its output and exit code. Used by exec probes.
import {spawn} from 'node:child_process'
import {constants as osConstants} from 'node:os'
import {deadlineExceeded} from './errors.js'
import {prepareCommand, type LaunchSpec} from './launch.js'

/** Output kept per stream; the rest is dropped (the agent truncates probe output far below this). */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024

export interface ExecResult {
  stdout: Buffer
  stderr: Buffer
  exitCode: number
}

/** Runs the command; timeoutSeconds > 0 kills it (and everything it started) after that long. */
export async function execSync(spec: Omit<LaunchSpec, 'log'>, timeoutSeconds: number): Promise<ExecResult> {
  const {file, args} = prepareCommand(spec)
  const child = spawn(file, args, {cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe']})
  const collect = (stream: NodeJS.ReadableStream): Promise<Buffer> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = []
      let size = 0
      stream.on('data', (chunk: Buffer) => {
        if (size >= MAX_OUTPUT_BYTES) return
        chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size))
        size += chunk.length
      })
      stream.on('close', () => resolve(Buffer.concat(chunks)))
      stream.on('end', () => resolve(Buffer.concat(chunks)))
    })
  const stdout = collect(child.stdout!)
  const stderr = collect(child.stderr!)
  let timedOut = false
  const timer =
    timeoutSeconds > 0
      ? setTimeout(() => {
          timedOut = true
          killGroup(child.pid)
        }, timeoutSeconds * 1000)
      : undefined
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      // what the command left behind goes with it
      killGroup(child.pid)
      resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0))
    })
  }).finally(() => clearTimeout(timer))
  if (timedOut) throw deadlineExceeded(`command ${JSON.stringify(spec.argv)} timed out after ${timeoutSeconds}s`)
  return {stdout: await stdout, stderr: await stderr, exitCode}
}

function killGroup(pid: number | undefined): void {
  if (!pid) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // gone
  }
}
