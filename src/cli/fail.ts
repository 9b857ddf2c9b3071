// One readable line on stderr and a non-zero exit: how every orch command reports failure.

/** Prints `error: <first line of message>` and exits with code. */
export function fail(message: string, code = 1): never {
  const line = message.split('\n')[0].trim()
  process.stderr.write(`error: ${line}\n`)
  process.exit(code)
}
