// Parses a request path into what is being asked for, as Kubernetes' RequestInfoResolver does.
import type {Verb} from '../api/types.js'
import {errors} from '../machinery/status.js'

export interface ResourceRequest {
  isResourceRequest: true
  /** '' for the core group */
  group: string
  version: string
  namespace: string
  resource: string
  name: string
  subresource: string
  verb: Verb | 'proxy'
  path: string
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
  const [resource, name = '', subresource = '', ...extra] = rest
  let verb: Verb | 'proxy'
  if (lowerMethod === 'GET' || lowerMethod === 'HEAD') {
    if (name) verb = 'get'
    else verb = isWatch(query) ? 'watch' : 'list'
  } else if (lowerMethod === 'DELETE' && !name) {
    verb = 'deletecollection'
  } else {
    verb = methodVerbs[lowerMethod] ?? ('unknown' as Verb)
  }
  // `nodes/{name}/proxy/...` is authorized by the HTTP method's verb, as Kubernetes does; only the old
  // `/proxy/...` prefix had a verb of its own
  const decoded = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return s
    }
  }
  return {
    isResourceRequest: true,
    group,
    version,
    namespace: decoded(namespace),
    resource,
    name: decoded(name),
    // proxy paths carry more segments; keep only the subresource name
    subresource: extra.length > 0 && subresource !== 'proxy' ? `${subresource}/${extra.join('/')}` : subresource,
    verb,
    path,
  }
}

export function isWatch(query: URLSearchParams): boolean {
  const value = query.get('watch')
  return value !== null && value !== '0' && value !== 'false'
}

/** characters a path keeps as they are under the WHATWG URL parser (no `%`, `\`, dot segments) */
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/
/** characters a query keeps as they are (its percent-escapes are decoded the same way either way) */
const PLAIN_QUERY = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/

/** A request target's path and query, as `new URL(target, base)` gives them (400 where it fails). The
 *  WHATWG parser costs µs on every request, so it runs only for a target it could change:
 *  percent-escapes or dot segments in the path, characters it escapes, a fragment, a leading `//`. */
export function parseRequestTarget(target: string): {path: string; query: URLSearchParams} {
  const at = target.indexOf('?')
  const path = at < 0 ? target : target.slice(0, at)
  const search = at < 0 ? '' : target.slice(at + 1)
  // (URLSearchParams drops one leading `?` of a string: give it the target's own)
  if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) && PLAIN_QUERY.test(search)) return {path, query: new URLSearchParams(at < 0 ? '' : target.slice(at))}
  let url: URL
  try {
    url = new URL(target, 'https://orch')
  } catch {
    // e.g. `//[x]/`: a leading `//` makes the rest a host, which may not parse
    throw errors.badRequest(`the request target ${JSON.stringify(target)} is not a valid URL path`)
  }
  return {path: url.pathname, query: url.searchParams}
}
