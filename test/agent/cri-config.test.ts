// The CRI configuration the agent sends for a pod, as the kubelet's kuberuntime builds it: the
// namespaces of the sandbox and of every container (namespacesForPod); emptyDir volumes.
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {containerConfig, sandboxConfig, type ConfigContext} from '../../src/agent/pods/cri-config.js'
import type {AnyObject} from '../../src/api/types.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-cri-config-'))
after(() => rmSync(dir, {recursive: true, force: true}))

const context: ConfigContext = {
  rootDir: dir,
  nodeName: 'n',
  hostIP: '10.0.0.1',
  swapBehavior: 'NoSwap',
  memoryBytes: 0,
  swapBytes: 0,
  cgroupV2: true,
  swapControllerAvailable: false,
  seccompDefault: false,
  clusterDNS: [],
  clusterDomain: '',
}

const pod = (spec: AnyObject = {}): AnyObject => ({
  metadata: {name: 'p', namespace: 'ns', uid: 'u'},
  spec: {containers: [{name: 'app', image: 'busybox', command: ['sleep', '600']}], ...spec},
})

const namespaces = async (p: AnyObject): Promise<{sandbox: unknown; container: unknown}> => ({
  sandbox: sandboxConfig(p, 0, context).linux?.securityContext?.namespaceOptions,
  container: (await containerConfig(p, p.spec.containers[0], 'app', 0, context)).linux?.securityContext?.namespaceOptions,
})

describe('namespaces of the sandbox and the containers', () => {
  it('by default each container has its own PID namespace (the app is PID 1) and shares the pod network and IPC', async () => {
    const want = {network: 'POD', pid: 'CONTAINER', ipc: 'POD'}
    assert.deepEqual(await namespaces(pod()), {sandbox: want, container: want})
  })

  it('shareProcessNamespace: true puts the containers in the pod PID namespace', async () => {
    const want = {network: 'POD', pid: 'POD', ipc: 'POD'}
    assert.deepEqual(await namespaces(pod({shareProcessNamespace: true})), {sandbox: want, container: want})
  })

  it('hostNetwork, hostPID and hostIPC use the node namespaces (hostPID over shareProcessNamespace)', async () => {
    const want = {network: 'NODE', pid: 'NODE', ipc: 'NODE'}
    assert.deepEqual(await namespaces(pod({hostNetwork: true, hostPID: true, hostIPC: true, shareProcessNamespace: true})), {sandbox: want, container: want})
  })
})

describe('emptyDir volumes', () => {
  it('an emptyDir is created mode 0777 whatever the umask, so that a non-root container can write to it', async () => {
    const previous = process.umask(0o022)
    try {
      const p = pod({volumes: [{name: 'scratch', emptyDir: {}}]})
      p.spec.containers[0].volumeMounts = [{name: 'scratch', mountPath: '/scratch'}]
      const [mount] = (await containerConfig(p, p.spec.containers[0], 'app', 0, context)).mounts!
      assert.equal(mount!.hostPath, join(dir, 'pods', 'u', 'volumes', 'empty-dir', 'scratch'))
      assert.equal(statSync(mount!.hostPath!).mode & 0o777, 0o777)
    } finally {
      process.umask(previous)
    }
  })
})
