// Field paths and field sets as structured-merge-diff (sigs.k8s.io/structured-merge-diff/v6/fieldpath)
// has them: the path elements, their order, the set operations server-side apply uses, the
// `fieldsV1` trie managedFields stores, and the `.spec.containers[name="x"].image` form conflicts print.

/** One step into a value: a struct field or map key, an associative list item by its keys, a set item
 *  by its value, or an atomic list item by index. */
export type PathElement =
  | {kind: 'field'; name: string}
  /** key fields sorted by name */
  | {kind: 'key'; fields: ReadonlyArray<readonly [string, unknown]>}
  | {kind: 'value'; value: unknown}
  | {kind: 'index'; index: number}

export type FieldPath = readonly PathElement[]

export const fieldElement = (name: string): PathElement => ({kind: 'field', name})

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

// ---------- JSON as Go writes it ----------

const htmlEscapes: Record<string, string> = {'<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029'}

/** encoding/json's output: object keys sorted, <, > and & escaped. */
export function goJSON(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJSON).join(',')}]`
  if (isPlainObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort(compareStrings)
    return `{${keys.map((k) => `${goJSON(k)}:${goJSON(value[k])}`).join(',')}}`
  }
  if (value === undefined) return 'null'
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => htmlEscapes[c])
}

/** Go's %q of a string (close enough: Go and JSON escapes agree on everything but rare control characters). */
export function goQuote(s: string): string {
  return JSON.stringify(s)
}

/** Go's %v of a JSON value (fmt's map[k:v] form, keys sorted). */
export function goFormat(value: unknown): string {
  if (value === null || value === undefined) return '<nil>'
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`
  if (isPlainObject(value)) {
    return `map[${Object.keys(value).sort(compareStrings).map((k) => `${k}:${goFormat(value[k])}`).join(' ')}]`
  }
  return String(value)
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

// ---------- value order (value.Compare) ----------

function rank(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) ? 1 : 0
  if (typeof v === 'string') return 2
  if (typeof v === 'boolean') return 3
  if (Array.isArray(v)) return 4
  if (isPlainObject(v)) return 5
  return 6
}

/** structured-merge-diff's value order: floats and ints numerically, then strings, booleans, lists, maps, null. */
export function compareValues(l: unknown, r: unknown): number {
  const a = rank(l)
  const b = rank(r)
  if (a <= 1 && b <= 1) return Math.sign((l as number) - (r as number))
  if (a !== b) return a < b ? -1 : 1
  switch (a) {
    case 2:
      return compareStrings(l as string, r as string)
    case 3:
      return l === r ? 0 : l ? 1 : -1
    case 4: {
      const x = l as unknown[]
      const y = r as unknown[]
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i])
        if (c !== 0) return c
      }
      return Math.sign(x.length - y.length)
    }
    case 5: {
      const x = l as Record<string, unknown>
      const y = r as Record<string, unknown>
      const xk = Object.keys(x).sort(compareStrings)
      const yk = Object.keys(y).sort(compareStrings)
      for (let i = 0; i < Math.min(xk.length, yk.length); i++) {
        const c = compareStrings(xk[i], yk[i]) || compareValues(x[xk[i]], y[yk[i]])
        if (c !== 0) return c
      }
      return Math.sign(xk.length - yk.length)
    }
    default:
      return 0
  }
}

/** value.Equals: deep equality, numbers numerically, maps regardless of key order. */
export function valuesEqual(l: unknown, r: unknown): boolean {
  if (l === r) return true
  if (Array.isArray(l)) {
    return Array.isArray(r) && l.length === r.length && l.every((v, i) => valuesEqual(v, r[i]))
  }
  if (isPlainObject(l)) {
    if (!isPlainObject(r)) return false
    const keys = Object.keys(l)
    return keys.length === Object.keys(r).length && keys.every((k) => Object.hasOwn(r, k) && valuesEqual(l[k], r[k]))
  }
  return false
}

// ---------- path elements ----------

const kindOrder = {field: 0, key: 1, value: 2, index: 3}

export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return kindOrder[a.kind] - kindOrder[b.kind]
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name)
    case 'key': {
      const x = a.fields
      const y = (b as typeof a).fields
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareStrings(x[i][0], y[i][0]) || compareValues(x[i][1], y[i][1])
        if (c !== 0) return c
      }
      return Math.sign(x.length - y.length)
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value)
    case 'index':
      return Math.sign(a.index - (b as typeof a).index)
  }
}

/** The fieldsV1 form: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`. Also the identity of an element. */
export function serializePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`
    case 'key':
      return `k:{${pe.fields.map(([name, value]) => `${goJSON(name)}:${goJSON(value)}`).join(',')}}`
    case 'value':
      return `v:${goJSON(pe.value)}`
    case 'index':
      return `i:${pe.index}`
  }
}

export class UnknownPathElementType extends Error {}

export function parsePathElement(s: string): PathElement {
  if (s.length < 2) throw new Error('key must be 2 characters long:')
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`)
  const rest = s.slice(2)
  switch (s[0]) {
    case 'f':
      return {kind: 'field', name: rest}
    case 'v':
      return {kind: 'value', value: JSON.parse(rest)}
    case 'k': {
      const parsed: unknown = JSON.parse(rest)
      if (!isPlainObject(parsed)) throw new Error(`key element is not an object: ${s}`)
      return keyElement(Object.entries(parsed))
    }
    case 'i':
      if (!/^[+-]?\d+$/.test(rest)) throw new Error(`strconv.Atoi: parsing ${goQuote(rest)}: invalid syntax`)
      return {kind: 'index', index: Number(rest)}
    default:
      throw new UnknownPathElementType('unknown path element type')
  }
}

export function keyElement(fields: Array<readonly [string, unknown]>): PathElement {
  return {kind: 'key', fields: [...fields].sort((a, b) => compareStrings(a[0], b[0]))}
}

/** value.ToString */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'string') return goQuote(v)
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`
  if (isPlainObject(v)) return Object.entries(v).map(([k, x]) => `${k}=${valueString(x)}`).join('')
  return String(v)
}

/** PathElement.String: `.name`, `[name="x",protocol="TCP"]`, `[="x"]`, `[0]` */
export function pathElementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`
    case 'key':
      return `[${pe.fields.map(([name, value]) => `${name}=${valueString(value)}`).join(',')}]`
    case 'value':
      return `[=${valueString(pe.value)}]`
    case 'index':
      return `[${pe.index}]`
  }
}

export function pathString(path: FieldPath): string {
  return path.map(pathElementString).join('')
}

// ---------- sets ----------

interface Child {
  pe: PathElement
  set: FieldSet
}

/** fieldpath.Set: a trie of paths. `members` are the paths ending here, `children` the subtrees.
 *  Sets returned by the operations share subtrees with their inputs: do not insert into them. */
export class FieldSet {
  readonly members = new Map<string, PathElement>()
  readonly children = new Map<string, Child>()

  static of(...paths: FieldPath[]): FieldSet {
    const set = new FieldSet()
    for (const path of paths) set.insert(path)
    return set
  }

  insert(path: FieldPath): void {
    if (path.length === 0) return
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let set: FieldSet = this
    for (let i = 0; i < path.length - 1; i++) set = set.descend(path[i])
    const last = path[path.length - 1]
    set.members.set(serializePathElement(last), last)
  }

  descend(pe: PathElement): FieldSet {
    const id = serializePathElement(pe)
    let child = this.children.get(id)
    if (!child) {
      child = {pe, set: new FieldSet()}
      this.children.set(id, child)
    }
    return child.set
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let set: FieldSet | undefined = this
    for (let i = 0; i < path.length - 1 && set; i++) set = set.children.get(serializePathElement(path[i]))?.set
    return set !== undefined && set.members.has(serializePathElement(path[path.length - 1]))
  }

  /** the subtree under one element (empty when there is none) */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializePathElement(pe))?.set ?? new FieldSet()
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false
    for (const child of this.children.values()) if (!child.set.isEmpty()) return false
    return true
  }

  private static build(members: Iterable<[string, PathElement]>, children: Iterable<[string, Child]>): FieldSet {
    const set = new FieldSet()
    for (const [id, pe] of members) set.members.set(id, pe)
    for (const [id, child] of children) if (!child.set.isEmpty()) set.children.set(id, child)
    return set
  }

  union(other: FieldSet): FieldSet {
    const children: Array<[string, Child]> = []
    for (const [id, child] of this.children) {
      const o = other.children.get(id)
      children.push([id, o ? {pe: child.pe, set: child.set.union(o.set)} : child])
    }
    for (const [id, child] of other.children) if (!this.children.has(id)) children.push([id, child])
    return FieldSet.build([...this.members, ...other.members], children)
  }

  intersection(other: FieldSet): FieldSet {
    const children: Array<[string, Child]> = []
    for (const [id, child] of this.children) {
      const o = other.children.get(id)
      if (o) children.push([id, {pe: child.pe, set: child.set.intersection(o.set)}])
    }
    return FieldSet.build([...this.members].filter(([id]) => other.members.has(id)), children)
  }

  /** paths of this set that are not paths of other (a member of other does not remove this set's children) */
  difference(other: FieldSet): FieldSet {
    const children: Array<[string, Child]> = []
    for (const [id, child] of this.children) {
      const o = other.children.get(id)
      children.push([id, o ? {pe: child.pe, set: child.set.difference(o.set)} : child])
    }
    return FieldSet.build([...this.members].filter(([id]) => !other.members.has(id)), children)
  }

  /** like difference, but a member of other also removes everything under it */
  recursiveDifference(other: FieldSet): FieldSet {
    const children: Array<[string, Child]> = []
    for (const [id, child] of this.children) {
      if (other.members.has(id)) continue
      const o = other.children.get(id)
      children.push([id, o ? {pe: child.pe, set: child.set.recursiveDifference(o.set)} : child])
    }
    return FieldSet.build([...this.members].filter(([id]) => !other.members.has(id)), children)
  }

  private sortedMembers(): PathElement[] {
    return [...this.members.values()].sort(comparePathElements)
  }

  private sortedChildren(): Child[] {
    return [...this.children.values()].sort((a, b) => comparePathElements(a.pe, b.pe))
  }

  /** every member path: this level's members first, then each subtree, in element order */
  paths(prefix: FieldPath = []): PathElement[][] {
    const out: PathElement[][] = []
    for (const pe of this.sortedMembers()) out.push([...prefix, pe])
    for (const child of this.sortedChildren()) out.push(...child.set.paths([...prefix, child.pe]))
    return out
  }

  /** The fieldsV1 trie, keys in structured-merge-diff's order; "." marks a subtree that is also a member. */
  toFieldsV1(): Record<string, unknown> {
    return this.emit(false)
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    const entries: Array<{pe: PathElement; id: string}> = []
    for (const [id, pe] of this.members) entries.push({pe, id})
    for (const [id, child] of this.children) if (!this.members.has(id) && !child.set.isEmpty()) entries.push({pe: child.pe, id})
    if (includeSelf && entries.length > 0) out['.'] = {}
    entries.sort((a, b) => comparePathElements(a.pe, b.pe))
    for (const {id} of entries) {
      const child = this.children.get(id)
      out[id] = child && !child.set.isEmpty() ? child.set.emit(this.members.has(id)) : {}
    }
    return out
  }

  static fromFieldsV1(fields: unknown): FieldSet {
    return readFieldsV1(fields).children ?? new FieldSet()
  }
}

function readFieldsV1(value: unknown): {children?: FieldSet; isMember: boolean} {
  if (!isPlainObject(value)) throw new Error('managedFields parsing: expected an object')
  let children: FieldSet | undefined
  let isMember = false
  for (const [key, sub] of Object.entries(value)) {
    if (key === '.') {
      isMember = true
      continue
    }
    let pe: PathElement
    try {
      pe = parsePathElement(key)
    } catch (error) {
      if (error instanceof UnknownPathElementType) continue
      throw new Error(`parsing key as path element: ${(error as Error).message}`)
    }
    const read = readFieldsV1(sub)
    const id = serializePathElement(pe)
    if (read.isMember) (children ??= new FieldSet()).members.set(id, pe)
    if (read.children) {
      children ??= new FieldSet()
      const existing = children.children.get(id)
      children.children.set(id, {pe, set: existing ? existing.set.union(read.children) : read.children})
    }
  }
  if (!children) isMember = true
  return {children, isMember}
}
