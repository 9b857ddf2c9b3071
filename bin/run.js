#!/usr/bin/env node
import {Errors, flush, handle, run} from '@oclif/core'

try {
  await run(process.argv.slice(2), import.meta.url)
  await flush()
} catch (error) {
  // oclif's own errors (an unknown flag or command, a bad flag value, a missing argument) are one
  // line, as every orch error: oclif would add a hint line and sometimes the whole usage
  if (error instanceof Errors.CLIError && !(error instanceof Errors.ExitError)) {
    const lines = String(error.message)
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('See more help') && !/^The following errors? occurred:$/.test(line))
    process.stderr.write(`error: ${lines.join(' ').replace(/\s+/g, ' ')}\n`)
    process.exit(error.oclif?.exit ?? 2)
  }
  await handle(error)
}
