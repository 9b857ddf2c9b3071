// Starts a throw-away containerd for tests: its own config, socket, root and state under a temp dir,
// the CRI plugin with host networking only (no CNI), OOM score adjustments restricted, and a tiny
// busybox image built here from the busybox-static binary (a docker-archive tar written by hand:
// manifest.json, image config, one layer with /bin/busybox and /bin/sh, /bin/sleep links), imported
// with `ctr` and used as the sandbox image too. stop() removes every pod, kills containerd and any
// shim it left, unmounts what is still mounted under the temp dir and deletes it.
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {createHash} from 'node:crypto'
import {accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {delimiter, join} from 'node:path'
import {CriClient} from '../../src/agent/cri/client.js'
import {TarWriter} from '../../src/agent/runtime/process/tar.js'
import {cleanUpAtExit} from './children.js'
import {mountsUnder} from './mounts.js'

export const TEST_IMAGE = 'docker.io/orch/busybox:test'

const READY_TIMEOUT_MS = 30_000
const STOP_GRACE_MS = 5_000

export interface RunningContainerd {
  /** CRI endpoint, `unix:///...` */
  endpoint: string
  socketPath: string
  /** the image to run: busybox with sh and sleep */
  image: string
  /** containerd's log so far (for failure messages) */
  log(): string
  stop(): Promise<void>
}

function findBinary(name: string, extra: string[] = []): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin', '/bin', '/sbin', ...extra]
  for (const dir of dirs) {
    if (!dir) continue
    try {
      accessSync(join(dir, name), constants.X_OK)
      return join(dir, name)
    } catch {
      // next
    }
  }
  return null
}

/** Why containerd tests cannot run here (containerd is not installed), or null. */
export function containerdMissing(): string | null {
  return findBinary('containerd') ? null : 'containerd is not installed (Debian: apt-get install containerd runc busybox-static)'
}

/** What else a run needs; checked by startContainerd, which fails (not skips) without it. */
function prerequisiteProblem(): string | null {
  for (const tool of ['ctr', 'runc', 'containerd-shim-runc-v2']) if (!findBinary(tool)) return `${tool} is not installed (Debian packages containerd, runc)`
  if (!staticBusybox()) return 'no static busybox found (Debian package busybox-static, or set BUSYBOX_STATIC)'
  if (process.getuid?.() !== 0) return 'containerd needs root'
  return null
}

function staticBusybox(): string | null {
  for (const candidate of [process.env.BUSYBOX_STATIC, '/bin/busybox', '/usr/bin/busybox']) {
    if (!candidate) continue
    try {
      const head = readFileSync(candidate).subarray(0, 4096)
      // a dynamically linked ELF names its interpreter; a static one does not
      if (head.subarray(0, 4).toString('latin1') === '\x7fELF' && !head.includes('ld-linux')) return candidate
    } catch {
      // next
    }
  }
  return null
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex')

async function tarBuffer(fill: (tar: TarWriter) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = []
  const tar = new TarWriter(async (chunk) => {
    chunks.push(Buffer.from(chunk))
  })
  await fill(tar)
  await tar.finish()
  return Buffer.concat(chunks)
}

/** A docker-archive (`docker save` layout) of a one-layer busybox image tagged TEST_IMAGE. */
export async function buildBusyboxImage(busyboxPath: string): Promise<Buffer> {
  const busybox = readFileSync(busyboxPath)
  const mtime = new Date(0)
  const layer = await tarBuffer(async (tar) => {
    for (const dir of ['bin', 'dev', 'etc', 'proc', 'sys', 'tmp']) await tar.addDirectory(dir, {mode: dir === 'tmp' ? 0o1777 : 0o755, mtime})
    await tar.addFile('bin/busybox', busybox, {mode: 0o755, mtime})
    for (const link of ['sh', 'sleep', 'cat', 'echo', 'ls']) await tar.addSymlink(`bin/${link}`, 'busybox', {mtime})
  })
  const layerDigest = sha256(layer)
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: mtime.toISOString(),
      config: {Env: ['PATH=/bin'], Cmd: ['/bin/sleep', '2147483647']},
      rootfs: {type: 'layers', diff_ids: [`sha256:${layerDigest}`]},
      history: [{created: mtime.toISOString(), created_by: 'orch test support: busybox-static'}],
    }),
  )
  const configName = `${sha256(config)}.json`
  const layerName = `${layerDigest}/layer.tar`
  const manifest = JSON.stringify([{Config: configName, RepoTags: [TEST_IMAGE], Layers: [layerName]}])
  return tarBuffer(async (tar) => {
    await tar.addFile(configName, config, {mode: 0o644, mtime})
    await tar.addDirectory(layerDigest, {mode: 0o755, mtime})
    await tar.addFile(layerName, layer, {mode: 0o644, mtime})
    await tar.addFile('manifest.json', manifest, {mode: 0o644, mtime})
  })
}

function configToml(dir: string, socketPath: string): string {
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${socketPath}"

[ttrpc]
  address = "${socketPath}.ttrpc"

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${TEST_IMAGE}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${dir}/runc"

  # no CNI plugins: only host-network pods can run
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${dir}/cni/bin"
    conf_dir = "${dir}/cni/conf"
`
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** Processes whose command line names our socket (containerd's shims). */
function shimsOf(socketPath: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (argv.includes(socketPath) || argv.includes(`unix://${socketPath}`)) pids.push(Number(entry))
    } catch {
      // gone
    }
  }
  return pids
}

function killLeftovers(socketPath: string, dir: string): void {
  for (const pid of shimsOf(socketPath)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
  for (const point of mountsUnder(dir)) spawnSync('umount', ['-l', point], {stdio: 'ignore'})
  rmSync(dir, {recursive: true, force: true})
}

/**
 * Removes a (now empty) cgroup parent that runc created for test pods, in every hierarchy (cgroup v1
 * controllers and v2); pods of a test use their own parent so that nothing is left in the host's.
 */
export function removeCgroupParent(parent: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => / - cgroup2? /.test(line))
    .map((line) => line.split(' ')[4]!)
  for (const mount of mounts) {
    try {
      rmdirSync(join(mount, parent))
    } catch {
      // not there, or not empty
    }
  }
}

/** Starts containerd and imports the busybox image; resolves once the CRI answers. */
export async function startContainerd(): Promise<RunningContainerd> {
  const missing = containerdMissing() ?? prerequisiteProblem()
  if (missing) throw new Error(`cannot start containerd: ${missing}`)
  const dir = mkdtempSync(join(tmpdir(), 'orch-containerd-'))
  const socketPath = join(dir, 'containerd.sock')
  for (const sub of ['root', 'state', 'opt', 'runc', 'cni/bin', 'cni/conf']) mkdirSync(join(dir, sub), {recursive: true})
  writeFileSync(join(dir, 'config.toml'), configToml(dir, socketPath))
  const child = spawn(findBinary('containerd')!, ['--config', join(dir, 'config.toml')], {stdio: ['ignore', 'ignore', 'pipe']})
  let log = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => {
    log = (log + chunk).slice(-20_000)
  })
  const killNow = (): void => {
    try {
      child.kill('SIGKILL')
    } catch {
      // gone
    }
    killLeftovers(socketPath, dir)
  }
  const forget = cleanUpAtExit(killNow)

  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // remove every pod first, so the shims and their containers go away cleanly
        const client = new CriClient({endpoint: `unix://${socketPath}`, timeoutMs: 20_000})
        try {
          for (const sandbox of await client.listPodSandbox()) {
            await client.stopPodSandbox(sandbox.id).catch(() => {})
            await client.removePodSandbox(sandbox.id).catch(() => {})
          }
        } catch {
          // containerd not answering: the kill below does it
        } finally {
          client.close()
        }
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
        await exited(child)
        clearTimeout(timer)
      }
      forget()
      killLeftovers(socketPath, dir)
    })()
    return stopped
  }

  try {
    const client = new CriClient({endpoint: `unix://${socketPath}`, timeoutMs: 5_000})
    try {
      const deadline = Date.now() + READY_TIMEOUT_MS
      const died = exited(child).then(() => {
        throw new Error(`containerd exited during startup (${child.exitCode ?? child.signalCode}):\n${log.slice(-4000)}`)
      })
      died.catch(() => {})
      await Promise.race([client.waitForReady(READY_TIMEOUT_MS), died])
      // the CRI plugin may come up a little after the socket
      while (true) {
        try {
          await Promise.race([client.version(), died])
          break
        } catch (error) {
          if (child.exitCode !== null || Date.now() > deadline) throw error
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
    } finally {
      client.close()
    }
    const archive = join(dir, 'busybox.tar')
    writeFileSync(archive, await buildBusyboxImage(staticBusybox()!))
    const imported = spawnSync(findBinary('ctr')!, ['-n', 'k8s.io', '-a', socketPath, 'images', 'import', archive], {encoding: 'utf8', timeout: 60_000})
    if (imported.status !== 0) throw new Error(`ctr images import failed (${imported.status ?? imported.signal}): ${imported.stderr || imported.stdout}`)
  } catch (error) {
    await stop()
    throw error
  }
  return {endpoint: `unix://${socketPath}`, socketPath, image: TEST_IMAGE, log: () => log, stop}
}
