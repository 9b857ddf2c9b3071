// `orch describe KIND NAME...`: a readable page per object, laid out as kubectl describe lays it out
// (labels and values in columns by a tab writer, 2-space levels) and ending with the Events about the
// object, newest last, so that a user sees why a pod is Pending. Pods get kubectl's pod page (node,
// status, containers, conditions, QoS class, node selector, tolerations); other kinds their name,
// labels, annotations and events.
import {age} from '../api/columns.js'
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type RestClient} from '../client/index.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {resolveResource, type ResourceInfo} from './resources.js'

export interface DescribeOptions extends ConnectOptions {
  /** the resource word: pods, pod, po, Pod, ... */
  resource: string
  names: string[]
}

/** Runs `orch describe`; exit code 1 when an object could not be read. */
export function runDescribe(options: DescribeOptions): Promise<void> {
  return withSession(options, (session) => describe(session, options))
}

async function describe(session: Session, options: DescribeOptions): Promise<number> {
  if (options.names.length === 0) throw new Error('you must specify the name of the object to describe')
  const info = await resolveResource(session.client, options.resource)
  const namespace = info.namespaced ? session.namespace : undefined
  let code = 0
  const pages: string[] = []
  for (const name of options.names) {
    try {
      const object = await session.client.get({group: info.group, version: info.version, resource: info.resource, namespace, name})
      const events = await eventsAbout(session.client, info, object)
      pages.push(describeObject(info, object, events, new Date()))
    } catch (error) {
      if (!isApiStatusError(error)) throw error
      reportError(error, session.server)
      code = 1
    }
  }
  process.stdout.write(pages.join('\n\n'))
  return code
}

/** The events whose involvedObject is the object, oldest first (kubectl's Search + SortableEvents). */
async function eventsAbout(client: RestClient, info: ResourceInfo, object: AnyObject): Promise<AnyObject[]> {
  const meta = object.metadata ?? {}
  const selector = [`involvedObject.name=${meta.name}`, `involvedObject.kind=${info.kind}`, `involvedObject.uid=${meta.uid}`]
  if (meta.namespace) selector.push(`involvedObject.namespace=${meta.namespace}`)
  const events = {group: '', version: 'v1', resource: 'events', namespace: meta.namespace || undefined}
  const list = await client.listAll(events, {fieldSelector: selector.join(',')})
  const items = [...list.items]
  // as kubectl: the agent (the kubelet) refers to its Node with uid = the node's name, controllers with its uid
  if (info.kind === 'Node' && meta.uid !== meta.name) {
    const byName = selector.map((term) => (term.startsWith('involvedObject.uid=') ? `involvedObject.uid=${meta.name}` : term))
    items.push(...(await client.listAll(events, {fieldSelector: byName.join(',')})).items)
  }
  const when = (e: AnyObject) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') || 0
  return items.sort((a, b) => when(a) - when(b))
}

export function describeObject(info: Pick<ResourceInfo, 'kind'>, object: AnyObject, events: AnyObject[], now: Date): string {
  const w = new PrefixWriter()
  if (info.kind === 'Pod') describePod(w, object, now)
  else describeGeneric(w, object)
  describeEvents(w, events, now)
  return tabwrite(w.text())
}

// ---------- the page ----------

class PrefixWriter {
  private out = ''
  /** Writes text at an indentation level (2 spaces per level). */
  write(level: number, text: string): void {
    this.out += '  '.repeat(level) + text
  }
  text(): string {
    return this.out
  }
}

const orNone = (value: unknown) => (value === undefined || value === null || value === '' ? '<none>' : String(value))

function writeMap(w: PrefixWriter, level: number, title: string, map: Record<string, unknown> | undefined): void {
  w.write(level, `${title}:\t`)
  const keys = Object.keys(map ?? {}).sort()
  if (keys.length === 0) return w.write(0, '<none>\n')
  keys.forEach((key, i) => {
    if (i > 0) w.write(level, '\t')
    w.write(0, `${key}=${map![key]}\n`)
  })
}

/** kubectl's skipAnnotations and maxAnnotationLen */
const SKIPPED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration'])
const MAX_ANNOTATION_LENGTH = 140

/** kubectl's printAnnotationsMultiline: `key: value` (not `key=value`), the client-side apply annotation
 *  left out, a trailing newline dropped, a long value on lines of its own cut at 140 characters */
function writeAnnotations(w: PrefixWriter, annotations: Record<string, unknown> | undefined): void {
  w.write(0, 'Annotations:\t')
  const keys = Object.keys(annotations ?? {}).filter((key) => !SKIPPED_ANNOTATIONS.has(key)).sort()
  if (keys.length === 0) return w.write(0, '<none>\n')
  keys.forEach((key, i) => {
    if (i > 0) w.write(0, '\t')
    const value = String(annotations![key]).replace(/\n$/, '')
    if (value.length + key.length + 2 > MAX_ANNOTATION_LENGTH) {
      w.write(0, `${key}:\n`)
      for (const line of value.split('\n')) w.write(0, `\t  ${line.length > MAX_ANNOTATION_LENGTH ? `${line.slice(0, MAX_ANNOTATION_LENGTH)}...` : line}\n`)
    } else {
      w.write(0, `${key}: ${value}\n`)
    }
  })
}

function describeGeneric(w: PrefixWriter, object: AnyObject): void {
  const meta = object.metadata ?? {}
  w.write(0, `Name:\t${meta.name ?? ''}\n`)
  if (meta.namespace) w.write(0, `Namespace:\t${meta.namespace}\n`)
  writeMap(w, 0, 'Labels', meta.labels)
  writeAnnotations(w, meta.annotations)
  w.write(0, `API Version:\t${object.apiVersion ?? ''}\n`)
  w.write(0, `Kind:\t${object.kind ?? ''}\n`)
}

/** RFC 1123 with a numeric zone, as Go's time.RFC1123Z (in UTC). */
function rfc1123(timestamp: string): string {
  const d = new Date(timestamp)
  if (Number.isNaN(d.getTime())) return timestamp
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
  const two = (n: number) => String(n).padStart(2, '0')
  return `${days[d.getUTCDay()]}, ${two(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
}

const list = (value: unknown): AnyObject[] => (Array.isArray(value) ? value : [])

function describePod(w: PrefixWriter, pod: AnyObject, now: Date): void {
  const meta = pod.metadata ?? {}
  const spec = pod.spec ?? {}
  const status = pod.status ?? {}
  w.write(0, `Name:\t${meta.name ?? ''}\n`)
  w.write(0, `Namespace:\t${meta.namespace ?? ''}\n`)
  if (typeof spec.priority === 'number') w.write(0, `Priority:\t${spec.priority}\n`)
  if (spec.priorityClassName) w.write(0, `Priority Class Name:\t${spec.priorityClassName}\n`)
  w.write(0, `Service Account:\t${spec.serviceAccountName ?? ''}\n`)
  w.write(0, `Node:\t${spec.nodeName ? (status.hostIP ? `${spec.nodeName}/${status.hostIP}` : spec.nodeName) : '<none>'}\n`)
  if (status.startTime) w.write(0, `Start Time:\t${rfc1123(status.startTime)}\n`)
  writeMap(w, 0, 'Labels', meta.labels)
  writeAnnotations(w, meta.annotations)
  if (meta.deletionTimestamp) w.write(0, `Status:\tTerminating (lasts ${age(meta.deletionTimestamp, now)})\n`)
  else w.write(0, `Status:\t${status.phase ?? ''}\n`)
  if (status.reason) w.write(0, `Reason:\t${status.reason}\n`)
  if (status.message) w.write(0, `Message:\t${status.message}\n`)
  w.write(0, `IP:\t${status.podIP ?? ''}\n`)
  const ips = list(status.podIPs)
  if (ips.length === 0) w.write(0, 'IPs:\t<none>\n')
  else {
    w.write(0, 'IPs:\n')
    for (const ip of ips) w.write(1, `IP:\t${ip.ip}\n`)
  }
  const owner = list(meta.ownerReferences).find((r) => r?.controller === true)
  if (owner) w.write(0, `Controlled By:\t${owner.kind}/${owner.name}\n`)
  if (list(spec.initContainers).length > 0) describeContainers(w, 'Init Containers', spec.initContainers, status.initContainerStatuses)
  describeContainers(w, 'Containers', spec.containers, status.containerStatuses)
  const conditions = list(status.conditions)
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\n')
    for (const c of conditions) w.write(1, `${c.type} \t${c.status} \n`)
  }
  const volumes = list(spec.volumes)
  if (volumes.length === 0) w.write(0, 'Volumes:\t<none>\n')
  else {
    w.write(0, 'Volumes:\n')
    for (const v of volumes) {
      w.write(1, `${v.name}:\n`)
      const source = Object.keys(v).find((k) => k !== 'name')
      w.write(2, `Type:\t${source ?? '<unknown>'}\n`)
    }
  }
  w.write(0, `QoS Class:\t${status.qosClass ?? ''}\n`)
  writeMap(w, 0, 'Node-Selectors', spec.nodeSelector)
  describeTolerations(w, spec.tolerations)
}

function describeContainers(w: PrefixWriter, title: string, containers: unknown, statuses: unknown): void {
  w.write(0, `${title}:\n`)
  for (const c of list(containers)) {
    const status = list(statuses).find((s) => s?.name === c.name)
    w.write(1, `${c.name}:\n`)
    w.write(2, `Image:\t${c.image ?? ''}\n`)
    const ports = list(c.ports)
    const portText = ports.map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ')
    const hostText = ports.map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`).join(', ')
    w.write(2, `${ports.length > 1 ? 'Ports' : 'Port'}:\t${orNone(portText)}\n`)
    w.write(2, `${ports.length > 1 ? 'Host Ports' : 'Host Port'}:\t${orNone(hostText)}\n`)
    if (status) {
      const [state, detail] = Object.entries(status.state ?? {})[0] ?? ['Waiting', {}]
      w.write(2, `State:\t${state.charAt(0).toUpperCase()}${state.slice(1)}\n`)
      if ((detail as AnyObject)?.reason) w.write(3, `Reason:\t${(detail as AnyObject).reason}\n`)
      w.write(2, `Ready:\t${status.ready ? 'True' : 'False'}\n`)
      w.write(2, `Restart Count:\t${status.restartCount ?? 0}\n`)
    }
    for (const kind of ['limits', 'requests'] as const) {
      const resources = c.resources?.[kind]
      if (!resources || Object.keys(resources).length === 0) continue
      w.write(2, `${kind === 'limits' ? 'Limits' : 'Requests'}:\n`)
      for (const name of Object.keys(resources).sort()) w.write(3, `${name}:\t${resources[name]}\n`)
    }
    const env = list(c.env)
    if (env.length === 0) w.write(2, 'Environment:\t<none>\n')
    else {
      w.write(2, 'Environment:\n')
      for (const e of env) w.write(3, `${e.name}:\t${e.value ?? ''}\n`)
    }
    const mounts = list(c.volumeMounts)
    if (mounts.length === 0) w.write(2, 'Mounts:\t<none>\n')
    else {
      w.write(2, 'Mounts:\n')
      for (const m of mounts) w.write(3, `${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'})\n`)
    }
  }
}

/** kubectl's toleration lines: key[=value][:effect][ op=Exists][ for Ns]. */
function describeTolerations(w: PrefixWriter, tolerations: unknown): void {
  w.write(0, 'Tolerations:\t')
  const all = list(tolerations)
  if (all.length === 0) return w.write(0, '<none>\n')
  all.forEach((t, i) => {
    if (i > 0) w.write(0, '\t')
    let text = t.key ?? ''
    if (t.value) text += `=${t.value}`
    if (t.effect) text += `:${t.effect}`
    if (t.operator === 'Exists' && !t.value) text += t.key || t.effect ? ' op=Exists' : 'op=Exists'
    if (typeof t.tolerationSeconds === 'number') text += ` for ${t.tolerationSeconds}s`
    w.write(0, `${text}\n`)
  })
}

/** kubectl's Events table: Type, Reason, Age ("5s (x3 over 2m)"), From, Message. */
function describeEvents(w: PrefixWriter, events: AnyObject[], now: Date): void {
  if (events.length === 0) return w.write(0, 'Events:\t<none>\n')
  w.write(0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n')
  w.write(1, '----\t------\t----\t----\t-------\n')
  for (const e of events) {
    const first = e.firstTimestamp ? age(e.firstTimestamp, now) : age(e.eventTime, now)
    let interval = first
    if (e.series) interval = `${age(e.series.lastObservedTime, now)} (x${e.series.count} over ${first})`
    else if ((e.count ?? 0) > 1) interval = `${age(e.lastTimestamp, now)} (x${e.count} over ${first})`
    const source = e.source?.component || e.reportingComponent || ''
    w.write(1, `${e.type ?? ''}\t${e.reason ?? ''}\t${interval}\t${source}\t${String(e.message ?? '').trim()}\n`)
  }
}

// ---------- Go's text/tabwriter (minwidth 0, padding 2, padded with spaces), as kubectl uses it ----------

/**
 * Aligns tab-separated cells: the cells of one column in consecutive lines that all have that cell form
 * a block, padded to the block's widest cell plus 2. The text after a line's last tab is not aligned.
 */
export function tabwrite(text: string, padding = 2): string {
  const lines = text.split('\n').map((line) => line.split('\t'))
  const widths: number[] = []
  const out: string[] = []
  const emit = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]!
      out.push(cells.map((cell, j) => (j < widths.length && j < cells.length - 1 ? cell.padEnd(widths[j]!) : cell)).join(''))
    }
  }
  const format = (line0: number, line1: number): void => {
    const column = widths.length
    for (let at = line0; at < line1; at++) {
      if (column >= lines[at]!.length - 1) continue
      emit(line0, at)
      line0 = at
      let width = 0
      for (; at < line1; at++) {
        const cells = lines[at]!
        if (column >= cells.length - 1) break
        width = Math.max(width, cells[column]!.length + padding)
      }
      widths.push(width)
      format(line0, at)
      widths.pop()
      line0 = at
    }
    emit(line0, line1)
  }
  format(0, lines.length)
  return out.join('\n')
}
