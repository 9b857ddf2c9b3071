// Parses a request path into what is being asked for, as Kubernetes' RequestInfoResolver does.
import type {Verb} from '../api/types.js'
import {parseFieldSelector, type FieldRequirement} from '../machinery/fields.js'
import {errors} from '../machinery/status.js'

export interface ResourceRequest {
  isResourceRequest: true
  /** '' for the core group */
  group: string
  version: string
  namespace: string
  resource: string
  /** the name in the path; for a list or watch without one, the name a `metadata.name=` field
   *  selector asks for (Kubernetes' requestinfo does the same, so authorizers see a named request) */
  name: string
  subresource: string
  verb: Verb | 'proxy'
  path: string
  /** a list, watch or deletecollection's field selector requirements; absent when there is none or
   *  it does not parse (AuthorizeWithSelectors) */
  fieldSelector?: FieldRequirement[]
}

export interface NonResourceRequest {
  isResourceRequest: false
  path: string
  verb: string
}

export type RequestInfo = ResourceRequest | NonResourceRequest

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize'])

const methodVerbs: Record<string, Verb> = {
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
}

/** Splits `/api/v1/namespaces/ns/configmaps/x` and `/apis/g/v/...` into parts; other paths are
 *  non-resource requests. `watch` is read from the query, as Kubernetes does for new clients. */
export function resolveRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const lowerMethod = method.toUpperCase()
  const parts = path.split('/').filter((p) => p !== '')
  let rest: string[]
  let group: string
  let version: string
  if (parts[0] === 'api' && parts.length >= 2) {
    group = ''
    version = parts[1]
    rest = parts.slice(2)
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1]
    version = parts[2]
    rest = parts.slice(3)
  } else {
    return {isResourceRequest: false, path, verb: lowerMethod.toLowerCase()}
  }
  if (rest.length === 0) return {isResourceRequest: false, path, verb: lowerMethod.toLowerCase()}
  let namespace = ''
  // namespaces/{ns}/{resource}... is namespaced; namespaces/{name}[/status|/finalize] is the Namespace itself
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const [resource, pathName = '', subresource = '', ...extra] = rest
  let name = decoded(pathName)
  let verb: Verb | 'proxy'
  const fieldSelector = selectorRequirements(query)
  if (lowerMethod === 'GET' || lowerMethod === 'HEAD') {
    if (name) verb = 'get'
    else {
      verb = isWatch(query) ? 'watch' : 'list'
      const selected = fieldSelector?.find((r) => r.field === 'metadata.name' && r.operator === '=')?.value
      if (selected && pathSegmentNameProblems(selected).length === 0) name = selected
    }
  } else if (lowerMethod === 'DELETE' && !name) {
    verb = 'deletecollection'
  } else {
    verb = methodVerbs[lowerMethod] ?? ('unknown' as Verb)
  }
  // `nodes/{name}/proxy/...` is authorized by the HTTP method's verb, as Kubernetes does; only the old
  // `/proxy/...` prefix had a verb of its own
  return {
    isResourceRequest: true,
    group,
    version,
    namespace: decoded(namespace),
    resource,
    name,
    // proxy paths carry more segments; keep only the subresource name
    subresource: extra.length > 0 && subresource !== 'proxy' ? `${subresource}/${extra.join('/')}` : subresource,
    verb,
    path,
    ...(fieldSelector && ['list', 'watch', 'deletecollection'].includes(verb) ? {fieldSelector} : {}),
  }
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The `fieldSelector` query parameter's requirements; undefined when absent, empty or unparsable. */
function selectorRequirements(query: URLSearchParams): FieldRequirement[] | undefined {
  const text = query.get('fieldSelector')
  if (!text) return undefined
  try {
    const requirements = parseFieldSelector(text).requirements
    return requirements.length > 0 ? [...requirements] : undefined
  } catch {
    return undefined
  }
}

export function isWatch(query: URLSearchParams): boolean {
  const value = query.get('watch')
  // Convert_Slice_string_To_bool: 0 and any case of false are false
  return value !== null && value !== '0' && value.toLowerCase() !== 'false'
}

/**
 * A request target's path and query. The path is kept as written, as Go's server keeps it: dot
 * segments are not resolved (a name `..` must reach the handler, which refuses it, and never resolve
 * to the collection or namespace above it) and its percent-escapes are decoded segment by segment
 * later. An absolute-form target (`https://host/path`) gives its path; a leading `//` or an escape
 * that does not decode is 400.
 */
export function parseRequestTarget(target: string): {path: string; query: URLSearchParams} {
  const hash = target.indexOf('#')
  if (hash >= 0) target = target.slice(0, hash)
  const at = target.indexOf('?')
  let path = at < 0 ? target : target.slice(0, at)
  // (URLSearchParams drops one leading `?` of a string: give it the target's own)
  const query = new URLSearchParams(at < 0 ? '' : target.slice(at))
  if (!path.startsWith('/')) {
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/.exec(path)
    path = scheme ? path.slice(scheme[0].length) || '/' : path
  }
  if (!path.startsWith('/') || path.startsWith('//')) throw invalidTarget(target)
  if (path.includes('%')) {
    try {
      decodeURIComponent(path)
    } catch {
      throw invalidTarget(target)
    }
  }
  return {path, query}
}

function invalidTarget(target: string): Error {
  return errors.badRequest(`the request target ${JSON.stringify(target)} is not a valid URL path`)
}

/** apimachinery's IsValidPathSegmentName: the problems of a name given in a URL path */
export function pathSegmentNameProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`]
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
}
