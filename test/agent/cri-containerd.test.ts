// The CRI client against a real containerd (runc, busybox): a host-network pod sandbox, a container
// running `sleep 3600`, its status, stop and removal; CheckpointContainer, which containerd 1.6 does
// not implement, comes back as a readable UNIMPLEMENTED error. Skipped only when containerd is absent.
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient, CriError, isCriError} from '../../src/agent/cri/client.js'
import type {ContainerStatus, DeepPartial, PodSandboxConfig} from '../../src/agent/cri/types.js'
import {containerdMissing, removeCgroupParent, startContainerd, type RunningContainerd} from '../support/containerd.js'

const missing = containerdMissing()
if (missing) console.log(`# skipping the containerd CRI tests: ${missing}`)

async function waitForStatus(client: CriClient, id: string, predicate: (status: ContainerStatus) => boolean, timeoutMs = 30_000): Promise<ContainerStatus> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const {status} = await client.containerStatus(id)
    if (status && predicate(status)) return status
    if (Date.now() > deadline) throw new Error(`container ${id} did not reach the expected state: ${JSON.stringify(status)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('CRI client against containerd', {skip: missing ?? false, timeout: 180_000}, () => {
  let containerd: RunningContainerd
  let client: CriClient
  let dir: string
  const cgroupParent = `orch-test-${process.pid}`

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-cri-containerd-'))
    containerd = await startContainerd()
    client = new CriClient({endpoint: containerd.endpoint, timeoutMs: 60_000})
  })

  after(async () => {
    client?.close()
    await containerd?.stop()
    removeCgroupParent(cgroupParent)
    rmSync(dir, {recursive: true, force: true})
  })

  it('Version and Status answer through the CRI client', async () => {
    const version = await client.version()
    assert.equal(version.runtimeName, 'containerd')
    assert.equal(version.runtimeApiVersion, 'v1')
    const conditions = (await client.status()).status!.conditions
    assert.equal(conditions.find((condition) => condition.type === 'RuntimeReady')?.status, true)
    assert.ok((await client.imageStatus(containerd.image)).image, 'the busybox image was imported')
  })

  it('a busybox `sleep 3600` in a host-network sandbox: created, running, stopped, removed', async () => {
    // a host-network pod must not set a hostname
    const sandboxConfig: DeepPartial<PodSandboxConfig> = {
      metadata: {name: 'sleeper', uid: `uid-${process.pid}`, namespace: 'default', attempt: 0},
      logDirectory: join(dir, 'pods', 'sleeper'),
      linux: {cgroupParent: `/${cgroupParent}`, securityContext: {namespaceOptions: {network: 'NODE', pid: 'CONTAINER', ipc: 'POD'}}},
    }
    const sandboxId = await client.runPodSandbox(sandboxConfig)
    assert.equal((await client.podSandboxStatus(sandboxId)).status!.state, 'SANDBOX_READY')
    const id = await client.createContainer(
      sandboxId,
      {metadata: {name: 'sleep', attempt: 0}, image: {image: containerd.image}, command: ['sleep', '3600'], logPath: 'sleep/0.log'},
      sandboxConfig,
    )
    assert.equal((await client.containerStatus(id)).status!.state, 'CONTAINER_CREATED')
    await client.startContainer(id)
    const running = await waitForStatus(client, id, (status) => status.state === 'CONTAINER_RUNNING')
    assert.notEqual(running.startedAt, '0')
    assert.deepEqual(
      (await client.listContainers({podSandboxId: sandboxId})).map((container) => container.id),
      [id],
    )

    // containerd 1.6 has no CheckpointContainer: the error says so in words
    await assert.rejects(client.checkpointContainer(id, join(dir, 'checkpoint.tar'), 10), (error: unknown) => {
      assert.ok(error instanceof CriError)
      assert.ok(isCriError(error, 12))
      assert.equal(error.codeName, 'UNIMPLEMENTED')
      assert.equal(error.method, 'CheckpointContainer')
      assert.match(error.message, /^CRI CheckpointContainer: UNIMPLEMENTED: .*not implemented/)
      return true
    })

    await client.stopContainer(id, 10)
    const stopped = await waitForStatus(client, id, (status) => status.state === 'CONTAINER_EXITED')
    assert.notEqual(stopped.finishedAt, '0')
    await client.removeContainer(id)
    await assert.rejects(client.containerStatus(id), (error: unknown) => isCriError(error) && error.codeName === 'NOT_FOUND')
    await client.stopPodSandbox(sandboxId)
    await client.removePodSandbox(sandboxId)
    assert.equal((await client.listPodSandbox({id: sandboxId})).length, 0)
  })
})
