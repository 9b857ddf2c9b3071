// `orch server` runs its controllers on a thread of their own (kube-controller-manager is a process of
// its own in Kubernetes): their informers' decoding, caches and reconciles then use the second core
// instead of the API server's event loop. They reach the server over HTTPS exactly as before.
// The protocol with the thread (controller-thread-main.ts) is four messages: `log` (a log call to
// repeat on the server's logger), `started`, `failed` (they could not start) and, after `stop`,
// `stopped`; a controller that throws later ends the thread with an `error` event.
import {Worker} from 'node:worker_threads'
import type {ClientConfig} from '../client/index.js'
import type {LogFields, Logger} from '../machinery/log.js'
import {startControllers, type ControllerName, type ControllerSettings, type RunningControllers} from './controllers.js'

/** What the thread is started with (structured-cloned: Buffers arrive as Uint8Arrays). */
export interface ControllerThreadData {
  config: Omit<ClientConfig, 'namespace'>
  names: ControllerName[]
  settings: ControllerSettings
  verbosity: number
}

export type ControllerThreadMessage =
  | {type: 'log'; level: 'info' | 'warn' | 'error' | number; message: string; fields: LogFields}
  | {type: 'started'}
  | {type: 'failed'; error: string}
  | {type: 'stopped'}

/** How long stop() waits for the controllers to end before the thread is terminated. */
const STOP_GRACE_MS = 10_000

export function repeatLog(logger: Logger, message: Extract<ControllerThreadMessage, {type: 'log'}>): void {
  if (typeof message.level === 'number') logger.v(message.level, message.message, message.fields)
  else logger[message.level](message.message, message.fields)
}

/** Starts the controllers on their own thread; resolves once they have started (as startControllers
 *  does), rejects with the thread's error when they cannot. */
export async function startControllerThread(
  config: Omit<ClientConfig, 'namespace'>,
  names: readonly ControllerName[],
  logger: Logger,
  settings: ControllerSettings = {},
  verbosity = 0,
): Promise<RunningControllers> {
  // nothing to run: no thread (startControllers then only makes a client)
  if (names.length === 0) return startControllers(config, names, logger, settings)
  const data: ControllerThreadData = {config, names: [...names], settings, verbosity}
  const worker = new Worker(new URL('./controller-thread-main.js', import.meta.url), {workerData: data})
  let stopping: Promise<void> | undefined
  let exited = false
  const exit = new Promise<void>((resolve) => worker.once('exit', () => ((exited = true), resolve())))
  return new Promise((resolve, reject) => {
    let started = false
    const fail = (error: Error) => {
      if (!started) {
        // controllers that did start before the failure must not keep running in the thread
        void worker.terminate()
        return reject(error)
      }
      if (stopping !== undefined) return
      // as when they ran on the server's thread: a controller that crashes ends the server
      logger.error('controllers crashed', {error: error.message})
      queueMicrotask(() => {
        throw error
      })
    }
    worker.on('message', (message: ControllerThreadMessage) => {
      if (message.type === 'log') repeatLog(logger, message)
      else if (message.type === 'failed') fail(new Error(message.error))
      else if (message.type === 'started') {
        started = true
        resolve({stop})
      }
    })
    worker.on('error', fail)
    worker.on('messageerror', (error) => logger.error('a message from the controllers could not be read', {error: error.message}))
    worker.once('exit', (code) => {
      if (!started) reject(new Error(`the controllers' thread ended (exit code ${code}) before they started`))
      else if (stopping === undefined) fail(new Error(`the controllers' thread ended (exit code ${code})`))
    })
  })

  function stop(): Promise<void> {
    stopping ??= (async () => {
      if (exited) return
      const stopped = new Promise<void>((resolve) => {
        worker.on('message', (message: ControllerThreadMessage) => message.type === 'stopped' && resolve())
      })
      worker.postMessage({type: 'stop'})
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))
      await Promise.race([stopped, exit, grace])
      clearTimeout(timer)
      await worker.terminate()
      await exit
    })()
    return stopping
  }
}
