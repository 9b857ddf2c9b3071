// The pods' directories on the process runtime: a pod's volumes ({root}/pods/<uid>) and logs
// ({root}/pods/<namespace>_<name>_<uid>) are removed once the pod is deleted and its containers are
// removed; housekeeping removes the directories of pods that are gone (deleted while no agent ran),
// and leaves those of running pods and anything else under {root}/pods alone.
import assert from 'node:assert/strict'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'
import {until} from '../support/until.js'

describe('pod directories on the process runtime', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let dir: string
  let cri: CriClient
  let manager: PodManager
  const running = new Set<string>()
  const terminated = new Set<string>()
  before(async () => {
    harness = await startRuntimeHarness('orch-pod-dirs-')
    ;({dir, cri} = harness)
    manager = new PodManager({
      cri,
      rootDir: join(dir, 'agent'),
      nodeName: 'node-a',
      relistPeriodMs: 50,
      logger: createLogger({write: () => undefined}),
      statusSink: (p) => p.status?.phase === 'Running' && running.add(p.metadata!.name),
      onTerminated: (p) => terminated.add(p.metadata!.name),
    })
    await manager.start()
  })
  after(() => stopRuntimeHarness(harness, manager))

  const pod = (name: string): AnyObject => ({
    metadata: {name, namespace: 'test', uid: `uid-${name}`},
    spec: {
      nodeName: 'node-a',
      terminationGracePeriodSeconds: 1,
      volumes: [{name: 'scratch', emptyDir: {}}],
      containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `echo data > ${join(dir, 'agent', 'pods', `uid-${name}`, 'volumes', 'empty-dir', 'scratch', 'file')}; exec sleep 600`], volumeMounts: [{name: 'scratch', mountPath: '/scratch'}]}],
    },
  })

  it("a deleted pod's volumes and log directory are removed once its containers are", async () => {
    const volumes = join(dir, 'agent', 'pods', 'uid-scratch')
    const logs = join(dir, 'agent', 'pods', 'test_scratch_uid-scratch')
    manager.upsertPod('api', pod('scratch'))
    await until('the pod to run and write', () => running.has('scratch') && existsSync(join(volumes, 'volumes', 'empty-dir', 'scratch', 'file')))
    assert.equal(readFileSync(join(volumes, 'volumes', 'empty-dir', 'scratch', 'file'), 'utf8'), 'data\n')
    assert.ok(existsSync(logs))
    manager.deletePod('api', 'uid-scratch')
    await until('the pod to terminate', () => terminated.has('scratch'))
    await until('the directories to go', () => !existsSync(volumes) && !existsSync(logs), {timeoutMs: 5000})
  })

  it('housekeeping removes the directories of pods that are gone and keeps those of running pods', async () => {
    manager.upsertPod('api', pod('kept'))
    await until('the kept pod to run', () => running.has('kept'))
    const base = join(dir, 'agent', 'pods')
    mkdirSync(join(base, 'uid-ghost', 'volumes', 'empty-dir', 'x'), {recursive: true})
    mkdirSync(join(base, 'test_ghost_uid-ghost', 'app'), {recursive: true})
    writeFileSync(join(base, 'agent.sock'), '')
    await until('the orphaned directories to go', () => !existsSync(join(base, 'uid-ghost')) && !existsSync(join(base, 'test_ghost_uid-ghost')), {timeoutMs: 5000})
    assert.ok(existsSync(join(base, 'uid-kept', 'volumes', 'empty-dir', 'scratch')), 'a running pod keeps its volumes')
    assert.ok(existsSync(join(base, 'test_kept_uid-kept')), 'and its logs')
    assert.ok(existsSync(join(base, 'agent.sock')), 'files that are not pod directories stay')
  })
})
