// Field selectors, matching k8s.io/apimachinery/pkg/fields: the `?fieldSelector=` syntax
// (`metadata.name=foo,status.phase!=Running`). Terms are ANDed; only `=`, `==` and `!=` exist.
// Values may contain `,`, `=` and `\` escaped with a backslash. A missing field compares as the
// empty string. The caller decides which fields a kind supports by looking at `requirements`.

import {compareGoStrings} from './field-errors.js'
import {SelectorParseError} from './labels.js'

export {SelectorParseError}

/** `=` (also what `==` parses to) or `!=`: Kubernetes' selection.Equals and selection.NotEquals. */
export type FieldOperator = '=' | '!='

export interface FieldRequirement {
  readonly field: string
  readonly operator: FieldOperator
  readonly value: string
}

/** Escape `\`, `,` and `=` in a value so it can be written into a field selector. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => '\\' + c)
}

/**
 * Undo escapeFieldValue. An unknown escape (`\x`), a trailing `\`, or an unescaped `,` or `=` is an
 * error, worded as Kubernetes words it (the unescaped character is given as its code point).
 */
export function unescapeFieldValue(text: string): string {
  if (!/[\\,=]/.test(text)) return text
  let out = ''
  let inSlash = false
  for (const c of text) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`)
      }
      out += c
      inSlash = false
      continue
    }
    if (c === '\\') inSlash = true
    else if (c === ',' || c === '=') {
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`)
    } else out += c
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\')
  return out
}

/** A conjunction of field requirements. */
export class FieldSelector {
  readonly requirements: readonly FieldRequirement[]
  readonly #nothing: boolean

  static readonly #everything = new FieldSelector([], false)
  static readonly #nothingSelector = new FieldSelector([], true)

  private constructor(requirements: readonly FieldRequirement[], nothing: boolean) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze({...r})))
    this.#nothing = nothing
  }

  /** The selector with no requirements: matches every object. */
  static everything(): FieldSelector {
    return FieldSelector.#everything
  }

  /** The selector that matches no object at all. */
  static nothing(): FieldSelector {
    return FieldSelector.#nothingSelector
  }

  /** A selector of the given requirements, in the order given. */
  static of(requirements: readonly FieldRequirement[]): FieldSelector {
    return new FieldSelector(requirements, false)
  }

  /** Whether every requirement holds; a field absent from `fields` has the value "". */
  matches(fields: Record<string, string>): boolean {
    if (this.#nothing) return false
    return this.requirements.every((r) => {
      const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : ''
      return r.operator === '=' ? actual === r.value : actual !== r.value
    })
  }

  /** True when the selector does not restrict anything; false for nothing(). */
  isEmpty(): boolean {
    return !this.#nothing && this.requirements.length === 0
  }

  /** True only for the selector that matches nothing. */
  matchesNothing(): boolean {
    return this.#nothing
  }

  /** The value `field` must equal, if the selector has a `field=value` term; else undefined. */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value
  }

  /** Kubernetes' text: `field=value` / `field!=value` terms, values escaped, joined by ",". */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',')
  }
}

/** A selector requiring each field of the set to equal its value (Kubernetes' SelectorFromSet). */
export function fieldSelectorFromSet(set: Record<string, string> | null | undefined): FieldSelector {
  return FieldSelector.of(Object.entries(set ?? {}).map(([field, value]) => ({field, operator: '=' as const, value})))
}

/** Split on commas that are not escaped; escapes stay in the terms. */
function splitTerms(text: string): string[] {
  if (text.length === 0) return []
  const terms: string[] = []
  let start = 0
  let inSlash = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inSlash) inSlash = false
    else if (c === '\\') inSlash = true
    else if (c === ',') {
      terms.push(text.slice(start, i))
      start = i + 1
    }
  }
  terms.push(text.slice(start))
  return terms
}

const termOperators = ['!=', '==', '='] as const

/** Split a term at the first operator; the field part cannot contain escapes. */
function splitTerm(term: string): [string, (typeof termOperators)[number], string] | null {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)]
    }
  }
  return null
}

/**
 * Parses a field selector: `field=value`, `field==value` or `field!=value` terms joined by commas.
 * As in Kubernetes, nothing is trimmed, terms are sorted, empty terms are skipped, a term with both
 * an empty field and an empty value is dropped, and the empty string selects everything.
 * Malformed text throws SelectorParseError.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const terms = splitTerms(text).sort(compareGoStrings)
  const requirements: FieldRequirement[] = []
  for (const term of terms) {
    if (term === '') continue
    const parts = splitTerm(term)
    if (parts === null) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${term}'`)
    const [field, op, rawValue] = parts
    const value = unescapeFieldValue(rawValue)
    if (field === '' && value === '') continue
    requirements.push({field, operator: op === '!=' ? '!=' : '=', value})
  }
  return FieldSelector.of(requirements)
}
