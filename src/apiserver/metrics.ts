// /metrics: the API server's Prometheus metrics, named and labelled as kube-apiserver's are
// (k8s.io/apiserver/pkg/endpoints/metrics), in the Prometheus text format 0.0.4:
//   apiserver_request_total               counter   verb, dry_run, group, version, resource, subresource, scope, component, code
//   apiserver_request_duration_seconds    histogram the same labels but code, Kubernetes' buckets
//   apiserver_current_inflight_requests   gauge     request_kind (mutating | readOnly; watches are not counted)
//   apiserver_longrunning_requests        gauge     the request labels but code and dry_run (open watches, proxies)
//   apiserver_storage_objects             gauge     resource (from the watch caches)
//   process_*                             the process's CPU, memory, start time and file descriptors
// Verbs as Kubernetes reports them: GET on a named object, LIST, WATCH, POST, PUT, PATCH, APPLY (a
// server-side apply patch), DELETE, DELETECOLLECTION, CONNECT (proxies). A request for a resource
// this server does not serve is counted without its group, version and resource, so that made-up
// paths cannot make new series.
import {readdirSync, readFileSync} from 'node:fs'
import type {IncomingMessage} from 'node:http'
import type {Catalog} from './catalog.js'
import type {RequestInfo} from './requestinfo.js'

const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]
const APPLY_PATCH = 'application/apply-patch+yaml'
const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT'])
/** subresources served by a connecter (Kubernetes registers them with the CONNECT action) */
const CONNECT_SUBRESOURCES = new Set(['proxy', 'exec', 'attach', 'portforward'])
/** Kubernetes' BasicLongRunningRequestCheck: these subresources, and watches, are long-running */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward'])

/** The labels of one request, in Kubernetes' order (code last). */
interface RequestLabels {
  verb: string
  dryRun: string
  group: string
  version: string
  resource: string
  subresource: string
  scope: string
}

interface Histogram {
  labels: RequestLabels
  counts: number[]
  sum: number
  count: number
}

export type StorageCounts = () => Iterable<{resource: string; count: number}>

function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
}

/** name="value" pairs sorted by name, as the Prometheus Go client prints them */
function labelText(pairs: [string, string][]): string {
  return pairs
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([name, value]) => `${name}="${escapeLabel(value)}"`)
    .join(',')
}

function requestPairs(labels: RequestLabels): [string, string][] {
  return [
    ['component', 'apiserver'],
    ['dry_run', labels.dryRun],
    ['group', labels.group],
    ['resource', labels.resource],
    ['scope', labels.scope],
    ['subresource', labels.subresource],
    ['verb', labels.verb],
    ['version', labels.version],
  ]
}

function keyOf(labels: RequestLabels): string {
  return `${labels.verb}\0${labels.dryRun}\0${labels.group}\0${labels.version}\0${labels.resource}\0${labels.subresource}\0${labels.scope}`
}

/** Kubernetes' cleanDryRun: "" without dryRun, "All" for valid values (All, repeated or not),
 *  "invalid" for anything else — never the client's own text, which would make a series per value. */
function dryRunOf(query: URLSearchParams | undefined): string {
  const values = query?.getAll('dryRun')
  if (!values || values.length === 0) return ''
  return values.every((value) => value === 'All') ? 'All' : 'invalid'
}

function number(value: number): string {
  return Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN'
}

export class ApiMetrics {
  private readonly totals = new Map<string, {labels: RequestLabels; codes: Map<number, number>}>()
  private readonly durations = new Map<string, Histogram>()
  private readonly longRunning = new Map<string, {labels: RequestLabels; open: number}>()
  private readonly inflight = {mutating: 0, readOnly: 0}
  private readonly startedAt = Date.now() / 1000 - process.uptime()

  constructor(private readonly catalog: Catalog) {}

  /** The request's labels, as Kubernetes' CleanScope, canonicalVerb and CleanVerb make them. */
  labelsOf(request: IncomingMessage, info: RequestInfo | undefined, query: URLSearchParams | undefined): RequestLabels {
    const method = (request.method ?? 'GET').toUpperCase()
    const verb = method === 'HEAD' ? 'GET' : KNOWN_METHODS.has(method) ? method : 'other'
    const labels: RequestLabels = {verb, dryRun: dryRunOf(query), group: '', version: '', resource: '', subresource: '', scope: ''}
    if (!info?.isResourceRequest) return labels
    const declaration = this.catalog.resource(info.group, info.version, info.resource)
    const subresource = info.subresource && declaration?.subresources?.some((s) => s.name === info.subresource) ? info.subresource : ''
    labels.scope = info.name !== '' || info.verb === 'create' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster'
    if (info.verb === 'watch') labels.verb = 'WATCH'
    else if (info.verb === 'list') labels.verb = 'LIST'
    else if (info.verb === 'deletecollection') labels.verb = 'DELETECOLLECTION'
    else if (info.verb === 'proxy' || CONNECT_SUBRESOURCES.has(subresource)) labels.verb = 'CONNECT'
    else if (method === 'PATCH' && request.headers['content-type']?.split(';')[0].trim() === APPLY_PATCH) labels.verb = 'APPLY'
    if (declaration) {
      labels.group = info.group
      labels.version = info.version
      labels.resource = info.resource
      labels.subresource = subresource
    }
    return labels
  }

  /** Counts a request that is starting; the returned function ends it (with its status code). */
  started(request: IncomingMessage, labels: RequestLabels): (code: number) => void {
    const began = process.hrtime.bigint()
    const longRunning = labels.verb === 'WATCH' || labels.verb === 'CONNECT' || LONG_RUNNING_SUBRESOURCES.has(labels.subresource)
    const kind = MUTATING_METHODS.has((request.method ?? '').toUpperCase()) ? 'mutating' : 'readOnly'
    let gauge: {labels: RequestLabels; open: number} | undefined
    if (longRunning) {
      const key = keyOf({...labels, dryRun: ''})
      gauge = this.longRunning.get(key)
      if (!gauge) this.longRunning.set(key, (gauge = {labels: {...labels, dryRun: ''}, open: 0}))
      gauge.open++
    } else this.inflight[kind]++
    return (code) => {
      if (gauge) gauge.open--
      else this.inflight[kind]--
      this.observe(labels, code, Number(process.hrtime.bigint() - began) / 1e9)
    }
  }

  private observe(labels: RequestLabels, code: number, seconds: number): void {
    const key = keyOf(labels)
    let total = this.totals.get(key)
    if (!total) this.totals.set(key, (total = {labels, codes: new Map()}))
    total.codes.set(code, (total.codes.get(code) ?? 0) + 1)
    let histogram = this.durations.get(key)
    if (!histogram) this.durations.set(key, (histogram = {labels, counts: new Array(DURATION_BUCKETS.length).fill(0), sum: 0, count: 0}))
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++
    if (bucket < DURATION_BUCKETS.length) histogram.counts[bucket]++
    histogram.sum += seconds
    histogram.count++
  }

  /** The text exposition. */
  render(storage: StorageCounts): string {
    const out: string[] = []
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)

    family('apiserver_current_inflight_requests', 'gauge', '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.')
    out.push(`apiserver_current_inflight_requests{request_kind="mutating"} ${this.inflight.mutating}`)
    out.push(`apiserver_current_inflight_requests{request_kind="readOnly"} ${this.inflight.readOnly}`)

    family('apiserver_longrunning_requests', 'gauge', '[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.')
    for (const {labels, open} of this.longRunning.values()) {
      const pairs = requestPairs(labels).filter(([name]) => name !== 'dry_run')
      out.push(`apiserver_longrunning_requests{${labelText(pairs)}} ${open}`)
    }

    family('apiserver_request_duration_seconds', 'histogram', '[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.')
    for (const histogram of this.durations.values()) {
      // the bucket bound comes last, after the sorted labels, as the Prometheus Go client writes it
      const base = labelText(requestPairs(histogram.labels))
      let cumulative = 0
      DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += histogram.counts[i]
        out.push(`apiserver_request_duration_seconds_bucket{${base},le="${number(bound)}"} ${cumulative}`)
      })
      out.push(`apiserver_request_duration_seconds_bucket{${base},le="+Inf"} ${histogram.count}`)
      out.push(`apiserver_request_duration_seconds_sum{${base}} ${number(histogram.sum)}`)
      out.push(`apiserver_request_duration_seconds_count{${base}} ${histogram.count}`)
    }

    family('apiserver_request_total', 'counter', '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.')
    for (const {labels, codes} of this.totals.values()) {
      for (const [code, count] of codes) out.push(`apiserver_request_total{${labelText([...requestPairs(labels), ['code', String(code)]])}} ${count}`)
    }

    family('apiserver_storage_objects', 'gauge', '[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.')
    for (const {resource, count} of storage()) out.push(`apiserver_storage_objects{resource="${escapeLabel(resource)}"} ${count}`)

    this.renderProcess(family, out)
    return out.join('\n') + '\n'
  }

  private renderProcess(family: (name: string, type: string, help: string) => void, out: string[]): void {
    const cpu = process.cpuUsage()
    const memory = process.memoryUsage()
    family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.')
    out.push(`process_cpu_seconds_total ${number((cpu.user + cpu.system) / 1e6)}`)
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.')
    out.push(`process_resident_memory_bytes ${memory.rss}`)
    family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.')
    out.push(`process_start_time_seconds ${number(Math.round(this.startedAt * 100) / 100)}`)
    const fds = openFileDescriptors()
    if (fds) {
      family('process_open_fds', 'gauge', 'Number of open file descriptors.')
      out.push(`process_open_fds ${fds.open}`)
      if (fds.max !== undefined) {
        family('process_max_fds', 'gauge', 'Maximum number of open file descriptors.')
        out.push(`process_max_fds ${fds.max}`)
      }
    }
  }
}

/** Linux: the entries of /proc/self/fd and the soft limit of /proc/self/limits; undefined elsewhere. */
function openFileDescriptors(): {open: number; max?: number} | undefined {
  try {
    const open = readdirSync('/proc/self/fd').length
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return {open, max: limit ? Number(limit[1]) : undefined}
  } catch {
    return undefined
  }
}
