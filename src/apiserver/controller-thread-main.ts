// The controllers' thread (see controller-thread.ts): starts them with startControllers against the
// server's URL and sends their log calls to the server's thread, which writes them.
import {parentPort, workerData} from 'node:worker_threads'
import type {LogFields, Logger} from '../machinery/log.js'
import type {ControllerThreadData, ControllerThreadMessage} from './controller-thread.js'
import {startElectedControllers, type RunningControllers} from './controllers.js'

if (parentPort === null) throw new Error('controller-thread-main runs only as a worker thread')
const port = parentPort
const data = workerData as ControllerThreadData

function send(message: ControllerThreadMessage): void {
  port.postMessage(message)
}

/** Log fields that survive the trip to the server's thread: an Error as its message (all the
 *  server's logger prints of one; a clone could fail on its cause), plain data as its JSON, anything
 *  else as its text. */
function cloneable(fields: LogFields): LogFields {
  const out: LogFields = {}
  for (const [key, value] of Object.entries(fields)) {
    if (value instanceof Error) out[key] = value.message
    else if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') out[key] = String(value)
    else if (value === null || typeof value !== 'object') out[key] = value
    else {
      try {
        out[key] = JSON.parse(JSON.stringify(value)) as unknown
      } catch {
        out[key] = String(value)
      }
    }
  }
  return out
}

function forwardingLogger(verbosity: number, base: LogFields): Logger {
  const emit = (level: 'info' | 'warn' | 'error' | number, message: string, fields?: LogFields) =>
    send({type: 'log', level, message, fields: cloneable({...base, ...fields})})
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    v: (level, message, fields) => {
      if (verbosity >= level) emit(level, message, fields)
    },
    child: (fields) => forwardingLogger(verbosity, {...base, ...fields}),
  }
}

const asBuffer = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes))
const config = {...data.config, ca: asBuffer(data.config.ca), cert: asBuffer(data.config.cert), key: asBuffer(data.config.key)}
let running: RunningControllers | undefined
let stopRequested = false

async function stop(): Promise<void> {
  stopRequested = true
  await running?.stop()
  send({type: 'stopped'})
  port.close()
}

port.on('message', (message: {type: string}) => {
  if (message.type === 'stop') void stop()
})

startElectedControllers(config, data.names, forwardingLogger(data.verbosity, {}), data.settings).then(
  (controllers) => {
    running = controllers
    if (stopRequested) void controllers.stop()
    else send({type: 'started'})
  },
  (error: Error) => {
    send({type: 'failed', error: error.message})
    port.close()
  },
)
