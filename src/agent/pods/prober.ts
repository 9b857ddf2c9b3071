// Container probes as the kubelet's prober runs them (Kubernetes 1.32 pkg/kubelet/prober: prober_manager,
// worker, prober; pkg/probe/{exec,http,tcp}): one worker per container and probe type (startup,
// liveness, readiness) with its cached result, reset to the type's initial value (startup Unknown,
// liveness Success, readiness Failure) whenever the container is a new instance. A worker probes its
// running container every periodSeconds once initialDelaySeconds have passed since the container
// started; startup runs until it succeeds, liveness and readiness only after. A result takes
// effect after failureThreshold failures or successThreshold successes in a row; a probe that errors
// (not a failure: the handler could not run) keeps the result. Only a change of a result wakes the
// pod (onChange), so statuses are written when something changes, never per probe. A liveness or
// startup failure holds the worker until the container is replaced; killIfUnhealthy stops such a
// container (the pod's sync restarts it per restartPolicy). grpc probes are not run: the agent
// records a ProbeWarning once per container instance and treats the probe as succeeding.
import {Socket} from 'node:net'
import {request as httpRequest, type IncomingMessage} from 'node:http'
import {request as httpsRequest} from 'node:https'
import type {AnyObject} from '../../api/types.js'
import type {Logger} from '../../machinery/log.js'
import {isCriError, type CriClient} from '../cri/client.js'
import type {AgentEvents} from '../events.js'
import type {PodView} from './status.js'
import {isSidecar, sidecarsOf} from './sidecars.js'

export type ProbeType = 'Startup' | 'Liveness' | 'Readiness'
type Result = 'Success' | 'Failure' | 'Unknown'

/** the kubelet's maxReadLength: probe output (exec output, HTTP body) kept */
const MAX_OUTPUT = 10 * 1024
/** kuberuntime's minimumGracePeriodInSeconds for a container the kubelet kills */
const MINIMUM_GRACE_SECONDS = 2
/** the kubelet's User-Agent `kube-probe/<major>.<minor>`, renamed */
const USER_AGENT = 'orch-probe/1.32'
const FIELDS: Record<ProbeType, string> = {Startup: 'startupProbe', Liveness: 'livenessProbe', Readiness: 'readinessProbe'}
const INITIAL: Record<ProbeType, Result> = {Startup: 'Unknown', Liveness: 'Success', Readiness: 'Failure'}

interface Worker {
  type: ProbeType
  container: AnyObject
  probe: AnyObject
  containerId?: string
  startedAtMs: number
  result: Result
  lastResult?: Result
  resultRun: number
  onHold: boolean
  killed: boolean
  /** its container runs: the worker probes it */
  active: boolean
  timer?: NodeJS.Timeout
  inFlight?: Promise<void>
}

interface PodProbes {
  pod: AnyObject
  podIP?: string
  workers: Worker[]
}

export interface ProberOptions {
  cri: CriClient
  events?: AgentEvents
  logger: Logger
  /** a probe result of the pod changed: sync it (status, kills) */
  onChange: (uid: string) => void
}

/** Probe outcome; `error` when the handler could not run (the kubelet's probe error: result kept). */
interface Outcome {
  result: 'Success' | 'Failure' | 'Warning'
  output: string
  error?: string
}

export class Prober {
  private readonly pods = new Map<string, PodProbes>()
  private readonly abort = new AbortController()
  private stopped = false

  constructor(private readonly options: ProberOptions) {}

  /**
   * Brings the pod's workers up to date with its containers (new instances reset them, stopped ones
   * stop their timers) and answers the probes' say on each running container's started and ready.
   */
  update(uid: string, pod: AnyObject, view: PodView): (name: string, containerId: string) => {started: boolean; ready: boolean} {
    if (view.terminated || this.stopped) this.removePod(uid)
    else {
      let entry = this.pods.get(uid)
      if (!entry) {
        const workers: Worker[] = []
        for (const container of [...sidecarsOf(pod), ...(pod.spec?.containers ?? [])]) {
          for (const type of ['Startup', 'Liveness', 'Readiness'] as const) {
            const probe = container[FIELDS[type]]
            if (probe) workers.push({type, container, probe, startedAtMs: 0, result: INITIAL[type], resultRun: 0, onHold: false, killed: false, active: false})
          }
        }
        entry = {pod, workers}
        if (workers.length > 0) this.pods.set(uid, entry)
      }
      entry.pod = pod
      entry.podIP = view.podIP
      for (const worker of entry.workers) {
        const instance = view.latest.get(worker.container.name)
        const running = instance && (instance.status?.state ?? instance.container.state) === 'CONTAINER_RUNNING'
        if (!running) {
          worker.active = false
          this.clearTimer(worker)
          continue
        }
        if (worker.containerId === instance.container.id) continue
        // a new instance: the worker starts over with the type's initial result
        this.clearTimer(worker)
        Object.assign(worker, {containerId: instance.container.id, result: INITIAL[worker.type], lastResult: undefined, resultRun: 0, onHold: false, killed: false, active: true})
        const startedAt = instance.status?.startedAt
        worker.startedAtMs = startedAt && BigInt(startedAt) > 0n ? Number(BigInt(startedAt) / 1_000_000n) : Date.now()
        if (worker.probe.grpc) {
          worker.result = 'Success'
          this.options.events?.container(pod, worker.container.name, 'Warning', 'ProbeWarning', `${worker.type} probe warning: grpc probes are not run by the orch agent; the probe is taken as succeeding`)
          continue
        }
        const delayMs = Math.max(0, worker.startedAtMs + seconds(worker.probe.initialDelaySeconds, 0) * 1000 - Date.now())
        this.schedule(uid, worker, delayMs)
      }
    }
    const entry = this.pods.get(uid)
    return (name, containerId) => {
      const result = (type: ProbeType): Result | undefined => {
        const worker = entry?.workers.find((w) => w.container.name === name && w.type === type)
        if (!worker) return undefined
        return worker.containerId === containerId ? worker.result : INITIAL[type]
      }
      const startup = result('Startup')
      const started = startup === undefined || startup === 'Success'
      const readiness = result('Readiness')
      return {started, ready: started && (readiness === undefined || readiness === 'Success')}
    }
  }

  /**
   * Stops the running container `containerId` when its liveness or startup probe failed (the Killing
   * event, the probe's or the pod's grace period); true when it did. The pod's sync restarts it.
   */
  async killIfUnhealthy(uid: string, container: AnyObject, containerId: string): Promise<boolean> {
    const entry = this.pods.get(uid)
    const worker = entry?.workers.find((w) => w.container.name === container.name && w.containerId === containerId && w.type !== 'Readiness' && w.result === 'Failure' && !w.killed)
    if (!entry || !worker) return false
    worker.killed = true
    const pod = entry.pod
    const restart = isSidecar(container) || (pod.spec?.restartPolicy ?? 'Always') !== 'Never'
    const message = `Container ${container.name} failed ${worker.type.toLowerCase()} probe${restart ? ', will be restarted' : ''}`
    this.options.events?.killing(pod, container.name, message)
    const grace = Math.max(MINIMUM_GRACE_SECONDS, seconds(worker.probe.terminationGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds, 30))
    this.options.logger.info('killing container', {pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, container: container.name, reason: `${worker.type} probe failed`, gracePeriodSeconds: grace})
    await this.options.cri.stopContainer(containerId, grace)
    return true
  }

  /** Stops the pod's probes (its deletion, its termination). */
  removePod(uid: string): void {
    const entry = this.pods.get(uid)
    if (!entry) return
    for (const worker of entry.workers) {
      worker.active = false
      this.clearTimer(worker)
    }
    this.pods.delete(uid)
  }

  /** Stops every probe; resolves once the probes running now have ended (their requests aborted). */
  async stop(): Promise<void> {
    this.stopped = true
    this.abort.abort()
    const inFlight: Promise<void>[] = []
    for (const uid of [...this.pods.keys()]) {
      for (const worker of this.pods.get(uid)!.workers) if (worker.inFlight) inFlight.push(worker.inFlight)
      this.removePod(uid)
    }
    await Promise.all(inFlight)
  }

  // ------------------------------------------------------------------------------------ workers

  private clearTimer(worker: Worker): void {
    if (worker.timer) clearTimeout(worker.timer)
    worker.timer = undefined
  }

  private schedule(uid: string, worker: Worker, delayMs: number): void {
    if (this.stopped || !worker.active) return
    const containerId = worker.containerId
    worker.timer = setTimeout(() => {
      worker.timer = undefined
      worker.inFlight = this.doProbe(uid, worker)
        .catch((error) => this.options.logger.warn('probe failed to run', {error: (error as Error).message}))
        .finally(() => {
          worker.inFlight = undefined
          // the same container still running: probe again after the period
          if (worker.active && worker.containerId === containerId && !worker.timer) this.schedule(uid, worker, seconds(worker.probe.periodSeconds, 10) * 1000)
        })
    }, delayMs)
  }

  /** The kubelet's worker.doProbe, one round. */
  private async doProbe(uid: string, worker: Worker): Promise<void> {
    const entry = this.pods.get(uid)
    if (!entry || worker.onHold || !worker.containerId) return
    const startup = entry.workers.find((w) => w.container.name === worker.container.name && w.type === 'Startup')
    const started = !startup || (startup.containerId === worker.containerId && startup.result === 'Success')
    // startup runs until the container started; liveness and readiness only after
    if ((worker.type === 'Startup') === started) return
    const containerId = worker.containerId
    const outcome = await this.run(entry, worker)
    if (this.pods.get(uid) !== entry || worker.containerId !== containerId) return
    const {pod} = entry
    const name = worker.container.name as string
    if (outcome.error !== undefined) {
      this.options.events?.container(pod, name, 'Warning', 'Unhealthy', `${worker.type} probe errored and resulted in unknown state: ${outcome.error}`)
      return
    }
    if (outcome.result === 'Warning') this.options.events?.container(pod, name, 'Warning', 'ProbeWarning', `${worker.type} probe warning: ${outcome.output}`)
    if (outcome.result === 'Failure') this.options.events?.container(pod, name, 'Warning', 'Unhealthy', `${worker.type} probe failed: ${outcome.output}`)
    const result: Result = outcome.result === 'Failure' ? 'Failure' : 'Success'
    if (worker.lastResult === result) worker.resultRun++
    else {
      worker.lastResult = result
      worker.resultRun = 1
    }
    const threshold = result === 'Failure' ? seconds(worker.probe.failureThreshold, 3) : seconds(worker.probe.successThreshold, 1)
    if (worker.resultRun < threshold) return
    if (worker.type !== 'Readiness' && result === 'Failure') {
      // held until the container is replaced
      worker.onHold = true
      worker.resultRun = 0
    }
    if (worker.result === result) return
    worker.result = result
    this.options.onChange(uid)
  }

  private async run(entry: PodProbes, worker: Worker): Promise<Outcome> {
    const probe = worker.probe
    const timeoutSeconds = seconds(probe.timeoutSeconds, 1)
    try {
      if (probe.exec) return await this.exec(worker.containerId!, probe.exec.command ?? [], timeoutSeconds)
      if (probe.httpGet) {
        const port = portOf(probe.httpGet.port, worker.container)
        return await httpProbe(probe.httpGet, probe.httpGet.host || entry.podIP || '127.0.0.1', port, timeoutSeconds * 1000, this.abort.signal)
      }
      if (probe.tcpSocket) {
        const port = portOf(probe.tcpSocket.port, worker.container)
        return await tcpProbe(probe.tcpSocket.host || entry.podIP || '127.0.0.1', port, timeoutSeconds * 1000, this.abort.signal)
      }
      return {result: 'Failure', output: '', error: 'missing probe handler'}
    } catch (error) {
      return {result: 'Failure', output: '', error: (error as Error).message}
    }
  }

  /** pkg/probe/exec: exit 0 succeeds; a timeout is a failure (ExecProbeTimeout) with the runtime's words. */
  private async exec(containerId: string, command: string[], timeoutSeconds: number): Promise<Outcome> {
    try {
      const response = await this.options.cri.execSync(containerId, command, timeoutSeconds)
      const output = truncate(Buffer.concat([response.stdout, response.stderr]).toString('utf8'))
      return {result: response.exitCode === 0 ? 'Success' : 'Failure', output}
    } catch (error) {
      if (isCriError(error) && error.codeName === 'DEADLINE_EXCEEDED') return {result: 'Failure', output: `command ${JSON.stringify(command.join(' '))} timed out`}
      throw error
    }
  }
}

// ------------------------------------------------------------------------------------ handlers

function seconds(value: unknown, fallback: number): number {
  const n = Number(value)
  return value === undefined || value === null || !Number.isFinite(n) || n <= 0 ? fallback : n
}

const truncate = (text: string): string => (text.length > MAX_OUTPUT ? text.slice(0, MAX_OUTPUT) : text)

/** The kubelet's findPortByName / extractPort: a number, a container port's name, or a number as a string. */
export function portOf(port: unknown, container: AnyObject): number {
  let number: number
  if (typeof port === 'number') number = port
  else {
    const named = (container.ports ?? []).find((p: AnyObject) => p.name === port)
    if (named) number = Number(named.containerPort)
    else if (/^[+-]?\d+$/.test(String(port))) number = Number(port)
    else throw new Error(`strconv.Atoi: parsing ${JSON.stringify(String(port))}: invalid syntax`)
  }
  if (!(number > 0 && number < 65536)) throw new Error(`invalid port number: ${number}`)
  return number
}

const hostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)

/** Go's dial error words for Node's socket errors. */
function dialError(host: string, port: number, error: NodeJS.ErrnoException): string {
  const words: Record<string, string> = {ECONNREFUSED: 'connect: connection refused', EHOSTUNREACH: 'connect: no route to host', ENETUNREACH: 'connect: network is unreachable', ETIMEDOUT: 'i/o timeout'}
  return `dial tcp ${hostPort(host, port)}: ${(error.code && words[error.code]) || error.message}`
}

/** pkg/probe/tcp: a connection that opens succeeds. */
function tcpProbe(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = new Socket()
    const done = (outcome: Outcome): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', aborted)
      socket.destroy()
      resolve(outcome)
    }
    const aborted = (): void => done({result: 'Failure', output: '', error: 'probe aborted'})
    const timer = setTimeout(() => done({result: 'Failure', output: `dial tcp ${hostPort(host, port)}: i/o timeout`}), timeoutMs)
    signal.addEventListener('abort', aborted)
    socket.on('error', (error) => done({result: 'Failure', output: dialError(host, port, error)}))
    socket.connect({host, port}, () => done({result: 'Success', output: ''}))
  })
}

/**
 * pkg/probe/http: GET scheme://host:port/path with the probe's headers (User-Agent and Accept unless
 * given); 200–399 succeeds with the body as output, other codes fail (`HTTP probe failed with
 * statuscode: N`); redirects are followed on the same host (up to 10), a redirect elsewhere ends in a
 * warning (success). TLS certificates are not verified, as the kubelet does not.
 */
async function httpProbe(action: AnyObject, host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<Outcome> {
  const scheme = String(action.scheme ?? 'HTTP').toLowerCase()
  let path = String(action.path ?? '')
  if (!path.startsWith('/')) path = `/${path}`
  let url = new URL(`${scheme}://${hostPort(host, port)}${path}`)
  const headers: Record<string, string> = {}
  for (const header of action.httpHeaders ?? []) if (header?.name) headers[String(header.name).toLowerCase()] = String(header.value ?? '')
  headers['user-agent'] ??= USER_AGENT
  headers.accept ??= '*/*'
  const deadline = Date.now() + timeoutMs
  const originalHost = url.host
  for (let redirects = 0; ; redirects++) {
    let response: {status: number; location?: string; body: string}
    try {
      response = await get(url, headers, Math.max(1, deadline - Date.now()), signal)
    } catch (error) {
      const e = error as NodeJS.ErrnoException
      const reason = e.name === 'TimeoutError' ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)' : e.code && e.syscall === 'connect' ? dialError(host, port, e) : e.message
      return {result: 'Failure', output: `Get ${JSON.stringify(url.href)}: ${reason}`}
    }
    if (response.status >= 300 && response.status < 400 && response.location) {
      const next = new URL(response.location, url)
      if (next.host === originalHost && redirects < 10) {
        url = next
        continue
      }
      if (redirects >= 10) return {result: 'Failure', output: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects`}
      return {result: 'Warning', output: `Probe terminated redirects, Response body: ${response.body}`}
    }
    if (response.status >= 200 && response.status < 400) return {result: 'Success', output: response.body}
    return {result: 'Failure', output: `HTTP probe failed with statuscode: ${response.status}`}
  }
}

function get(url: URL, headers: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<{status: number; location?: string; body: string}> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {method: 'GET', headers, rejectUnauthorized: false, signal, agent: false}, (response: IncomingMessage) => {
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        if (size < MAX_OUTPUT) chunks.push(chunk.subarray(0, MAX_OUTPUT - size))
        size += chunk.length
      })
      response.on('end', () => {
        clearTimeout(timer)
        resolve({status: response.statusCode ?? 0, location: response.headers.location, body: Buffer.concat(chunks).toString('utf8')})
      })
      response.on('error', reject)
    })
    const timer = setTimeout(() => {
      const error = new Error('timeout')
      error.name = 'TimeoutError'
      request.destroy(error)
    }, timeoutMs)
    request.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    request.end()
  })
}
