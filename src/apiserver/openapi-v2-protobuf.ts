// /openapi/v2 as protobuf: the Swagger 2.0 document of openapi.ts encoded as gnostic's `openapi.v2.Document`
// (github.com/google/gnostic-models, openapiv2/OpenAPIv2.proto), the media type
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf that kube-apiserver serves and kubectl asks for
// (client-side validation of `kind: List` manifests, `kubectl explain`).
//
// The bytes are what kube-apiserver sends: gnostic's ParseDocument (the JSON read as YAML, then NewDocument)
// followed by proto.Marshal. So fields come in field-number order, proto3 defaults (empty strings, false, 0,
// empty repeated fields) are left out, maps keep the document's key order, a oneof takes the last of its
// alternatives that fits the value, and vendor extensions, enum values, defaults and examples are
// `Any{yaml}` holding the value as go-yaml v3 marshals it.
// (Checked byte for byte against gnostic-models v0.6.8, kubectl 1.32's, on the whole document. One known gap:
// go-yaml folds a raw U+0085/U+2028/U+2029 inside a JSON string, which is not reproduced here.)
import {I64, LEN, VARINT, Writer} from '../machinery/protobuf-wire.js'

type Json = Record<string, unknown>

/** What kube-openapi answers with, whichever of the two protobuf media types was asked for */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'
/** What client-go (kubectl) asks for; kube-openapi calls it deprecated but serves it */
export const OPENAPI_V2_PROTOBUF_CLIENT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'

/** The gnostic openapi.v2.Document protobuf of a Swagger 2.0 document (as openAPIV2() builds it). */
export function encodeOpenAPIV2Protobuf(document: unknown): Buffer {
  const w = new Writer(1 << 16)
  if (isMap(document)) writeDocument(w, document)
  return Buffer.from(w.finish())
}

// ---------- values as gnostic reads them ----------

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function has(m: Json, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(m, key)
}

/** gnostic's StringForScalarNode: strings, integers (as written) and null (empty) */
function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (typeof v === 'number' && Number.isInteger(v)) return String(v)
  if (v === null) return ''
  return undefined
}

function texts(v: unknown): string[] {
  if (!Array.isArray(v)) return []
  const out: string[] = []
  for (const item of v) {
    const s = text(item)
    if (s !== undefined) out.push(s)
  }
  return out
}

/** a map fits a message when it has the required keys, no keys outside the allowed ones (x- always allowed),
 *  and the enumerated values asked for */
function fits(m: unknown, required: string[], allowed: string[] | null, values: Record<string, string[]> = {}): m is Json {
  if (!isMap(m)) return false
  for (const key of required) if (!has(m, key)) return false
  if (allowed) for (const key of Object.keys(m)) if (!key.startsWith('x-') && !allowed.includes(key)) return false
  for (const [key, ok] of Object.entries(values)) {
    if (!has(m, key)) continue
    const value = text(m[key])
    if (value === undefined || !ok.includes(value)) return false
  }
  return true
}

// ---------- field writers ----------

function str(w: Writer, field: number, v: unknown): void {
  const s = text(v)
  if (s === undefined || s === '') return
  w.tag(field, LEN)
  w.string(s)
}

function strs(w: Writer, field: number, v: unknown): void {
  for (const s of texts(v)) {
    w.tag(field, LEN)
    w.string(s)
  }
}

function bool(w: Writer, field: number, v: unknown): void {
  if (v !== true) return
  w.tag(field, VARINT)
  w.uint(1)
}

function int64(w: Writer, field: number, v: unknown): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v === 0) return
  w.tag(field, VARINT)
  w.int(v)
}

function double(w: Writer, field: number, v: unknown): void {
  if (typeof v !== 'number' || v === 0) return
  w.tag(field, I64)
  w.double(v)
}

function message(w: Writer, field: number, body: () => void): void {
  w.tag(field, LEN)
  const at = w.begin()
  body()
  w.end(at)
}

/** a message field read from a map value (written, possibly empty, whenever the key is there) */
function sub(w: Writer, field: number, v: unknown, write: (w: Writer, m: Json) => void): void {
  if (v === undefined) return
  message(w, field, () => {
    if (isMap(v)) write(w, v)
  })
}

/** `Any{yaml}`: gnostic's NewAny */
function any(w: Writer, field: number, v: unknown): void {
  if (v === undefined) return
  message(w, field, () => str(w, 2, toYAML(v)))
}

function anys(w: Writer, field: number, v: unknown): void {
  if (Array.isArray(v)) for (const item of v) any(w, field, item)
}

/** `repeated NamedAny vendor_extension`: the x- keys, in order */
function extensions(w: Writer, field: number, m: Json): void {
  for (const [key, value] of Object.entries(m)) {
    if (!key.startsWith('x-')) continue
    message(w, field, () => {
      str(w, 1, key)
      any(w, 2, value)
    })
  }
}

/** `repeated NamedX additional_properties = 1`: every key of a map, in order */
function named(w: Writer, field: number, m: unknown, write: (w: Writer, v: unknown) => void, keep: (key: string) => boolean = () => true): void {
  if (!isMap(m)) return
  for (const [key, value] of Object.entries(m)) {
    if (!keep(key)) continue
    message(w, field, () => {
      str(w, 1, key)
      write(w, value)
    })
  }
}

// ---------- messages (field numbers of OpenAPIv2.proto) ----------

function writeDocument(w: Writer, m: Json): void {
  str(w, 1, m.swagger)
  sub(w, 2, m.info, writeInfo)
  str(w, 3, m.host)
  str(w, 4, m.basePath)
  strs(w, 5, m.schemes)
  strs(w, 6, m.consumes)
  strs(w, 7, m.produces)
  sub(w, 8, m.paths, writePaths)
  sub(w, 9, m.definitions, (w, d) => named(w, 1, d, (w, v) => sub(w, 2, v, writeSchema)))
  sub(w, 10, m.parameters, (w, d) => named(w, 1, d, (w, v) => sub(w, 2, v, writeParameter)))
  sub(w, 11, m.responses, (w, d) => named(w, 1, d, (w, v) => sub(w, 2, v, writeResponse)))
  if (Array.isArray(m.security)) for (const item of m.security) sub(w, 12, item, writeSecurityRequirement)
  sub(w, 13, m.securityDefinitions, (w, d) => named(w, 1, d, (w, v) => sub(w, 2, v, writeSecurityDefinitionsItem)))
  if (Array.isArray(m.tags)) for (const item of m.tags) sub(w, 14, item, writeTag)
  sub(w, 15, m.externalDocs, writeExternalDocs)
  extensions(w, 16, m)
}

function writeInfo(w: Writer, m: Json): void {
  str(w, 1, m.title)
  str(w, 2, m.version)
  str(w, 3, m.description)
  str(w, 4, m.termsOfService)
  sub(w, 5, m.contact, (w, c) => {
    str(w, 1, c.name)
    str(w, 2, c.url)
    str(w, 3, c.email)
    extensions(w, 4, c)
  })
  sub(w, 6, m.license, (w, l) => {
    str(w, 1, l.name)
    str(w, 2, l.url)
    extensions(w, 3, l)
  })
  extensions(w, 7, m)
}

function writeExternalDocs(w: Writer, m: Json): void {
  str(w, 1, m.description)
  str(w, 2, m.url)
  extensions(w, 3, m)
}

function writeTag(w: Writer, m: Json): void {
  str(w, 1, m.name)
  str(w, 2, m.description)
  sub(w, 3, m.externalDocs, writeExternalDocs)
  extensions(w, 4, m)
}

function writePaths(w: Writer, m: Json): void {
  extensions(w, 1, m)
  named(w, 2, m, (w, v) => sub(w, 2, v, writePathItem), (key) => key.startsWith('/'))
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const

function writePathItem(w: Writer, m: Json): void {
  str(w, 1, m.$ref)
  METHODS.forEach((method, i) => sub(w, 2 + i, m[method], writeOperation))
  parametersItems(w, 9, m.parameters)
  extensions(w, 10, m)
}

function writeOperation(w: Writer, m: Json): void {
  strs(w, 1, m.tags)
  str(w, 2, m.summary)
  str(w, 3, m.description)
  sub(w, 4, m.externalDocs, writeExternalDocs)
  str(w, 5, m.operationId)
  strs(w, 6, m.produces)
  strs(w, 7, m.consumes)
  parametersItems(w, 8, m.parameters)
  sub(w, 9, m.responses, writeResponses)
  strs(w, 10, m.schemes)
  bool(w, 11, m.deprecated)
  if (Array.isArray(m.security)) for (const item of m.security) sub(w, 12, item, writeSecurityRequirement)
  extensions(w, 13, m)
}

function writeSecurityRequirement(w: Writer, m: Json): void {
  named(w, 1, m, (w, v) => message(w, 2, () => strs(w, 1, v)))
}

// ParametersItem {Parameter parameter = 1 | JsonReference json_reference = 2}
function parametersItems(w: Writer, field: number, v: unknown): void {
  if (!Array.isArray(v)) return
  for (const item of v) {
    message(w, field, () => {
      if (fits(item, ['$ref'], null)) message(w, 2, () => writeJsonReference(w, item))
      else if (isMap(item)) message(w, 1, () => writeParameter(w, item))
    })
  }
}

function writeJsonReference(w: Writer, m: Json): void {
  str(w, 1, m.$ref)
  str(w, 2, m.description)
}

const BODY_KEYS = ['description', 'in', 'name', 'required', 'schema']
const VALIDATION_KEYS = ['collectionFormat', 'default', 'description', 'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'format', 'in', 'items', 'maxItems', 'maxLength', 'maximum', 'minItems', 'minLength', 'minimum', 'multipleOf', 'name', 'pattern', 'required', 'type', 'uniqueItems']
const TYPES = ['string', 'number', 'boolean', 'integer', 'array']
const FORMATS = ['csv', 'ssv', 'tsv', 'pipes']

// Parameter {BodyParameter body_parameter = 1 | NonBodyParameter non_body_parameter = 2}
function writeParameter(w: Writer, m: Json): void {
  const nonBody = nonBodyKind(m)
  if (nonBody) {
    message(w, 2, () => message(w, nonBody.field, () => writeParameterSubSchema(w, m, nonBody.allowEmptyValue)))
  } else if (fits(m, ['in', 'name', 'schema'], BODY_KEYS, {in: ['body']})) {
    message(w, 1, () => {
      str(w, 1, m.description)
      str(w, 2, m.name)
      str(w, 3, m.in)
      bool(w, 4, m.required)
      sub(w, 5, m.schema, writeSchema)
      extensions(w, 6, m)
    })
  }
}

/** NonBodyParameter {header = 1 | form_data = 2 | query = 3 | path = 4}: the one whose `in` the parameter has */
function nonBodyKind(m: Json): {field: number; allowEmptyValue: boolean} | undefined {
  const kinds = [
    {field: 1, in: 'header', allowEmptyValue: false, types: TYPES, formats: FORMATS, required: [] as string[]},
    {field: 2, in: 'formData', allowEmptyValue: true, types: [...TYPES, 'file'], formats: [...FORMATS, 'multi'], required: []},
    {field: 3, in: 'query', allowEmptyValue: true, types: TYPES, formats: [...FORMATS, 'multi'], required: []},
    {field: 4, in: 'path', allowEmptyValue: false, types: TYPES, formats: FORMATS, required: ['required']},
  ]
  let found: {field: number; allowEmptyValue: boolean} | undefined
  for (const kind of kinds) {
    const allowed = kind.allowEmptyValue ? [...VALIDATION_KEYS, 'allowEmptyValue'] : VALIDATION_KEYS
    if (fits(m, kind.required, allowed, {in: [kind.in], type: kind.types, collectionFormat: kind.formats})) found = kind
  }
  return found
}

/** Header/FormData/Query/PathParameterSubSchema: required, in, description, name, [allow_empty_value], then
 *  the validation keywords and the extensions */
function writeParameterSubSchema(w: Writer, m: Json, allowEmptyValue: boolean): void {
  bool(w, 1, m.required)
  str(w, 2, m.in)
  str(w, 3, m.description)
  str(w, 4, m.name)
  if (allowEmptyValue) bool(w, 5, m.allowEmptyValue)
  const next = writeValidations(w, m, allowEmptyValue ? 6 : 5)
  extensions(w, next, m)
}

/** type, format, items, collection_format, default, maximum, exclusive_maximum, minimum, exclusive_minimum,
 *  max_length, min_length, pattern, max_items, min_items, unique_items, enum, multiple_of: numbered from
 *  `first` on; returns the next field number */
function writeValidations(w: Writer, m: Json, first: number): number {
  str(w, first, m.type)
  str(w, first + 1, m.format)
  sub(w, first + 2, m.items, writePrimitivesItems)
  str(w, first + 3, m.collectionFormat)
  any(w, first + 4, m.default)
  double(w, first + 5, m.maximum)
  bool(w, first + 6, m.exclusiveMaximum)
  double(w, first + 7, m.minimum)
  bool(w, first + 8, m.exclusiveMinimum)
  int64(w, first + 9, m.maxLength)
  int64(w, first + 10, m.minLength)
  str(w, first + 11, m.pattern)
  int64(w, first + 12, m.maxItems)
  int64(w, first + 13, m.minItems)
  bool(w, first + 14, m.uniqueItems)
  anys(w, first + 15, m.enum)
  double(w, first + 16, m.multipleOf)
  return first + 17
}

function writePrimitivesItems(w: Writer, m: Json): void {
  extensions(w, writeValidations(w, m, 1), m)
}

function writeHeader(w: Writer, m: Json): void {
  str(w, writeValidations(w, m, 1), m.description)
  extensions(w, 19, m)
}

function writeResponses(w: Writer, m: Json): void {
  named(w, 1, m, (w, v) => sub(w, 2, v, writeResponseValue), (key) => /^([0-9]{3})$|^(default)$/.test(key))
  extensions(w, 2, m)
}

// ResponseValue {Response response = 1 | JsonReference json_reference = 2}
function writeResponseValue(w: Writer, m: Json): void {
  if (fits(m, ['$ref'], null)) message(w, 2, () => writeJsonReference(w, m))
  else message(w, 1, () => writeResponse(w, m))
}

function writeResponse(w: Writer, m: Json): void {
  str(w, 1, m.description)
  // SchemaItem {Schema schema = 1 | FileSchema file_schema = 2}
  sub(w, 2, m.schema, (w, s) => {
    const file = ['default', 'description', 'example', 'externalDocs', 'format', 'readOnly', 'required', 'title', 'type']
    if (fits(s, ['type'], file, {type: ['file']})) message(w, 2, () => writeFileSchema(w, s))
    else message(w, 1, () => writeSchema(w, s))
  })
  sub(w, 3, m.headers, (w, h) => named(w, 1, h, (w, v) => sub(w, 2, v, writeHeader)))
  sub(w, 4, m.examples, (w, e) => named(w, 1, e, (w, v) => any(w, 2, v)))
  extensions(w, 5, m)
}

function writeFileSchema(w: Writer, m: Json): void {
  str(w, 1, m.format)
  str(w, 2, m.title)
  str(w, 3, m.description)
  any(w, 4, m.default)
  strs(w, 5, m.required)
  str(w, 6, m.type)
  bool(w, 7, m.readOnly)
  sub(w, 8, m.externalDocs, writeExternalDocs)
  any(w, 9, m.example)
  extensions(w, 10, m)
}

function writeSchema(w: Writer, m: Json): void {
  str(w, 1, m.$ref)
  str(w, 2, m.format)
  str(w, 3, m.title)
  str(w, 4, m.description)
  any(w, 5, m.default)
  double(w, 6, m.multipleOf)
  double(w, 7, m.maximum)
  bool(w, 8, m.exclusiveMaximum)
  double(w, 9, m.minimum)
  bool(w, 10, m.exclusiveMinimum)
  int64(w, 11, m.maxLength)
  int64(w, 12, m.minLength)
  str(w, 13, m.pattern)
  int64(w, 14, m.maxItems)
  int64(w, 15, m.minItems)
  bool(w, 16, m.uniqueItems)
  int64(w, 17, m.maxProperties)
  int64(w, 18, m.minProperties)
  if (Array.isArray(m.required)) strs(w, 19, m.required)
  anys(w, 20, m.enum)
  // AdditionalPropertiesItem {Schema schema = 1 | bool boolean = 2}
  const additional = m.additionalProperties
  if (isMap(additional)) message(w, 21, () => message(w, 1, () => writeSchema(w, additional)))
  else if (typeof additional === 'boolean') message(w, 21, () => {
    w.tag(2, VARINT)
    w.uint(additional ? 1 : 0)
  })
  // TypeItem {repeated string value = 1}: one type or several
  if (m.type !== undefined) message(w, 22, () => strs(w, 1, Array.isArray(m.type) ? m.type : [m.type]))
  // ItemsItem {repeated Schema schema = 1}: gnostic reads a single schema only
  if (m.items !== undefined) message(w, 23, () => sub(w, 1, isMap(m.items) ? m.items : undefined, writeSchema))
  if (Array.isArray(m.allOf)) for (const item of m.allOf) sub(w, 24, item, writeSchema)
  sub(w, 25, m.properties, (w, p) => named(w, 1, p, (w, v) => sub(w, 2, v, writeSchema)))
  str(w, 26, m.discriminator)
  bool(w, 27, m.readOnly)
  sub(w, 28, m.xml, (w, x) => {
    str(w, 1, x.name)
    str(w, 2, x.namespace)
    str(w, 3, x.prefix)
    bool(w, 4, x.attribute)
    bool(w, 5, x.wrapped)
    extensions(w, 6, x)
  })
  sub(w, 29, m.externalDocs, writeExternalDocs)
  any(w, 30, m.example)
  extensions(w, 31, m)
}

// SecurityDefinitionsItem {basic = 1 | api_key = 2 | oauth2 implicit = 3 | password = 4 | application = 5 | access code = 6}
function writeSecurityDefinitionsItem(w: Writer, m: Json): void {
  const oauth2 = (flow: string, required: string[], allowed: string[]) =>
    fits(m, ['flow', 'type', ...required], ['description', 'flow', 'scopes', 'type', ...allowed], {type: ['oauth2'], flow: [flow]})
  const scopes = (field: number) => sub(w, field, m.scopes, (w, s) => named(w, 1, s, (w, v) => str(w, 2, v)))
  let kind = 0
  if (fits(m, ['type'], ['description', 'type'], {type: ['basic']})) kind = 1
  if (fits(m, ['in', 'name', 'type'], ['description', 'in', 'name', 'type'], {type: ['apiKey'], in: ['header', 'query']})) kind = 2
  if (oauth2('implicit', ['authorizationUrl'], ['authorizationUrl'])) kind = 3
  if (oauth2('password', ['tokenUrl'], ['tokenUrl'])) kind = 4
  if (oauth2('application', ['tokenUrl'], ['tokenUrl'])) kind = 5
  if (oauth2('accessCode', ['authorizationUrl', 'tokenUrl'], ['authorizationUrl', 'tokenUrl'])) kind = 6
  if (kind === 0) return
  message(w, kind, () => {
    str(w, 1, m.type)
    if (kind === 1) {
      str(w, 2, m.description)
      extensions(w, 3, m)
    } else if (kind === 2) {
      str(w, 2, m.name)
      str(w, 3, m.in)
      str(w, 4, m.description)
      extensions(w, 5, m)
    } else {
      str(w, 2, m.flow)
      scopes(3)
      let next = 4
      if (kind === 3 || kind === 6) str(w, next++, m.authorizationUrl)
      if (kind !== 3) str(w, next++, m.tokenUrl)
      str(w, next++, m.description)
      extensions(w, next, m)
    }
  })
}

// ---------- YAML: a value as go-yaml v3 marshals it (gnostic's compiler.Marshal) ----------

const BEST_INDENT = 4

/** YAML text of a JSON value: block style, 4-space indents (2 inside a sequence item), plain scalars where
 *  they read back as the same string, single or double quotes otherwise. */
export function toYAML(value: unknown): string {
  const out: string[] = []
  emitNode(out, value, -1, 'root')
  return out.join('')
}

type Context = 'root' | 'mapping' | 'sequence'

function childIndent(indent: number, context: Context): number {
  if (indent < 0) return 0
  if (context === 'sequence') return indent + 2
  return BEST_INDENT * Math.floor((indent + BEST_INDENT) / BEST_INDENT)
}

/** writes `value` where the cursor is (after `key:`, `- ` or at the start), ending with a newline */
function emitNode(out: string[], value: unknown, indent: number, context: Context): void {
  if (Array.isArray(value)) {
    if (value.length === 0) return void out.push(context === 'mapping' ? ' []\n' : '[]\n')
    const at = childIndent(indent, context)
    if (context === 'mapping') out.push('\n')
    value.forEach((item, i) => {
      if (i > 0 || context === 'mapping') out.push(' '.repeat(at))
      out.push('- ')
      emitNode(out, item, at, 'sequence')
    })
    return
  }
  if (isMap(value)) {
    const entries = Object.entries(value)
    if (entries.length === 0) return void out.push(context === 'mapping' ? ' {}\n' : '{}\n')
    const at = childIndent(indent, context)
    if (context === 'mapping') out.push('\n')
    entries.forEach(([key, item], i) => {
      if (i > 0 || context === 'mapping') out.push(' '.repeat(at))
      out.push(scalar(key, at, 'key'), ':')
      emitNode(out, item, at, 'mapping')
    })
    return
  }
  if (context === 'mapping') out.push(' ')
  out.push(scalar(value, indent, context), '\n')
}

/** a scalar's text: numbers, booleans and null as JSON writes them; strings plain, quoted or literal */
function scalar(v: unknown, indent: number, context: Context | 'key'): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean' || typeof v === 'number') return String(v)
  const s = String(v)
  if (s.includes('\n')) return context !== 'key' && allPrintable(s) && !/ \n|\n | $/.test(s) ? literal(s, indent, context) : doubleQuoted(s)
  if (resolvesToNonString(s) || !allPrintable(s)) return doubleQuoted(s)
  return plainAllowed(s) ? s : `'${s.replace(/'/g, "''")}'`
}

const INT = /^[-+]?(0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|0[0-7_]+)$/
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
const SPECIAL = new Set(['~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '.nan', '.NaN', '.NAN'])

/** go-yaml v3's resolve: would the plain text read back as null, a boolean or a number? */
function resolvesToNonString(s: string): boolean {
  return s === '' || SPECIAL.has(s) || INT.test(s) || FLOAT.test(s)
}

function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || c === 0x85 || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) || c >= 0x10000
}

function allPrintable(s: string): boolean {
  for (const ch of s) if (!isPrintable(ch.codePointAt(0)!) || ch === '\u0085' || ch === '\u2028' || ch === '\u2029') return false
  return true
}

/** libyaml's analysis of a single-line printable scalar: may it be written plain in block context? */
function plainAllowed(s: string): boolean {
  if (s.startsWith('---') || s.startsWith('...')) return false
  if (s.startsWith(' ') || s.endsWith(' ')) return false
  const blank = (i: number) => i >= s.length || s[i] === ' ' || s[i] === '\t'
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) return false
      if ((c === '?' || c === ':' || c === '-') && blank(i + 1)) return false
    } else {
      if (c === ':' && blank(i + 1)) return false
      if (c === '#' && blank(i - 1)) return false
    }
  }
  return true
}

const ESCAPES: Record<string, string> = {
  '\0': '\\0', '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\x0b': '\\v', '\f': '\\f', '\r': '\\r',
  '\x1b': '\\e', '"': '\\"', '\\': '\\\\', '\u0085': '\\N', '\u2028': '\\L', '\u2029': '\\P',
}

function doubleQuoted(s: string): string {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (ESCAPES[ch] !== undefined) out += ESCAPES[ch]
    else if (!isPrintable(c) || c === 0xfeff) {
      const hex = c.toString(16).toUpperCase()
      out += c <= 0xff ? `\\x${hex.padStart(2, '0')}` : c <= 0xffff ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`
    } else out += ch
  }
  return `${out}"`
}

/** a literal block scalar (|-, |, |+), its lines indented one level deeper */
function literal(s: string, indent: number, context: Context): string {
  const at = indent < 0 ? BEST_INDENT : childIndent(indent, context)
  const trailing = /\n*$/.exec(s)![0].length
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+'
  const hint = s.startsWith(' ') || s.startsWith('\n') ? String(BEST_INDENT) : ''
  const lines = (trailing ? s.slice(0, -1) : s).split('\n')
  return `|${hint}${chomp}\n${lines.map((line) => (line === '' ? '' : ' '.repeat(at) + line)).join('\n')}`
}
