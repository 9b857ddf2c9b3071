// Type checking of policy expressions against the kinds a policy matches, for
// status.typeChecking.expressionWarnings: `object` and `oldObject` are typed by the kind's declared
// schema (every struct a CEL type with its escaped field names), so a misspelt field or a wrong
// comparison is found without evaluating anything.
import {Environment} from '@marcbachmann/cel-js'
import type {KindDeclaration, ObjectSchema, Schema} from '../../api/types.js'
import {registerAuthorizer} from './authorizer.js'
import {registerLibraries} from './libraries.js'
import {rewriteObjectInitialisers} from './object-syntax.js'
import {escapePropertyName} from './values.js'

type Env = InstanceType<typeof Environment>

/** Registers the CEL types of a schema's structs; returns the CEL type of `schema`. */
class TypeRegistrar {
  private readonly done = new Map<ObjectSchema, string>()
  private readonly names = new Set<string>()

  constructor(private readonly env: Env, private readonly prefix: string) {}

  typeOf(schema: Schema | undefined): string {
    if (!schema) return 'dyn'
    switch (schema.type) {
      case 'string':
      case 'time':
      case 'quantity':
        return 'string'
      case 'integer':
        return 'int'
      case 'number':
        return 'double'
      case 'boolean':
        return 'bool'
      case 'map':
        return `map<string, ${this.typeOf(schema.values)}>`
      case 'array':
        return `list<${this.typeOf(schema.items)}>`
      case 'object':
        return this.struct(schema)
      default:
        return 'dyn'
    }
  }

  private struct(schema: ObjectSchema): string {
    const known = this.done.get(schema)
    if (known) return known
    let name = `${this.prefix}${schema.name.replace(/[^A-Za-z0-9_]/g, '_')}`
    for (let n = 2; this.names.has(name); n++) name = `${this.prefix}${schema.name}${n}`
    this.names.add(name)
    // recursive schemas see themselves as dyn while their fields are typed
    this.done.set(schema, 'dyn')
    const fields: Record<string, string> = {}
    for (const [field, fieldSchema] of Object.entries(schema.fields)) {
      const escaped = escapePropertyName(field)
      if (escaped) fields[escaped] = this.typeOf(fieldSchema)
    }
    this.env.registerType(name, {fields})
    this.done.set(schema, name)
    return name
  }
}

const environments = new Map<string, Env>()

function environmentFor(declaration: KindDeclaration, hasParams: boolean, hasAuthorizer: boolean): Env {
  const key = `${declaration.group}/${declaration.version}/${declaration.kind}/${hasParams}/${hasAuthorizer}`
  let env = environments.get(key)
  if (env) return env
  env = new Environment({unlistedVariablesAreDyn: false, homogeneousAggregateLiterals: false, enableOptionalTypes: true})
  registerLibraries(env)
  registerAuthorizer(env, hasAuthorizer)
  const root: ObjectSchema = {
    ...declaration.schema,
    fields: {apiVersion: {type: 'string', proto: 0}, kind: {type: 'string', proto: 0}, ...declaration.schema.fields},
  }
  const objectType = new TypeRegistrar(env, 'T_').typeOf(root)
  env.registerVariable('object', objectType)
  env.registerVariable('oldObject', objectType)
  for (const name of ['request', 'namespaceObject', 'variables']) env.registerVariable(name, 'dyn')
  if (hasParams) env.registerVariable('params', 'dyn')
  environments.set(key, env)
  return env
}

/** The type error of `expression` against `declaration`, or undefined when it checks. */
export function typeCheck(expression: string, declaration: KindDeclaration, options: {kind: string; hasParams: boolean}): string | undefined {
  const source = options.kind === 'applyConfiguration' || options.kind === 'jsonPatch' ? rewriteObjectInitialisers(expression) : expression
  try {
    const result = environmentFor(declaration, options.hasParams, options.kind !== 'messageExpression').check(source)
    if (result.valid) return undefined
    return String(result.error?.message ?? result.error).split('\n')[0]
  } catch (error) {
    return String((error as Error).message).split('\n')[0]
  }
}
