// Static pods: Pod manifests (YAML or JSON, one or more documents) in staticPodPath, read at start,
// on a change seen by fs.watch, and every fileCheckFrequency. As the kubelet does, each pod is named
// `<name>-<nodeName>`, bound to this node, placed in `default` when it names no namespace, and gets a
// UID hashed from its manifest, the node and the source (so an edit is a new pod) plus the annotations
// orch.io/config.source=file, orch.io/config.hash and orch.io/config.seen. A file that does not parse
// or is not a valid Pod is logged and skipped; the others still run.
import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher} from 'node:fs'
import {join} from 'node:path'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {isDNS1123Label, isDNS1123Subdomain} from '../machinery/validation.js'
import {loadAllYaml} from '../machinery/go-yaml.js'

export const CONFIG_SOURCE_ANNOTATION = 'orch.io/config.source'
export const CONFIG_HASH_ANNOTATION = 'orch.io/config.hash'
export const CONFIG_SEEN_ANNOTATION = 'orch.io/config.seen'
export const CONFIG_MIRROR_ANNOTATION = 'orch.io/config.mirror'

/** UUID-shaped hash of the manifest, node and source (Kubernetes hashes the same three). */
function staticUID(manifest: string, nodeName: string, file: string): string {
  const hex = createHash('md5').update(manifest).update(nodeName).update(file).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** Why a manifest document is not a usable Pod, or undefined. */
function problemOf(doc: AnyObject): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return 'not an object'
  if (doc.apiVersion !== 'v1' || doc.kind !== 'Pod') return `apiVersion/kind must be v1/Pod, not ${doc.apiVersion}/${doc.kind}`
  const name = doc.metadata?.name
  if (typeof name !== 'string' || isDNS1123Subdomain(name).length > 0) return `metadata.name ${JSON.stringify(name)} is not a DNS subdomain`
  const namespace = doc.metadata?.namespace
  if (namespace !== undefined && (typeof namespace !== 'string' || isDNS1123Label(namespace).length > 0)) return `metadata.namespace ${JSON.stringify(namespace)} is not a DNS label`
  const containers = doc.spec?.containers
  if (!Array.isArray(containers) || containers.length === 0) return 'spec.containers must name at least one container'
  for (const [index, container] of containers.entries()) {
    if (typeof container?.name !== 'string' || isDNS1123Label(container.name).length > 0) return `spec.containers[${index}].name must be a DNS label`
    if (typeof container.image !== 'string' || container.image === '') return `spec.containers[${index}].image is required`
  }
  return undefined
}

/** The pods one manifest file defines; throws with a one-line reason when it is unusable. */
export function podsFromManifest(file: string, text: string, nodeName: string, now: Date = new Date()): AnyObject[] {
  let docs: unknown[]
  try {
    docs = loadAllYaml(text, {json: false}).filter((doc) => doc !== null && doc !== undefined)
  } catch (error) {
    throw new Error(`${(error as Error).message.split('\n')[0]}`)
  }
  const pods: AnyObject[] = []
  docs.forEach((doc, index) => {
    const problem = problemOf(doc as AnyObject)
    if (problem) throw new Error(docs.length > 1 ? `document ${index + 1}: ${problem}` : problem)
    const pod = structuredClone(doc) as AnyObject
    const uid = staticUID(JSON.stringify(doc), nodeName, `${file}#${index}`)
    pod.metadata = {
      ...pod.metadata,
      name: `${pod.metadata!.name}-${nodeName}`,
      namespace: pod.metadata!.namespace ?? 'default',
      uid,
      annotations: {
        ...(pod.metadata!.annotations ?? {}),
        [CONFIG_SOURCE_ANNOTATION]: 'file',
        [CONFIG_HASH_ANNOTATION]: uid,
        [CONFIG_SEEN_ANNOTATION]: now.toISOString(),
      },
    }
    pod.spec = {...pod.spec, nodeName}
    pod.spec.restartPolicy ??= 'Always'
    pod.spec.terminationGracePeriodSeconds ??= 30
    pod.status = {phase: 'Pending'}
    pods.push(pod)
  })
  return pods
}

export interface StaticPodSourceOptions {
  path: string
  nodeName: string
  checkIntervalMs: number
  logger: Logger
  /** the full set of static pods, after each read that changed it */
  onPods: (pods: AnyObject[]) => void
}

export class StaticPodSource {
  private timer: NodeJS.Timeout | undefined
  private watcher: FSWatcher | undefined
  private lastKey = ''
  private readonly seen = new Map<string, AnyObject>()
  private readonly reported = new Map<string, string>()

  constructor(private readonly options: StaticPodSourceOptions) {}

  start(): void {
    this.scan()
    try {
      if (existsSync(this.options.path)) this.watcher = watch(this.options.path, () => this.scan())
    } catch {
      // polling still covers it
    }
    this.timer = setInterval(() => this.scan(), this.options.checkIntervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.watcher?.close()
  }

  /** Reads the directory (or the single file) now. */
  scan(): void {
    const {path, logger, nodeName} = this.options
    const pods: AnyObject[] = []
    let files: string[] = []
    try {
      files = statSync(path).isDirectory()
        ? readdirSync(path)
            .filter((name) => !name.startsWith('.'))
            .sort()
            .map((name) => join(path, name))
        : [path]
    } catch {
      files = []
    }
    for (const file of files) {
      try {
        if (!statSync(file).isFile()) continue
        const text = readFileSync(file, 'utf8')
        for (const pod of podsFromManifest(file, text, nodeName)) {
          const previous = this.seen.get(pod.metadata!.uid)
          pods.push(previous ?? pod)
          this.seen.set(pod.metadata!.uid, previous ?? pod)
        }
        this.reported.delete(file)
      } catch (error) {
        const message = (error as Error).message
        if (this.reported.get(file) !== message) logger.warn('skipping static pod manifest', {file, error: message})
        this.reported.set(file, message)
      }
    }
    const key = pods.map((pod) => pod.metadata!.uid).join(',')
    for (const uid of [...this.seen.keys()]) if (!pods.some((pod) => pod.metadata!.uid === uid)) this.seen.delete(uid)
    if (key === this.lastKey) return
    this.lastKey = key
    this.options.onPods(pods)
  }
}

/** The mirror pod of a static pod: the same pod in the API, annotated with its hash and owned by the Node. */
export function mirrorPodOf(pod: AnyObject, node: {name: string; uid?: string}): AnyObject {
  const metadata: AnyObject = {
    name: pod.metadata!.name,
    namespace: pod.metadata!.namespace,
    labels: pod.metadata!.labels,
    annotations: {...pod.metadata!.annotations, [CONFIG_MIRROR_ANNOTATION]: pod.metadata!.annotations[CONFIG_HASH_ANNOTATION]},
  }
  if (node.uid) metadata.ownerReferences = [{apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true}]
  return {apiVersion: 'v1', kind: 'Pod', metadata, spec: pod.spec}
}
