// A hostNetwork pod on the process runtime: its status.podIP and podIPs are the node's IP (as the
// kubelet sets them for host-network pods), and so is an env var from fieldRef status.podIP.
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CriClient} from '../../src/agent/cri/client.js'
import {PodManager} from '../../src/agent/pods/manager.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'
import type {AnyObject} from '../../src/api/types.js'
import {createLogger} from '../../src/machinery/log.js'

describe('hostNetwork pods on the process runtime', {timeout: 60_000}, () => {
  let dir: string
  let runtime: ProcessRuntimeServer
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-host-network-'))
    runtime = await startProcessRuntime({rootDir: join(dir, 'runtime')})
  })
  after(async () => {
    await runtime?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('a hostNetwork pod gets the node IP as status.podIP/podIPs and in env from fieldRef status.podIP', async () => {
    const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
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
      cri.close()
    }
  })
})
