// Paths that are not resources: /version, discovery (/api, /apis, ...), OpenAPI.
import type {IncomingMessage, ServerResponse} from 'node:http'
import {negotiate} from '../machinery/negotiation.js'
import {errors} from '../machinery/status.js'
import type {Catalog} from './catalog.js'
import {JSON_TYPE, send} from './codec.js'
import {apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo} from './discovery.js'
import {aggregatedDiscovery, aggregatedMediaType, discoveryETag, discoveryFormat, type DiscoveryVersion} from './discovery-aggregated.js'
import {openAPIV2, openAPIV3Document, openAPIV3Root} from './openapi.js'
import {encodeOpenAPIV2Protobuf, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CLIENT} from './openapi-v2-protobuf.js'

export class NonResourceHandler {
  private readonly openapiCache = new Map<string, unknown>()

  constructor(private readonly catalog: Catalog) {}

  /** Answers the request and returns true, or returns false when the path is unknown. */
  handle(request: IncomingMessage, response: ServerResponse, path: string, _query: URLSearchParams): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false
    const declarations = this.catalog.declarations
    const reply = (body: unknown) => {
      // JSON only: a client asking for nothing else gets 406
      if (!negotiate(request.headers.accept, {mediaTypes: [JSON_TYPE], viewGroups: [], views: []})) {
        throw errors.notAcceptable([JSON_TYPE])
      }
      send(response, 200, body)
      return true
    }
    const parts = path.split('/').filter(Boolean)
    // /version is written as JSON whatever the Accept, as kube-apiserver's version handler does
    if (path === '/version' || path === '/version/') return (send(response, 200, versionInfo()), true)
    if (path === '/api' || path === '/api/' || path === '/apis' || path === '/apis/') {
      const root = parts[0] as 'api' | 'apis'
      const format = discoveryFormat(request.headers.accept)
      if (format === undefined) throw errors.notAcceptable([JSON_TYPE, aggregatedMediaType('v2'), aggregatedMediaType('v2beta1')])
      if (format !== 'plain') return this.replyAggregated(request, response, root, format.aggregated)
      send(response, 200, root === 'api' ? apiVersions(serverAddress(request)) : apiGroupList(declarations), {headers: {Vary: 'Accept'}})
      return true
    }
    if (parts[0] === 'api' && parts.length === 2 && this.catalog.groups().get('')?.includes(parts[1])) {
      return reply(apiResourceList(declarations, '', parts[1]))
    }
    if (parts[0] === 'apis' && parts.length === 2 && this.catalog.groups().has(parts[1]) && parts[1] !== '') {
      return reply(apiGroup(declarations, parts[1]))
    }
    if (parts[0] === 'apis' && parts.length === 3 && this.catalog.groups().get(parts[1])?.includes(parts[2])) {
      return reply(apiResourceList(declarations, parts[1], parts[2]))
    }
    if (path === '/openapi/v2') return this.replyOpenAPIV2(request, response)
    if (path === '/openapi/v3' || path === '/openapi/v3/') return reply(this.cached('v3', () => openAPIV3Root(declarations)))
    if (parts[0] === 'openapi' && parts[1] === 'v3') {
      const rest = parts.slice(2)
      if (rest[0] === 'api' && rest.length === 2 && this.catalog.groups().get('')?.includes(rest[1])) {
        return reply(this.cached(`v3:/${rest[1]}`, () => openAPIV3Document(declarations, '', rest[1])))
      }
      if (rest[0] === 'apis' && rest.length === 3 && this.catalog.groups().get(rest[1])?.includes(rest[2])) {
        return reply(this.cached(`v3:${rest[1]}/${rest[2]}`, () => openAPIV3Document(declarations, rest[1], rest[2])))
      }
    }
    return false
  }

  /** /openapi/v2: JSON, or gnostic's openapi.v2.Document protobuf (kubectl validates `kind: List` files with
   *  it); as kube-openapi, either protobuf media type is answered with OPENAPI_V2_PROTOBUF. */
  private replyOpenAPIV2(request: IncomingMessage, response: ServerResponse): true {
    const mediaTypes = [JSON_TYPE, OPENAPI_V2_PROTOBUF_CLIENT, OPENAPI_V2_PROTOBUF]
    const negotiated = negotiate(request.headers.accept, {mediaTypes, viewGroups: [], views: []})
    if (!negotiated) throw errors.notAcceptable(mediaTypes)
    const document = this.cached('v2', () => openAPIV2(this.catalog.declarations))
    if (negotiated.mediaType === JSON_TYPE) {
      send(response, 200, document, {headers: {Vary: 'Accept'}})
    } else {
      const bytes = this.cached('v2:protobuf', () => encodeOpenAPIV2Protobuf(document))
      send(response, 200, bytes, {preEncoded: true, headers: {'Content-Type': OPENAPI_V2_PROTOBUF, Vary: 'Accept'}})
    }
    return true
  }

  /** The aggregated document (built once: the declarations do not change), or 304 when the client's
   *  If-None-Match is its ETag. */
  private replyAggregated(request: IncomingMessage, response: ServerResponse, root: 'api' | 'apis', version: DiscoveryVersion): true {
    const {body, etag} = this.cached(`aggregated:${root}:${version}`, () => {
      const bytes = Buffer.from(JSON.stringify(aggregatedDiscovery(this.catalog.declarations, root, version)))
      return {body: bytes, etag: discoveryETag(bytes)}
    }) as {body: Buffer; etag: string}
    const headers = {'Content-Type': aggregatedMediaType(version), Vary: 'Accept', ETag: etag, 'Cache-Control': 'no-cache, private'}
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, headers)
      response.end()
      return true
    }
    response.writeHead(200, {...headers, 'Content-Length': body.length})
    response.end(body)
    return true
  }

  private cached(key: string, build: () => unknown): unknown {
    let value = this.openapiCache.get(key)
    if (value === undefined) {
      value = build()
      this.openapiCache.set(key, value)
    }
    return value
  }
}

/** host:port this request reached, for /api's serverAddressByClientCIDRs */
function serverAddress(request: IncomingMessage): string {
  const address = request.socket.localAddress ?? ''
  const host = address.includes(':') ? `[${address}]` : address
  return `${host}:${request.socket.localPort ?? ''}`
}
