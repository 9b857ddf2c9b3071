// A hostNetwork pod on the process runtime: its status.podIP and podIPs are the node's IP (as the
// kubelet sets them for host-network pods), and so is an env var from fieldRef status.podIP.
import assert from 'node:assert/strict'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import type {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'
import {startRuntimeHarness, stopRuntimeHarness, type RuntimeHarness} from '../support/process-runtime.js'

describe('hostNetwork pods on the process runtime', {timeout: 60_000}, () => {
  let harness: RuntimeHarness | undefined
  let dir: string
  let cri: CriClient
  before(async () => {
    harness = await startRuntimeHarness('orch-host-network-')
    ;({dir, cri} = harness)
  })
  after(() => stopRuntimeHarness(harness, undefined))

  it('a hostNetwork pod gets the node IP as status.podIP/podIPs and in env from fieldRef status.podIP', async () => {
    const statuses: AnyObject[] = []
    const manager = new PodManager({cri, rootDir: join(dir, 'agent'), nodeName: 'node-a', relistPeriodMs: 50, logger: createLogger({write: () => undefined}), statusSink: (p) => statuses.push(p.status)})
    await manager.start()
    const file = join(dir, 'pod-ip')
    try {
      manager.upsertPod('api', {
        metadata: {name: 'hostnet', namespace: 'test', uid: 'uid-hostnet'},
        spec: {
          nodeName: 'node-a',
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          containers: [{name: 'app', image: 'busybox', command: ['sh', '-c', `echo "$POD_IP" > ${file}.tmp; mv ${file}.tmp ${file}; exec sleep 600`], env: [{name: 'POD_IP', valueFrom: {fieldRef: {fieldPath: 'status.podIP'}}}]}],
        },
      })
      const deadline = Date.now() + 20_000
      while (statuses.at(-1)?.phase !== 'Running' || !existsSync(file)) {
        assert.ok(Date.now() < deadline, `never Running: ${JSON.stringify(statuses.at(-1))}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const status = statuses.at(-1)!
      assert.ok(status.hostIP)
      assert.equal(status.podIP, status.hostIP)
      assert.deepEqual(status.podIPs, [{ip: status.hostIP}])
      assert.equal(readFileSync(file, 'utf8').trim(), status.hostIP)
    } finally {
      await manager.stop({stopPods: true})
    }
  })
})
