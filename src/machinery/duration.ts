// Go-style durations as Kubernetes flags take them: "300ms", "50s", "5m", "1h30m", "1.5h".

const UNITS: Record<string, number> = {ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000}

export class DurationParseError extends Error {}

/** Milliseconds in a Go duration string. A bare "0" is zero. */
export function parseDuration(text: string): number {
  const input = text.trim()
  if (input === '0') return 0
  const pattern = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy
  let total = 0
  let consumed = 0
  let match: RegExpExecArray | null
  while ((match = pattern.exec(input)) !== null) {
    total += Number(match[1]) * UNITS[match[2]]
    consumed = pattern.lastIndex
  }
  if (consumed === 0 || consumed !== input.length) {
    throw new DurationParseError(`invalid duration "${text}": use a number with a unit, e.g. 300ms, 50s, 5m, 1h30m`)
  }
  return total
}

/** The shortest Go-style form of a duration in ms ("5m0s" style is not needed here). */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`
  if (ms % 1_000 === 0) return `${ms / 1_000}s`
  return `${ms}ms`
}

/** Go's time.Duration.String(): 5m0s, 30s, 1h0m0s, 200ms, 1.5s. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s'
  const sign = ms < 0 ? '-' : ''
  let rest = Math.abs(ms)
  if (rest < 1000) return `${sign}${rest}ms`
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = `${Number((rest / 1000).toFixed(3))}s`
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`
  if (minutes > 0) return `${sign}${minutes}m${seconds}`
  return `${sign}${seconds}`
}
