// POST of a virtual kind (SubjectAccessReview, TokenReview, …): decoded and checked like any create,
// answered with 201 and the review's status; nothing is stored (a dry run answers the same).
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AnyObject, KindDeclaration, UserInfo} from '../api/types.js'
import {pruneUnknownFields, scanJsonText} from '../machinery/field-validation.js'
import {assertDecodes, decodeFailure} from '../machinery/go-json.js'
import {errors} from '../machinery/status.js'
import {decodeBody, isJsonBody, readBody, send} from './codec.js'
import {warningHeaders, type VirtualKindHandler} from './handlers.js'
import {assertBodyObject} from './registry.js'
import type {Serializer, SerializerSet} from './serializers.js'
import {reportStrictProblems, typedBodyProblems} from './strict-decoding.js'
import {fieldValidationParam, validateWriteOptions} from './write-options.js'

export interface VirtualCreate {
  declaration: KindDeclaration
  handler: VirtualKindHandler
  serializers: SerializerSet
  /** the negotiated response serializer */
  serializer: Serializer
  pretty: boolean
}

export async function serveVirtualCreate(
  request: IncomingMessage,
  response: ServerResponse,
  {declaration, handler, serializers, serializer, pretty}: VirtualCreate,
  query: URLSearchParams,
  user: UserInfo | undefined,
  namespace: string,
): Promise<void> {
  validateWriteOptions('create', query)
  const raw = await readBody(request)
  const body = assertBodyObject(decodeBody(raw, request.headers['content-type'], serializers, declaration))
  const text = raw.toString('utf8')
  const scan = isJsonBody(request.headers['content-type']) ? scanJsonText(text) : undefined
  assertDecodes(body, declaration.schema, declaration, raw, scan?.numberLiterals)
  const unknown = pruneUnknownFields(body, declaration.schema)
  // fieldValidation as for any create
  const validation = fieldValidationParam(query)
  const warnings: string[] = []
  if (validation !== 'Ignore') {
    reportStrictProblems({decoding: typedBodyProblems(text, unknown, scan), yaml: []}, validation, warnings, (message) => decodeFailure(body, declaration, raw, message))
  }
  const apiVersion = declaration.group ? `${declaration.group}/${declaration.version}` : declaration.version
  if (declaration.namespaced) {
    // rest.EnsureObjectNamespaceMatchesRequestNamespace, as for every namespaced create
    const given = body.metadata
    const metadata: AnyObject = given && typeof given === 'object' && !Array.isArray(given) ? given : (body.metadata = {})
    if (metadata.namespace && metadata.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request')
    }
    metadata.namespace = namespace
  }
  const answer = handler(body, user, namespace)
  return send(response, 201, {...answer, apiVersion, kind: declaration.kind}, {serializer, pretty, declaration, headers: warningHeaders(warnings)})
}
