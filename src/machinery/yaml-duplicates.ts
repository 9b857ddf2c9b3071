// Duplicate keys in a YAML document, as Kubernetes' strict YAML decoding (go-yaml v2's UnmarshalStrict)
// reports them: `line 5: key "name" already set in map`, one per repeated key, in document order.
// js-yaml, which orch decodes YAML with, keeps the last value silently in its JSON mode; its listener
// tells where each node starts and ends, and a node that a `:` follows is a mapping key.
import {loadYaml} from './go-yaml.js'

interface NodeFrame {
  start: number
  /** the nodes read inside this one: for a mapping, its keys and values */
  children: {start: number; end: number; value: unknown}[]
}

/** go-yaml's %#v of a key: a string quoted as Go quotes it, other scalars as they print */
function goKey(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (value === null || value === undefined) return '<nil>'
  return String(value)
}

/** the identity of a key as go-yaml compares them (1 and "1" differ) */
function keyIdentity(value: unknown): string {
  return `${typeof value}:${String(value)}`
}

/** The line of `offset` counted from 1. */
function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++
  return line
}

/** The first character at or after `offset` that is not a space, a tab or a line break. */
function nextSignificant(text: string, offset: number): string | undefined {
  for (let i = offset; i < text.length; i++) {
    const c = text[i]
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return c
  }
  return undefined
}

/**
 * go-yaml's messages for the keys repeated in one mapping of `text` (one YAML document), e.g.
 * `line 12: key "paused" already set in map`; [] when there are none or the text does not parse (the
 * decoder reports that).
 */
export function yamlDuplicateKeys(text: string): string[] {
  const stack: NodeFrame[] = [{start: 0, children: []}]
  const found: {offset: number; message: string}[] = []
  const listener = (event: 'open' | 'close', state: {position: number; result: unknown; kind: string | null}) => {
    if (event === 'open') {
      stack.push({start: state.position, children: []})
      return
    }
    const frame = stack.pop()!
    if (state.kind === 'mapping') {
      const seen = new Set<string>()
      for (const child of frame.children) {
        // a key is the node a ':' follows (its value, and a value's nodes, are not)
        if (nextSignificant(text, child.end) !== ':' || (typeof child.value === 'object' && child.value !== null)) continue
        const identity = keyIdentity(child.value)
        if (seen.has(identity)) found.push({offset: child.start, message: `key ${goKey(child.value)} already set in map`})
        seen.add(identity)
      }
    }
    stack[stack.length - 1]?.children.push({start: frame.start, end: state.position, value: state.result})
  }
  try {
    loadYaml(text, {listener: listener as (this: unknown, ...args: unknown[]) => void})
  } catch {
    return []
  }
  return found.sort((a, b) => a.offset - b.offset).map(({offset, message}) => {
    // the node starts where the listener saw it open: the key's first character is the next one written
    let at = offset
    while (at < text.length && ' \t\r\n'.includes(text[at]!)) at++
    return `line ${lineAt(text, at)}: ${message}`
  })
}
