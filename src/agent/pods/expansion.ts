// `$(VAR)` expansion as Kubernetes' forked expansion package (third_party/forked/golang/expansion)
// does it for env values, command and args:
//  - `$(NAME)` is replaced by the mapping's value; a name the mapping does not know stays `$(NAME)`;
//  - `$$` is an escaped `$`: `$$(A)` gives `$(A)`;
//  - `$(` without a closing `)` and a `$` before anything else are copied as written;
//  - a `$` at the very end of the input is kept.
// The scan is left to right and one pass: a replacement is never expanded again.
import type {AnyObject} from '../../api/types.js'

/** Looks names up in the maps, first map first; an unknown name gives `$(name)` back. */
export function mappingFor(...maps: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const map of maps) {
      const value = map.get(name)
      if (value !== undefined) return value
    }
    return `$(${name})`
  }
}

/** Expands the `$(VAR)` references of input through mapping. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = ''
  let checkpoint = 0
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue
    out += input.slice(checkpoint, cursor)
    const next = input[cursor + 1]
    if (next === '$') {
      // escaped operator: one `$`, and the scan goes on after the second
      out += '$'
      cursor += 1
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2)
      if (close === -1) {
        // incomplete reference: `$(` is copied, the rest is scanned as text
        out += '$('
        cursor += 1
      } else {
        out += mapping(input.slice(cursor + 2, close))
        cursor = close
      }
    } else {
      // a `$` that starts no expression: it and the next character are copied
      out += `$${next}`
      cursor += 1
    }
    checkpoint = cursor + 1
  }
  return out + input.slice(checkpoint)
}

/** The kubelet's ExpandContainerCommandAndArgs: command and args expanded against the container's final env. */
export function expandCommandAndArgs(container: AnyObject, env: {key: string; value: string}[]): {command: string[]; args: string[]} {
  const mapping = mappingFor(new Map(env.map((e) => [e.key, e.value])))
  return {command: (container.command ?? []).map((c: unknown) => expand(String(c), mapping)), args: (container.args ?? []).map((a: unknown) => expand(String(a), mapping))}
}
