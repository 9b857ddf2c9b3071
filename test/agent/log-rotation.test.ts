// Container log rotation as the kubelet's ContainerLogManager does it (src/agent/pods/log-rotation.ts):
// the decisions (sizes, max files, naming, gzip of older rotated files, renaming back when the reopen
// fails), the configuration fields, `kubectl logs -f` going on across a rotation, and - end to end on
// the built-in process runtime - a chatty container whose log stays within containerLogMaxFiles files.
import assert from 'node:assert/strict'
import {mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, appendFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, afterEach, beforeEach, describe, it} from 'node:test'
import {gunzipSync} from 'node:zlib'
import {AgentConfigError, applyFlagOverrides, loadAgentConfiguration, parseAgentConfiguration} from '../../src/agent/config/load.js'
import type {ContainerStatusResponse} from '../../src/agent/cri/types.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {ContainerLogRotator, excessRotated, partitionRotated, quantityBytes, rotateLog, rotatedName} from '../../src/agent/pods/log-rotation.js'
import {streamContainerLog} from '../../src/agent/server/container-logs.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'
import {until} from '../support/until.js'

const quiet = createLogger({write: () => undefined})
const AT = new Date(2025, 0, 2, 3, 4, 5) // local time, as Go's time.Now().Format

describe('container log rotation decisions', () => {
  let dir: string
  let log: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-logrot-'))
    log = join(dir, '0.log')
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('rotated files are named <file>.<20060102-150405> in local time', () => {
    assert.equal(rotatedName('/x/0.log', AT), '/x/0.log.20250102-030405')
  })

  it('temporary files and rotated files already compressed are leftovers; maxFiles-2 newest rotated files are kept', () => {
    const files = ['l.20250101-000003', 'l.20250101-000001.gz', 'l.20250101-000002', 'l.20250101-000002.gz', 'l.20250101-000004.gz.tmp']
    assert.deepEqual(partitionRotated(files), {inUse: ['l.20250101-000003', 'l.20250101-000001.gz', 'l.20250101-000002.gz'], unused: ['l.20250101-000002', 'l.20250101-000004.gz.tmp']})
    assert.deepEqual(excessRotated(['l.20250101-000003', 'l.20250101-000001.gz', 'l.20250101-000002.gz'], 4), {remove: ['l.20250101-000001.gz'], keep: ['l.20250101-000002.gz', 'l.20250101-000003']})
    assert.deepEqual(excessRotated(['a', 'b'], 2), {remove: ['a', 'b'], keep: []})
  })

  it('a rotation removes leftovers and excess files, gzips the older rotated file, renames the current one and reopens', async () => {
    writeFileSync(`${log}.20250101-000001.gz`, 'oldest')
    writeFileSync(`${log}.20250101-000002`, 'older\n')
    writeFileSync(`${log}.20250101-000003`, 'newer\n')
    writeFileSync(`${log}.20250101-000003.gz.tmp`, 'leftover')
    writeFileSync(log, 'current\n')
    let reopened = 0
    const result = await rotateLog(log, {maxSizeBytes: 1, maxFiles: 3}, async () => {
      reopened++
      writeFileSync(log, '')
    }, AT)
    assert.equal(result, 'rotated')
    assert.equal(reopened, 1)
    assert.deepEqual(readdirSync(dir).sort(), ['0.log', '0.log.20250101-000003.gz', '0.log.20250102-030405'])
    assert.equal(gunzipSync(readFileSync(`${log}.20250101-000003.gz`)).toString(), 'newer\n')
    assert.equal(readFileSync(`${log}.20250102-030405`, 'utf8'), 'current\n')
    assert.equal(readFileSync(log, 'utf8'), '')
  })

  it('when ReopenContainerLog fails the current file is renamed back', async () => {
    writeFileSync(log, 'current\n')
    await assert.rejects(rotateLog(log, {maxSizeBytes: 1, maxFiles: 5}, async () => Promise.reject(new Error('CRI ReopenContainerLog: FAILED_PRECONDITION')), AT), /FAILED_PRECONDITION/)
    assert.deepEqual(readdirSync(dir), ['0.log'])
    assert.equal(readFileSync(log, 'utf8'), 'current\n')
  })

  it('a second rotation within the same second waits for a later round instead of overwriting', async () => {
    writeFileSync(`${log}.20250102-030405`, 'rotated\n')
    writeFileSync(log, 'current\n')
    assert.equal(await rotateLog(log, {maxSizeBytes: 1, maxFiles: 5}, async () => assert.fail('no reopen'), AT), 'skipped')
    assert.equal(readFileSync(log, 'utf8'), 'current\n')
  })

  it('only running containers whose log reached containerLogMaxSize are rotated', async () => {
    const small = join(dir, 'small.log')
    writeFileSync(log, 'x'.repeat(100))
    writeFileSync(small, 'x'.repeat(99))
    const paths: Record<string, string> = {big: log, small, exited: log}
    const reopened: string[] = []
    const looked: string[] = []
    const rotator = new ContainerLogRotator({
      cri: {
        listContainers: async () => [
          {id: 'big', state: 'CONTAINER_RUNNING'},
          {id: 'small', state: 'CONTAINER_RUNNING'},
          {id: 'exited', state: 'CONTAINER_EXITED'},
        ] as never,
        containerStatus: async (id: string) => {
          looked.push(id)
          return {status: {logPath: paths[id]}} as ContainerStatusResponse
        },
        reopenContainerLog: async (id: string) => {
          reopened.push(id)
          writeFileSync(paths[id]!, '')
        },
      },
      maxSizeBytes: 100,
      maxFiles: 5,
      maxWorkers: 2,
      monitorIntervalMs: 60_000,
      logger: quiet,
      now: () => AT,
    })
    rotator.start()
    await until('both running containers looked at', () => looked.length >= 2 && reopened.length >= 1)
    await rotator.stop()
    assert.deepEqual(looked.sort(), ['big', 'small'])
    assert.deepEqual(reopened, ['big'])
    assert.equal(statSync(`${log}.20250102-030405`).size, 100)
    assert.equal(statSync(small).size, 99)
  })

  it('containerLogMaxSize/MaxFiles/MaxWorkers/MonitorInterval: Kubernetes defaults and validation', () => {
    const {config} = loadAgentConfiguration({})
    assert.equal(config.containerLogMaxSize, '10Mi')
    assert.equal(config.containerLogMaxFiles, 5)
    assert.equal(config.containerLogMaxWorkers, 1)
    assert.equal(config.containerLogMonitorInterval, '10s')
    assert.equal(quantityBytes('10Mi'), 10 * 1024 * 1024)
    assert.equal(quantityBytes('-1'), -1)
    const doc = (fields: string): string => `apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\n${fields}\n`
    assert.equal(parseAgentConfiguration(doc('containerLogMonitorInterval: 1m'), 'f').containerLogMonitorInterval, '1m0s')
    assert.throws(() => parseAgentConfiguration(doc('containerLogMaxFiles: 1'), 'f'), (e: Error) => e instanceof AgentConfigError && /containerLogMaxFiles: must be at least 2/.test(e.message))
    assert.throws(() => parseAgentConfiguration(doc('containerLogMaxWorkers: 0'), 'f'), /containerLogMaxWorkers: must be at least 1/)
    assert.throws(() => parseAgentConfiguration(doc('containerLogMonitorInterval: 2s'), 'f'), /containerLogMonitorInterval: must be at least 3s/)
    assert.throws(() => parseAgentConfiguration(doc('containerLogMaxSize: 10Mx'), 'f'), /containerLogMaxSize: /)
    assert.throws(() => applyFlagOverrides(config, {containerLogMaxSize: 10}), /containerLogMaxSize: must be a quantity/)
  })

  it('kubectl logs -f goes on with the new file after a rotation', async () => {
    const entry = (text: string): string => `2025-01-02T03:04:05.000000001Z stdout F ${text}\n`
    writeFileSync(log, entry('before'))
    const out: string[] = []
    const abort = new AbortController()
    const following = streamContainerLog(log, {follow: true}, (chunk) => out.push(chunk.toString()), {running: async () => true, signal: abort.signal, pollMs: 10})
    await until('the first line', () => out.join('').includes('before'))
    appendFileSync(log, entry('late in the old file'))
    renameSync(log, `${log}.20250102-030405`)
    writeFileSync(log, entry('after'))
    await until('the line of the new file', () => out.join('').includes('after'))
    abort.abort()
    await following
    assert.equal(out.join(''), 'before\nlate in the old file\nafter\n')
  })
})

describe('container log rotation on the process runtime', {timeout: 120_000}, () => {
  let harness: RuntimeHarness | undefined
  let manager: PodManager | undefined
  after(() => stopRuntimeHarness(harness, manager))

  it('a container printing continuously keeps at most containerLogMaxFiles files, a small current file, and goes on writing after each rotation', async () => {
    harness = await startRuntimeHarness('orch-logrot-e2e-')
    const maxFiles = 3
    manager = new PodManager({
      cri: harness.cri,
      rootDir: join(harness.dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 50,
      logRotation: {maxSizeBytes: 1024, maxFiles, maxWorkers: 1, monitorIntervalMs: 100},
      logger: quiet,
    })
    await manager.start()
    manager.upsertPod('api', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'chatty', namespace: 'test', uid: 'uid-chatty'},
      spec: {nodeName: 'node-a', terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.02; done']}]},
    })
    const cri = harness.cri
    let logPath: string | undefined
    const deadline = Date.now() + 20_000
    while (!logPath) {
      if (Date.now() > deadline) throw new Error('the container never ran')
      const running = (await cri.listContainers()).find((c) => c.state === 'CONTAINER_RUNNING')
      if (running) logPath = (await cri.containerStatus(running.id)).status?.logPath
      else await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const dir = join(logPath, '..')
    const name = logPath.slice(dir.length + 1)
    const files = (): string[] => readdirSync(dir).filter((f) => f.startsWith(name)).sort()
    const lastLine = (text: string): number => Number(/line (\d+)\n$/.exec(text)?.[1] ?? 0)
    /** the value of `read`, or undefined when a file went away meanwhile (a rotation in between) */
    const settled = <T>(read: () => T): T | undefined => {
      try {
        return read()
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
    }
    let most = 0
    // rotations happen at most once a second (the timestamp's resolution): wait for two
    const seen = await until('two rotations', () => {
      const now = files()
      most = Math.max(most, now.length)
      if (!(now.some((f) => f.endsWith('.gz')) && now.length === maxFiles)) return undefined
      const rotated = now.filter((f) => f !== name)
      return settled(() => ({
        rotated,
        older: lastLine(gunzipSync(readFileSync(join(dir, rotated[0]!))).toString()),
        newer: lastLine(readFileSync(join(dir, rotated[1]!), 'utf8')),
      }))
    })
    const {rotated, older, newer} = seen
    assert.ok(most <= maxFiles, `at most ${maxFiles} files, saw ${most}`)
    assert.match(rotated[0]!, /^\d+\.log\.\d{8}-\d{6}\.gz$/)
    assert.match(rotated[1]!, /^\d+\.log\.\d{8}-\d{6}$/)
    assert.ok(older > 0 && newer > older, `rotated files in order: ${older} < ${newer}`)
    // the current file is the one the process writes to now (the reopen worked), and it stays small
    await until('the current file growing past the rotated lines', () => settled(() => lastLine(readFileSync(logPath!, 'utf8')) > newer))
    const currentSize = settled(() => statSync(logPath!).size) ?? 0
    assert.ok(currentSize < 16 * 1024, `current file small: ${currentSize}`)
    // one more rotation: the oldest compressed file is removed, the count stays at maxFiles
    await until('a further rotation', () => {
      const now = files()
      most = Math.max(most, now.length)
      return !now.includes(rotated[0]!) && now.includes(`${rotated[1]!}.gz`)
    })
    assert.ok(Math.max(most, files().length) <= maxFiles, `at most ${maxFiles} files, saw ${most}`)
  })
})
