// /openapi/v2 as gnostic's openapi.v2.Document protobuf (what kubectl asks for to validate `kind: List` files and
// for `explain`), checked with an independent decoder: protobufjs over a hand-written subset of gnostic-models'
// openapiv2/OpenAPIv2.proto (the real field numbers), and js-yaml for the Any{yaml} values.
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import protobuf from 'protobufjs'
import yaml from 'js-yaml'
import {allDeclarations} from '../../src/api/index.js'
import {openAPIV2, type Json} from '../../src/apiserver/openapi.js'
import {encodeOpenAPIV2Protobuf, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CLIENT, toYAML} from '../../src/apiserver/openapi-v2-protobuf.js'
import {call} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const PROTO = `
syntax = "proto3";
package openapi.v2;
message Document {
  string swagger = 1; Info info = 2; repeated string schemes = 5; Paths paths = 8; Definitions definitions = 9;
  repeated SecurityRequirement security = 12; SecurityDefinitions security_definitions = 13;
}
message Info { string title = 1; string version = 2; }
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Paths { repeated NamedAny vendor_extension = 1; repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  string _ref = 1; Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5;
  Operation options = 6; Operation head = 7; Operation patch = 8; repeated ParametersItem parameters = 9;
}
message Operation {
  repeated string tags = 1; string description = 3; string operation_id = 5; repeated string produces = 6;
  repeated string consumes = 7; repeated ParametersItem parameters = 8; Responses responses = 9;
  repeated string schemes = 10; repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message JsonReference { string _ref = 1; string description = 2; }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBodyParameter { oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4; } }
message QueryParameterSubSchema { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; bool unique_items = 20; }
message PathParameterSubSchema { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; bool unique_items = 19; }
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; JsonReference json_reference = 2; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message Schema {
  string _ref = 1; string format = 2; string description = 4; repeated string required = 19; repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21; TypeItem type = 22; ItemsItem items = 23;
  Properties properties = 25; repeated NamedAny vendor_extension = 31;
}
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; }
`
const Document = protobuf.parse(PROTO, {keepCase: true}).root.lookupType('openapi.v2.Document')

/** the protobuf decoded by protobufjs, as a plain object */
function decode(bytes: Uint8Array): any {
  return Document.toObject(Document.decode(bytes), {longs: Number, defaults: false, arrays: false})
}

// ---------- the decoded message turned back into Swagger JSON ----------

const load = (any: {yaml: string}) => yaml.load(any.yaml)
const extensionsOf = (list: any[] | undefined): Json => Object.fromEntries((list ?? []).map((e) => [e.name, load(e.value)]))
const namedMap = <T>(list: any[] | undefined, value: (v: any) => T): Record<string, T> => Object.fromEntries((list ?? []).map((e) => [e.name, value(e.value)]))

function schemaBack(s: any): Json {
  const out: Json = {}
  if (s._ref) out.$ref = s._ref
  if (s.description) out.description = s.description
  if (s.format) out.format = s.format
  if (s.required) out.required = s.required
  if (s.enum) out.enum = s.enum.map(load)
  if (s.additional_properties) out.additionalProperties = s.additional_properties.schema ? schemaBack(s.additional_properties.schema) : s.additional_properties.boolean
  if (s.type) out.type = s.type.value.length === 1 ? s.type.value[0] : s.type.value
  if (s.items) out.items = schemaBack(s.items.schema[0])
  if (s.properties) out.properties = namedMap(s.properties.additional_properties, schemaBack)
  return {...out, ...extensionsOf(s.vendor_extension)}
}

function parameterBack(p: any): Json {
  if (p.json_reference) return {$ref: p.json_reference._ref}
  const body = p.parameter.body_parameter
  if (body) return {name: body.name, in: body.in, ...(body.required ? {required: true} : {}), schema: schemaBack(body.schema)}
  const nonBody = p.parameter.non_body_parameter
  const sub = nonBody.query_parameter_sub_schema ?? nonBody.path_parameter_sub_schema
  return {
    name: sub.name, in: sub.in, description: sub.description, ...(sub.required ? {required: true} : {}),
    type: sub.type, ...(sub.unique_items ? {uniqueItems: true} : {}),
  }
}

function operationBack(o: any): Json {
  const out: Json = {}
  if (o.tags) out.tags = o.tags
  if (o.description) out.description = o.description
  if (o.consumes) out.consumes = o.consumes
  if (o.produces) out.produces = o.produces
  if (o.schemes) out.schemes = o.schemes
  if (o.operation_id) out.operationId = o.operation_id
  if (o.parameters) out.parameters = o.parameters.map(parameterBack)
  out.responses = namedMap(o.responses.response_code, (v) => ({
    description: v.response.description,
    ...(v.response.schema ? {schema: schemaBack(v.response.schema.schema)} : {}),
  }))
  return {...out, ...extensionsOf(o.vendor_extension)}
}

function pathItemBack(p: any): Json {
  const out: Json = {}
  for (const method of ['get', 'put', 'post', 'delete', 'patch']) if (p[method]) out[method] = operationBack(p[method])
  if (p.parameters) out.parameters = p.parameters.map(parameterBack)
  return out
}

/** Swagger JSON from the decoded Document */
function documentBack(d: any): Json {
  return {
    swagger: d.swagger,
    info: {title: d.info.title, version: d.info.version},
    paths: namedMap(d.paths.path, pathItemBack),
    definitions: namedMap(d.definitions.additional_properties, schemaBack),
    securityDefinitions: namedMap(d.security_definitions.additional_properties, (v) => {
      const k = v.api_key_security
      return {type: k.type, description: k.description, name: k.name, in: k.in}
    }),
    security: d.security.map((r: any) => namedMap(r.additional_properties, (v) => v.value ?? [])),
  }
}

/** A small document that gnostic-models v0.6.8 (ParseDocument + proto.Marshal, as kube-openapi's
 *  ToProtoBinary) turned into these bytes: $ref and inline parameters, a body parameter, responses, a type
 *  list, additionalProperties as a schema and as false, enum values and vendor extensions in go-yaml's forms. */
const GOLDEN_JSON = {
  swagger: '2.0',
  info: {title: 'orch', version: 'v1.32.0-orch'},
  paths: {
    '/api/v1/namespaces/{namespace}/configmaps/{name}': {
      get: {
        tags: ['core_v1'], operationId: 'readCoreV1NamespacedConfigMap', produces: ['application/json'], schemes: ['https'],
        parameters: [
          {name: 'body', in: 'body', required: true, schema: {$ref: '#/definitions/cm'}},
          {name: 'limit', in: 'query', type: 'integer', uniqueItems: true},
        ],
        responses: {'200': {description: 'OK', schema: {$ref: '#/definitions/cm'}}, '401': {description: 'Unauthorized'}},
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': {group: '', kind: 'ConfigMap', version: 'v1'},
      },
      parameters: [{name: 'name', in: 'path', required: true, type: 'string'}, {$ref: '#/parameters/pretty'}],
    },
  },
  definitions: {
    cm: {
      required: ['data'],
      type: 'object',
      properties: {
        data: {type: 'object', additionalProperties: {type: 'string'}, 'x-kubernetes-map-type': 'atomic'},
        keys: {type: 'array', items: {type: 'string', enum: ['*', '', 'true', 'a: b']}, 'x-kubernetes-list-map-keys': ['name', 'protocol']},
        any: {type: ['object', 'null'], additionalProperties: false, 'x-kubernetes-preserve-unknown-fields': true},
      },
      'x-kubernetes-group-version-kind': [{group: '', kind: 'ConfigMap', version: 'v1'}],
    },
  },
  securityDefinitions: {BearerToken: {type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header'}},
  security: [{BearerToken: []}],
}
const GOLDEN_BYTES = Buffer.from(
  'CgMyLjASFAoEb3JjaBIMdjEuMzIuMC1vcmNoQqkDEqYDCjAvYXBpL3YxL25hbWVzcGFjZXMve25hbWVzcGFjZX0vY29uZmlnbWFwcy97bmFtZX0S8QIStwIK' +
  'B2NvcmVfdjEqHXJlYWRDb3JlVjFOYW1lc3BhY2VkQ29uZmlnTWFwMhBhcHBsaWNhdGlvbi9qc29uQiYKJAoiEgRib2R5GgRib2R5IAEqEgoQIy9kZWZpbml0' +
  'aW9ucy9jbUIgCh4SHBoaEgVxdWVyeSIFbGltaXQyB2ludGVnZXKgAQFKPgojCgMyMDASHAoaCgJPSxIUChIKECMvZGVmaW5pdGlvbnMvY20KFwoDNDAxEhAK' +
  'DgoMVW5hdXRob3JpemVkUgVodHRwc2odChN4LWt1YmVybmV0ZXMtYWN0aW9uEgYSBGdldApqSwofeC1rdWJlcm5ldGVzLWdyb3VwLXZlcnNpb24ta2luZBIo' +
  'EiZncm91cDogIiIKa2luZDogQ29uZmlnTWFwCnZlcnNpb246IHYxCkocChoSGCIWCAESBHBhdGgiBG5hbWUqBnN0cmluZ0oXEhUKEyMvcGFyYW1ldGVycy9w' +
  'cmV0dHlKkgMKjwMKAmNtEogDmgEEZGF0YbIBCAoGb2JqZWN0ygGeAgpICgRkYXRhEkCqAQ0KC7IBCAoGc3RyaW5nsgEICgZvYmplY3T6ASIKFXgta3ViZXJu' +
  'ZXRlcy1tYXAtdHlwZRIJEgdhdG9taWMKCoABCgRrZXlzEniyAQcKBWFycmF5ugE2CjSiAQYSBCcqJwqiAQUSAyIiCqIBCRIHInRydWUiCqIBCRIHJ2E6IGIn' +
  'CrIBCAoGc3RyaW5n+gEyChp4LWt1YmVybmV0ZXMtbGlzdC1tYXAta2V5cxIUEhItIG5hbWUKLSBwcm90b2NvbAoKTwoDYW55EkiqAQIQALIBDgoGb2JqZWN0' +
  'CgRudWxs+gEvCiR4LWt1YmVybmV0ZXMtcHJlc2VydmUtdW5rbm93bi1maWVsZHMSBxIFdHJ1ZQr6AVEKH3gta3ViZXJuZXRlcy1ncm91cC12ZXJzaW9uLWtp' +
  'bmQSLhIsLSBncm91cDogIiIKICBraW5kOiBDb25maWdNYXAKICB2ZXJzaW9uOiB2MQpiEQoPCgtCZWFyZXJUb2tlbhIAak8KTQoLQmVhcmVyVG9rZW4SPhI8' +
  'CgZhcGlLZXkSDWF1dGhvcml6YXRpb24aBmhlYWRlciIbQmVhcmVyIFRva2VuIGF1dGhlbnRpY2F0aW9u',
  'base64',
)

describe('/openapi/v2 as gnostic protobuf', () => {
  const document = openAPIV2(allDeclarations)
  const bytes = encodeOpenAPIV2Protobuf(document)

  it('decodes, with an independent decoder, back into the very Swagger document served as JSON', () => {
    const decoded = decode(bytes)
    assert.equal(decoded.swagger, '2.0')
    assert.deepEqual(decoded.info, document.info)
    // key order is kept: definitions and paths come in the order of the JSON
    assert.deepEqual(decoded.definitions.additional_properties.map((d: any) => d.name), Object.keys(document.definitions))
    assert.deepEqual(decoded.paths.path.map((p: any) => p.name), Object.keys(document.paths))
    assert.deepEqual(documentBack(decoded), JSON.parse(JSON.stringify(document)))
  })

  it('the ConfigMap definition carries its properties and x-kubernetes-group-version-kind as gnostic writes them', () => {
    const decoded = decode(bytes)
    const cm = decoded.definitions.additional_properties.find((d: any) => d.name === 'io.orch.api.core.v1.ConfigMap').value
    assert.deepEqual(cm.type.value, ['object'])
    const properties = Object.fromEntries(cm.properties.additional_properties.map((p: any) => [p.name, p.value]))
    assert.deepEqual(Object.keys(properties), ['apiVersion', 'binaryData', 'data', 'immutable', 'kind', 'metadata'])
    assert.deepEqual(properties.data.type.value, ['object'])
    assert.deepEqual(properties.data.additional_properties.schema.type.value, ['string'])
    assert.equal(properties.metadata._ref, '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta')
    assert.deepEqual(cm.vendor_extension, [{name: 'x-kubernetes-group-version-kind', value: {yaml: '- group: ""\n  kind: ConfigMap\n  version: v1\n'}}])
  })

  it('operations keep their parameters, responses and x-kubernetes-action', () => {
    const decoded = decode(bytes)
    const item = decoded.paths.path.find((p: any) => p.name === '/api/v1/namespaces/{namespace}/configmaps/{name}').value
    assert.equal(item.get.operation_id, 'readCoreV1NamespacedConfigMap')
    assert.equal(item.patch.operation_id, 'patchCoreV1NamespacedConfigMap')
    assert.deepEqual(item.patch.parameters[0].parameter.body_parameter.schema._ref, '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.Patch')
    const query = item.patch.parameters.map((p: any) => p.parameter.non_body_parameter?.query_parameter_sub_schema?.name).filter(Boolean)
    assert.ok(query.includes('fieldValidation'))
    assert.deepEqual(item.parameters.map((p: any) => p.parameter.non_body_parameter.path_parameter_sub_schema?.name ?? p.parameter.non_body_parameter.query_parameter_sub_schema.name), ['name', 'namespace', 'pretty'])
    assert.equal(item.get.responses.response_code[0].value.response.schema.schema._ref, '#/definitions/io.orch.api.core.v1.ConfigMap')
    assert.deepEqual(extensionsOf(item.get.vendor_extension), {'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': {group: '', kind: 'ConfigMap', version: 'v1'}})
  })

  it("is byte for byte what gnostic's ParseDocument + proto.Marshal make of the same JSON (kube-apiserver's bytes)", () => {
    assert.equal(encodeOpenAPIV2Protobuf(GOLDEN_JSON).toString('base64'), GOLDEN_BYTES.toString('base64'))
  })

  it('vendor extensions, enum values and defaults are Any{yaml} as go-yaml v3 writes them', () => {
    assert.equal(toYAML('atomic'), 'atomic\n')
    assert.equal(toYAML(true), 'true\n')
    assert.equal(toYAML(''), '""\n')
    assert.equal(toYAML('*'), "'*'\n")
    assert.equal(toYAML('1e3'), '"1e3"\n')
    assert.equal(toYAML(['containerPort', 'protocol']), '- containerPort\n- protocol\n')
    assert.equal(toYAML({group: 'apps', kind: 'StatefulSet', version: 'v1'}), 'group: apps\nkind: StatefulSet\nversion: v1\n')
    assert.equal(toYAML({a: {b: [{c: 'd'}]}, l: []}), 'a:\n    b:\n        - c: d\nl: []\n')
    assert.equal(toYAML([['a', 'b']]), '- - a\n  - b\n')
    assert.equal(toYAML({k: 'multi\nline'}), 'k: |-\n    multi\n    line\n')
  })
})

describe('/openapi/v2 content negotiation', () => {
  let server: RunningOrch
  before(async () => {
    server = await startOrchServer(['--controllers='])
  })
  after(async () => server.cleanup())

  it("/openapi/v2 is served as gnostic's openapi.v2.Document protobuf when asked for (kubectl validates kind: List with it)", async () => {
    const json = await call(server.url, 'GET', '/openapi/v2')
    assert.equal(json.status, 200)
    for (const accept of [OPENAPI_V2_PROTOBUF_CLIENT, OPENAPI_V2_PROTOBUF, `${OPENAPI_V2_PROTOBUF_CLIENT}, application/json`]) {
      const result = await call(server.url, 'GET', '/openapi/v2', undefined, {Accept: accept})
      assert.equal(result.status, 200, accept)
      // kube-openapi answers either protobuf media type with the `.v2.v1.0` one
      assert.equal(result.headers['content-type'], OPENAPI_V2_PROTOBUF, accept)
      assert.equal(result.headers.vary, 'Accept')
      assert.deepEqual(result.raw, encodeOpenAPIV2Protobuf(json.json))
      assert.deepEqual(documentBack(decode(result.raw)), json.json)
    }
  })

  it('/openapi/v2 is JSON for JSON, */* or no Accept, and 406 only when neither is acceptable', async () => {
    for (const accept of ['application/json', '*/*', 'application/*', `application/json, ${OPENAPI_V2_PROTOBUF_CLIENT}`]) {
      const result = await call(server.url, 'GET', '/openapi/v2', undefined, {Accept: accept})
      assert.equal(result.status, 200, accept)
      assert.match(String(result.headers['content-type']), /^application\/json/, accept)
      assert.equal(result.json.swagger, '2.0')
    }
    const refused = await call(server.url, 'GET', '/openapi/v2', undefined, {Accept: 'application/vnd.orch.protobuf'})
    assert.equal(refused.status, 406)
  })
})
