// `orch auth can-i` and `orch auth whoami`, as kubectl's: a SelfSubjectAccessReview ("may I?") and a
// SelfSubjectReview ("who am I?"), both answered by the server for the caller's own credentials.
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
