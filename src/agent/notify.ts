// Init-system integration (systemd's sd_notify protocol): with NOTIFY_SOCKET set, the agent sends
// `READY=1` once it serves, and with WATCHDOG_USEC set and gate SystemdWatchdog on (beta, default on)
// also `WATCHDOG=1` every WatchdogSec / 2 — but, as the kubelet's health checker does, only in rounds
// where the agent's health checks pass (a stuck agent stops the keep-alives and is killed).
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
  /** the keep-alive period in ms (WatchdogSec / 2), or undefined without a watchdog (or with the gate off) */
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

export interface NotifierOptions {
  /** gate SystemdWatchdog: when false no WATCHDOG=1 is ever sent, whatever WATCHDOG_USEC says */
  watchdog: boolean
  /**
   * The agent's health checks (the kubelet's: the sync loop is alive): a problem as a string, or
   * undefined when healthy. A keep-alive is sent only when it reports no problem within a quarter
   * of the keep-alive period; otherwise that round is skipped, so a stuck agent is killed.
   */
  healthCheck?: () => string | undefined | Promise<string | undefined>
}

/** The kubelet's retry of a failed keep-alive: 1 s, then give up for this round (2 steps). */
const NOTIFY_RETRY_MS = 1000
const NOTIFY_ATTEMPTS = 2

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(onTimeout()), ms)))
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

/** A notifier for the environment, or undefined when NOTIFY_SOCKET is not set. */
export function startNotifier(env: NodeJS.ProcessEnv, logger: Logger, options: NotifierOptions): Notifier | undefined {
  const target = env.NOTIFY_SOCKET
  if (!target) return undefined
  const socket = unixDgram.createSocket('unix_dgram')
  socket.on('error', (error) => logger.warn('notify socket error', {socket: target, error: error.message}))
  let closed = false
  const send = (message: string): Promise<boolean> =>
    new Promise((resolve) => {
      if (closed) return resolve(false)
      const buffer = Buffer.from(message)
      socket.send(buffer, 0, buffer.length, socketPath(target), (error) => {
        if (error) logger.warn('could not notify the init system', {socket: target, message, error: error.message})
        resolve(!error)
      })
    })
  const usec = watchdogUsec(env)
  if (usec !== undefined && !options.watchdog) logger.info('init-system watchdog configured (WATCHDOG_USEC) but gate SystemdWatchdog is off: no keep-alives are sent', {watchdogUsec: usec})
  const intervalMs = usec === undefined || !options.watchdog ? undefined : usec / 2000
  let timer: NodeJS.Timeout | undefined
  let retry: NodeJS.Timeout | undefined
  let inFlight = false
  /** One round of the kubelet's health checker: the checks, then WATCHDOG=1 (retried once after 1 s). */
  const keepAlive = async (): Promise<void> => {
    if (inFlight || closed) return
    inFlight = true
    try {
      const checkTimeout = intervalMs! / 4
      let problem: string | undefined
      try {
        problem = await withTimeout(Promise.resolve(options.healthCheck?.()), checkTimeout, () => `health check timed out after ${checkTimeout} ms`)
      } catch (error) {
        problem = (error as Error).message
      }
      if (problem !== undefined) {
        logger.error('not notifying the watchdog this round: the agent is reportedly not healthy', {problem})
        return
      }
      for (let attempt = 1; attempt <= NOTIFY_ATTEMPTS && !closed; attempt++) {
        if (await send('WATCHDOG=1')) return
        if (attempt < NOTIFY_ATTEMPTS) await new Promise<void>((resolve) => (retry = setTimeout(resolve, NOTIFY_RETRY_MS)))
      }
    } finally {
      inFlight = false
    }
  }
  if (intervalMs !== undefined) {
    if (usec! / 1000 < MIN_WATCHDOG_MS) logger.warn('watchdog timeout below the supported minimum of 1 s', {watchdogUsec: usec})
    logger.info('init-system watchdog keep-alives', {intervalMs})
    timer = setInterval(() => void keepAlive(), intervalMs)
    timer.unref()
    void keepAlive()
  }
  return {
    watchdogIntervalMs: intervalMs,
    ready: async () => {
      await send('READY=1')
    },
    close() {
      if (closed) return
      closed = true
      if (timer) clearInterval(timer)
      if (retry) clearTimeout(retry)
      socket.close()
    },
  }
}
