// Label selectors, matching k8s.io/apimachinery/pkg/labels: the string syntax of `?labelSelector=`
// and `kubectl -l` (parseLabelSelector) and the structured metav1.LabelSelector of Deployments,
// Services' owners, NetworkPolicies and so on (labelSelectorFromObject). Requirements are ANDed,
// kept sorted by key, and print in Kubernetes' canonical form. Error messages are Kubernetes' own.

import {aggregateFieldErrors, compareGoStrings, goQuote, invalid, notSupported, type FieldError} from './field-errors.js'
import {isQualifiedName, isValidLabelValue} from './validation.js'

/** A label or field selector that does not parse or validate. */
export class SelectorParseError extends Error {
  /** the field-level errors behind the message, when the failure was a validation one */
  readonly errors: readonly FieldError[]

  constructor(message: string, errors: readonly FieldError[] = []) {
    super(message)
    this.name = 'SelectorParseError'
    this.errors = errors
  }
}

/** Kubernetes' selection.Operator values, as they appear in messages and requirements. */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt'

const binaryOperators: readonly LabelOperator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt']
const validOperators: readonly LabelOperator[] = [...binaryOperators, 'exists', '!']

const minInt64 = -(2n ** 63n)
const maxInt64 = 2n ** 63n - 1n

/** Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits within int64; else null. */
function parseInt64(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null
  const n = BigInt(s)
  return n < minInt64 || n > maxInt64 ? null : n
}

/** One condition of a label selector: a key, an operator and (for most operators) values. */
export class LabelRequirement {
  readonly key: string
  readonly operator: LabelOperator
  /** the values as given (parsed `in`/`notin` sets come sorted and without duplicates) */
  readonly values: readonly string[]

  /** Use newLabelRequirement, which validates; this trusts its arguments. */
  constructor(key: string, operator: LabelOperator, values: readonly string[]) {
    this.key = key
    this.operator = operator
    this.values = Object.freeze([...values])
  }

  /**
   * Whether the labels satisfy this requirement: in/=/== need the key with one of the values,
   * notin/!= accept a missing key, gt/lt need an integer value on the right side of the bound.
   */
  matches(labels: Record<string, string> | undefined): boolean {
    const has = labels != null && Object.hasOwn(labels, this.key)
    const value = has ? labels[this.key]! : undefined
    switch (this.operator) {
      case 'in':
      case '=':
      case '==':
        return value !== undefined && this.values.includes(value)
      case 'notin':
      case '!=':
        return value === undefined || !this.values.includes(value)
      case 'exists':
        return has
      case '!':
        return !has
      case 'gt':
      case 'lt': {
        if (value === undefined || this.values.length !== 1) return false
        const actual = parseInt64(value)
        const bound = parseInt64(this.values[0]!)
        if (actual === null || bound === null) return false
        return this.operator === 'gt' ? actual > bound : actual < bound
      }
    }
  }

  /** Kubernetes' text for the requirement: `a=b`, `a in (x,y)`, `!a`, `a>3`; set values sorted. */
  toString(): string {
    const op = this.operator
    if (op === 'exists') return this.key
    if (op === '!') return '!' + this.key
    const sorted = this.values.length === 1 ? this.values : [...this.values].sort(compareGoStrings)
    const joined = sorted.join(',')
    switch (op) {
      case 'in':
        return `${this.key} in (${joined})`
      case 'notin':
        return `${this.key} notin (${joined})`
      case 'gt':
        return `${this.key}>${joined}`
      case 'lt':
        return `${this.key}<${joined}`
      default:
        return `${this.key}${op}${joined}`
    }
  }
}

function keyErrors(key: string, field: string): FieldError[] {
  const msgs = isQualifiedName(key)
  return msgs.length === 0 ? [] : [invalid(field, key, msgs.join('; '))]
}

/**
 * The checks of Kubernetes' labels.NewRequirement. `values` null stands for Go's nil slice (it
 * prints as `null` in messages); `path` null for a nil field path.
 */
function requirementErrors(key: string, operator: string, values: readonly string[] | null, path: string | null): FieldError[] {
  const child = (name: string) => (path === null ? name : `${path}.${name}`)
  const errs = keyErrors(key, child('key'))
  const vals = values ?? []
  const valuePath = child('values')
  switch (operator) {
    case 'in':
    case 'notin':
      if (vals.length === 0) errs.push(invalid(valuePath, values, "for 'in', 'notin' operators, values set can't be empty"))
      break
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) errs.push(invalid(valuePath, values, 'exact-match compatibility requires one single value'))
      break
    case 'exists':
    case '!':
      if (vals.length !== 0) errs.push(invalid(valuePath, values, 'values set must be empty for exists and does not exist'))
      break
    case 'gt':
    case 'lt':
      if (vals.length !== 1) errs.push(invalid(valuePath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
      vals.forEach((v, i) => {
        if (parseInt64(v) === null) {
          errs.push(invalid(`${valuePath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        }
      })
      break
    default:
      errs.push(notSupported(child('operator'), operator, validOperators))
  }
  vals.forEach((v, i) => {
    const msgs = isValidLabelValue(v)
    if (msgs.length > 0) errs.push(invalid(`${valuePath}[${i}][${key}]`, v, msgs.join('; ')))
  })
  return errs
}

function buildRequirement(key: string, operator: string, values: readonly string[] | null, path: string | null): LabelRequirement {
  const errs = requirementErrors(key, operator, values, path)
  if (errs.length > 0) throw new SelectorParseError(aggregateFieldErrors(errs), errs)
  return new LabelRequirement(key, operator as LabelOperator, values ?? [])
}

/**
 * A validated requirement (Kubernetes' NewRequirement): in/notin need values, =/==/!= exactly one,
 * exists/! none, gt/lt one integer; the key must be a qualified name and each value a label value.
 * Throws SelectorParseError naming every problem.
 */
export function newLabelRequirement(key: string, operator: LabelOperator, values: readonly string[] = []): LabelRequirement {
  return buildRequirement(key, operator, values, null)
}

function byKey(a: LabelRequirement, b: LabelRequirement): number {
  return compareGoStrings(a.key, b.key)
}

/** A set of requirements that must all hold (or the special selector that matches nothing). */
export class LabelSelector {
  /** the requirements, sorted by key; empty for both "everything" and "nothing" */
  readonly requirements: readonly LabelRequirement[]
  readonly #nothing: boolean

  private constructor(requirements: readonly LabelRequirement[], nothing: boolean) {
    this.requirements = Object.freeze([...requirements].sort(byKey))
    this.#nothing = nothing
  }

  static readonly #everything = new LabelSelector([], false)
  static readonly #nothingSelector = new LabelSelector([], true)

  /** The selector with no requirements, which matches every label set. */
  static everything(): LabelSelector {
    return LabelSelector.#everything
  }

  /** The selector that matches no label set at all (what a null metav1.LabelSelector means). */
  static nothing(): LabelSelector {
    return LabelSelector.#nothingSelector
  }

  /** A selector of the given requirements (already validated), sorted by key. */
  static of(requirements: readonly LabelRequirement[]): LabelSelector {
    return new LabelSelector(requirements, false)
  }

  /** Whether every requirement holds for the labels (a missing label set counts as empty). */
  matches(labels: Record<string, string> | undefined): boolean {
    if (this.#nothing) return false
    return this.requirements.every((r) => r.matches(labels))
  }

  /** True when the selector does not restrict anything (no requirements); false for nothing(). */
  isEmpty(): boolean {
    return !this.#nothing && this.requirements.length === 0
  }

  /** True only for the selector that matches nothing. */
  matchesNothing(): boolean {
    return this.#nothing
  }

  /** A new selector with more requirements added (nothing() stays nothing). */
  add(...requirements: LabelRequirement[]): LabelSelector {
    if (this.#nothing) return this
    return new LabelSelector([...this.requirements, ...requirements], false)
  }

  /**
   * If the selector pins `key` to a single value (`key=v`, `key==v` or `key in (v)`), that value;
   * otherwise undefined. Only the first requirement on the key is considered, as in Kubernetes.
   */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key)
    if (r === undefined) return undefined
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0]
    return undefined
  }

  /** The canonical text Kubernetes prints: requirements sorted by key, joined by ","; "" for none. */
  toString(): string {
    return this.requirements.map((r) => r.toString()).join(',')
  }
}

/**
 * A selector that matches labels equal to every entry of the set (Kubernetes' SelectorFromSet, as
 * a Service's selector is used). No validation; an empty or missing set matches everything.
 */
export function labelSelectorFromSet(set: Record<string, string> | null | undefined): LabelSelector {
  return LabelSelector.of(Object.entries(set ?? {}).map(([k, v]) => new LabelRequirement(k, '=', [v])))
}

// ---- the string syntax ----

type TokenKind =
  | 'end'
  | 'closePar'
  | 'comma'
  | 'not'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar'

interface Token {
  kind: TokenKind
  text: string
}

const symbolTokens: Record<string, TokenKind> = {
  ')': 'closePar',
  ',': 'comma',
  '!': 'not',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'greaterThan',
  '<': 'lessThan',
  '!=': 'notEquals',
  '(': 'openPar',
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n'
}

function isSpecial(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<'
}

/**
 * Split selector text into tokens as Kubernetes' lexer does. That lexer takes a NUL character for
 * the end of the text: at the start of a token it ends the selector, right after one it is skipped.
 */
function lex(s: string): Token[] {
  const tokens: Token[] = []
  let pos = 0
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++
    if (pos >= s.length || s[pos] === '\0') {
      tokens.push({kind: 'end', text: ''})
      return tokens
    }
    if (isSpecial(s[pos]!)) {
      // the longest run of special characters that still forms a known symbol: "!=" but "=" "!"
      let symbol = s[pos]!
      pos++
      while (pos < s.length && isSpecial(s[pos]!) && symbolTokens[symbol + s[pos]!] !== undefined) symbol += s[pos++]!
      tokens.push({kind: symbolTokens[symbol]!, text: symbol})
    } else {
      const start = pos
      while (pos < s.length && s[pos] !== '\0' && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) pos++
      const word = s.slice(start, pos)
      tokens.push({kind: word === 'in' ? 'in' : word === 'notin' ? 'notIn' : 'identifier', text: word})
    }
    if (s[pos] === '\0') pos++
  }
}

class Parser {
  readonly #tokens: Token[]
  #position = 0

  constructor(text: string) {
    this.#tokens = lex(text)
  }

  /** The next token; where values are expected, the words "in" and "notin" are plain identifiers. */
  #peek(valuesContext = true): Token {
    return this.#asContext(this.#tokens[this.#position]!, valuesContext)
  }

  #next(valuesContext = true): Token {
    return this.#asContext(this.#tokens[this.#position++]!, valuesContext)
  }

  #asContext(t: Token, valuesContext: boolean): Token {
    if (valuesContext && (t.kind === 'in' || t.kind === 'notIn')) return {kind: 'identifier', text: t.text}
    return t
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = []
    for (;;) {
      const t = this.#peek()
      if (t.kind === 'end') return requirements
      if (t.kind !== 'identifier' && t.kind !== 'not') {
        throw new SelectorParseError(`found '${t.text}', expected: !, identifier, or 'end of string'`)
      }
      try {
        requirements.push(this.#requirement())
      } catch (e) {
        if (e instanceof SelectorParseError) throw new SelectorParseError(`unable to parse requirement: ${e.message}`, e.errors)
        throw e
      }
      const after = this.#next()
      if (after.kind === 'end') return requirements
      if (after.kind !== 'comma') throw new SelectorParseError(`found '${after.text}', expected: ',' or 'end of string'`)
      const t2 = this.#peek()
      if (t2.kind !== 'identifier' && t2.kind !== 'not') {
        throw new SelectorParseError(`found '${t2.text}', expected: identifier after ','`)
      }
    }
  }

  #requirement(): LabelRequirement {
    let operator: LabelOperator | undefined
    let t = this.#next()
    if (t.kind === 'not') {
      operator = '!'
      t = this.#next()
    }
    if (t.kind !== 'identifier') throw new SelectorParseError(`found '${t.text}', expected: identifier`)
    const key = t.text
    // Kubernetes validates the key here with a nil field path, hence "<nil>" in the message
    const errs = keyErrors(key, '<nil>')
    if (errs.length > 0) throw new SelectorParseError(aggregateFieldErrors(errs), errs)
    const following = this.#peek().kind
    if (operator === undefined && (following === 'end' || following === 'comma')) operator = 'exists'
    if (operator === 'exists' || operator === '!') return buildRequirement(key, operator, [], null)

    const opToken = this.#next(false)
    const op = operatorOf(opToken.kind)
    if (op === undefined) throw new SelectorParseError(`found '${opToken.text}', expected: ${binaryOperators.join(', ')}`)
    const values = op === 'in' || op === 'notin' ? this.#setValues() : this.#exactValue()
    return buildRequirement(key, op, [...values].sort(compareGoStrings), null)
  }

  /** `( v1, v2, ... )`: a set of possibly empty values. */
  #setValues(): Set<string> {
    const open = this.#next()
    if (open.kind !== 'openPar') throw new SelectorParseError(`found '${open.text}' expected: '('`)
    const t = this.#peek()
    if (t.kind === 'closePar') {
      this.#next()
      return new Set([''])
    }
    if (t.kind !== 'identifier' && t.kind !== 'comma') {
      throw new SelectorParseError(`found '${t.text}', expected: ',', ')' or identifier`)
    }
    const values = this.#identifierList()
    this.#next() // the ')' that ended the list
    return values
  }

  #identifierList(): Set<string> {
    const values = new Set<string>()
    for (;;) {
      const t = this.#next()
      if (t.kind === 'identifier') {
        values.add(t.text)
        const t2 = this.#peek()
        if (t2.kind === 'comma') continue
        if (t2.kind === 'closePar') return values
        throw new SelectorParseError(`found '${t2.text}', expected: ',' or ')'`)
      }
      if (t.kind === 'comma') {
        // a comma with nothing before or after it stands for the empty value
        if (values.size === 0) values.add('')
        const t2 = this.#peek()
        if (t2.kind === 'closePar') {
          values.add('')
          return values
        }
        if (t2.kind === 'comma') values.add('')
        continue
      }
      throw new SelectorParseError(`found '${t.text}', expected: ',', or identifier`)
    }
  }

  /** The single value after `=`, `==`, `!=`, `>` or `<`; empty at a comma or the end. */
  #exactValue(): string[] {
    const t = this.#peek()
    if (t.kind === 'end' || t.kind === 'comma') return ['']
    const v = this.#next()
    if (v.kind === 'identifier') return [v.text]
    throw new SelectorParseError(`found '${v.text}', expected: identifier`)
  }
}

function operatorOf(kind: TokenKind): LabelOperator | undefined {
  switch (kind) {
    case 'in': return 'in'
    case 'notIn': return 'notin'
    case 'equals': return '='
    case 'doubleEquals': return '=='
    case 'notEquals': return '!='
    case 'greaterThan': return 'gt'
    case 'lessThan': return 'lt'
    default: return undefined
  }
}

/**
 * Parses the label selector syntax of `?labelSelector=` and `kubectl -l`:
 *
 *     a=b   a==b   a!=b   a in (x,y)   a notin (x,y)   a   !a   a>1   a<1
 *
 * joined by commas (all must hold), whitespace allowed around tokens. The empty string selects
 * everything. `in ()` and empty values after `=` stand for the empty value. Keys must be qualified
 * names and values label values; anything else throws SelectorParseError with Kubernetes' message.
 */
export function parseLabelSelector(text: string): LabelSelector {
  return LabelSelector.of(new Parser(text).parse())
}

// ---- metav1.LabelSelector ----

export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null
  matchExpressions?: {key: string; operator: string; values?: string[] | null}[] | null
}

const objectOperators: Record<string, LabelOperator> = {In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!'}

/**
 * Converts a metav1.LabelSelector to a selector, as Kubernetes' LabelSelectorAsSelector does:
 *
 * - a null or missing selector matches NOTHING (labels.Nothing());
 * - an empty selector `{}` (no matchLabels, no matchExpressions) matches EVERYTHING;
 * - otherwise every matchLabels entry (key=value) and every matchExpression must hold.
 *
 * Operators are In, NotIn, Exists and DoesNotExist; In/NotIn need values and Exists/DoesNotExist
 * forbid them; keys and values are validated. Problems throw SelectorParseError.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel == null) return LabelSelector.nothing()
  const labels = Object.entries(sel.matchLabels ?? {})
  const expressions = sel.matchExpressions ?? []
  if (labels.length + expressions.length === 0) return LabelSelector.everything()
  const requirements: LabelRequirement[] = []
  for (const [key, value] of labels) requirements.push(buildRequirement(key, '=', [value], null))
  for (const expr of expressions) {
    const op = Object.hasOwn(objectOperators, expr.operator) ? objectOperators[expr.operator] : undefined
    if (op === undefined) throw new SelectorParseError(`${goQuote(expr.operator)} is not a valid label selector operator`)
    // Kubernetes copies the values into a nil slice, so an empty list is reported as null
    const values = expr.values != null && expr.values.length > 0 ? [...expr.values] : null
    requirements.push(buildRequirement(expr.key, op, values, null))
  }
  return LabelSelector.of(requirements)
}
