// Readings of the host the agent runs on: identity (machine id, boot id, OS image, kernel), addresses,
// capacity (CPUs, memory, swap) and the pressure signals behind the node's MemoryPressure,
// DiskPressure and PIDPressure conditions. Everything is read from /proc, /sys and /etc at call time.
import {existsSync, readFileSync, statfsSync} from 'node:fs'
import {arch, cpus, hostname, networkInterfaces, platform, release, totalmem} from 'node:os'
import {join} from 'node:path'

function readTrimmed(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim()
    return text === '' ? undefined : text
  } catch {
    return undefined
  }
}

/** `/proc/meminfo` as bytes per field (MemTotal, MemAvailable, SwapTotal, SwapFree, ...). */
export function readMeminfo(text = readTrimmed('/proc/meminfo') ?? ''): Record<string, number> {
  const fields: Record<string, number> = {}
  for (const line of text.split('\n')) {
    const match = /^(\w+(?:\(\w+\))?):\s+(\d+)(?:\s+kB)?$/.exec(line.trim())
    if (match) fields[match[1]] = Number(match[2]) * (line.includes('kB') ? 1024 : 1)
  }
  return fields
}

/** The OS image as /etc/os-release names it (PRETTY_NAME), as the kubelet reports it. */
export function osImage(text = readTrimmed('/etc/os-release') ?? readTrimmed('/usr/lib/os-release') ?? ''): string {
  const match = /^PRETTY_NAME=(.*)$/m.exec(text)
  if (!match) return 'Unknown'
  return match[1].replace(/^["']|["']$/g, '')
}

/** The first non-internal IPv4 address (else IPv6, else loopback): the node's InternalIP. */
export function internalIP(): string {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? [])
  return (
    all.find((a) => a.family === 'IPv4' && !a.internal)?.address ??
    all.find((a) => a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'))?.address ??
    '127.0.0.1'
  )
}

export interface HostIdentity {
  hostname: string
  machineID: string
  systemUUID: string
  bootID: string
  kernelVersion: string
  osImage: string
  operatingSystem: string
  architecture: string
}

const GO_ARCH: Record<string, string> = {x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64'}

export function hostIdentity(): HostIdentity {
  const machineID = readTrimmed('/etc/machine-id') ?? readTrimmed('/var/lib/dbus/machine-id') ?? ''
  return {
    hostname: hostname().toLowerCase(),
    machineID,
    systemUUID: (readTrimmed('/sys/class/dmi/id/product_uuid') ?? machineID).toUpperCase(),
    bootID: readTrimmed('/proc/sys/kernel/random/boot_id') ?? '',
    kernelVersion: release(),
    osImage: osImage(),
    operatingSystem: platform(),
    architecture: GO_ARCH[arch()] ?? arch(),
  }
}

export interface HostCapacity {
  cpu: number
  memoryBytes: number
  swapBytes: number
  /** the kernel's limit on process ids */
  pidMax: number
  /** filesystem of the agent's root dir */
  diskBytes: number
}

function diskOf(path: string): {total: number; available: number; files: number; freeFiles: number} {
  try {
    const s = statfsSync(path)
    return {total: s.blocks * s.bsize, available: s.bavail * s.bsize, files: s.files, freeFiles: s.ffree}
  } catch {
    return {total: 0, available: 0, files: 0, freeFiles: 0}
  }
}

export function hostCapacity(rootDir: string): HostCapacity {
  const meminfo = readMeminfo()
  return {
    cpu: cpus().length,
    memoryBytes: meminfo.MemTotal ?? totalmem(),
    swapBytes: meminfo.SwapTotal ?? 0,
    pidMax: Number(readTrimmed('/proc/sys/kernel/pid_max') ?? 32768),
    diskBytes: diskOf(rootDir).total,
  }
}

/** Is swap on? (SwapTotal > 0, as the kubelet reads /proc/swaps.) */
export function swapEnabled(meminfo = readMeminfo()): boolean {
  return (meminfo.SwapTotal ?? 0) > 0
}

/** statfs type of a cgroup2 mount (CGROUP2_SUPER_MAGIC) */
const CGROUP2_SUPER_MAGIC = 0x63677270

export interface CgroupReading {
  /** /sys/fs/cgroup is the unified (v2) hierarchy */
  v2: boolean
  /** swap can be limited: memory.swap.max in our own v2 cgroup, or memory.memsw.limit_in_bytes on v1 */
  swapController: boolean
}

/** The cgroup mode and swap controller, read as the kubelet reads them (isCgroup2UnifiedMode, swapControllerAvailable). */
export function cgroupReading(): CgroupReading {
  let v2 = false
  try {
    v2 = statfsSync('/sys/fs/cgroup').type === CGROUP2_SUPER_MAGIC
  } catch {
    v2 = false
  }
  let probe = '/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes'
  if (v2) {
    // memory.swap.max does not exist in the root cgroup: look in our own (the `0::<path>` line)
    const self = /^0::(.*)$/m.exec(readTrimmed('/proc/self/cgroup') ?? '')?.[1]
    if (self === undefined) return {v2, swapController: false}
    probe = join('/sys/fs/cgroup', self, 'memory.swap.max')
  }
  return {v2, swapController: existsSync(probe)}
}

export interface PressureReading {
  status: 'True' | 'False'
  reason: string
  message: string
}

export interface HostPressure {
  memory: PressureReading
  disk: PressureReading
  pid: PressureReading
}

/** The kubelet's default hard eviction thresholds: memory.available<100Mi, nodefs.available<10%, nodefs.inodesFree<5%; pids: fewer than 10% free. */
export function hostPressure(rootDir: string): HostPressure {
  const meminfo = readMeminfo()
  const memAvailable = meminfo.MemAvailable ?? meminfo.MemFree ?? Number.MAX_SAFE_INTEGER
  const disk = diskOf(rootDir)
  const pidMax = Number(readTrimmed('/proc/sys/kernel/pid_max') ?? 32768)
  const threads = Number((readTrimmed('/proc/loadavg') ?? '').split(' ')[3]?.split('/')[1] ?? 0)
  const memoryLow = memAvailable < 100 * 1024 * 1024
  const diskLow = disk.total > 0 && (disk.available / disk.total < 0.1 || (disk.files > 0 && disk.freeFiles / disk.files < 0.05))
  const pidLow = threads > 0.9 * pidMax
  return {
    memory: memoryLow
      ? {status: 'True', reason: 'AgentHasInsufficientMemory', message: `agent has insufficient memory available (${memAvailable} bytes)`}
      : {status: 'False', reason: 'AgentHasSufficientMemory', message: 'agent has sufficient memory available'},
    disk: diskLow
      ? {status: 'True', reason: 'AgentHasDiskPressure', message: 'agent has disk pressure'}
      : {status: 'False', reason: 'AgentHasNoDiskPressure', message: 'agent has no disk pressure'},
    pid: pidLow
      ? {status: 'True', reason: 'AgentHasInsufficientPID', message: `agent has insufficient PID available (${threads} of ${pidMax} in use)`}
      : {status: 'False', reason: 'AgentHasSufficientPID', message: 'agent has sufficient PID available'},
  }
}
