// CEL object initialisation, which cel-js does not parse: `Object{spec: Object.spec{replicas: 3}}`
// (ApplyConfiguration) and `JSONPatch{op: "add", path: "/x", value: 1}` become map literals
// `{"spec": {"replicas": 3}}` before parsing. Field names are identifiers (escaped names stay
// escaped; values.ts unescapes the result). String literals are left untouched.
// With `typed`, for type checking only, each initialiser is wrapped in a call that gives it its type:
// `__orchJSONPatch({...})` (JSONPatch), `__orchObject({...})` (Object) and `__orchObjectField({...})`
// (`Object.spec{...}` and deeper), so a result's type can be told from a plain map literal.
const TYPE_NAME = /^(?:Object(?:\.[A-Za-z_][A-Za-z0-9_]*)*|JSONPatch)\s*\{/

/** The functions of a typed rewrite, by the initialiser's type name. */
export const TYPED_INITIALISERS = {JSONPatch: '__orchJSONPatch', Object: '__orchObject', ObjectField: '__orchObjectField'} as const

function typedOpening(typeName: string): string {
  if (typeName === 'JSONPatch') return `${TYPED_INITIALISERS.JSONPatch}({`
  return `${typeName === 'Object' ? TYPED_INITIALISERS.Object : TYPED_INITIALISERS.ObjectField}({`
}

export function rewriteObjectInitialisers(expression: string, options: {typed?: boolean} = {}): string {
  let out = ''
  // for each open brace: true when it opened an object initialiser (its field names get quoted)
  const braces: boolean[] = []
  let expectField = false
  for (let i = 0; i < expression.length; ) {
    const ch = expression[i]
    if (ch === '"' || ch === "'") {
      const end = stringEnd(expression, i)
      out += expression.slice(i, end)
      i = end
      expectField = false
      continue
    }
    const initialiser = /[A-Za-z_]/.test(ch) && (i === 0 || !/[A-Za-z0-9_.]/.test(expression[i - 1])) ? TYPE_NAME.exec(expression.slice(i)) : null
    if (initialiser) {
      out += options.typed ? typedOpening(initialiser[0].replace(/\s*\{$/, '')) : '{'
      braces.push(true)
      i += initialiser[0].length
      expectField = true
      continue
    }
    if (ch === '{') {
      braces.push(false)
      expectField = false
    } else if (ch === '}') {
      if (braces.pop() === true && options.typed) {
        out += '})'
        i++
        expectField = false
        continue
      }
    } else if (ch === ',' && braces[braces.length - 1] === true) {
      out += ch
      i++
      expectField = true
      continue
    }
    if (expectField && /[A-Za-z_]/.test(ch)) {
      const field = /^[A-Za-z_][A-Za-z0-9_]*(?=\s*:)/.exec(expression.slice(i))
      if (field) {
        out += JSON.stringify(field[0])
        i += field[0].length
        expectField = false
        continue
      }
    }
    if (!/\s/.test(ch)) expectField = false
    out += ch
    i++
  }
  return out
}

function stringEnd(text: string, start: number): number {
  const quote = text[start]
  const triple = text.startsWith(quote.repeat(3), start)
  if (triple) {
    const end = text.indexOf(quote.repeat(3), start + 3)
    return end < 0 ? text.length : end + 3
  }
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === quote) return i + 1
  }
  return text.length
}
