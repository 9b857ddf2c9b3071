// Starts a container's command as a host process: its own session and process group (detached),
// the container's environment and working directory, stdout/stderr into the CRI log, and - before
// the command runs - moved into its cgroup, given its OOM score and (with setpriv) its user. A tiny
// /bin/sh prologue does that inside the new process and then execs the command, so the command's
// pid is the one the runtime started and nothing it forks escapes the cgroup.
import {spawn} from 'node:child_process'
import {accessSync, constants, statSync} from 'node:fs'
import {constants as osConstants} from 'node:os'
import {isAbsolute, join, resolve} from 'node:path'
import {nowNs} from './clock.js'
import type {CriLogWriter} from './cri-log.js'
import {killCgroup} from './cgroup.js'
import {failedPrecondition} from './errors.js'

/** The PATH a container gets when its environment has none (runc's default). */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/**
 * How long the runtime waits, after the container's main process exited and the rest of its group
 * was killed, for its stdout/stderr to close (they stay open only if a process escaped the group
 * and holds them); then the pipes are closed from this side.
 */
const STDIO_DRAIN_MS = 2_000

const PROLOGUE = [
  'cg="$1"; oom="$2"; ready="$3"; shift 3',
  'if [ "$cg" != - ]; then echo $$ > "$cg" || exit 125; fi',
  'if [ "$oom" != - ]; then echo "$oom" > /proc/self/oom_score_adj || exit 125; fi',
  // the launcher waits for this byte: the process is in its cgroup before it is reported running,
  // as a runtime's start returns only once the process is set up
  'if [ "$ready" = 3 ]; then printf . >&3; exec 3>&-; fi',
  'exec "$@"',
].join('\n')

export interface LaunchSpec {
  /** the command; argv[0] is resolved against the environment's PATH */
  argv: string[]
  env: Record<string, string>
  cwd: string
  /** the container's cgroup directory, or null */
  cgroupPath: string | null
  oomScoreAdj: number | null
  /** run as this user (needs setpriv from util-linux); null keeps the runtime's user */
  user: {uid: number; gid: number; groups: number[]} | null
  log: CriLogWriter | null
}

export interface ExitInfo {
  exitCode: number
  /** the signal that killed the main process, if one did */
  signal: string | null
  finishedAt: bigint
}

export interface ContainerProcess {
  pid: number
  startedAt: bigint
  /** resolves once the main process exited, the rest of its group is killed and its output is logged */
  exited: Promise<ExitInfo>
  /** sends a signal to the container's process group */
  signal(name: NodeJS.Signals): void
}

/** The absolute path of the executable, as execvp would find it; throws FAILED_PRECONDITION like runc does. */
export function resolveExecutable(command: string, path: string, cwd: string): string {
  const candidates = command.includes('/') ? [resolve(cwd, command)] : path.split(':').filter(Boolean).map((dir) => join(isAbsolute(dir) ? dir : resolve(cwd, dir), command))
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // try the next one
    }
  }
  throw failedPrecondition(
    command.includes('/')
      ? `exec: ${JSON.stringify(command)}: no such executable file`
      : `exec: ${JSON.stringify(command)}: executable file not found in $PATH`,
  )
}

let setprivPath: string | null | undefined
function setpriv(): string | null {
  if (setprivPath !== undefined) return setprivPath
  setprivPath = null
  for (const dir of ['/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    try {
      accessSync(join(dir, 'setpriv'), constants.X_OK)
      setprivPath = join(dir, 'setpriv')
      break
    } catch {
      // not here
    }
  }
  return setprivPath
}

/** The /bin/sh prologue command line that sets the process up and execs the command; checks cwd and argv[0]. */
export function prepareCommand(spec: Omit<LaunchSpec, 'log'>, signalReadyOnFd3 = false): {file: string; args: string[]; executable: string} {
  let cwdStat
  try {
    cwdStat = statSync(spec.cwd)
  } catch {
    throw failedPrecondition(`chdir to cwd (${JSON.stringify(spec.cwd)}) set in config.json failed: no such file or directory`)
  }
  if (!cwdStat.isDirectory()) throw failedPrecondition(`chdir to cwd (${JSON.stringify(spec.cwd)}): not a directory`)
  if (spec.argv.length === 0) throw failedPrecondition('no command to run')
  const executable = resolveExecutable(spec.argv[0]!, spec.env.PATH ?? DEFAULT_PATH, spec.cwd)
  let command = [executable, ...spec.argv.slice(1)]
  if (spec.user && (spec.user.uid !== process.getuid?.() || spec.user.gid !== process.getgid?.() || spec.user.groups.length > 0)) {
    const tool = setpriv()
    if (!tool) throw failedPrecondition('running as another user needs setpriv (util-linux), which is not installed')
    const groups = spec.user.groups.length > 0 ? [`--groups=${spec.user.groups.join(',')}`] : ['--clear-groups']
    command = [tool, `--reuid=${spec.user.uid}`, `--regid=${spec.user.gid}`, ...groups, '--', ...command]
  }
  const cgroupProcs = spec.cgroupPath ? join(spec.cgroupPath, 'cgroup.procs') : '-'
  const oom = spec.oomScoreAdj === null ? '-' : String(spec.oomScoreAdj)
  return {file: '/bin/sh', args: ['-c', PROLOGUE, 'orch-start', cgroupProcs, oom, signalReadyOnFd3 ? '3' : '-', ...command], executable}
}

/** Starts the process; rejects (FAILED_PRECONDITION) when it cannot be started at all. */
export async function launch(spec: LaunchSpec): Promise<ContainerProcess> {
  const {file, args, executable} = prepareCommand(spec, true)
  const child = spawn(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  await new Promise<void>((resolvePromise, reject) => {
    child.once('spawn', resolvePromise)
    child.once('error', (error) => reject(failedPrecondition(`cannot start ${executable}: ${error.message}`)))
  })
  const pid = child.pid!
  const startedAt = nowNs()
  if (spec.log) {
    spec.log.attach(child.stdout!, 'stdout')
    spec.log.attach(child.stderr!, 'stderr')
  } else {
    child.stdout!.resume()
    child.stderr!.resume()
  }
  const signalGroup = (name: NodeJS.Signals): void => {
    try {
      process.kill(-pid, name)
    } catch {
      // the group is gone
    }
  }
  const exited = new Promise<ExitInfo>((resolvePromise) => {
    child.once('exit', (code, signal) => {
      const finishedAt = nowNs()
      // like the end of a container's pid namespace: when the main process ends, everything else goes
      signalGroup('SIGKILL')
      if (spec.cgroupPath) killCgroup(spec.cgroupPath)
      const exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0)
      const info: ExitInfo = {exitCode, signal, finishedAt}
      const drained = new Promise<void>((done) => {
        if (child.stdout!.closed && child.stderr!.closed) return done()
        const timer = setTimeout(() => {
          child.stdout!.destroy()
          child.stderr!.destroy()
        }, STDIO_DRAIN_MS)
        child.once('close', () => {
          clearTimeout(timer)
          done()
        })
      })
      void drained.then(() => (spec.log ? spec.log.close() : undefined)).then(() => resolvePromise(info), () => resolvePromise(info))
    })
  })
  // the prologue's ready byte, or the pipe's end when it failed before it; waited for only now, with
  // the exit listener in place, so an exit meanwhile is not missed
  const ready = child.stdio[3] as NodeJS.ReadableStream
  await new Promise<void>((resolvePromise) => {
    ready.once('data', () => resolvePromise())
    ready.once('end', () => resolvePromise())
    ready.once('close', () => resolvePromise())
    ready.once('error', () => resolvePromise())
  })
  ready.resume()
  return {pid, startedAt, exited, signal: signalGroup}
}
