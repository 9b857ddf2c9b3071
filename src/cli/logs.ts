// `orch logs POD`: GET pods/{name}/log with the options kubectl logs sends (container, follow,
// previous, tailLines, sinceSeconds, timestamps), the text written to stdout as it arrives; the
// server's Status becomes one `error:` line and exit 1.
import {ApiStatusError} from '../client/index.js'
import {withSession, type ConnectOptions} from './connect.js'
import {fail} from './fail.js'

export interface LogsOptions extends ConnectOptions {
  pod: string
  container?: string
  follow?: boolean
  previous?: boolean
  tail?: number
  /** a Go duration (5s, 2m, 1h30m) */
  since?: string
  timestamps?: boolean
}

const UNIT_NS: Record<string, number> = {ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9}

/** Seconds of a Go duration, rounded up as kubectl does (`--since=1500ms` → 2); undefined when it is not one. */
export function sinceSecondsOf(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined
  let ns = 0
  for (const [, value, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ns += Number(value) * UNIT_NS[unit]
  return Math.ceil(ns / 1e9)
}

export async function runLogs(options: LogsOptions): Promise<void> {
  let sinceSeconds: number | undefined
  if (options.since !== undefined) {
    sinceSeconds = sinceSecondsOf(options.since)
    if (sinceSeconds === undefined) fail(`invalid argument "${options.since}" for "--since" flag: time: invalid duration "${options.since}"`)
  }
  await withSession(options, async (session) => {
    const query: Record<string, string | undefined> = {
      container: options.container,
      follow: options.follow ? 'true' : undefined,
      previous: options.previous ? 'true' : undefined,
      tailLines: options.tail !== undefined && options.tail >= 0 ? String(options.tail) : undefined,
      sinceSeconds: sinceSeconds !== undefined ? String(sinceSeconds) : undefined,
      timestamps: options.timestamps ? 'true' : undefined,
    }
    const path = `/api/v1/namespaces/${encodeURIComponent(session.namespace)}/pods/${encodeURIComponent(options.pod)}/log`
    const response = await session.client.stream({method: 'GET', path, query, accept: '*/*', timeoutMs: options.follow ? 0 : undefined})
    if (response.status < 200 || response.status > 299) {
      const body = Buffer.from(await response.body.arrayBuffer())
      throw ApiStatusError.fromResponse(response.status, body, String(response.headers['content-type'] ?? ''))
    }
    for await (const chunk of response.body) {
      if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve))
    }
    return 0
  })
}
