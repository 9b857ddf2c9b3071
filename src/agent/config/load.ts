// Loading the agent configuration: `--config FILE`, then the drop-ins of `--config-dir DIR` (files
// ending in `.conf`, in lexical order, as the kubelet reads its drop-in directory), then flags.
// Each document is an `agent.config.orch.io/v1beta1` AgentConfiguration (YAML or JSON), checked
// against the schema: an unknown field, a wrong type, a bad duration or enum value, or a wrong
// apiVersion/kind is an AgentConfigError whose one-line message names the file and the field.
// Merge rules (the seed's table): a scalar, also inside an embedded structure, is overridden on its
// own; a list is replaced whole; a map of scalars is merged per key; a map of lists is replaced per key.
// Durations are kept in Go's form (`5m0s`); settingsFrom (cli/agent.ts) turns them into milliseconds.
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {DurationParseError, parseDuration} from '../../machinery/duration.js'
import {AGENT_CONFIG_API_VERSION, AGENT_CONFIG_FIELDS, AGENT_CONFIG_KIND, defaultConfiguration, type Field, type FieldType} from './schema.js'
import {dumpYaml, loadYaml} from '../../machinery/go-yaml.js'
import {quantityError} from '../../machinery/quantity.js'
import {goDuration} from '../../machinery/duration.js'

export class AgentConfigError extends Error {}

export type AgentConfiguration = Record<string, any>

type Plain = Record<string, unknown>

const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value)

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`
}

/** Checks a value against its type; returns it normalised (durations in Go form). */
function checkValue(type: FieldType, value: unknown, path: string): unknown {
  const wrong = (what: string): never => {
    throw new AgentConfigError(`${path}: must be ${what}, not ${describe(value)}`)
  }
  switch (type.kind) {
    case 'string':
      return typeof value === 'string' ? value : wrong('a string')
    case 'boolean':
      return typeof value === 'boolean' ? value : wrong('a boolean')
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return wrong('an integer')
      if (type.min !== undefined && value < type.min) throw new AgentConfigError(`${path}: must be at least ${type.min}, not ${value}`)
      if (type.max !== undefined && value > type.max) throw new AgentConfigError(`${path}: must be at most ${type.max}, not ${value}`)
      return value
    }
    case 'duration': {
      if (typeof value !== 'string') return wrong('a duration such as 30s or 5m0s')
      let ms: number
      try {
        ms = parseDuration(value)
      } catch (error) {
        if (error instanceof DurationParseError) throw new AgentConfigError(`${path}: ${error.message}`)
        throw error
      }
      if (type.min !== undefined && ms < parseDuration(type.min)) throw new AgentConfigError(`${path}: must be at least ${type.min}, not ${value}`)
      if (type.max !== undefined && ms > parseDuration(type.max)) throw new AgentConfigError(`${path}: must be at most ${type.max}, not ${value}`)
      return goDuration(ms)
    }
    case 'quantity': {
      if (typeof value !== 'string') return wrong('a quantity such as 10Mi')
      const problem = quantityError(value)
      if (problem) throw new AgentConfigError(`${path}: ${problem}`)
      return value
    }
    case 'enum':
      if (typeof value !== 'string' || !type.values.includes(value)) throw new AgentConfigError(`${path}: must be one of ${type.values.join(', ')}, not ${describe(value)}`)
      return value
    case 'list':
      if (!Array.isArray(value)) return wrong('a list')
      return value.map((item, index) => checkValue(type.of, item, `${path}[${index}]`))
    case 'map': {
      if (!isPlain(value)) return wrong('a map')
      const out: Plain = {}
      for (const [key, item] of Object.entries(value)) out[key] = checkValue({kind: type.of}, item, `${path}.${key}`)
      return out
    }
    case 'mapOfLists': {
      if (!isPlain(value)) return wrong('a map of lists of strings')
      const out: Plain = {}
      for (const [key, item] of Object.entries(value)) out[key] = checkValue({kind: 'list', of: {kind: 'string'}}, item, `${path}.${key}`)
      return out
    }
    case 'struct':
      if (!isPlain(value)) return wrong('an object')
      return checkFields(type.fields, value, path)
  }
}

function checkFields(fields: Record<string, Field>, value: Plain, prefix: string): Plain {
  const out: Plain = {}
  for (const [key, item] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key
    const field = fields[key]
    if (!field) throw new AgentConfigError(`unknown field "${path}"`)
    if (item === null || item === undefined) continue
    out[key] = checkValue(field.type, item, path)
  }
  return out
}

/** Parses and checks one configuration document; errors name the file. */
export function parseAgentConfiguration(text: string, source: string): Plain {
  let document: unknown
  try {
    document = loadYaml(text, {json: false})
  } catch (error) {
    throw new AgentConfigError(`agent configuration ${source}: ${(error as Error).message.split('\n')[0]}`)
  }
  if (document === null || document === undefined) document = {}
  if (!isPlain(document)) throw new AgentConfigError(`agent configuration ${source}: must be an ${AGENT_CONFIG_KIND} object`)
  const {apiVersion, kind, ...fields} = document
  if (apiVersion !== AGENT_CONFIG_API_VERSION || kind !== AGENT_CONFIG_KIND) {
    throw new AgentConfigError(`agent configuration ${source}: apiVersion/kind must be ${AGENT_CONFIG_API_VERSION}/${AGENT_CONFIG_KIND}, not ${apiVersion ?? '(none)'}/${kind ?? '(none)'}`)
  }
  try {
    return checkFields(AGENT_CONFIG_FIELDS, fields, '')
  } catch (error) {
    if (error instanceof AgentConfigError) throw new AgentConfigError(`agent configuration ${source}: ${error.message}`)
    throw error
  }
}

/** Merges `over` into `base` by the seed's rules (see the header); returns a new object. */
export function mergeConfiguration(base: Plain, over: Plain, fields: Record<string, Field> = AGENT_CONFIG_FIELDS): Plain {
  const out: Plain = {...base}
  for (const [key, value] of Object.entries(over)) {
    const type = fields[key]?.type
    if (type?.kind === 'struct' && isPlain(value)) out[key] = mergeConfiguration(isPlain(base[key]) ? base[key] : {}, value, type.fields)
    else if ((type?.kind === 'map' || type?.kind === 'mapOfLists') && isPlain(value)) out[key] = {...(isPlain(base[key]) ? base[key] : {}), ...structuredClone(value)}
    else out[key] = structuredClone(value)
  }
  return out
}

/** The drop-in files of a directory: `*.conf`, lexical order. */
export function dropInFiles(dir: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch (error) {
    throw new AgentConfigError(`agent configuration directory ${dir}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (error as Error).message}`)
  }
  return names
    .filter((name) => name.endsWith('.conf'))
    .sort()
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
}

function readDocument(path: string): Plain {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new AgentConfigError(`agent configuration ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (error as Error).message}`)
  }
  return parseAgentConfiguration(text, path)
}

/** The merged configuration: defaults, then --config, then each drop-in; `sources` lists the files read. */
export function loadAgentConfiguration(options: {configFile?: string; configDir?: string}): {config: AgentConfiguration; sources: string[]} {
  const sources: string[] = []
  let merged: Plain = {}
  if (options.configFile) {
    merged = readDocument(options.configFile)
    sources.push(options.configFile)
  }
  if (options.configDir) {
    for (const file of dropInFiles(options.configDir)) {
      merged = mergeConfiguration(merged, readDocument(file))
      sources.push(file)
    }
  }
  return {config: mergeConfiguration(defaultConfiguration(), merged), sources}
}

/** Flags win over files (as the kubelet's command line does); overrides are checked like a document. */
export function applyFlagOverrides(config: AgentConfiguration, overrides: Plain): AgentConfiguration {
  const checked = checkFields(AGENT_CONFIG_FIELDS, overrides, '')
  return mergeConfiguration(config, checked)
}

/** The configuration as YAML, apiVersion and kind first, fields in the schema's order. */
export function printAgentConfiguration(config: AgentConfiguration): string {
  const ordered = (fields: Record<string, Field>, value: Plain): Plain => {
    const out: Plain = {}
    for (const [key, field] of Object.entries(fields)) {
      if (!(key in value)) continue
      out[key] = field.type.kind === 'struct' && isPlain(value[key]) ? ordered(field.type.fields, value[key]) : value[key]
    }
    return out
  }
  return dumpYaml({apiVersion: AGENT_CONFIG_API_VERSION, kind: AGENT_CONFIG_KIND, ...ordered(AGENT_CONFIG_FIELDS, config)}, {sortKeys: false})
}
