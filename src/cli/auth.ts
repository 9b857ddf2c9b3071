// `orch auth can-i` and `orch auth whoami`, as kubectl's: a SelfSubjectAccessReview ("may I?"), a
// SelfSubjectRulesReview (`can-i --list`: "what may I?") and a SelfSubjectReview ("who am I?"), all
// answered by the server for the caller's own credentials.
import type {AnyObject} from '../api/types.js'
import type {ConnectOptions, Session} from './connect.js'
import {withSession} from './connect.js'
import {resolveResource, UnknownResourceError} from './resources.js'
import {dumpYaml} from '../machinery/go-yaml.js'

export interface CanIOptions extends ConnectOptions {
  verb: string
  /** a resource word (`pods`, `cm`, `statefulsets.apps`, `pods/status`) or a non-resource URL (`/healthz`) */
  target: string
  name?: string
  subresource?: string
  allNamespaces: boolean
  /** print nothing: the exit code answers */
  quiet: boolean
}

/** The review's spec for a target: a non-resource URL, or a resource resolved through discovery (an
 *  unknown word is asked about as given, with a warning, as kubectl does). */
async function reviewSpec(session: Session, options: CanIOptions, warn: (line: string) => void): Promise<AnyObject> {
  if (options.target.startsWith('/')) return {nonResourceAttributes: {verb: options.verb, path: options.target}}
  const [word, inlineSubresource] = options.target.split('/', 2)
  let group = ''
  let resource = word
  try {
    const info = await resolveResource(session.client, word)
    group = info.group
    resource = info.resource
  } catch (error) {
    if (!(error instanceof UnknownResourceError)) throw error
    warn(`Warning: the server doesn't have a resource type '${word}'`)
    const dot = word.indexOf('.')
    if (dot > 0) {
      resource = word.slice(0, dot)
      group = word.slice(dot + 1)
    }
  }
  const attributes: AnyObject = {verb: options.verb, group, resource}
  const subresource = options.subresource || inlineSubresource
  if (subresource) attributes.subresource = subresource
  if (options.name) attributes.name = options.name
  if (!options.allNamespaces) attributes.namespace = session.namespace
  return {resourceAttributes: attributes}
}

/** Prints yes or no (exit 0 or 1), with the reason after a no when the server gave one. */
export function runCanI(options: CanIOptions): Promise<void> {
  return withSession(options, async (session) => {
    const spec = await reviewSpec(session, options, (line) => process.stderr.write(`${line}\n`))
    const review = await session.client.requestJson({
      method: 'POST',
      path: '/apis/authorization.orch.io/v1/selfsubjectaccessreviews',
      body: {apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec},
    })
    const allowed = review.status?.allowed === true
    if (!options.quiet) {
      const reason = typeof review.status?.reason === 'string' && review.status.reason ? ` - ${review.status.reason}` : ''
      process.stdout.write(allowed ? 'yes\n' : `no${reason}\n`)
      if (review.status?.evaluationError) process.stderr.write(`Warning: ${review.status.evaluationError}\n`)
    }
    return allowed ? 0 : 1
  })
}

export interface CanIListOptions extends ConnectOptions {
  noHeaders: boolean
}

interface ListedRule {
  verbs: string[]
  apiGroups: string[]
  resources: string[]
  resourceNames: string[]
  nonResourceURLs: string[]
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [])

/** rbac's BreakdownRule: one rule per group x resource x verb (x name), and per URL x verb. */
function breakdown(rule: ListedRule): ListedRule[] {
  const out: ListedRule[] = []
  const one = (apiGroups: string[], resources: string[], verbs: string[], resourceNames: string[], nonResourceURLs: string[]) =>
    out.push({apiGroups, resources, verbs, resourceNames, nonResourceURLs})
  for (const group of rule.apiGroups) {
    for (const resource of rule.resources) {
      for (const verb of rule.verbs) {
        if (rule.resourceNames.length > 0) for (const name of rule.resourceNames) one([group], [resource], [verb], [name], [])
        else one([group], [resource], [verb], [], [])
      }
    }
  }
  for (const url of rule.nonResourceURLs) for (const verb of rule.verbs) one([], [], [verb], [], [url])
  return out
}

/** rbac's CompactRules: rules of one group, one resource and at most one name merge their verbs. */
function compact(rules: ListedRule[]): ListedRule[] {
  const compacted: ListedRule[] = []
  const simple = new Map<string, ListedRule>()
  for (const rule of rules) {
    const isSimple = rule.resourceNames.length <= 1 && rule.nonResourceURLs.length === 0 && rule.apiGroups.length === 1 && rule.resources.length === 1
    if (!isSimple) {
      compacted.push(rule)
      continue
    }
    const key = JSON.stringify([rule.apiGroups[0], rule.resources[0], rule.resourceNames])
    const existing = simple.get(key)
    if (!existing) simple.set(key, {...rule, verbs: [...rule.verbs]})
    else for (const verb of rule.verbs) if (!existing.verbs.includes(verb)) existing.verbs.push(verb)
  }
  return [...compacted, ...simple.values()]
}

const goList = (values: string[]) => `[${values.join(' ')}]`

/** rbacv1.PolicyRule's String(), the key kubectl sorts the list by. */
function ruleString(rule: ListedRule): string {
  return `&PolicyRule{Verbs:${goList(rule.verbs)},APIGroups:${goList(rule.apiGroups)},Resources:${goList(rule.resources)},ResourceNames:${goList(rule.resourceNames)},NonResourceURLs:${goList(rule.nonResourceURLs)},}`
}

/** describe.CombineResourceGroup: `resource.group/subresource` of the first resource and group. */
function combineResourceGroup(resources: string[], groups: string[]): string {
  if (resources.length === 0) return ''
  const [resource, subresource] = resources[0].split(/\/(.*)/s, 2)
  let combined = resource
  if (groups.length > 0 && groups[0] !== '') combined += `.${groups[0]}`
  if (subresource !== undefined) combined += `/${subresource}`
  return combined
}

/** kubectl's `auth can-i --list` table over a SubjectRulesReviewStatus (tabwriter: cells padded to
 *  the widest plus 3, at least 6 wide). */
export function rulesTable(status: AnyObject, noHeaders = false): string {
  const listed: ListedRule[] = []
  for (const r of Array.isArray(status.resourceRules) ? status.resourceRules : []) {
    listed.push({verbs: strings(r.verbs), apiGroups: strings(r.apiGroups), resources: strings(r.resources), resourceNames: strings(r.resourceNames), nonResourceURLs: []})
  }
  for (const r of Array.isArray(status.nonResourceRules) ? status.nonResourceRules : []) {
    listed.push({verbs: strings(r.verbs), apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: strings(r.nonResourceURLs)})
  }
  const keyed = compact(listed.flatMap(breakdown)).map((rule) => ({rule, key: ruleString(rule)}))
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const rows: string[][] = noHeaders ? [] : [['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']]
  for (const {rule} of keyed) {
    rows.push([combineResourceGroup(rule.resources, rule.apiGroups), goList(rule.nonResourceURLs), goList(rule.resourceNames), goList(rule.verbs)])
  }
  const widths = [0, 1, 2].map((i) => Math.max(6, ...rows.map((row) => [...row[i]].length + 3)))
  return rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] - ([...cell].length - cell.length)) : cell)).join('') + '\n').join('')
}

/** `can-i --list`: a SelfSubjectRulesReview for the namespace (-n, else the context's), as a table. */
export function runCanIList(options: CanIListOptions): Promise<void> {
  return withSession(options, async (session) => {
    const review = await session.client.requestJson({
      method: 'POST',
      path: '/apis/authorization.orch.io/v1/selfsubjectrulesreviews',
      body: {apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec: {namespace: session.namespace}},
    })
    const status = review.status ?? {}
    if (status.incomplete) process.stderr.write(`Warning: the list may be incomplete: ${status.evaluationError ?? ''}\n`)
    process.stdout.write(rulesTable(status, options.noHeaders))
    return 0
  })
}

export interface WhoamiOptions extends ConnectOptions {
  output?: 'json' | 'yaml'
}

/** kubectl's whoami table: ATTRIBUTE / VALUE rows for Username, UID, Groups and each Extra key. */
export function whoamiTable(userInfo: AnyObject): string {
  const rows: [string, string][] = [['ATTRIBUTE', 'VALUE']]
  if (userInfo.username) rows.push(['Username', userInfo.username])
  if (userInfo.uid) rows.push(['UID', userInfo.uid])
  if (Array.isArray(userInfo.groups) && userInfo.groups.length > 0) rows.push(['Groups', `[${userInfo.groups.join(' ')}]`])
  for (const [key, values] of Object.entries((userInfo.extra ?? {}) as Record<string, string[]>).sort(([a], [b]) => a.localeCompare(b))) {
    rows.push([`Extra: ${key}`, `[${values.join(' ')}]`])
  }
  const width = Math.max(...rows.map(([attribute]) => attribute.length)) + 3
  return rows.map(([attribute, value]) => `${attribute.padEnd(width)}${value}`).join('\n') + '\n'
}

export function runWhoami(options: WhoamiOptions): Promise<void> {
  return withSession(options, async (session) => {
    const review = await session.client.requestJson({
      method: 'POST',
      path: '/apis/authentication.orch.io/v1/selfsubjectreviews',
      body: {apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview'},
    })
    if (options.output === 'json') process.stdout.write(JSON.stringify(review, null, 4) + '\n')
    else if (options.output === 'yaml') process.stdout.write(dumpYaml(review))
    else process.stdout.write(whoamiTable(review.status?.userInfo ?? {}))
    return 0
  })
}
