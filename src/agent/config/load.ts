// Loading the agent configuration: `--config FILE`, then the drop-ins of `--config-dir DIR` (files
// ending in `.conf`, subdirectories included, in the order the kubelet's filepath.WalkDir visits them),
// then flags.
// Each document is an `agent.config.orch.io/v1beta1` AgentConfiguration (YAML or JSON), checked
// against the schema: an unknown field, a wrong type, a bad duration or enum value, or a wrong
// apiVersion/kind is an AgentConfigError whose one-line message names the file and the field.
// Merge rules (the seed's table, which a JSON merge patch follows; a null in a drop-in removes what
// earlier drop-ins set): a scalar, also inside an embedded structure, is overridden on its
// own; a list is replaced whole; a map of scalars is merged per key; a map of lists is replaced per key.
// Durations are kept in Go's form (`5m0s`); settingsFrom (cli/agent.ts) turns them into milliseconds.
import {lstatSync, readdirSync, readFileSync, type Dirent, type Stats} from 'node:fs'
import {join} from 'node:path'
import {DurationParseError, parseDuration} from '../../machinery/duration.js'
import {defaultZeroDurations, unknownFeatureGate, validationErrors} from './defaults.js'
import {AGENT_CONFIG_API_VERSION, AGENT_CONFIG_FIELDS, AGENT_CONFIG_KIND, defaultConfiguration, type Field, type FieldType} from './schema.js'
import {dumpYaml, loadYaml} from '../../machinery/go-yaml.js'
import {applyMergePatch} from '../../machinery/patch.js'
import {quantityError} from '../../machinery/quantity.js'
import {goDuration} from '../../machinery/duration.js'

export class AgentConfigError extends Error {}

export type AgentConfiguration = Record<string, any>

type Plain = Record<string, unknown>

const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value)

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`
}

/** What Go's decoder stores for a null map entry: the element type's zero value (`{PodsAPI: null}` is false). */
const ZERO = {string: '', boolean: false} as const

/** Checks a value against its type; returns it normalised (durations in Go form). */
function checkValue(type: FieldType, value: unknown, path: string, keepNull = false): unknown {
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
      for (const [key, item] of Object.entries(value)) out[key] = item === null ? (keepNull ? null : ZERO[type.of]) : checkValue({kind: type.of}, item, `${path}.${key}`)
      return out
    }
    case 'mapOfLists': {
      if (!isPlain(value)) return wrong('a map of lists of strings')
      const out: Plain = {}
      for (const [key, item] of Object.entries(value)) out[key] = item === null ? (keepNull ? null : []) : checkValue({kind: 'list', of: {kind: 'string'}}, item, `${path}.${key}`)
      return out
    }
    case 'struct':
      if (!isPlain(value)) return wrong('an object')
      return checkFields(type.fields, value, path, keepNull)
  }
}

function checkFields(fields: Record<string, Field>, value: Plain, prefix: string, keepNull = false): Plain {
  const out: Plain = {}
  for (const [key, item] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key
    const field = fields[key]
    if (!field) throw new AgentConfigError(`unknown field "${path}"`)
    if (item === undefined) continue
    if (item === null) {
      if (keepNull) out[key] = null
      continue
    }
    out[key] = checkValue(field.type, item, path, keepNull)
  }
  return out
}

/**
 * Parses and checks one configuration document; errors name the file. A null field is unset (left out,
 * so defaulted) and a null map entry is its zero value, as Go decodes them; in a drop-in (`keepNull`)
 * both nulls are kept, to remove what earlier drop-ins said (each drop-in is a JSON merge patch).
 */
export function parseAgentConfiguration(text: string, source: string, keepNull = false): Plain {
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
    return checkFields(AGENT_CONFIG_FIELDS, fields, '', keepNull)
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

/**
 * The drop-in files of a directory, as the kubelet's filepath.WalkDir finds them: the tree is walked
 * depth first, each directory's entries in byte order of their names (a subdirectory is walked where
 * its name sorts), and every entry that is not a directory and whose name ends in `.conf` is read.
 * Symbolic links are not followed into directories (nor is the directory itself when it is a link).
 */
export function dropInFiles(dir: string): string[] {
  const problem = (path: string, error: unknown): AgentConfigError =>
    new AgentConfigError(`agent configuration directory ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (error as Error).message}`)
  let root: Stats
  try {
    root = lstatSync(dir)
  } catch (error) {
    throw problem(dir, error)
  }
  if (!root.isDirectory()) return dir.endsWith('.conf') ? [dir] : []
  const files: string[] = []
  const walk = (path: string): void => {
    let entries: Dirent[]
    try {
      entries = readdirSync(path, {withFileTypes: true})
    } catch (error) {
      throw problem(path, error)
    }
    entries.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))
    for (const entry of entries) {
      const full = join(path, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith('.conf')) files.push(full)
    }
  }
  walk(dir)
  return files
}

function readDocument(path: string, keepNull = false): Plain {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new AgentConfigError(`agent configuration ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (error as Error).message}`)
  }
  return parseAgentConfiguration(text, path, keepNull)
}

/**
 * The merged configuration: the defaulted --config (a zero duration the kubelet defaults is unset: see
 * defaults.ts), then the drop-ins; `sources` lists the files read.
 * As the kubelet's mergeKubeletConfigurations: the drop-ins are merge patches applied in turn, and the
 * result is decoded over the main configuration, so a key a drop-in sets to null (removed by the patch)
 * keeps the main file's value, or its default (a map entry too: `featureGates: {PodsAPI: null}`).
 */
export function loadAgentConfiguration(options: {configFile?: string; configDir?: string}): {config: AgentConfiguration; sources: string[]} {
  const sources: string[] = []
  let main: Plain = {}
  if (options.configFile) {
    main = defaultZeroDurations(readDocument(options.configFile))
    sources.push(options.configFile)
  }
  let dropIns: Plain = {}
  if (options.configDir) {
    for (const file of dropInFiles(options.configDir)) {
      // a JSON merge patch (RFC 7386), as the kubelet's jsonpatch.MergePatch: a null removes the key
      dropIns = applyMergePatch(dropIns, readDocument(file, true)) as Plain
      sources.push(file)
    }
  }
  return {config: mergeConfiguration(mergeConfiguration(defaultConfiguration(), main), dropIns), sources}
}

/** Flags win over files (as the kubelet's command line does); overrides are checked like a document. */
export function applyFlagOverrides(config: AgentConfiguration, overrides: Plain): AgentConfiguration {
  const checked = checkFields(AGENT_CONFIG_FIELDS, overrides, '')
  return mergeConfiguration(config, checked)
}

/**
 * The kubelet's checks of the merged configuration (files and flags): an unknown feature gate first, then
 * the validation; one AgentConfigError, one line;
 * several problems are listed as the kubelet's aggregate error lists them (`[a, b]`).
 */
export function validateAgentConfiguration(config: AgentConfiguration): void {
  const gate = unknownFeatureGate(config.featureGates)
  if (gate) throw new AgentConfigError(`invalid configuration: unrecognized feature gate: ${gate}`)
  const errors = validationErrors(config)
  if (errors.length === 1) throw new AgentConfigError(errors[0])
  if (errors.length > 1) throw new AgentConfigError(`[${errors.join(', ')}]`)
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
