// The health endpoints, as Kubernetes' k8s.io/apiserver/pkg/server/healthz serves them:
//   /healthz, /livez, /readyz   "ok" (200) when every check passes; `?verbose` lists the checks
//                               ("[+]ping ok", ... "livez check passed"); `?exclude=NAME` (repeatable)
//                               skips a check. A failing check makes the answer 500, always verbose,
//                               the reason withheld (these paths are public) and logged instead.
//   /livez/NAME (and the others) one check alone: "ok", or 500 "internal server error: <reason>".
// /healthz and /livez run the liveness checks (ping, the store); /readyz adds the store's readiness
// (a shorter deadline), the watch caches' sync and the shutdown check, which fails from the moment
// the server begins to stop so that a load balancer takes it out before its connections close.
import type {ServerResponse} from 'node:http'
import type {Logger} from '../machinery/log.js'

export interface HealthCheck {
  readonly name: string
  /** resolves when healthy; rejects (or throws) saying why not */
  check(): Promise<void> | void
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz'

export interface HealthChecks {
  livez: HealthCheck[]
  readyz: HealthCheck[]
}

const ENDPOINTS: ReadonlySet<string> = new Set(['healthz', 'livez', 'readyz'])

/** Kubernetes' PingHealthz: the server answers. */
export const pingCheck: HealthCheck = {name: 'ping', check: () => undefined}

/** A check that fails when `work` has not settled within `ms` (Kubernetes' etcd checks have deadlines too). */
export function withDeadline(name: string, ms: number, work: () => Promise<void>): HealthCheck {
  return {
    name,
    check: () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
        timer.unref()
        work().then(
          () => (clearTimeout(timer), resolve()),
          (error: unknown) => (clearTimeout(timer), reject(error)),
        )
      }),
  }
}

/** The health path's endpoint and check name, or undefined when `path` is not a health path. */
export function healthPath(path: string): {endpoint: HealthEndpoint; check?: string} | undefined {
  const slash = path.indexOf('/', 1)
  const endpoint = path.slice(1, slash < 0 ? undefined : slash)
  if (!ENDPOINTS.has(endpoint)) return undefined
  if (slash < 0) return {endpoint: endpoint as HealthEndpoint}
  const check = path.slice(slash + 1)
  return check ? {endpoint: endpoint as HealthEndpoint, check} : undefined
}

async function outcome(check: HealthCheck): Promise<Error | undefined> {
  try {
    await check.check()
    return undefined
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

function reply(response: ServerResponse, code: number, body: string): void {
  response.writeHead(code, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff'})
  response.end(body)
}

export class HealthEndpoints {
  constructor(
    private readonly checks: HealthChecks,
    private readonly logger: Logger,
  ) {}

  private checksOf(endpoint: HealthEndpoint): HealthCheck[] {
    return endpoint === 'readyz' ? this.checks.readyz : this.checks.livez
  }

  /** Answers a health path and returns true; false when `path` names no check here (a 404 then). */
  async handle(path: string, query: URLSearchParams, response: ServerResponse): Promise<boolean> {
    const target = healthPath(path)
    if (!target) return false
    const checks = this.checksOf(target.endpoint)
    if (target.check !== undefined) {
      const check = checks.find((c) => c.name === target.check)
      if (!check) return false
      const error = await outcome(check)
      if (error) reply(response, 500, `internal server error: ${error.message}\n`)
      else reply(response, 200, 'ok')
      return true
    }
    const excluded = new Set(query.getAll('exclude'))
    const results = await Promise.all(checks.map((check) => (excluded.has(check.name) ? undefined : outcome(check))))
    let listing = ''
    const failed: string[] = []
    checks.forEach((check, i) => {
      if (excluded.delete(check.name)) listing += `[+]${check.name} excluded: ok\n`
      else if (results[i]) {
        // the reason stays out of the body (these paths are public) and goes to the log
        listing += `[-]${check.name} failed: reason withheld\n`
        failed.push(`[-]${check.name} failed: ${results[i]!.message}`)
      } else listing += `[+]${check.name} ok\n`
    })
    if (excluded.size > 0) {
      const names = [...excluded].sort().map((name) => JSON.stringify(name))
      listing += `warn: some health checks cannot be excluded: no matches for ${names.join(',')}\n`
    }
    if (failed.length > 0) {
      this.logger.v(2, `${target.endpoint} check failed`, {checks: failed.join('\n')})
      reply(response, 500, `${listing}${target.endpoint} check failed\n`)
    } else if (query.has('verbose')) reply(response, 200, `${listing}${target.endpoint} check passed\n`)
    else reply(response, 200, 'ok')
    return true
  }
}
