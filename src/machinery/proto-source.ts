// The .proto sources of the kinds, generated from their declarations: Kubernetes' generated.proto files
// renamed (package k8s.io.api.core.v1 → orch.io.api.core.v1, k8s.io.apimachinery… → orch.io.apimachinery…),
// with Kubernetes' message names and field numbers, so that any protobuf library reads what the codec of
// protobuf.ts writes. The committed copies under proto/ are written by scripts/gen-proto.mjs:
//   npx tsc -p tsconfig.json && node scripts/gen-proto.mjs
// Field names are the JSON names; an embedded Go struct is a field named after its message
// (`optional ProbeHandler probeHandler = 1`, where Kubernetes says `handler`): names are not on the wire.
import {condition, labelSelector, listMeta, objectMeta} from '../api/meta.js'
import type {EmbeddedIn, Field, KindDeclaration, ObjectSchema, Schema} from '../api/types.js'
import {metaSchemas} from './protobuf-schemas.js'

interface Target {
  pkg: string
  file: string
}

const META: Target = {pkg: 'orch.io.apimachinery.pkg.apis.meta.v1', file: 'orch.io/apimachinery/meta/v1/generated.proto'}
const RUNTIME: Target = {pkg: 'orch.io.apimachinery.pkg.runtime', file: 'orch.io/apimachinery/runtime/generated.proto'}
const RESOURCE: Target = {pkg: 'orch.io.apimachinery.pkg.api.resource', file: 'orch.io/apimachinery/api/resource/generated.proto'}
const INTSTR: Target = {pkg: 'orch.io.apimachinery.pkg.util.intstr', file: 'orch.io/apimachinery/util/intstr/generated.proto'}

const HEADER = `// Generated from the kind declarations by src/machinery/proto-source.ts; do not edit.
// Regenerate: npx tsc -p tsconfig.json && node scripts/gen-proto.mjs

syntax = "proto2";
`

/** the messages written by hand: Kubernetes' own, with custom Go marshalling */
const FIXED: Record<string, {target: Target; messages: Record<string, string[]>}> = {
  runtime: {
    target: RUNTIME,
    messages: {
      RawExtension: ['optional bytes raw = 1;'],
      TypeMeta: ['optional string apiVersion = 1;', 'optional string kind = 2;'],
      Unknown: ['optional TypeMeta typeMeta = 1;', 'optional bytes raw = 2;', 'optional string contentEncoding = 3;', 'optional string contentType = 4;'],
    },
  },
  resource: {target: RESOURCE, messages: {Quantity: ['optional string string = 1;']}},
  intstr: {target: INTSTR, messages: {IntOrString: ['optional int64 type = 1;', 'optional int32 intVal = 2;', 'optional string strVal = 3;']}},
  meta: {
    target: META,
    messages: {
      Time: ['optional int64 seconds = 1;', 'optional int32 nanos = 2;'],
      MicroTime: ['optional int64 seconds = 1;', 'optional int32 nanos = 2;'],
      FieldsV1: ['optional bytes Raw = 1;'],
    },
  },
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1)

/** a struct's shape, to tell two messages of one name apart */
function shape(schema: ObjectSchema): string {
  return Object.entries(schema.fields)
    .map(([name, f]) => `${name}=${f.proto}:${f.type}${f.embeddedIn ? `@${f.embeddedIn.proto}` : ''}`)
    .join(',')
}

type Entry = [string, Field, EmbeddedIn | undefined]

class ProtoPackage {
  readonly messages = new Map<string, string[]>()
  readonly imports = new Set<string>()

  constructor(
    readonly target: Target,
    /** message names (and shapes) that live in meta/v1 and are referred to there */
    readonly foreign: Map<string, string> | undefined,
  ) {}

  ref(target: Target, name: string): string {
    if (target.file === this.target.file) return name
    this.imports.add(target.file)
    return `.${target.pkg}.${name}`
  }

  define(name: string, lines: readonly string[]): void {
    const known = this.messages.get(name)
    if (known && known.length > 0 && known.join('\n') !== lines.join('\n')) {
      throw new Error(`proto: two different messages named ${name} in ${this.target.pkg}`)
    }
    this.messages.set(name, [...lines])
  }

  /** the message of an object schema (defined here or in meta/v1): its type name */
  object(schema: ObjectSchema): string {
    const foreign = this.foreign?.get(schema.name)
    if (foreign !== undefined) {
      if (foreign !== shape(schema)) throw new Error(`proto: ${schema.name} differs from meta/v1 ${schema.name}`)
      return this.ref(META, schema.name)
    }
    const known = this.messages.get(schema.name)
    if (known && known.length === 0) return schema.name // being defined: a recursive reference
    if (!known) this.messages.set(schema.name, [])
    // defined again at each use, so that two different structs of one name are caught
    this.define(schema.name, this.body(schema.name, Object.entries(schema.fields).map(([n, f]) => [n, f, f.embeddedIn])))
    return schema.name
  }

  /** the field lines of a message, by number; embedded structs become messages of their own */
  body(message: string, entries: readonly Entry[]): string[] {
    const lines: Array<[number, string]> = []
    const groups = new Map<number, {name: string; entries: Entry[]}>()
    for (const [name, field, embedding] of entries) {
      if (!IDENTIFIER.test(name)) throw new Error(`proto: ${message}.${name} is not a protobuf field name`)
      if (!embedding) {
        lines.push([field.proto, this.field(message, name, field)])
        continue
      }
      const group = groups.get(embedding.proto) ?? {name: embedding.name, entries: []}
      group.entries.push([name, field, embedding.inner])
      groups.set(embedding.proto, group)
    }
    for (const [number, group] of groups) {
      this.define(group.name, this.body(group.name, group.entries))
      lines.push([number, `optional ${group.name} ${lowerFirst(group.name)} = ${number};`])
    }
    return lines.sort((a, b) => a[0] - b[0]).map(([, line]) => line)
  }

  field(message: string, name: string, field: Field): string {
    if (field.type === 'array') {
      if (field.items.type === 'array' || field.items.type === 'map') throw new Error(`proto: ${message}.${name}: nested lists`)
      return `repeated ${this.type(message, field.items)} ${name} = ${field.proto};`
    }
    if (field.type === 'map') return `map<string, ${this.type(message, field.values)}> ${name} = ${field.proto};`
    return `optional ${this.type(message, field)} ${name} = ${field.proto};`
  }

  type(message: string, schema: Schema): string {
    switch (schema.type) {
      case 'string':
        return schema.format === 'byte' ? 'bytes' : 'string'
      case 'integer':
        return schema.format
      case 'number':
        return 'double'
      case 'boolean':
        return 'bool'
      case 'time':
        return this.ref(META, schema.micro ? 'MicroTime' : 'Time')
      case 'quantity':
        return this.ref(RESOURCE, 'Quantity')
      case 'int-or-string':
        return this.ref(INTSTR, 'IntOrString')
      case 'raw':
        return message === 'ManagedFieldsEntry' ? this.ref(META, 'FieldsV1') : this.ref(RUNTIME, 'RawExtension')
      case 'object':
        return this.object(schema)
      case 'array':
        // a list as a map's value: Kubernetes' ExtraValue
        if (schema.items.type !== 'string') throw new Error(`proto: ${message}: a map of lists of ${schema.items.type}`)
        this.define('ExtraValue', ['repeated string items = 1;'])
        return 'ExtraValue'
      case 'map':
        throw new Error(`proto: ${message}: a map of maps`)
    }
  }

  text(): string {
    const imports = [...this.imports].sort().map((file) => `import "${file}";\n`)
    const messages = [...this.messages.keys()].sort().map((name) => {
      const lines = this.messages.get(name)!.map((line) => `  ${line}\n`)
      return `message ${name} {\n${lines.join('')}}\n`
    })
    return [HEADER, `package ${this.target.pkg};\n`, ...(imports.length ? [imports.join('')] : []), ...messages].join('\n')
  }
}

function groupTarget(declaration: KindDeclaration): Target {
  const group = declaration.group === '' ? 'core' : declaration.group.split('.')[0]
  return {pkg: `orch.io.api.${group}.${declaration.version}`, file: `orch.io/api/${group}/${declaration.version}/generated.proto`}
}

/** The .proto files of `declarations` and of the apimachinery types they use, by path under proto/. */
export function protoSource(declarations: readonly KindDeclaration[]): Map<string, string> {
  const packages: ProtoPackage[] = []
  for (const {target, messages} of Object.values(FIXED)) {
    if (target === META) continue
    const p = new ProtoPackage(target, undefined)
    for (const [name, lines] of Object.entries(messages)) p.define(name, lines)
    packages.push(p)
  }

  const meta = new ProtoPackage(META, undefined)
  for (const [name, lines] of Object.entries(FIXED.meta.messages)) meta.define(name, lines)
  const metaRoots: Array<[string, ObjectSchema]> = []
  const visit = (schema: Schema): void => {
    if (schema.type === 'object') {
      if (!metaRoots.some(([name]) => name === schema.name)) metaRoots.push([schema.name, schema])
      for (const field of Object.values(schema.fields)) visit(field)
    } else if (schema.type === 'array') visit(schema.items)
    else if (schema.type === 'map') visit(schema.values)
  }
  for (const root of [objectMeta, listMeta, labelSelector, condition, ...metaSchemas]) {
    visit(root)
    meta.object(root)
  }
  packages.push(meta)
  const foreign = new Map(metaRoots.map(([name, schema]) => [name, shape(schema)]))

  const byFile = new Map<string, ProtoPackage>()
  for (const declaration of declarations) {
    const target = groupTarget(declaration)
    let p = byFile.get(target.file)
    if (!p) {
      p = new ProtoPackage(target, foreign)
      byFile.set(target.file, p)
      packages.push(p)
    }
    p.object(declaration.schema)
    p.define(`${declaration.kind}List`, [`optional ${p.ref(META, 'ListMeta')} metadata = 1;`, `repeated ${declaration.schema.name} items = 2;`])
  }

  return new Map(packages.sort((a, b) => a.target.file.localeCompare(b.target.file)).map((p) => [p.target.file, p.text()]))
}
