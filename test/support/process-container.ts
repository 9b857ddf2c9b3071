// A container running `sleep` on the built-in process runtime, as pod web/app in namespace shop: what
// the agent-side tests checkpoint and look up.
import {join} from 'node:path'
import {CriClient} from '../../src/agent/cri/client.js'
import type {DeepPartial, PodSandboxConfig} from '../../src/agent/cri/types.js'
import {startProcessRuntime, type ProcessRuntimeServer} from '../../src/agent/runtime/process/server.js'

export interface SleepingContainer {
  runtime: ProcessRuntimeServer
  cri: CriClient
  containerId: string
  /** the container of pod shop/web named app, else undefined (an agent's findContainer) */
  find(namespace: string, pod: string, container: string): {containerId: string} | undefined
  close(): Promise<void>
}

export async function startSleepingContainer(dir: string): Promise<SleepingContainer> {
  const runtime = await startProcessRuntime({rootDir: join(dir, 'runtime')})
  const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 60_000})
  await cri.pullImage('busybox')
  const config: DeepPartial<PodSandboxConfig> = {metadata: {name: 'web', uid: 'uid-web', namespace: 'shop', attempt: 0}}
  const sandbox = await cri.runPodSandbox(config)
  const containerId = await cri.createContainer(sandbox, {metadata: {name: 'app'}, image: {image: 'busybox'}, command: ['sleep', '600'], logPath: 'app.log'}, config)
  await cri.startContainer(containerId)
  return {
    runtime,
    cri,
    containerId,
    find: (namespace, pod, container) => (namespace === 'shop' && pod === 'web' && container === 'app' ? {containerId} : undefined),
    async close() {
      cri.close()
      await runtime.close()
    },
  }
}
