// Client configuration: the kubeconfig file format (clusters, users, contexts, current-context) and the
// order in which a command finds its server and credentials, as kubectl does:
//   server:     --server, else the cluster of the chosen context
//   kubeconfig: --kubeconfig, else the files of $KUBECONFIG merged as kubectl merges them, else ~/.orch/config
//   context:    --context, else current-context
//   namespace:  --namespace, else the context's namespace, else `default`
// File references (certificate-authority, client-certificate, client-key, tokenFile) that are relative
// are resolved against the directory of the kubeconfig that names them. $KUBECONFIG may list several files
// separated by ':' (kubectl's merge): files that do not exist are skipped, the first file to define a
// cluster, user or context (by name) wins, and current-context is the first one set.
import {existsSync, readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, isAbsolute, join, resolve} from 'node:path'
import * as yaml from 'js-yaml'
import {loadYaml} from '../machinery/go-yaml.js'
import {isPlainObject} from '../machinery/typed-value.js'

/** What a client needs to reach the API server. Certificates and keys are PEM. */
export interface ClientConfig {
  /** e.g. https://127.0.0.1:6443 (may carry a path prefix) */
  server: string
  ca?: Buffer
  cert?: Buffer
  key?: Buffer
  token?: string
  insecureSkipTLSVerify?: boolean
  namespace: string
  /** who to act as (Impersonate-* headers; kubectl's --as, --as-group, --as-uid) */
  impersonate?: ImpersonationConfig
}

/** client-go's ImpersonationConfig: a user name, and optionally its uid, groups and extra. */
export interface ImpersonationConfig {
  user: string
  uid?: string
  groups?: string[]
  extra?: Record<string, string[]>
}

export interface ResolveOptions {
  /** --server */
  server?: string
  /** --kubeconfig */
  kubeconfig?: string
  /** --context */
  context?: string
  /** --namespace */
  namespace?: string
  /** the environment to read KUBECONFIG from (default process.env) */
  env?: Record<string, string | undefined>
  /** the home directory holding .orch/config (default os.homedir()) */
  home?: string
}

export interface KubeconfigCluster {
  server?: string
  'certificate-authority'?: string
  'certificate-authority-data'?: string
  'insecure-skip-tls-verify'?: boolean
}

export interface KubeconfigUser {
  'client-certificate'?: string
  'client-certificate-data'?: string
  'client-key'?: string
  'client-key-data'?: string
  token?: string
  tokenFile?: string
  /** impersonation, as kubectl reads it from a user entry (client-go's AuthInfo.Impersonate*) */
  as?: string
  'as-uid'?: string
  'as-groups'?: string[]
  'as-user-extra'?: Record<string, string[]>
}

export interface KubeconfigContext {
  cluster?: string
  user?: string
  namespace?: string
}

/** A parsed kubeconfig: the named entries flattened into maps, and the file it came from. */
export interface Kubeconfig {
  path: string
  currentContext?: string
  clusters: Map<string, KubeconfigCluster>
  users: Map<string, KubeconfigUser>
  contexts: Map<string, KubeconfigContext>
}

/** What kubeconfigDocument needs: one cluster, one user (credentials as kubeconfig spells them), one context. */
export interface KubeconfigDocumentParams {
  /** e.g. https://127.0.0.1:6443 */
  server: string
  /** the CA the serving certificate verifies against; omitted: the client uses its system roots */
  caPem?: string
  credentials: KubeconfigUser
  cluster: string
  user: string
  context: string
}

/** A kubeconfig document (kubectl's format) with one cluster, user and context, the context current. */
export function kubeconfigDocument(params: KubeconfigDocumentParams): Record<string, unknown> {
  const cluster: KubeconfigCluster = {server: params.server}
  if (params.caPem !== undefined) cluster['certificate-authority-data'] = Buffer.from(params.caPem, 'utf8').toString('base64')
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{name: params.cluster, cluster}],
    users: [{name: params.user, user: params.credentials}],
    contexts: [{name: params.context, context: {cluster: params.cluster, user: params.user}}],
    'current-context': params.context,
    preferences: {},
  }
}

/** The kubeconfig a command reads when none is named: ~/.orch/config. */
export function defaultKubeconfigPath(home: string = homedir()): string {
  return join(home, '.orch', 'config')
}

const referenceFields = ['certificate-authority', 'client-certificate', 'client-key', 'tokenFile']

/** A copy of an entry with its relative file references made absolute against its file's directory. */
function withAbsoluteReferences<T extends KubeconfigCluster | KubeconfigUser>(entry: T, file: string): T {
  const out: Record<string, unknown> = {...(entry as Record<string, unknown>)}
  for (const field of referenceFields) {
    const value = out[field]
    if (typeof value === 'string' && value !== '' && !isAbsolute(value)) out[field] = resolve(dirname(file), value)
  }
  return out as T
}

function withAbsoluteEntries<T extends KubeconfigCluster | KubeconfigUser>(entries: Map<string, T>, file: string): Map<string, T> {
  for (const [name, entry] of entries) entries.set(name, withAbsoluteReferences(entry, file))
  return entries
}

function namedEntries<T>(path: string, doc: Record<string, unknown>, list: string, field: string): Map<string, T> {
  const out = new Map<string, T>()
  const value = doc[list]
  if (value === undefined || value === null) return out
  if (!Array.isArray(value)) throw new Error(`kubeconfig ${path}: "${list}" must be a list`)
  for (const entry of value) {
    if (!isPlainObject(entry) || typeof entry.name !== 'string') {
      throw new Error(`kubeconfig ${path}: every entry of "${list}" needs a name`)
    }
    const body = entry[field]
    if (body !== undefined && body !== null && !isPlainObject(body)) {
      throw new Error(`kubeconfig ${path}: ${list} "${entry.name}": "${field}" must be a mapping`)
    }
    out.set(entry.name, (body ?? {}) as T)
  }
  return out
}

/** Reads and parses one kubeconfig file. A missing or malformed file is a one-line Error. */
export function loadKubeconfig(path: string): Kubeconfig {
  const absolute = resolve(path)
  let text: string
  try {
    text = readFileSync(absolute, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new Error(`kubeconfig ${absolute} not found`)
    throw new Error(`kubeconfig ${absolute} cannot be read: ${(e as Error).message}`)
  }
  let doc: unknown
  try {
    doc = loadYaml(text, {json: false})
  } catch (e) {
    const reason = e instanceof yaml.YAMLException ? e.reason : (e as Error).message
    throw new Error(`kubeconfig ${absolute} is not valid YAML: ${reason}`)
  }
  if (doc === undefined || doc === null) doc = {}
  if (!isPlainObject(doc)) throw new Error(`kubeconfig ${absolute} must be a YAML mapping`)
  const current = doc['current-context']
  return {
    path: absolute,
    currentContext: typeof current === 'string' && current !== '' ? current : undefined,
    // relative file references are resolved here, against this file's directory: merged kubeconfigs
    // keep each entry's meaning
    clusters: withAbsoluteEntries(namedEntries<KubeconfigCluster>(absolute, doc, 'clusters', 'cluster'), absolute),
    users: withAbsoluteEntries(namedEntries<KubeconfigUser>(absolute, doc, 'users', 'user'), absolute),
    contexts: namedEntries(absolute, doc, 'contexts', 'context'),
  }
}

/** The file a reference names (loadKubeconfig made it absolute). */
function readReferenced(kubeconfig: Kubeconfig, field: string, path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'not found' : `cannot be read: ${(e as Error).message}`
    throw new Error(`kubeconfig ${kubeconfig.path}: ${field} ${path} ${why}`)
  }
}

function fileOrData(kubeconfig: Kubeconfig, entry: Record<string, unknown>, field: string): Buffer | undefined {
  const data = entry[`${field}-data`]
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64')
  const file = entry[field]
  if (typeof file === 'string' && file !== '') return readReferenced(kubeconfig, field, file)
  return undefined
}

/**
 * The client configuration of one context of a parsed kubeconfig (default: its current-context).
 * `server` and `namespace` override what the context says.
 */
export function configFromKubeconfig(
  kubeconfig: Kubeconfig,
  overrides: {context?: string; server?: string; namespace?: string} = {},
): ClientConfig {
  const contextName = overrides.context || kubeconfig.currentContext
  let context: KubeconfigContext = {}
  if (contextName) {
    const found = kubeconfig.contexts.get(contextName)
    if (!found) throw new Error(`context "${contextName}" not found in kubeconfig ${kubeconfig.path}`)
    context = found
  } else if (!overrides.server) {
    throw new Error(`kubeconfig ${kubeconfig.path} has no current-context: pass --context or --server`)
  }

  let cluster: KubeconfigCluster = {}
  if (context.cluster) {
    const found = kubeconfig.clusters.get(context.cluster)
    if (!found) {
      throw new Error(`cluster "${context.cluster}" of context "${contextName}" not found in kubeconfig ${kubeconfig.path}`)
    }
    cluster = found
  }
  let user: KubeconfigUser = {}
  if (context.user) {
    const found = kubeconfig.users.get(context.user)
    if (!found) throw new Error(`user "${context.user}" of context "${contextName}" not found in kubeconfig ${kubeconfig.path}`)
    user = found
  }

  const server = overrides.server || cluster.server
  if (!server) {
    throw new Error(`context "${contextName}" in kubeconfig ${kubeconfig.path} names no server: pass --server`)
  }
  const config: ClientConfig = {
    server,
    namespace: overrides.namespace || context.namespace || 'default',
  }
  const ca = fileOrData(kubeconfig, cluster as Record<string, unknown>, 'certificate-authority')
  if (ca) config.ca = ca
  if (cluster['insecure-skip-tls-verify'] === true) config.insecureSkipTLSVerify = true
  const cert = fileOrData(kubeconfig, user as Record<string, unknown>, 'client-certificate')
  if (cert) config.cert = cert
  const key = fileOrData(kubeconfig, user as Record<string, unknown>, 'client-key')
  if (key) config.key = key
  if (typeof user.token === 'string' && user.token !== '') {
    config.token = user.token
  } else if (typeof user.tokenFile === 'string' && user.tokenFile !== '') {
    config.token = readReferenced(kubeconfig, 'tokenFile', user.tokenFile).toString('utf8').trim()
  }
  const impersonate = impersonationOfUser(kubeconfig, context.user ?? '', user)
  if (impersonate) config.impersonate = impersonate
  return config
}

/** A user entry's `as`, `as-uid`, `as-groups` and `as-user-extra`; groups, a uid or extra without `as`
 *  is an error, as client-go's validation has it. */
function impersonationOfUser(kubeconfig: Kubeconfig, name: string, user: KubeconfigUser): ImpersonationConfig | undefined {
  const groups = Array.isArray(user['as-groups']) ? user['as-groups'].map(String) : []
  const uid = typeof user['as-uid'] === 'string' ? user['as-uid'] : ''
  const extra: Record<string, string[]> = {}
  if (isPlainObject(user['as-user-extra'])) {
    for (const [key, values] of Object.entries(user['as-user-extra'])) extra[key] = Array.isArray(values) ? values.map(String) : [String(values)]
  }
  const hasExtra = Object.keys(extra).length > 0
  if (typeof user.as !== 'string' || user.as === '') {
    if (groups.length > 0 || uid || hasExtra) {
      throw new Error(`kubeconfig ${kubeconfig.path}: requesting uid, groups or user-extra for ${name} without impersonating a user`)
    }
    return undefined
  }
  const impersonate: ImpersonationConfig = {user: user.as}
  if (uid) impersonate.uid = uid
  if (groups.length > 0) impersonate.groups = groups
  if (hasExtra) impersonate.extra = extra
  return impersonate
}

/**
 * Several kubeconfigs as one, as kubectl merges the files of $KUBECONFIG: the first file to define a
 * cluster, user or context (by name) wins it whole, and the current-context is the first one set (file
 * references are already absolute: loadKubeconfig). Messages name the files joined by ':'.
 */
export function mergeKubeconfigs(configs: Kubeconfig[]): Kubeconfig {
  if (configs.length === 1) return configs[0]
  const merged: Kubeconfig = {
    path: configs.map((c) => c.path).join(':'),
    currentContext: configs.find((c) => c.currentContext !== undefined)?.currentContext,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  }
  for (const config of configs) {
    for (const [name, cluster] of config.clusters) if (!merged.clusters.has(name)) merged.clusters.set(name, cluster)
    for (const [name, user] of config.users) if (!merged.users.has(name)) merged.users.set(name, user)
    for (const [name, context] of config.contexts) if (!merged.contexts.has(name)) merged.contexts.set(name, context)
  }
  return merged
}

/**
 * The kubeconfig files to read: --kubeconfig (then it must exist even with --server), else the files of
 * $KUBECONFIG that exist (in order, without repeats), else ~/.orch/config. `missing` is what to name when
 * nothing was found.
 */
function chooseKubeconfigs(options: ResolveOptions): {paths: string[]; explicit: boolean; missing: string} {
  if (options.kubeconfig) return {paths: [resolve(options.kubeconfig)], explicit: true, missing: ''}
  const env = (options.env ?? process.env).KUBECONFIG
  const listed = [...new Set((env ?? '').split(':').filter((part) => part !== '').map((part) => resolve(part)))]
  if (listed.length > 0) return {paths: listed.filter((path) => existsSync(path)), explicit: false, missing: listed.join(':')}
  const home = defaultKubeconfigPath(options.home)
  return {paths: existsSync(home) ? [home] : [], explicit: false, missing: home}
}

/**
 * Finds the server and credentials for a command. `--server` alone is enough: credentials then come from
 * the kubeconfig when one is found (as kubectl does), and a missing $KUBECONFIG or ~/.orch/config is no
 * error. Without `--server` the kubeconfig must exist and its context must name a server.
 */
export function resolveClientConfig(options: ResolveOptions = {}): ClientConfig {
  const {paths, explicit, missing} = chooseKubeconfigs(options)
  if (!explicit && paths.length === 0) {
    if (!options.server) {
      throw new Error(`no server to talk to: kubeconfig ${missing} not found (pass --server or --kubeconfig)`)
    }
    if (options.context) throw new Error(`context "${options.context}" not found: kubeconfig ${missing} not found`)
    return {server: options.server, namespace: options.namespace || 'default'}
  }
  return configFromKubeconfig(mergeKubeconfigs(paths.map((path) => loadKubeconfig(path))), {
    context: options.context,
    server: options.server,
    namespace: options.namespace,
  })
}
