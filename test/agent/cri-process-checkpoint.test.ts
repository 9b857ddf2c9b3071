// CheckpointContainer of the built-in process runtime, through the CRI client: the archive's
// contents and mode, freezing and resuming, one checkpoint at a time per container, failures that
// leave nothing behind.
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient, CriError} from '../../src/agent/cri/client.js'
import type {DeepPartial, PodSandboxConfig} from '../../src/agent/cri/types.js'
import type {CheckpointSummary} from '../../src/agent/runtime/process/checkpoint.js'
import {readStat} from '../../src/agent/runtime/process/procfs.js'
import {TarWriter} from '../../src/agent/runtime/process/tar.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'
import {listTar, readTarEntry, type TarEntry} from '../support/tar.js'

const BALLAST_MIB = 64
const BALLAST_BYTE = 0x5a
// a small HTTP server holding BALLAST_MIB of memory filled with BALLAST_BYTE
const SERVER_SCRIPT = `
const ballast = Buffer.alloc(${BALLAST_MIB} * 1024 * 1024, ${BALLAST_BYTE})
require('node:http').createServer((req, res) => res.end('alive ' + ballast[12345])).listen(0, '127.0.0.1', function () {
  console.log('listening ' + this.address().port)
})`

async function waitForFile(path: string, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const match = existsSync(path) ? pattern.exec(readFileSync(path, 'utf8')) : null
    if (match) return match
    if (Date.now() > deadline) throw new Error(`${path} never matched ${pattern}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function vmRss(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
}

function notStopped(pid: number): boolean {
  const stat = readStat(pid)
  return stat !== null && stat.state !== 'T' && stat.state !== 't'
}

function entry(entries: TarEntry[], name: string): TarEntry {
  const found = entries.find((candidate) => candidate.name === name)
  assert.ok(found, `archive has ${name}`)
  return found
}

async function rejectsWith(promise: Promise<unknown>, codeName: string, message?: RegExp): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof CriError, `expected a CriError, got ${error}`)
    assert.equal(error.codeName, codeName, error.message)
    if (message) assert.match(error.message, message)
    return
  }
  assert.fail(`expected ${codeName}`)
}

interface Started {
  id: string
  pid: number
  logPath: string
  port: number
}

function suite(name: string, cgroupRoot: false | undefined): void {
  describe(name, {timeout: 180_000}, () => {
    let dir: string
    let server: ProcessRuntimeServer
    let client: CriClient
    let counter = 0

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'orch-cri-checkpoint-'))
      server = await startProcessRuntime({rootDir: join(dir, 'root'), cgroupRoot})
      client = new CriClient({endpoint: server.endpoint, timeoutMs: 60_000})
      await client.pullImage('busybox')
    })

    after(async () => {
      client?.close()
      await server?.close()
      rmSync(dir, {recursive: true, force: true})
    })

    async function start(command: string[]): Promise<Started> {
      counter++
      const config: DeepPartial<PodSandboxConfig> = {metadata: {name: `pod-${counter}`, uid: `uid-${counter}`, namespace: 'default', attempt: 0}}
      const sandboxId = await client.runPodSandbox(config)
      const id = await client.createContainer(sandboxId, {metadata: {name: 'main'}, image: {image: 'busybox'}, command, logPath: 'main.log'}, config)
      await client.startContainer(id)
      const response = await client.containerStatus(id, true)
      const pid = Number(JSON.parse(response.info.info!).pid)
      return {id, pid, logPath: response.status!.logPath, port: 0}
    }

    async function startServer(): Promise<Started> {
      const started = await start([process.execPath, '-e', SERVER_SCRIPT])
      started.port = Number((await waitForFile(started.logPath, /listening (\d+)/))[1])
      return started
    }

    it('a checkpoint of a running HTTP server: a 0600 tar with config, maps, open files, log and memory matching VmRSS; the server keeps running', async () => {
      const {id, pid, port} = await startServer()
      const rss = vmRss(pid)
      const location = join(dir, 'checkpoints', 'checkpoint-web-main.tar')
      await client.checkpointContainer(id, location, 60)
      const stat = statSync(location)
      assert.equal(stat.mode & 0o777, 0o600, 'readable by its owner (root) only')
      assert.equal(existsSync(`${location}.partial`), false)

      const entries = listTar(location)
      const config = JSON.parse(readTarEntry(location, entry(entries, 'config.json')).toString())
      assert.equal(config.id, id)
      assert.equal(config.state, 'CONTAINER_RUNNING')
      assert.deepEqual(config.config.command, [process.execPath, '-e', SERVER_SCRIPT])
      const summary = JSON.parse(readTarEntry(location, entry(entries, 'dump.json')).toString()) as CheckpointSummary
      assert.equal(summary.freezer, server.runtime.cgroups.root ? 'cgroup' : 'SIGSTOP')
      assert.equal(summary.restorable, false)
      assert.match(readTarEntry(location, entry(entries, `proc/${pid}/maps`)).toString(), /\[heap\]|\[stack\]/)
      assert.match(readTarEntry(location, entry(entries, `proc/${pid}/fds.txt`)).toString(), /socket:\[\d+\]/, 'the listening socket is among the open files')
      assert.match(readTarEntry(location, entry(entries, 'container.log')).toString(), /stdout F listening/)

      const memory = entries.filter((candidate) => candidate.name.startsWith(`proc/${pid}/mem/`))
      for (const region of memory) {
        assert.match(region.name, /\/mem\/[0-9a-f]+-[0-9a-f]+\.bin$/)
        const [start, end] = region.name.slice(region.name.lastIndexOf('/') + 1, -4).split('-').map((hex) => BigInt(`0x${hex}`))
        assert.equal(BigInt(region.size), end! - start!, `${region.name}: size matches its address range`)
      }
      const dumped = memory.reduce((sum, region) => sum + region.size, 0)
      const processDump = summary.processes.find((dump) => dump.pid === pid)!
      assert.equal(dumped, processDump.dumpedBytes)
      // the resident memory, not the reserved address space
      assert.ok(dumped >= rss * 0.8, `dumped ${dumped} bytes, VmRSS was ${rss}`)
      assert.ok(dumped <= rss * 1.25 + 8 * 1024 * 1024, `dumped ${dumped} bytes, VmRSS was ${rss}`)
      assert.ok(dumped <= processDump.readableMappedBytes, `dumped ${dumped} <= mapped ${processDump.readableMappedBytes}`)
      // the ballast is in there
      let ballast = 0
      const page = Buffer.alloc(4096, BALLAST_BYTE)
      for (const region of memory.filter((candidate) => candidate.size >= 1024 * 1024)) {
        const data = readTarEntry(location, region)
        for (let offset = 0; offset + 4096 <= data.length; offset += 4096) if (data.subarray(offset, offset + 4096).equals(page)) ballast += 4096
      }
      assert.ok(ballast >= (BALLAST_MIB - 2) * 1024 * 1024, `found ${ballast} bytes of the ballast`)

      assert.ok(notStopped(pid), 'resumed')
      if (server.runtime.cgroups.root) assert.match(readFileSync(join(server.runtime.cgroups.root, id, 'cgroup.events'), 'utf8'), /^frozen 0$/m)
      const response = await fetch(`http://127.0.0.1:${port}/`)
      assert.equal(await response.text(), `alive ${BALLAST_BYTE}`)
      assert.equal((await client.containerStatus(id)).status!.state, 'CONTAINER_RUNNING')
      await client.stopContainer(id, 0)
    })

    it('every process of the container is in the archive and resumed afterwards', async () => {
      const {id, pid, logPath} = await start(['sh', '-c', 'sleep 3600 & echo "child $!"; wait'])
      const child = Number((await waitForFile(logPath, /child (\d+)/))[1])
      const location = join(dir, 'two.tar')
      await client.checkpointContainer(id, location, 30)
      const names = listTar(location).map((candidate) => candidate.name)
      assert.ok(names.includes(`proc/${pid}/maps`))
      assert.ok(names.includes(`proc/${child}/maps`))
      assert.ok(notStopped(pid) && notStopped(child))
      const tar = spawnSync('tar', ['-tf', location], {encoding: 'utf8'})
      if (tar.status !== null && !tar.error) assert.deepEqual(tar.stdout.trim().split('\n'), names, 'the system tar reads the archive')
      await client.stopContainer(id, 0)
    })

    it('concurrent checkpoints of one container run one after the other', async () => {
      const {id, pid} = await start(['sleep', '3600'])
      const locations = [join(dir, 'c1.tar'), join(dir, 'c2.tar'), join(dir, 'c3.tar')]
      await Promise.all(locations.map((location) => client.checkpointContainer(id, location, 30)))
      const spans = locations
        .map((location) => JSON.parse(readTarEntry(location, entry(listTar(location), 'dump.json')).toString()) as CheckpointSummary)
        .map((summary) => [BigInt(summary.startedAt), BigInt(summary.finishedAt)] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      for (let i = 1; i < spans.length; i++) assert.ok(spans[i]![0] >= spans[i - 1]![1], 'no overlap')
      assert.ok(notStopped(pid))
      await client.stopContainer(id, 0)
    })

    it('a checkpoint of an unknown container is NotFound; of an exited one FailedPrecondition; a relative location InvalidArgument', async () => {
      await rejectsWith(client.checkpointContainer('0123456789abcdef', join(dir, 'x.tar'), 5), 'NOT_FOUND')
      const {id} = await start(['true'])
      while ((await client.containerStatus(id)).status!.state !== 'CONTAINER_EXITED') await new Promise((resolve) => setTimeout(resolve, 20))
      await rejectsWith(client.checkpointContainer(id, join(dir, 'x.tar'), 5), 'FAILED_PRECONDITION', /not running/)
      const {id: running} = await start(['sleep', '3600'])
      await rejectsWith(client.checkpointContainer(running, 'relative.tar', 5), 'INVALID_ARGUMENT')
      assert.equal(existsSync(join(dir, 'x.tar')), false)
      await client.stopContainer(running, 0)
    })

    const root = process.getuid?.() === 0
    it('a disk-full checkpoint leaves no file behind and the container keeps running', {skip: root ? false : 'mounting a small tmpfs needs root'}, async (t) => {
      const small = join(dir, 'small')
      mkdirSync(small)
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', small], {encoding: 'utf8'})
      if (mounted.status !== 0) {
        t.skip(`cannot mount a tmpfs here: ${mounted.stderr.trim() || mounted.error?.message}`)
        return
      }
      try {
        const {id, pid, port} = await startServer()
        await rejectsWith(client.checkpointContainer(id, join(small, 'full.tar'), 60), 'RESOURCE_EXHAUSTED', /no space left/)
        assert.deepEqual(readdirSync(small), [], 'nothing left behind')
        assert.ok(notStopped(pid), 'resumed after the failure')
        const response = await fetch(`http://127.0.0.1:${port}/`)
        assert.equal(response.status, 200)
        await response.text()
        await client.stopContainer(id, 0)
      } finally {
        spawnSync('umount', [small])
      }
    })
  })
}

describe('ustar writer', () => {
  it('writes files, directories and links; a name over 100 bytes goes into the ustar prefix; tar tools agree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-tar-'))
    try {
      const path = join(dir, 'a.tar')
      const chunks: Buffer[] = []
      const tar = new TarWriter(async (chunk) => {
        chunks.push(Buffer.from(chunk))
      }, 1000)
      const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/file.bin`
      await tar.addDirectory('bin', {mode: 0o755})
      await tar.addFile('bin/hello', 'hello\n', {mode: 0o755})
      await tar.addSymlink('bin/hi', 'hello')
      await tar.addFile(long, Buffer.alloc(1500, 7))
      await tar.finish()
      writeFileSync(path, Buffer.concat(chunks))
      assert.equal(statSync(path).size % 512, 0)
      const entries = listTar(path)
      assert.deepEqual(entries.map((e) => [e.name, e.type, e.mode, e.size, e.linkTarget]), [
        ['bin/', '5', 0o755, 0, ''],
        ['bin/hello', '0', 0o755, 6, ''],
        ['bin/hi', '2', 0o777, 0, 'hello'],
        [long, '0', 0o600, 1500, ''],
      ])
      assert.ok(readTarEntry(path, entries[3]!).equals(Buffer.alloc(1500, 7)))
      const listed = spawnSync('tar', ['-tf', path], {encoding: 'utf8'})
      if (!listed.error) assert.deepEqual(listed.stdout.trim().split('\n'), entries.map((e) => e.name))
      await assert.rejects(async () => {
        const bad = new TarWriter(async () => {})
        await bad.beginFile('x', 10)
        await bad.write(Buffer.alloc(11))
      }, /past the declared size/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

suite('process runtime checkpoint (cgroup freezer when the host allows it)', undefined)
suite('process runtime checkpoint without cgroups (SIGSTOP / SIGCONT)', false)
