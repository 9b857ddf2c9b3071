// YAML as Kubernetes reads and writes it. Kubernetes (the API server's YAML serializer, kubectl, the
// kubelet's config and static pods, client-go's kubeconfig) goes through sigs.k8s.io/yaml over go-yaml v2,
// which resolves unquoted scalars by YAML 1.1's rules, not YAML 1.2's: `0644` is the octal 420 (a volume's
// defaultMode), `yes`/`on`/`y` are true, `1_000` is 1000, and a timestamp stays a string. js-yaml's own
// schemas follow YAML 1.2 (and its default one turns timestamps into Dates), so orch reads and writes every
// YAML text with this schema instead.
import * as yaml from 'js-yaml'
import {goFloat as formatGoFloat} from './go-converter.js'

const TRUE_WORDS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'])
const FALSE_WORDS = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'])
const NULL_WORDS = new Set(['', '~', 'null', 'Null', 'NULL'])
const FLOAT_WORDS = new Map<string, number>([
  ...['.nan', '.NaN', '.NAN'].map((word) => [word, NaN] as const),
  ...['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'].map((word) => [word, Infinity] as const),
  ...['-.inf', '-.Inf', '-.INF'].map((word) => [word, -Infinity] as const),
])
/** go-yaml's yamlStyleFloat */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
/** what strconv.ParseInt(s, 0, 64) reads: a sign, then hex, octal (0o or a leading 0), binary or decimal */
const GO_INTEGER = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oObB][0-7]+|0[0-7]*|[1-9][0-9]*)$/
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const UINT64_MAX = 2n ** 64n - 1n

type Resolved = {tag: 'null'; value: null} | {tag: 'bool'; value: boolean} | {tag: 'int' | 'float'; value: number}

function bigIntOf(digits: string): bigint | undefined {
  if (/^0[bB]/.test(digits) && !/^0[bB][01]+$/.test(digits)) return undefined
  // a leading 0 without a base letter is octal, as in Go
  return BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits)
}

/** go-yaml v2's resolve() of a plain scalar; undefined for a string. */
function resolvePlain(text: string): Resolved | undefined {
  if (NULL_WORDS.has(text)) return {tag: 'null', value: null}
  if (TRUE_WORDS.has(text)) return {tag: 'bool', value: true}
  if (FALSE_WORDS.has(text)) return {tag: 'bool', value: false}
  const word = FLOAT_WORDS.get(text)
  if (word !== undefined) return {tag: 'float', value: word}
  const first = text[0]
  if (first === '.') {
    return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? {tag: 'float', value: Number(text)} : undefined
  }
  if (first !== '+' && first !== '-' && !(first >= '0' && first <= '9')) return undefined
  const plain = text.includes('_') ? text.replaceAll('_', '') : text
  const integer = GO_INTEGER.exec(plain)
  if (integer) {
    const magnitude = bigIntOf(integer[2])
    if (magnitude !== undefined) {
      const value = integer[1] === '-' ? -magnitude : magnitude
      // ParseInt's range, then ParseUint's (which takes no sign); past both, a decimal is still a float
      if ((value >= INT64_MIN && value <= INT64_MAX) || (integer[1] === '' && value <= UINT64_MAX)) {
        return {tag: 'int', value: Number(value)}
      }
    }
  }
  if (YAML_STYLE_FLOAT.test(plain)) {
    const value = Number(plain)
    // strconv.ParseFloat fails on overflow: then the text stays a string
    if (Number.isFinite(value)) return {tag: 'float', value}
  }
  return undefined
}

/** JSON, which every YAML text becomes on its way in, has no NaN or infinities (Go: json.Marshal fails). */
function jsonNumber(value: number): number {
  if (Number.isFinite(value)) return value
  throw new yaml.YAMLException(`json: unsupported value: ${Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf'}`)
}

/** strconv.FormatFloat(value, 'g', -1, 64), as go-yaml writes a float that is not a whole number. */
export function goFloatText(value: number): string {
  if (Number.isNaN(value)) return '.nan'
  if (!Number.isFinite(value)) return value > 0 ? '.inf' : '-.inf'
  return formatGoFloat(value)
}

function scalarType(tag: Resolved['tag'], options: {predicate: (value: unknown) => boolean; represent: (value: unknown) => string}): yaml.Type {
  return new yaml.Type(`tag:yaml.org,2002:${tag}`, {
    kind: 'scalar',
    resolve: (text: string | null) => (text === null ? tag === 'null' : resolvePlain(text)?.tag === tag),
    construct: (text: string | null) => {
      const resolved = text === null ? undefined : resolvePlain(text)
      if (resolved === undefined) return tag === 'null' ? null : text
      return typeof resolved.value === 'number' ? jsonNumber(resolved.value) : resolved.value
    },
    predicate: options.predicate,
    represent: options.represent,
  })
}

const goNull = scalarType('null', {predicate: (value) => value === null, represent: () => 'null'})
const goBool = scalarType('bool', {predicate: (value) => typeof value === 'boolean', represent: (value) => String(value)})
const goInt = scalarType('int', {predicate: (value) => Number.isInteger(value), represent: (value) => String(value)})
const goFloat = scalarType('float', {
  predicate: (value) => typeof value === 'number' && !Number.isInteger(value),
  represent: (value) => goFloatText(value as number),
})
/** `<<: *anchor` merges a mapping, as go-yaml does */
const merge = new yaml.Type('tag:yaml.org,2002:merge', {kind: 'scalar', resolve: (text: string | null) => text === '<<'})

/** go-yaml v2's resolution of plain scalars, over YAML's failsafe schema (strings, sequences, mappings). */
export const GO_YAML_SCHEMA = yaml.FAILSAFE_SCHEMA.extend({implicit: [goNull, goBool, goInt, goFloat, merge]})

/** go-yaml v2's parseTimestamp formats (2006-1-2T15:4:5.999999999Z07:00, its lower-case t and
 *  space-separated forms, 2006-1-2), with Go's ranges for each field */
const TIMESTAMP = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d{1,9})?))?$/

function isGoTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text)
  if (!match) return false
  const [, , month, day, h1, m1, s1, h2, m2, s2] = match
  const hour = Number(h1 ?? h2 ?? 0)
  const minute = Number(m1 ?? m2 ?? 0)
  const second = Number(s1 ?? s2 ?? 0)
  return Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= 31 && hour <= 23 && minute <= 59 && second <= 59
}

/** Only for writing: go-yaml's encoder double-quotes a string it would resolve as a timestamp, though
 *  its decoder gives such a plain scalar back as a string (for interface{} targets) */
const goTimestamp = new yaml.Type('tag:yaml.org,2002:timestamp', {kind: 'scalar', resolve: (text: string | null) => text !== null && isGoTimestamp(text), construct: (text: string) => text})
const GO_YAML_DUMP_SCHEMA = GO_YAML_SCHEMA.extend({implicit: [goTimestamp]})

const LETTER = /\p{L}/u
const DIGIT = /^[0-9]$/

/** The digit runs at index i compared as numbers (go-yaml's keyList), -1, 0 or 1. */
function digitRunOrder(a: string[], b: string[], i: number): number {
  let an = 0
  let bn = 0
  if (a[i] === '0' || b[i] === '0') {
    // a run that continues a nonzero number keeps its zeros significant
    for (let j = i - 1; j >= 0 && DIGIT.test(a[j]); j--) {
      if (a[j] !== '0') {
        an = 1
        bn = 1
        break
      }
    }
  }
  let ai = i
  let bi = i
  for (; ai < a.length && DIGIT.test(a[ai]); ai++) an = an * 10 + Number(a[ai])
  for (; bi < b.length && DIGIT.test(b[bi]); bi++) bn = bn * 10 + Number(b[bi])
  if (an !== bn) return an < bn ? -1 : 1
  if (ai !== bi) return ai < bi ? -1 : 1
  return a[i] < b[i] ? -1 : 1
}

/** The order go-yaml writes a mapping's keys in: letters by code point, a non-letter before a letter
 *  (after one, following a digit), and runs of digits as numbers ("item2" before "item10"). */
export function goYamlKeyOrder(left: string, right: string): number {
  const a = Array.from(left)
  const b = Array.from(right)
  let digits = false
  for (let i = 0; i < a.length && i < b.length; i++) {
    if (a[i] === b[i]) {
      digits = DIGIT.test(a[i])
      continue
    }
    const al = LETTER.test(a[i])
    const bl = LETTER.test(b[i])
    if (al && bl) return a[i].codePointAt(0)! < b[i].codePointAt(0)! ? -1 : 1
    if (al || bl) return (digits ? al : bl) ? -1 : 1
    return digitRunOrder(a, b, i)
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

interface LoadOptions {
  /** a repeated key keeps its last value, as go-yaml's non-strict decoding does (the server's strict
   *  checks report repeats separately); false: a repeated key is an error (the CLI's files) */
  json?: boolean
  listener?: yaml.LoadOptions['listener']
}

/** One YAML document as Kubernetes reads it. */
export function loadYaml(text: string, options: LoadOptions = {}): unknown {
  return refuseExcessiveAliasing(yaml.load(text, {schema: GO_YAML_SCHEMA, json: true, ...options}))
}

/** Every document of a YAML stream, as Kubernetes reads them. */
export function loadAllYaml(text: string, options: LoadOptions = {}): unknown[] {
  return yaml.loadAll(text, undefined, {schema: GO_YAML_SCHEMA, json: true, ...options}).map(refuseExcessiveAliasing)
}

const ALIAS_RATIO_RANGE_LOW = 400_000
const ALIAS_RATIO_RANGE_HIGH = 4_000_000

/** go-yaml v2's allowedAliasRatio: the share of a document's nodes that may come from aliases. */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= ALIAS_RATIO_RANGE_LOW) return 0.99
  if (decodeCount >= ALIAS_RATIO_RANGE_HIGH) return 0.1
  return 0.99 - (0.89 * (decodeCount - ALIAS_RATIO_RANGE_LOW)) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW)
}

/**
 * go-yaml v2's guard against alias bombs ("yaml: document contains excessive aliasing"): a few
 * hundred bytes of nested aliases expand to billions of nodes, which walking the document (to
 * decode, convert or check it) would take minutes over. js-yaml shares an aliased node rather than
 * copying it, so the expanded size is counted once per distinct node, and the document is refused as
 * go-yaml refuses it: over 100 nodes from aliases, over 1,000 in all, and more than the allowed ratio.
 */
function refuseExcessiveAliasing<T>(document: T): T {
  if (document === null || typeof document !== 'object') return document
  const expandedSize = new Map<object, number>()
  let distinct = 0
  const size = (node: unknown, depth: number): number => {
    if (node === null || typeof node !== 'object') return 1
    const known = expandedSize.get(node)
    if (known !== undefined) return known
    // as deep as this, the depth limits of the decoders refuse the document anyway
    if (depth > 10_000) return 1
    let total = 1
    let own = 1
    if (Array.isArray(node)) {
      for (const item of node) {
        total += size(item, depth + 1)
        if (item === null || typeof item !== 'object') own++
      }
    } else {
      for (const value of Object.values(node)) {
        // the key, and the value
        total += 1 + size(value, depth + 1)
        own += value === null || typeof value !== 'object' ? 2 : 1
      }
    }
    distinct += own
    expandedSize.set(node, total)
    return total
  }
  const decodeCount = size(document, 0)
  const aliasCount = decodeCount - distinct
  // (a deep enough bomb counts past any number: Infinity)
  if (!Number.isFinite(decodeCount) || (aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount))) {
    throw new yaml.YAMLException('document contains excessive aliasing')
  }
  return document
}

/** YAML as Kubernetes writes it (sigs.k8s.io/yaml's JSONToYAML): keys in go-yaml's order, strings it
 *  would read as something else (`"0644"`, `"yes"`, `"1_000"`, `"2026-01-01"`) double-quoted, no anchors, no folding. */
export function dumpYaml(value: unknown, options: yaml.DumpOptions = {}): string {
  return yaml.dump(value, {schema: GO_YAML_DUMP_SCHEMA, noRefs: true, lineWidth: -1, sortKeys: goYamlKeyOrder, quotingType: '"', noArrayIndent: true, ...options})
}
