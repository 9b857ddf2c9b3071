// Table cells shared by many kinds, formatted as kubectl prints them.
import type {TableColumn} from './types.js'

/** Kubernetes' duration.HumanDuration: 45s, 5m10s, 3h, 2d4h, 400d, 3y40d. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  if (seconds < 0) return '0s'
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) {
    const s = seconds % 60
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`
  }
  if (minutes < 180) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 8) {
    const m = minutes % 60
    return m === 0 ? `${hours}h` : `${hours}h${m}m`
  }
  if (hours < 48) return `${hours}h`
  if (hours < 192) {
    const h = hours % 24
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24)
    const y = Math.floor(days / 365)
    const d = days % 365
    return d === 0 ? `${y}y` : `${y}y${d}d`
  }
  return `${Math.floor(hours / 24 / 365)}y`
}

/** The time since an RFC 3339 timestamp, humanised; `<unknown>` when absent. */
export function age(timestamp: string | undefined, now: Date): string {
  if (!timestamp) return '<unknown>'
  const at = Date.parse(timestamp)
  if (Number.isNaN(at)) return '<unknown>'
  return humanDuration(now.getTime() - at)
}

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC.',
  priority: 0,
  cell: (o, now) => age(o.metadata?.creationTimestamp, now),
}

/** labels.FormatLabels: `k=v,…` sorted by key, `<none>` when empty (a Service's SELECTOR column,
 *  kubectl's --show-labels) */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort()
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${labels![k]}`).join(',')
}
