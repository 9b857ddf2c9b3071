// Resource requests: path -> registry operation -> response in the negotiated encoding and view.
import type {IncomingMessage, ServerResponse} from 'node:http'
import {pod, podBinding, podEviction} from '../api/core/pod.js'
import type {AnyObject, KindDeclaration, RequestContext, UserInfo, Verb} from '../api/types.js'
import {negotiate, type Negotiated, type ViewKind, mediaTypeOf} from '../machinery/negotiation.js'
import {scanJsonText, type NumberLiteralAt, type FieldValidation, pruneUnknownFields, unknownFieldsSorted, warningHeader} from '../machinery/field-validation.js'
import {yamlDuplicateKeys} from '../machinery/yaml-duplicates.js'
import {checkPatchedFields, jsonPatchProblems, reportApplyYamlProblems, reportStrictProblems, typedBodyProblems, type StrictProblems} from './strict-decoding.js'
import {applyJsonPatch, applyMergePatch} from '../machinery/patch.js'
import {strategicMergePatch} from '../machinery/strategic.js'
import {applyPatch} from './apply.js'
import {ApiError, errors, formatFieldError, successStatus} from '../machinery/status.js'
import type {Catalog} from './catalog.js'
import {acceptsGzip, assertNestingDepth, decodeBody, JSON_PATCH, JSON_TYPE, MERGE_PATCH, patchNumbersOf, STRATEGIC_PATCH, readBody, send} from './codec.js'
import {cborSerializer, jsonSerializer, serializerSet, YAML_TYPE, yamlSerializer, type Serializer, type SerializerSet} from './serializers.js'
import {pathSegmentNameProblems, type ResourceRequest} from './requestinfo.js'
import type {ListParams} from './registry-list.js'
import {checkResourceVersion} from './registry-update.js'
import {dryRunParam, fieldManagerOf, fieldValidationParam, requestedWriteOptions, validateWriteOptions} from './write-options.js'
import {assertBodyObject, checkName, type ResourceRegistry} from './registry.js'
import {scaleTable, toScale} from './scale.js'
import {writeScale} from './scale-write.js'
import {listMetaOf, listView, objectView} from './views.js'
import {serveWatch} from './watch.js'
import {jsonOf} from './stored-json.js'
import {proxyToAgent, type AgentCredentials} from './node-proxy.js'
import type {RequestAuthorizer} from './authorize.js'
import {assertDecodes, assertPatchedDecodes, decodeFailure} from '../machinery/go-json.js'
import {assertStrategicPatchConverts} from '../machinery/go-converter.js'
import {readDeleteOptions} from './delete-options.js'
import {bindPod, evictPod} from './pod-subresources.js'
import {servePodLog} from './pod-log.js'
import {node as nodeDeclaration} from '../api/core/node.js'
import {serveVirtualCreate} from './virtual-create.js'

export {STRATEGIC_PATCH}
export const APPLY_YAML = 'application/apply-patch+yaml'
export const APPLY_CBOR = 'application/apply-patch+cbor'
const APPLY_TYPES: ReadonlySet<string> = new Set([APPLY_YAML, APPLY_CBOR])

export interface HandlerOptions {
  catalog: Catalog
  registries: Map<KindDeclaration, ResourceRegistry>
  gates: Record<string, boolean>
  now(): Date
  /** the group views are named in (meta.orch.io) */
  metaGroup: string
  /** encodings beyond JSON, YAML and (gated) CBOR, e.g. protobuf */
  extraSerializers?: Serializer[]
  /** how each virtual (create-only, never stored) kind answers a POST */
  virtualKinds?: ReadonlyMap<string, VirtualKindHandler>
  /** the client certificate nodes/{name}/proxy presents to agents */
  agentCredentials?: () => AgentCredentials | undefined
  /** aborted when the server shuts down: open watches end */
  shutdown?: AbortSignal
  /** the server's authorization of a request (a PUT or apply that creates is asked again as create) */
  authorizeRequest?: RequestAuthorizer
}

/** Answers a POST of a virtual kind: the review with its status filled in. */
export type VirtualKindHandler = (body: AnyObject, user: UserInfo | undefined, namespace: string) => AnyObject

const VIEW_GROUPS = ['meta.orch.io', 'meta.k8s.io']
const NEWLINE = Buffer.from('\n')

/** A boolean query parameter as Kubernetes converts it (Convert_Slice_string_To_bool): `0` and any
 *  case of `false` are false, anything else true; undefined when absent. */
function boolParam(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name)
  if (value === null) return undefined
  return !(value === '0' || value.toLowerCase() === 'false')
}

/** Kubernetes' isPrettyPrint: a `pretty` value as strconv.ParseBool reads it (one it cannot parse
 *  meaning false); without one, pretty for curl, Wget and browsers (a User-Agent that starts so) */
export function isPrettyPrint(query: URLSearchParams | undefined, userAgent: string | undefined): boolean {
  const value = query?.get('pretty')
  if (value) return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)
  const agent = userAgent ?? ''
  return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0')
}

/** The ListOptions of a list, watch or deletecollection, all decoded whichever verb uses them, as
 *  Kubernetes decodes them (a bad one is 400 for any of the three). */
function listOptionsOf(query: URLSearchParams): ListParams & {timeoutSeconds?: number; allowWatchBookmarks: boolean; sendInitialEvents?: boolean} {
  return {
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
    limit: intParam(query, 'limit'),
    continue: query.get('continue') ?? undefined,
    resourceVersion: query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: query.get('resourceVersionMatch') ?? undefined,
    timeoutSeconds: intParam(query, 'timeoutSeconds'),
    allowWatchBookmarks: boolParam(query, 'allowWatchBookmarks') ?? false,
    sendInitialEvents: boolParam(query, 'sendInitialEvents'),
  }
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name)
  if (value === null || value === '') return undefined
  if (!/^-?\d+$/.test(value)) throw errors.badRequest(`invalid value for ${name}: ${value} is not an integer`)
  // int64, as Kubernetes parses it (strconv.ParseInt: value out of range)
  const big = BigInt(value)
  if (big > INT64_MAX || big < -INT64_MAX - 1n) throw errors.badRequest(`invalid value for ${name}: ${value} is out of range`)
  // past 2^53 a number loses precision (and storage refuses it): the largest exact one means as much
  return Math.max(Math.min(Number(value), Number.MAX_SAFE_INTEGER), Number.MIN_SAFE_INTEGER)
}

const INT64_MAX = 2n ** 63n - 1n

export class ResourceHandler {
  readonly serializers: SerializerSet

  private readonly mediaTypes: string[]

  constructor(private readonly options: HandlerOptions) {
    this.serializers = serializerSet(options.gates, options.extraSerializers)
    this.mediaTypes = this.serializers.all.map((s) => s.mediaType)
  }

  /** patch media type -> how its body is decoded */
  private patchDecoders(): Map<string, Serializer> {
    const decoders = new Map<string, Serializer>([
      [JSON_PATCH, jsonSerializer],
      [MERGE_PATCH, jsonSerializer],
      [STRATEGIC_PATCH, jsonSerializer],
      [APPLY_YAML, yamlSerializer],
    ])
    if (this.options.gates['CBORServingAndStorage']) decoders.set(APPLY_CBOR, cborSerializer)
    for (const [type, serializer] of this.extraPatchTypes) decoders.set(type, serializer)
    return decoders
  }

  /** patch types added when their machinery is present (strategic merge, apply) */
  private readonly extraPatchTypes = new Map<string, Serializer>()
  private readonly patchAppliers = new Map<string, PatchApplier>()

  /** Adds a patch media type, e.g. strategic merge or server-side apply. */
  addPatchType(mediaType: string, decoder: Serializer, applier: PatchApplier): void {
    this.extraPatchTypes.set(mediaType, decoder)
    this.patchAppliers.set(mediaType, applier)
  }

  /** 404 / 405 before anything else, as Kubernetes' router does. */
  private resolve(info: ResourceRequest): {declaration: KindDeclaration; registry: ResourceRegistry} {
    const declaration = this.options.catalog.resource(info.group, info.version, info.resource)
    if (!declaration) throw errors.pathNotFound(info.path)
    if (!declaration.namespaced && info.namespace) throw errors.pathNotFound(info.path)
    let verbs: readonly Verb[] = declaration.verbs
    if (info.subresource) {
      const sub = declaration.subresources?.find((s) => s.name === info.subresource)
      if (!sub) throw errors.pathNotFound(info.path)
      verbs = sub.verbs
    }
    const verb = info.verb
    if (verb === 'proxy') throw errors.methodNotAllowed()
    if (!verbs.includes(verb)) throw errors.methodNotAllowed()
    if (declaration.namespaced && !info.namespace && !['list', 'watch'].includes(verb)) {
      throw errors.methodNotAllowed()
    }
    // the router's shapes: POST goes to a collection (or a named object's subresource), PUT and PATCH
    // to a named object; a method on the other shape is 405, as go-restful answers it
    if (verb === 'create' && info.name && !info.subresource) throw errors.methodNotAllowed()
    if ((verb === 'update' || verb === 'patch') && !info.name) throw errors.methodNotAllowed()
    const nameProblems = info.name ? pathSegmentNameProblems(info.name) : []
    if (nameProblems.length > 0) throw errors.badRequest(`Name parameter invalid: ${JSON.stringify(info.name)}: ${nameProblems.join(';')}`)
    return {declaration, registry: this.options.registries.get(declaration)!}
  }

  /** negotiation outcomes by Accept header and servable views: clients send the same few headers */
  private readonly negotiated = new Map<string, Readonly<Negotiated<string> & {serializer: Serializer}> | null>()

  private negotiate(request: IncomingMessage, declaration: KindDeclaration, views: readonly ViewKind[]): Readonly<Negotiated<string> & {serializer: Serializer}> {
    const servable = declaration.table === false ? views.filter((v) => v !== 'Table') : views
    const accept = request.headers.accept
    const key = `${servable.join(',')}\n${accept ?? ''}`
    let outcome = this.negotiated.get(key)
    if (outcome === undefined) {
      const found = negotiate(accept, {mediaTypes: this.mediaTypes, viewGroups: VIEW_GROUPS, views: servable})
      outcome = found && {...found, serializer: this.serializers.byMediaType(found.mediaType)!}
      if (this.negotiated.size >= 1_000) this.negotiated.clear()
      this.negotiated.set(key, outcome)
    }
    if (!outcome) throw errors.notAcceptable(this.mediaTypes)
    return outcome
  }

  /** a write's context, built in one literal (a spread of a smaller one was ~4 µs a request) */
  private context(
    info: ResourceRequest,
    user: UserInfo | undefined,
    audit: Record<string, string>,
    warnings: string[],
    fieldManager: string | undefined,
    requestOptions: Record<string, unknown> | undefined,
  ): RequestContext {
    return {
      user,
      namespace: info.namespace || undefined,
      subresource: info.subresource || undefined,
      now: this.options.now(),
      gates: this.options.gates,
      audit,
      warnings,
      fieldManager,
      requestOptions,
      authorizeCreate: () => {
        const denied = user && this.options.authorizeRequest?.(user, {...info, verb: 'create'})
        if (denied) throw denied
      },
    }
  }

  /** Serves a resource request; `user` is who it is from (authenticated), handed to the registry in the context. */
  /** `audit` collects the request's audit annotations (admission adds its own). */
  async handle(
    request: IncomingMessage,
    response: ServerResponse,
    info: ResourceRequest,
    query: URLSearchParams,
    user?: UserInfo,
    audit: Record<string, string> = {},
  ): Promise<void> {
    const {declaration, registry} = this.resolve(info)
    if (declaration.virtual) {
      const handler = this.options.virtualKinds?.get(`${declaration.resource}.${declaration.group}`)
      if (!handler) throw errors.methodNotAllowed()
      const negotiated = this.negotiate(request, declaration, [])
      const pretty = isPrettyPrint(query, request.headers['user-agent']) || negotiated.pretty
      return serveVirtualCreate(request, response, {declaration, handler, serializers: this.serializers, serializer: negotiated.serializer, pretty}, query, user, info.namespace)
    }
    if (info.subresource === 'proxy' && declaration.resource === 'nodes' && declaration.group === '') {
      const node = await registry.get('', info.name)
      const marker = `/nodes/${encodeURIComponent(info.name)}/proxy`
      const rest = info.path.slice(info.path.indexOf(marker) + marker.length)
      const search = query.toString()
      return proxyToAgent(request, response, node, rest, search ? `?${search}` : '', this.options.agentCredentials?.())
    }
    if (info.subresource === 'log' && declaration === pod && info.verb === 'get') {
      const nodes = this.options.registries.get(nodeDeclaration)!
      return servePodLog(request, response, info.name, query, {
        getPod: () => registry.get(info.namespace, info.name),
        getNode: (name) => nodes.get('', name),
        credentials: this.options.agentCredentials?.(),
      })
    }
    const verb = info.verb as Verb
    const pretty = isPrettyPrint(query, request.headers['user-agent'])
    const gzip = (verb === 'get' || verb === 'list') && this.options.gates['APIResponseCompression'] !== false && acceptsGzip(request)
    const now = this.options.now()
    const includeObject = query.get('includeObject') ?? undefined

    if (verb === 'get') {
      const negotiated = this.negotiate(request, declaration, ['Table', 'PartialObjectMetadata'])
      checkTableOptions(negotiated.view, includeObject)
      const object = await registry.get(info.namespace, info.name, query.get('resourceVersion') ?? undefined)
      const body = info.subresource === 'scale' ? objectView(scaleTable, toScale(object), negotiated.view, now, includeObject) : objectView(declaration, object, negotiated.view, now, includeObject)
      return send(response, 200, body, {serializer: negotiated.serializer, pretty: pretty || negotiated.pretty, gzip, declaration})
    }
    const listOptions = verb === 'list' || verb === 'watch' || verb === 'deletecollection' ? listOptionsOf(query) : undefined
    if (verb === 'list') {
      const negotiated = this.negotiate(request, declaration, ['Table', 'PartialObjectMetadataList'])
      checkTableOptions(negotiated.view, includeObject)
      const asJson = isPlainJson(negotiated, pretty)
      const {labelSelector, fieldSelector, limit, continue: token, resourceVersion, resourceVersionMatch} = listOptions!
      const result = await registry.list(info.namespace, {
        encoded: asJson,
        consistentFromCache: this.options.gates['ConsistentListFromCache'] !== false,
        labelSelector,
        fieldSelector,
        limit,
        continue: token,
        resourceVersion,
        resourceVersionMatch,
        sendInitialEvents: query.has('sendInitialEvents'),
      })
      if (asJson) {
        // items from storage are their stored bytes; from the cache, each object's JSON computed once
        // per version of the object (shared with watches)
        const head = JSON.stringify({kind: `${declaration.kind}List`, apiVersion: registry.apiVersion, metadata: listMetaOf(result)})
        const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"items":[`)]
        const items = result.encodedItems ?? result.items.map(jsonOf)
        const comma = Buffer.from(',')
        items.forEach((item, i) => {
          if (i > 0) parts.push(comma)
          parts.push(item)
        })
        parts.push(Buffer.from(']}\n'))
        return send(response, 200, Buffer.concat(parts), {serializer: negotiated.serializer, gzip, preEncoded: true})
      }
      const body = listView(declaration, registry.apiVersion, result, negotiated.view, now, includeObject)
      return send(response, 200, body, {serializer: negotiated.serializer, pretty: pretty || negotiated.pretty, gzip, declaration})
    }
    if (verb === 'watch') {
      const negotiated = this.negotiate(request, declaration, ['Table', 'PartialObjectMetadata'])
      // YAML has no stream serializer: NegotiateOutputMediaTypeStream's 406 names the ones that do
      if (negotiated.serializer.mediaType === YAML_TYPE) {
        throw errors.notAcceptable(this.serializers.all.filter((s) => s.mediaType !== YAML_TYPE).map((s) => `${s.mediaType};stream=watch`))
      }
      checkTableOptions(negotiated.view, includeObject)
      return serveWatch(
        request,
        response,
        registry,
        info.namespace,
        {
          resourceVersion: listOptions!.resourceVersion,
          resourceVersionMatch: listOptions!.resourceVersionMatch,
          sendInitialEvents: listOptions!.sendInitialEvents,
          allowWatchBookmarks: listOptions!.allowWatchBookmarks,
          timeoutSeconds: listOptions!.timeoutSeconds,
          labelSelector: listOptions!.labelSelector,
          fieldSelector: listOptions!.fieldSelector,
          watchListEnabled: this.options.gates['WatchList'] !== false,
        },
        {
          serializer: negotiated.serializer,
          view: negotiated.view,
          includeObject,
          now: this.options.now,
          initialEventsAnnotation: `${this.options.metaGroup === 'meta.orch.io' ? 'orch.io' : 'k8s.io'}/initial-events-end`,
          shutdown: this.options.shutdown,
        },
      )
    }

    // writes: negotiate the response first, so a 406 stores nothing
    const negotiated = this.negotiate(request, declaration, ['Table', 'PartialObjectMetadata'])
    checkTableOptions(negotiated.view, includeObject)
    const plainJson = isPlainJson(negotiated, pretty)
    const reply = (code: number, object: AnyObject) =>
      plainJson
        ? send(response, code, Buffer.concat([jsonOf(object), NEWLINE]), {serializer: negotiated.serializer, headers: warningHeaders(warnings), preEncoded: true})
        : send(response, code, objectView(declaration, object, negotiated.view, now, includeObject), {
            serializer: negotiated.serializer,
            pretty: pretty || negotiated.pretty,
            headers: warningHeaders(warnings),
            declaration,
          })
    // a delete's dryRun is one of its DeleteOptions, read and validated with the others
    const dryRun = verb === 'delete' || verb === 'deletecollection' ? false : dryRunParam(query)
    const fieldManager = fieldManagerOf(query, request)
    const warnings: string[] = []
    // a refused write still carries the warnings gathered before the refusal, as in Kubernetes
    const annotated: AnnotatedResponse = response
    annotated[WARNINGS] = warnings
    // a delete's options are set once its body is read (readDeleteOptions)
    const requestOptions = verb === 'delete' || verb === 'deletecollection' ? undefined : requestedWriteOptions(query)
    const context = this.context(info, user, audit, warnings, fieldManager, requestOptions)
    const validation = fieldValidationParam(query)
    /** the numbers of a merge or JSON patch as written, where the patched object has them */
    let patchNumbers: NumberLiteralAt[] = []
    /** the body, with unknown and duplicate fields refused (Strict) or warned about (Warn); a patch's
     *  own problems are kept in patchProblems for when its result is known */
    let patchProblems: StrictProblems = {decoding: [], yaml: []}
    const decodeChecked = async (contentType = request.headers['content-type'], serializers: SerializerSet = this.serializers, kind = declaration) => {
      // Kubernetes' order: 415 for the media type, 413 reading the body, then a create's or update's
      // options (a patch's were checked once its type was known), then the body's decoding
      const type = mediaTypeOf(contentType) || JSON_TYPE
      if (!serializers.byMediaType(type)) throw errors.unsupportedMediaType(type, serializers.all.map((s) => s.mediaType))
      const raw = await readBody(request)
      if (verb === 'create' || verb === 'update') validateWriteOptions(verb, query)
      const decoded = decodeBody(raw, contentType, serializers, kind)
      const isObject = typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded)
      const isPatch = request.method === 'PATCH'
      // what JSON.parse does not tell: duplicate keys, and numbers such as 1.0 for an integer field
      const scan = type === JSON_TYPE || ((type === MERGE_PATCH || type === STRATEGIC_PATCH) && validation !== 'Ignore') ? scanJsonText(raw.toString('utf8')) : undefined
      // values of the wrong type are refused as Go's decoder refuses them (a patch: its result, below)
      if (isObject && !isPatch) assertDecodes(decoded as AnyObject, kind.schema, kind, raw, scan?.numberLiterals)
      // a patch's numbers are checked as written in the patched object (below)
      else if (isPatch) patchNumbers = patchNumbersOf(contentType, decoded, raw)
      const yamlText = type === YAML_TYPE || type === APPLY_YAML
      const yamlDuplicates = yamlText && validation !== 'Ignore' ? yamlDuplicateKeys(raw.toString('utf8')) : []
      if (isPatch) {
        // a merge or strategic merge patch's duplicates now, its result's unknown fields once it is
        // applied; an apply patch's duplicate keys after the apply (its unknown fields fail the apply)
        patchProblems = {decoding: (scan?.duplicates ?? []).map((path) => `duplicate field "${path}"`), yaml: yamlDuplicates}
        return decoded
      }
      if (!isObject) return decoded
      // unknown fields are dropped whatever the mode, as decoding into a typed object does; Go meets
      // YAML as JSON written from maps, its keys sorted
      const unknown = yamlText && validation !== 'Ignore' ? unknownFieldsSorted(decoded, kind.schema) : []
      const pruned = pruneUnknownFields(decoded, kind.schema)
      if (validation !== 'Ignore') {
        const decoding = typedBodyProblems(raw.toString('utf8'), yamlText ? unknown : pruned, scan)
        // a create or update words it as any decode error: `ConfigMap in version "v1" cannot be handled as a ConfigMap: …`
        reportStrictProblems({decoding, yaml: yamlDuplicates}, validation, warnings, (message) => decodeFailure(decoded as AnyObject, kind, raw, message))
      }
      return decoded
    }

    if (verb === 'create') {
      if (info.subresource === 'binding' && declaration === pod) {
        const binding = assertBodyObject(await decodeChecked(undefined, undefined, podBinding))
        await bindPod(registry, info, binding, {dryRun, context})
        return send(response, 201, successStatus(undefined, 201), {serializer: negotiated.serializer, pretty, headers: warningHeaders(warnings), declaration})
      }
      if (info.subresource === 'eviction' && declaration === pod) {
        const eviction = assertBodyObject(await decodeChecked(undefined, undefined, podEviction))
        await evictPod(registry, info, eviction, {dryRun, context})
        return send(response, 201, successStatus(undefined, 201), {serializer: negotiated.serializer, pretty, headers: warningHeaders(warnings), declaration})
      }
      if (info.subresource) throw errors.methodNotAllowed()
      const body = assertBodyObject(await decodeChecked())
      if (typeof body.metadata?.name === 'string') annotated[CREATED_NAME] = body.metadata.name
      const created = await registry.create(info.namespace, body, {dryRun, context, fieldManager, bodyOwned: true})
      return reply(201, created)
    }
    if (info.subresource === 'scale' && (verb === 'update' || verb === 'patch')) {
      const updated = await writeScale(request, registry, info, {
        verb,
        dryRun,
        context,
        query,
        warnings,
        patchDecoders: this.patchDecoders(),
        applyTypes: APPLY_TYPES,
        serializers: this.serializers,
        apply: {fieldManager: query.get('fieldManager') ?? '', force: boolParam(query, 'force') ?? false},
      })
      const scale = objectView(scaleTable, toScale(updated), negotiated.view, now, includeObject)
      return send(response, 200, scale, {serializer: negotiated.serializer, headers: warningHeaders(warnings)})
    }
    if (verb === 'update') {
      const body = assertBodyObject(await decodeChecked())
      const {object, created} = await registry.update(info.namespace, info.name, body, {dryRun, context, fieldManager, subresource: info.subresource})
      return reply(created ? 201 : 200, object)
    }
    if (verb === 'patch') {
      const contentType = mediaTypeOf(request.headers['content-type'])
      const decoders = this.patchDecoders()
      const decoder = decoders.get(contentType)
      if (!decoder) throw errors.unsupportedMediaType(contentType, [...decoders.keys()])
      validateWriteOptions('patch', query, contentType)
      const asSet: SerializerSet = {all: [decoder], byMediaType: () => decoder}
      let patch: unknown
      if (contentType === JSON_PATCH) {
        const raw = await readBody(request)
        patch = decodeBody(raw, contentType, asSet)
        patchNumbers = patchNumbersOf(contentType, patch, raw)
        if (validation !== 'Ignore') patchProblems = {decoding: jsonPatchProblems(raw.toString('utf8'), patch), yaml: []}
      } else {
        patch = await decodeChecked(contentType, asSet)
      }
      const applier = this.patchAppliers.get(contentType)
      if (applier) {
        const {object, created} = await applier({registry, info, patch, query, dryRun, context})
        return reply(created ? 201 : 200, object)
      }
      if (contentType === APPLY_YAML || contentType === APPLY_CBOR) {
        let applyChecked = false
        const {object, created} = await applyPatch(registry, info, patch, {
          dryRun,
          context,
          fieldManager: query.get('fieldManager') ?? '',
          force: boolParam(query, 'force') ?? false,
          afterApply: () => {
            // warned about once however often the apply is retried
            if (validation === 'Warn' && applyChecked) return
            applyChecked = true
            reportApplyYamlProblems(patchProblems.yaml, validation, warnings)
          },
        })
        return reply(created ? 201 : 200, object)
      }
      const strict = {validation, problems: patchProblems, warnings}
      const object = await this.patch(registry, info, contentType, patch, {dryRun, context, fieldManager, strict}, patchNumbers)
      return reply(200, object)
    }
    if (verb === 'delete' || verb === 'deletecollection') {
      const raw = await readBody(request)
      const body = raw.length > 0 ? assertBodyObject(decodeBody(raw, request.headers['content-type'], this.serializers, declaration)) : {}
      const options = readDeleteOptions(
        body,
        raw,
        request.headers['content-type'],
        {
          dryRun: query.getAll('dryRun'),
          gracePeriodSeconds: intParam(query, 'gracePeriodSeconds'),
          propagationPolicy: query.get('propagationPolicy') ?? undefined,
          orphanDependents: boolParam(query, 'orphanDependents'),
        },
        context,
      )
      if (verb === 'deletecollection') {
        const {labelSelector, fieldSelector, limit, continue: token, resourceVersion, resourceVersionMatch} = listOptions!
        // what is deleted is what a list with these options gives (one page with a limit), as in Kubernetes
        const status = await registry.deleteCollection(info.namespace, {labelSelector, fieldSelector, limit, continue: token, resourceVersion, resourceVersionMatch}, options)
        return send(response, 200, status, {serializer: negotiated.serializer, pretty, declaration})
      }
      const result = await registry.delete(info.namespace, info.name, options)
      if (result.deleted && !declaration.returnDeletedObject) return send(response, result.code, result.status, {serializer: negotiated.serializer, pretty, declaration})
      return reply(result.code, result.object)
    }
    throw errors.methodNotAllowed()
  }

  /** Applies the patch to the stored object (or its subresource part) and writes it back with CAS. */
  private async patch(
    registry: ResourceRegistry,
    info: ResourceRequest,
    contentType: string,
    patch: unknown,
    options: {dryRun: boolean; context: RequestContext; fieldManager?: string; strict: {validation: FieldValidation; problems: StrictProblems; warnings: string[]}},
    patchNumbers: readonly NumberLiteralAt[] = [],
  ): Promise<AnyObject> {
    const {strict} = options
    const warningsBefore = strict.warnings.length
    if ((contentType === MERGE_PATCH || contentType === STRATEGIC_PATCH) && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) {
      throw errors.badRequest('the merge patch must be a JSON object')
    }
    const object = await registry.guaranteedUpdate(
      info.namespace,
      info.name,
      (current) => {
        const patched = assertBodyObject(
          contentType === JSON_PATCH
            ? applyJsonPatch(current, patch)
            : contentType === STRATEGIC_PATCH
              ? strategicMergePatch(current, patch, registry.declaration.schema)
              : applyMergePatch(current, patch),
        )
        // a patch may build what no body could hold (a JSON patch's path and value together); the
        // managedFields the server keeps, one level deeper than the fields they track, do not count
        assertNestingDepth(patched.metadata?.managedFields ? {...patched, metadata: {...patched.metadata, managedFields: undefined}} : patched)
        // the patched object still names the URL's object (Kubernetes checks the name after a patch too)
        checkName(patched, info.name, registry.declaration.namespaced ? info.namespace : '')
        // a resourceVersion the patch sets is a precondition, as in Kubernetes
        checkResourceVersion(registry.groupResource, info.name, patched.metadata?.resourceVersion, current)
        registry.checkTypeMeta(patched)
        // a strategic merge patch's result is converted from maps, the others' decoded from JSON; what
        // the converter lets through (3.0 for an int32) is then only checked for Go's ranges
        if (contentType === STRATEGIC_PATCH) assertStrategicPatchConverts(patched, patch, registry.declaration.schema, patchNumbers)
        assertPatchedDecodes(patched, registry.declaration.schema, registry.declaration.version, contentType === STRATEGIC_PATCH ? [] : patchNumbers)
        // the result's unknown fields, in the order Go meets them: the converter sorts its paths; a
        // merge or JSON patch's result is JSON written from maps, keys sorted at each level
        checkPatchedFields(contentType, patch, patched, registry.declaration.schema, patchNumbers, strict, warningsBefore)
        return registry.prepareUpdate(current, patched, info.subresource, options)
      },
      {dryRun: options.dryRun, admit: {context: options.context, subresource: info.subresource}},
    )
    return object
  }
}

/** The answer is the object itself in compact JSON: it can be sent as the JSON bytes already made
 *  (stored or cached) instead of serialising it. */
function isPlainJson(negotiated: Readonly<Negotiated<string> & {serializer: Serializer}>, pretty: boolean): boolean {
  return !negotiated.view && negotiated.serializer.mediaType === JSON_TYPE && !pretty && !negotiated.pretty
}

/** Kubernetes' ValidateTableOptions, checked when a Table is what is served: 400 for an includeObject
 *  other than None, Metadata or Object. */
function checkTableOptions(view: {as: string} | undefined, includeObject: string | undefined): void {
  if (view?.as !== 'Table' || includeObject === undefined || ['', 'None', 'Metadata', 'Object'].includes(includeObject)) return
  const cause = formatFieldError({type: 'FieldValueInvalid', field: 'includeObject', value: includeObject, message: "must be 'Metadata', 'Object', 'None', or empty"})
  throw errors.badRequest(`Unable to convert to Table as requested: ${cause}`)
}

export type PatchApplier = (request: {
  registry: ResourceRegistry
  info: ResourceRequest
  patch: unknown
  query: URLSearchParams
  dryRun: boolean
  context: RequestContext
}) => Promise<{object: AnyObject; created: boolean}>

/** What a request's handling leaves on its response for later readers: the warnings of a write in
 *  progress (for its answer even when it fails), and the name a create's body gives (the path has none)
 *  for the audit log. Properties, not WeakMaps: every write sets them, and a WeakMap entry costs more. */
const WARNINGS = Symbol('orch.warnings')
const CREATED_NAME = Symbol('orch.createdName')
type AnnotatedResponse = ServerResponse & {[WARNINGS]?: string[]; [CREATED_NAME]?: string}

export function createdObjectName(response: ServerResponse): string | undefined {
  return (response as AnnotatedResponse)[CREATED_NAME]
}

/** Any error as a Status, in the first encoding the client accepts (JSON otherwise). */
/** The Warning header of a response (each warning as Kubernetes' `299 - "text"`), or none. */
export function warningHeaders(warnings: readonly string[]): {Warning: string} | undefined {
  return warnings.length > 0 ? {Warning: warnings.map(warningHeader).join(', ')} : undefined
}

export function statusResponse(response: ServerResponse, error: unknown, accept: string | undefined, serializers?: SerializerSet, pretty = false): void {
  const apiError = error instanceof ApiError ? error : errors.internal()
  const all = serializers?.all ?? [jsonSerializer, yamlSerializer]
  const negotiated = negotiate(accept, {mediaTypes: all.map((s) => s.mediaType), viewGroups: [], views: []})
  const serializer = all.find((s) => s.mediaType === negotiated?.mediaType) ?? jsonSerializer
  const warnings = (response as AnnotatedResponse)[WARNINGS] ?? []
  const headers: Record<string, string> = {...warningHeaders(warnings)}
  // as Kubernetes: a Status that says when to retry says it in Retry-After too (client-go retries on it)
  const retryAfter = apiError.details?.retryAfterSeconds
  if (retryAfter && retryAfter > 0) headers['Retry-After'] = String(retryAfter)
  send(response, apiError.code, apiError.toStatus(), {serializer, headers, pretty})
}

export {cborSerializer}
