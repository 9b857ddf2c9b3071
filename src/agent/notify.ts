// Init-system integration (systemd's sd_notify protocol): with NOTIFY_SOCKET set, the agent sends
// `READY=1` once it serves, and with WATCHDOG_USEC set also `WATCHDOG=1` every WatchdogSec / 2.
// Each message is one datagram on the AF_UNIX SOCK_DGRAM socket NOTIFY_SOCKET names (a leading `@`
// is an abstract socket). Node has no UNIX datagram sockets, so this uses the `unix-dgram` addon.
// WATCHDOG_PID, when set, must be this process. A watchdog below 1 s is used but logged as unsupported.
import {createRequire} from 'node:module'
import type {Logger} from '../machinery/log.js'

interface DgramSocket {
  send(buffer: Buffer, offset: number, length: number, path: string, callback?: (error?: Error) => void): void
  on(event: 'error', listener: (error: Error) => void): void
  close(): void
}

const require = createRequire(import.meta.url)
const unixDgram = require('unix-dgram') as {createSocket(type: 'unix_dgram'): DgramSocket}

export const MIN_WATCHDOG_MS = 1000

export interface Notifier {
  /** sends READY=1 */
  ready(): Promise<void>
  /** the keep-alive period in ms (WatchdogSec / 2), or undefined without a watchdog */
  readonly watchdogIntervalMs: number | undefined
  close(): void
}

function socketPath(value: string): string {
  return value.startsWith('@') ? `\0${value.slice(1)}` : value
}

/** Watchdog period from the environment (microseconds), or undefined when disabled. */
export function watchdogUsec(env: NodeJS.ProcessEnv): number | undefined {
  const usec = Number(env.WATCHDOG_USEC ?? '')
  if (!Number.isFinite(usec) || usec <= 0) return undefined
  const pid = env.WATCHDOG_PID
  if (pid !== undefined && pid !== '' && Number(pid) !== process.pid) return undefined
  return usec
}

/** A notifier for the environment, or undefined when NOTIFY_SOCKET is not set. */
export function startNotifier(env: NodeJS.ProcessEnv, logger: Logger): Notifier | undefined {
  const target = env.NOTIFY_SOCKET
  if (!target) return undefined
  const socket = unixDgram.createSocket('unix_dgram')
  socket.on('error', (error) => logger.warn('notify socket error', {socket: target, error: error.message}))
  const send = (message: string): Promise<void> =>
    new Promise((resolve) => {
      const buffer = Buffer.from(message)
      socket.send(buffer, 0, buffer.length, socketPath(target), (error) => {
        if (error) logger.warn('could not notify the init system', {socket: target, message, error: error.message})
        resolve()
      })
    })
  const usec = watchdogUsec(env)
  const intervalMs = usec === undefined ? undefined : usec / 2000
  let timer: NodeJS.Timeout | undefined
  if (intervalMs !== undefined) {
    if (usec! / 1000 < MIN_WATCHDOG_MS) logger.warn('watchdog timeout below the supported minimum of 1 s', {watchdogUsec: usec})
    timer = setInterval(() => void send('WATCHDOG=1'), intervalMs)
    timer.unref()
    void send('WATCHDOG=1')
  }
  return {
    watchdogIntervalMs: intervalMs,
    ready: () => send('READY=1'),
    close() {
      if (timer) clearInterval(timer)
      socket.close()
    },
  }
}
