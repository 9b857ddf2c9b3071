// Shared by the benchmarks: aligned tables (text left, numbers right), medians, and the exit hooks
// that take their children down with them.

export type Cell = string | number

export function fmt(value: Cell): string {
  if (typeof value === 'string') return value
  if (!Number.isFinite(value)) return '-'
  if (Number.isInteger(value)) return value.toLocaleString('en-US')
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US')
  if (Math.abs(value) >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

/** An aligned table: text columns left, numbers right. */
export function table(title: string, header: string[], rows: Cell[][]): void {
  const cells = [header, ...rows.map((row) => row.map(fmt))]
  const widths = header.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? '').length)))
  const numeric = header.map((_, c) => rows.length > 0 && rows.every((row) => typeof row[c] === 'number'))
  const line = (row: string[]) =>
    row.map((cell, c) => (numeric[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ').trimEnd()
  console.log(`\n${title}`)
  console.log(line(cells[0]))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const row of cells.slice(1)) console.log(line(row))
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Runs `cleanup` (kill the children) when the process exits, and on SIGINT/SIGTERM before exiting 130. */
export function cleanUpOnExit(cleanup: () => void): void {
  process.once('exit', cleanup)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\nbench: ${signal}, stopping`)
      cleanup()
      process.exit(130)
    })
  }
}
