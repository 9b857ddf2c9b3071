// kubectl's --sort-by: a field path in JSONPath form (`.metadata.name`, `{.spec.replicas}`,
// `.status.containerStatuses[0].restartCount`, `.metadata.labels.app\.kubernetes\.io/name`) read from each
// object, and the objects put in its order: numbers by value, strings byte by byte (kubectl 1.32 puts web-10
// before web-2: checked against it), objects that lack the field first. A path that no object has is
// kubectl's error: `couldn't find any field with path "{.x}" in the list of objects`.
import type {AnyObject} from '../api/types.js'

type Step = string | number

/** The steps of a --sort-by path; a malformed path is an Error with kubectl's wording. */
export function parseSortPath(expression: string): Step[] {
  let text = expression.trim()
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim()
  if (!text.startsWith('.')) text = `.${text}`
  const steps: Step[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === '.') {
      let name = ''
      i++
      while (i < text.length && text[i] !== '.' && text[i] !== '[') {
        if (text[i] === '\\' && i + 1 < text.length) i++
        name += text[i]
        i++
      }
      if (name !== '') steps.push(name)
      else if (i < text.length && text[i] !== '[') throw new Error(`invalid --sort-by path "${expression}": an empty field name`)
    } else if (c === '[') {
      const end = text.indexOf(']', i)
      const inner = end < 0 ? '' : text.slice(i + 1, end).trim()
      if (!/^\d+$/.test(inner)) throw new Error(`invalid --sort-by path "${expression}": only [N] indexes are supported`)
      steps.push(Number(inner))
      i = end + 1
    } else {
      throw new Error(`invalid --sort-by path "${expression}"`)
    }
  }
  return steps
}

/** The value at a path, undefined when the object lacks it. */
function valueAt(object: unknown, steps: Step[]): unknown {
  let value: unknown = object
  for (const step of steps) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Record<string | number, unknown>)[step]
  }
  return value
}

/** Strings as kubectl 1.32's --sort-by orders them: byte by byte (web-10 before web-2). */
export function byteCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function compareValues(a: unknown, b: unknown): number {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : -1
  if (b === undefined || b === null) return 1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
  return byteCompare(text(a), text(b))
}

/**
 * The items in the order of the path's values (a stable sort); `objectOf` gives each item's object.
 * Throws kubectl's error when no item has the field (and there are items).
 */
export function sortByPath<T>(items: readonly T[], expression: string, objectOf: (item: T) => AnyObject | undefined): T[] {
  const steps = parseSortPath(expression)
  const keyed = items.map((item) => ({item, key: valueAt(objectOf(item), steps)}))
  if (keyed.length > 0 && keyed.every((k) => k.key === undefined)) {
    const shown = expression.trim().startsWith('{') ? expression.trim() : `{${expression.trim().startsWith('.') ? '' : '.'}${expression.trim()}}`
    throw new Error(`couldn't find any field with path "${shown}" in the list of objects`)
  }
  return keyed
    .map((k, index) => ({...k, index}))
    .sort((p, q) => compareValues(p.key, q.key) || p.index - q.index)
    .map((k) => k.item)
}
