// The built-in process runtime in a temporary directory with a CRI client for it: what PodManager tests
// run their pods on, without a server.
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {CriClient} from '../../src/agent/cri/client.js'
import type {PodManager} from '../../src/agent/pods/manager.js'
import {startProcessRuntime, type ProcessRuntimeServer, type ProcessRuntimeServerOptions} from '../../src/agent/runtime/process/server.js'

export interface RuntimeHarness {
  dir: string
  runtime: ProcessRuntimeServer
  cri: CriClient
}

/** A process runtime rooted at `<tmp>/<prefix>…/runtime` and a client for it. */
export async function startRuntimeHarness(prefix: string, options: Partial<ProcessRuntimeServerOptions> = {}): Promise<RuntimeHarness> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const runtime = await startProcessRuntime({rootDir: join(dir, 'runtime'), ...options})
  const cri = new CriClient({endpoint: runtime.endpoint, timeoutMs: 30_000})
  return {dir, runtime, cri}
}

/** Stops the manager and its pods, then the client and the runtime, and removes the directory. */
export async function stopRuntimeHarness(harness: RuntimeHarness | undefined, manager: PodManager | undefined): Promise<void> {
  await manager?.stop({stopPods: true})
  harness?.cri.close()
  await harness?.runtime.close()
  if (harness) rmSync(harness.dir, {recursive: true, force: true})
}
