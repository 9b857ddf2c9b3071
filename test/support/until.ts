// Polling for a state that no event announces (a file the agent writes, an object a controller
// updates): the probe runs every `intervalMs` until it answers something other than undefined, null
// or false, which `until` returns; after `timeoutMs` the test fails with what it waited for.
import assert from 'node:assert/strict'

export interface UntilOptions {
  timeoutMs?: number
  intervalMs?: number
  /** more to say on a timeout (recent logs, the last answer) */
  detail?: () => string
}

export async function until<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, options: UntilOptions = {}): Promise<T> {
  const {timeoutMs = 30_000, intervalMs = 25} = options
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== null && value !== false) return value
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}${options.detail ? `\n${options.detail()}` : ''}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
