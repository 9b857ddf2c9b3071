// kubectl's boolean flags also take `=true` and `=false` (`--server-side=false`), which oclif's boolean
// flags do not: these are rewritten before parsing into the forms oclif knows (`--X`, `--no-X`, or nothing
// for a false flag that has no negation).

/** argv with `--NAME=true|false` of the given boolean flags (name → whether it has a --no- form) rewritten. */
export function booleanFlagValues(argv: readonly string[], flags: Record<string, {allowNo: boolean}>): string[] {
  const out: string[] = []
  for (const arg of argv) {
    if (arg === '--') {
      out.push(...argv.slice(argv.indexOf(arg)))
      break
    }
    const match = /^--([a-z][a-z0-9-]*)=(true|false)$/i.exec(arg)
    const flag = match ? flags[match[1]] : undefined
    if (!match || !flag) {
      out.push(arg)
      continue
    }
    if (match[2].toLowerCase() === 'true') out.push(`--${match[1]}`)
    else if (flag.allowNo) out.push(`--no-${match[1]}`)
  }
  return out
}
