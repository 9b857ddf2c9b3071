// `orch logs POD`: GET pods/{name}/log with the options kubectl logs sends (container, follow,
// previous, tailLines, sinceSeconds, timestamps), the text written to stdout as it arrives; the
// server's Status becomes one `error:` line and exit 1.
import {ApiStatusError} from '../client/index.js'
import {parseDuration} from '../machinery/duration.js'
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

/** Seconds of a Go duration as kubectl logs sends them (`Round(time.Second)`: 1500ms → 2, 400ms → 0); undefined when it is not a duration. */
export function sinceSecondsOf(text: string): number | undefined {
  try {
    return Math.round(parseDuration(text) / 1000)
  } catch {
    return undefined
  }
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
      sinceSeconds: sinceSeconds ? String(sinceSeconds) : undefined, // kubectl sends none for a zero --since
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
