// Short, greppable log lines on stderr: `<time> <LEVEL> <message> key=value ...`.
// Verbosity follows klog's habit: info(0) always, v(1..) only with --v N.

export type LogFields = Record<string, unknown>

export interface Logger {
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
  /** detail shown only when the verbosity is at least level */
  v(level: number, message: string, fields?: LogFields): void
  child(fields: LogFields): Logger
}

export interface LoggerOptions {
  verbosity?: number
  write?: (line: string) => void
  base?: LogFields
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message)
  if (typeof value === 'string') return /^[\w./:@,+-]*$/.test(value) && value !== '' ? value : JSON.stringify(value)
  if (value === undefined) return 'undefined'
  return JSON.stringify(value)
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const verbosity = options.verbosity ?? 0
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'))
  const base = options.base ?? {}
  const emit = (level: string, message: string, fields?: LogFields) => {
    const all = {...base, ...fields}
    const parts = Object.entries(all).map(([k, v]) => `${k}=${formatValue(v)}`)
    write([new Date().toISOString(), level, message, ...parts].join(' '))
  }
  return {
    info: (message, fields) => emit('INFO', message, fields),
    warn: (message, fields) => emit('WARN', message, fields),
    error: (message, fields) => emit('ERROR', message, fields),
    v: (level, message, fields) => {
      if (verbosity >= level) emit(`V${level}`, message, fields)
    },
    child: (fields) => createLogger({verbosity, write, base: {...base, ...fields}}),
  }
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = createLogger({write: () => {}})
