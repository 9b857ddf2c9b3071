// Nanosecond wall-clock timestamps (CRI times are int64 nanoseconds since the epoch) and Go's
// RFC3339Nano rendering of them, used in CRI log lines.

let offset = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint()

/** Nanoseconds since the epoch, with the monotonic clock's resolution. */
export function nowNs(): bigint {
  const now = process.hrtime.bigint() + offset
  // follow wall-clock steps (NTP, suspend) larger than a second
  const wall = BigInt(Date.now()) * 1_000_000n
  if (now - wall > 1_000_000_000n || wall - now > 1_000_000_000n) {
    offset = wall - process.hrtime.bigint()
    return wall
  }
  return now
}

/** Go's time.RFC3339Nano in UTC: `2024-05-06T07:08:09.123456789Z`, trailing zeros of the fraction dropped. */
export function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n)
  const base = new Date(ms).toISOString().slice(0, 19)
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '')
  return fraction ? `${base}.${fraction}Z` : `${base}Z`
}
