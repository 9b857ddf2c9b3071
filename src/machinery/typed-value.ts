// Values read through a kind's schema as structured-merge-diff's `typed` package reads them: which
// maps, lists and structs are granular and which are atomic, how list items are identified, and the
// walks server-side apply is made of (validate, field set, compare, merge, remove).
//
// The schema mapping is kube-openapi's (schemaconv): x-kubernetes-list-type first, then a patch
// strategy `merge` (keyed by patchMergeKey, a set without one), otherwise an atomic list; structs and
// maps are granular unless declared atomic; free-form (`raw`) values are "deduced": maps granular,
// lists atomic.
import type {ArraySchema, Field, ObjectSchema, Schema} from '../api/types.js'
import {FieldSet, type PathElement, goQuote, keyElement, pathString, serializePathElement, valuesEqual} from './field-path.js'
import {ownValue, setOwn} from './own-keys.js'

/** undefined = deduced (free-form) */
export type TypeRef = Schema | undefined

export type Atom =
  | {kind: 'scalar'; scalar: 'numeric' | 'string' | 'boolean' | 'untyped'}
  | {kind: 'struct'; schema: ObjectSchema; fields: Map<string, Field>; atomic: boolean}
  | {kind: 'map'; elem: TypeRef; atomic: boolean}
  /** keys: undefined for atomic lists, [] for sets, the key fields for associative lists */
  | {kind: 'list'; elem: TypeRef; atomic: boolean; keys?: readonly string[]}

type ListAtom = Extract<Atom, {kind: 'list'}>

export function isPlainObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const flattened = new WeakMap<ObjectSchema, Map<string, Field>>()

/** A struct's JSON fields: those of embedded structs (declared under the name '') lifted into it. */
export function structFields(schema: ObjectSchema): Map<string, Field> {
  let fields = flattened.get(schema)
  if (!fields) {
    fields = new Map()
    for (const [name, field] of Object.entries(schema.fields)) {
      if (name === '' && field.type === 'object') for (const [n, f] of structFields(field)) fields.set(n, f)
      else fields.set(name, field)
    }
    flattened.set(schema, fields)
  }
  return fields
}

const roots = new WeakMap<ObjectSchema, ObjectSchema>()

/** A kind's schema as a whole object: its fields plus apiVersion and kind. */
export function objectSchema(schema: ObjectSchema): ObjectSchema {
  if ('apiVersion' in schema.fields) return schema
  let root = roots.get(schema)
  if (!root) {
    root = {...schema, fields: {apiVersion: {type: 'string', proto: 0}, kind: {type: 'string', proto: 0}, ...schema.fields}}
    roots.set(schema, root)
  }
  return root
}

export function listRelationship(schema: ArraySchema): {atomic: boolean; keys?: readonly string[]} {
  switch (schema.listType) {
    case 'atomic':
      return {atomic: true}
    case 'set':
      return {atomic: false, keys: []}
    case 'map':
      return {atomic: false, keys: schema.listMapKeys ?? []}
  }
  if (schema.patchStrategy?.split(',').includes('merge')) {
    return {atomic: false, keys: schema.patchMergeKey ? [schema.patchMergeKey] : []}
  }
  return {atomic: true}
}

export function resolve(ref: TypeRef, value: unknown): Atom {
  if (ref === undefined) {
    if (isPlainObject(value)) return {kind: 'map', elem: undefined, atomic: false}
    if (Array.isArray(value)) return {kind: 'list', elem: undefined, atomic: true}
    return {kind: 'scalar', scalar: 'untyped'}
  }
  switch (ref.type) {
    case 'object':
      return {kind: 'struct', schema: ref, fields: structFields(ref), atomic: ref.structType === 'atomic'}
    case 'map':
      return {kind: 'map', elem: ref.values, atomic: ref.mapType === 'atomic'}
    case 'array':
      return {kind: 'list', elem: ref.items, ...listRelationship(ref)}
    case 'raw':
      return resolve(undefined, value)
    case 'integer':
    case 'number':
      return {kind: 'scalar', scalar: 'numeric'}
    case 'boolean':
      return {kind: 'scalar', scalar: 'boolean'}
    case 'string':
      return {kind: 'scalar', scalar: ref.format === 'date-time' || ref.format === 'int-or-string' ? 'untyped' : 'string'}
    default:
      return {kind: 'scalar', scalar: 'untyped'}
  }
}

/** The type of a struct field or map value; unknown struct fields are free-form. */
function childType(atom: Atom, name: string): TypeRef {
  if (atom.kind === 'struct') return atom.fields.get(name)
  if (atom.kind === 'map') return atom.elem
  if (atom.kind === 'list') return atom.elem
  return undefined
}

function isDeclared(atom: Atom, name: string): boolean {
  return atom.kind === 'struct' && atom.fields.has(name)
}

/** List-map key defaults from the OpenAPI schema (`+default`) that our declarations do not carry. */
const keyDefaults: Record<string, Record<string, unknown>> = {
  ContainerPort: {protocol: 'TCP'},
  ServicePort: {protocol: 'TCP'},
  EndpointPort: {protocol: 'TCP'},
}

function goQuoteList(names: readonly string[]): string {
  return `[${names.map(goQuote).join(' ')}]`
}

/** listItemToPathElement: the key of an item of an associative list, or an error message. */
export function listItemElement(atom: ListAtom, item: unknown): PathElement | string {
  const keys = atom.keys ?? []
  if (keys.length > 0) {
    if (item === null) return 'associative list with keys may not have a null element'
    if (!isPlainObject(item)) return 'associative list with keys may not have non-map elements'
    const defaults = atom.elem?.type === 'object' ? keyDefaults[atom.elem.name] : undefined
    const fields: Array<readonly [string, unknown]> = []
    for (const key of keys) {
      if (Object.hasOwn(item, key)) fields.push([key, item[key]])
      else if (defaults && Object.hasOwn(defaults, key)) fields.push([key, defaults[key]])
    }
    if (fields.length === 0) {
      return `associative list with keys has an element that omits all key fields ${goQuoteList(keys)} (and doesn't have default values for any key fields)`
    }
    return keyElement(fields)
  }
  if (isPlainObject(item)) return "associative list without keys has an element that's a map type"
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements'
  if (item === null || item === undefined) return "associative list without keys has an element that's an explicit null"
  return {kind: 'value', value: item}
}

// ---------- validation (the applied configuration) ----------

/** How structured-merge-diff names a value of the wrong type in an applied configuration: Go's %#v of
 *  the value.Value it decoded (`&value.valueUnstructured{Value:1}`). */
function describe(value: unknown): string {
  return `&value.valueUnstructured{Value:${goSyntax(value)}}`
}

/** Go's %#v of a JSON value as decoded into interface{} (map keys sorted, as fmt prints them). */
function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)'
  if (typeof value === 'string') return goQuote(value)
  if (typeof value === 'number') return goFloatOrInt(value)
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`
  if (isPlainObject(value)) {
    const entries = Object.keys(value).sort().map((key) => `${goQuote(key)}:${goSyntax(value[key])}`)
    return `map[string]interface {}{${entries.join(', ')}}`
  }
  return String(value)
}

/** an integer as int64 prints it; another number as %#v prints a float64 (strconv's shortest 'g':
 *  an exponent, of two digits at least, below 1e-4 and from 1e6 on) */
function goFloatOrInt(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return String(n)
  const [mantissa, exponent] = n.toExponential().split('e')
  const power = Number(exponent)
  if (power >= -4 && power < 6) return String(n)
  return `${mantissa}e${power < 0 ? '-' : '+'}${String(Math.abs(power)).padStart(2, '0')}`
}

/** Errors as structured-merge-diff reports them: `.spec.foo: field not declared in schema`. */
export function validate(value: unknown, ref: TypeRef, path: PathElement[] = [], errors: string[] = []): string[] {
  const error = (message: string) => errors.push(path.length ? `${pathString(path)}: ${message}` : message)
  if (value === null || value === undefined) return errors
  const atom = resolve(ref, value)
  switch (atom.kind) {
    case 'scalar':
      if (atom.scalar === 'numeric' && typeof value !== 'number') error(`expected numeric (int or float), got ${describe(value)}`)
      else if (atom.scalar === 'string' && typeof value !== 'string') error(`expected string, got ${describe(value)}`)
      else if (atom.scalar === 'boolean' && typeof value !== 'boolean') error(`expected boolean, got ${describe(value)}`)
      else if (atom.scalar === 'untyped' && (typeof value === 'object')) error(`expected any scalar, got ${describe(value)}`)
      return errors
    case 'list': {
      if (!Array.isArray(value)) {
        error(`expected list, got ${describe(value)}`)
        return errors
      }
      const seen = new Set<string>()
      for (const [i, item] of value.entries()) {
        let pe: PathElement
        if (atom.keys === undefined) pe = {kind: 'index', index: i}
        else {
          const key = listItemElement(atom, item)
          if (typeof key === 'string') {
            error(`element ${i}: ${key}`)
            return errors
          }
          pe = key
          const id = serializePathElement(pe)
          if (seen.has(id)) error(`duplicate entries for key ${pathString([pe])}`)
          seen.add(id)
        }
        validate(item, atom.elem, [...path, pe], errors)
      }
      return errors
    }
    case 'struct':
    case 'map':
      if (!isPlainObject(value)) {
        error(`expected map, got ${describe(value)}`)
        return errors
      }
      for (const [key, child] of Object.entries(value)) {
        const pe: PathElement = {kind: 'field', name: key}
        if (atom.kind === 'struct' && !atom.fields.has(key)) {
          errors.push(`${pathString([...path, pe])}: field not declared in schema`)
          return errors
        }
        validate(child, childType(atom, key), [...path, pe], errors)
      }
      return errors
  }
}

// ---------- field sets (TypedValue.ToFieldSet) ----------

export function toFieldSet(value: unknown, ref: TypeRef): FieldSet {
  const set = new FieldSet()
  collect(value, ref, [], set)
  return set
}

function collect(value: unknown, ref: TypeRef, path: PathElement[], set: FieldSet): void {
  const atom = resolve(ref, value)
  switch (atom.kind) {
    case 'scalar':
      set.insert(path)
      return
    case 'list': {
      if (atom.atomic) {
        set.insert(path)
        return
      }
      if (!Array.isArray(value)) return
      const items = value.map((item) => ({item, pe: listItemElement(atom, item)}))
      const counts = new Map<string, number>()
      for (const {pe} of items) if (typeof pe !== 'string') counts.set(serializePathElement(pe), (counts.get(serializePathElement(pe)) ?? 0) + 1)
      for (const {item, pe} of items) {
        if (typeof pe === 'string') continue
        const child = [...path, pe]
        if ((counts.get(serializePathElement(pe)) ?? 0) > 1) {
          set.insert(child)
          continue
        }
        collect(item, atom.elem, child, set)
        set.insert(child)
      }
      return
    }
    case 'struct':
    case 'map': {
      if (atom.atomic) {
        set.insert(path)
        return
      }
      if (!isPlainObject(value)) return
      for (const [key, child] of Object.entries(value)) {
        const childPath = [...path, {kind: 'field', name: key} as PathElement]
        collect(child, childType(atom, key), childPath, set)
        if (child === null || (isPlainObject(child) && Object.keys(child).length === 0) || !isDeclared(atom, key)) set.insert(childPath)
      }
    }
  }
}

/** Set.EnsureNamedFieldsAreMembers: a struct field with children in the set becomes a member too. */
export function ensureNamedFieldsAreMembers(set: FieldSet, ref: TypeRef): FieldSet {
  const out = new FieldSet()
  for (const [id, pe] of set.members) out.members.set(id, pe)
  const atom = ref === undefined ? undefined : resolve(ref, undefined)
  for (const [id, child] of set.children) {
    if (child.pe.kind === 'field' && atom?.kind === 'struct' && atom.fields.has(child.pe.name)) out.members.set(id, child.pe)
    const type = atom === undefined ? undefined : child.pe.kind === 'field' ? childType(atom, child.pe.name) : atom.kind === 'list' ? atom.elem : undefined
    out.children.set(id, {pe: child.pe, set: ensureNamedFieldsAreMembers(child.set, type)})
  }
  return out
}

// ---------- comparison (TypedValue.Compare) ----------

export interface Comparison {
  added: FieldSet
  modified: FieldSet
  removed: FieldSet
}

/** absent values are undefined; null is a value */
export function compare(lhs: unknown, rhs: unknown, ref: TypeRef): Comparison {
  const result = {added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet()}
  compareAt(lhs, rhs, ref, [], result)
  return result
}

function itemsByElement(atom: ListAtom, list: unknown[] | undefined): Map<string, {pe: PathElement; items: unknown[]}> {
  const out = new Map<string, {pe: PathElement; items: unknown[]}>()
  for (const [i, item] of (list ?? []).entries()) {
    const pe = listItemElement(atom, item)
    if (typeof pe === 'string') throw new Error(`element ${i}: ${pe}`)
    const id = serializePathElement(pe)
    const entry = out.get(id)
    if (entry) entry.items.push(item)
    else out.set(id, {pe, items: [item]})
  }
  return out
}

function asList(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined
}

function asMap(value: unknown): Record<string, unknown> | undefined {
  return isPlainObject(value) ? value : undefined
}

function isEmptyContainer(value: unknown[] | Record<string, unknown> | undefined): boolean {
  return value === undefined || (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)
}

/** the atom of the pair: the lhs's when there is no rhs, else the rhs's */
function pairAtom(lhs: unknown, rhs: unknown, ref: TypeRef): Atom {
  return resolve(ref, rhs === undefined ? lhs : rhs)
}

function compareAt(lhs: unknown, rhs: unknown, ref: TypeRef, path: PathElement[], result: Comparison): void {
  const atom = pairAtom(lhs, rhs, ref)
  const leaf = () => {
    if (lhs === undefined) result.added.insert(path)
    else if (rhs === undefined) result.removed.insert(path)
    else if (!valuesEqual(lhs, rhs)) result.modified.insert(path)
  }
  if (atom.kind === 'scalar') return leaf()
  if (atom.kind === 'list') {
    const l = asList(lhs)
    const r = asList(rhs)
    if (atom.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) return leaf()
    const left = itemsByElement(atom, l)
    const right = itemsByElement(atom, r)
    const all = new Map([...left].map(([id, e]) => [id, e.pe]))
    for (const [id, e] of right) if (!all.has(id)) all.set(id, e.pe)
    for (const [id, pe] of all) {
      const li = left.get(id)?.items ?? []
      const ri = right.get(id)?.items ?? []
      const child = [...path, pe]
      if (li.length <= 1 && ri.length <= 1) compareAt(li[0], ri[0], atom.elem, child, result)
      else if (li.length >= 2 && ri.length >= 2) {
        if (!valuesEqual(li, ri)) result.modified.insert(child)
      } else if (li.length >= 2) {
        if (ri.length) compareAt(undefined, ri[0], atom.elem, child, result)
        result.removed.insert(child)
      } else {
        if (li.length) compareAt(li[0], undefined, atom.elem, child, result)
        result.added.insert(child)
      }
    }
  } else {
    const l = asMap(lhs)
    const r = asMap(rhs)
    if (atom.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) return leaf()
    const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})])
    for (const key of keys) {
      compareAt(ownValue(l, key), ownValue(r, key), childType(atom, key), [...path, {kind: 'field', name: key}], result)
    }
  }
  if (lhs === undefined) result.added.insert(path)
  else if (rhs === undefined) result.removed.insert(path)
}

// ---------- merge (TypedValue.Merge, the right-hand side wins) ----------

export function merge(lhs: unknown, rhs: unknown, ref: TypeRef): unknown {
  return mergeAt(lhs, rhs, ref, [])
}

function mergeAt(lhs: unknown, rhs: unknown, ref: TypeRef, path: PathElement[]): unknown {
  const atom = pairAtom(lhs, rhs, ref)
  const leaf = () => (rhs !== undefined ? rhs : lhs)
  if (atom.kind === 'scalar') return leaf()
  if (atom.kind === 'list') {
    const l = asList(lhs)
    const r = asList(rhs)
    if (atom.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) return leaf()
    const out = mergeListItems(atom, l ?? [], r ?? [], path)
    return out.length > 0 ? out : undefined
  }
  const l = asMap(lhs)
  const r = asMap(rhs)
  if (atom.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) return leaf()
  const out: Record<string, unknown> = {}
  const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})])
  for (const key of keys) {
    const merged = mergeAt(ownValue(l, key), ownValue(r, key), childType(atom, key), [...path, {kind: 'field', name: key}])
    if (merged !== undefined) setOwn(out, key, merged)
  }
  return Object.keys(out).length > 0 ? out : undefined
}

interface Indexed {
  pes: PathElement[]
  ids: string[]
  observed: Map<string, unknown>
}

function indexItems(atom: ListAtom, list: unknown[], allowDuplicates: boolean, path: PathElement[]): Indexed {
  const out: Indexed = {pes: [], ids: [], observed: new Map()}
  for (const [i, item] of list.entries()) {
    const pe = listItemElement(atom, item)
    if (typeof pe === 'string') throw new Error(`${pathString(path)}: element ${i}: ${pe}`)
    const id = serializePathElement(pe)
    if (out.observed.has(id)) {
      if (!allowDuplicates) throw new Error(`${pathString(path)}: duplicate entries for key ${pathString([pe])}`)
      out.observed.set(id, null)
    } else out.observed.set(id, item)
    out.pes.push(pe)
    out.ids.push(id)
  }
  return out
}

/** Items keep the live order; applied items not yet live are placed where the applied order puts them. */
function mergeListItems(atom: ListAtom, lhs: unknown[], rhs: unknown[], path: PathElement[]): unknown[] {
  const right = indexItems(atom, rhs, false, path)
  const left = indexItems(atom, lhs, true, path)
  const out: unknown[] = []
  const push = (pe: PathElement, l: unknown, r: unknown) => {
    const merged = mergeAt(l, r, atom.elem, [...path, pe])
    if (merged !== undefined) out.push(merged)
  }
  const shared = right.ids.filter((id) => left.observed.has(id))
  let next = shared.shift()
  const mergedRight = new Set<string>()
  let li = 0
  let ri = 0
  while (li < left.ids.length || ri < right.ids.length) {
    if (li < left.ids.length && ri < right.ids.length) {
      const id = left.ids[li]
      if (id === right.ids[ri]) {
        mergedRight.add(id)
        push(left.pes[li], left.observed.get(id), right.observed.get(id))
        li++
        ri++
        next = shared.shift()
        continue
      }
      if (right.observed.has(id) && next !== undefined && next !== id) {
        li++
        continue
      }
    }
    if (li < left.ids.length) {
      const id = left.ids[li]
      if (!right.observed.has(id)) {
        push(left.pes[li], lhs[li], undefined)
        li++
        continue
      } else if (mergedRight.has(id)) li++
    }
    if (ri < right.ids.length) {
      const id = right.ids[ri]
      mergedRight.add(id)
      push(right.pes[ri], left.observed.get(id), right.observed.get(id))
      ri++
      if (next !== undefined && next === id) next = shared.shift()
    }
  }
  return out
}

// ---------- removal (TypedValue.RemoveItems) ----------

/** The value without the paths of the set; a map or list left empty becomes null (absent once decoded). */
export function removeItems(value: unknown, set: FieldSet, ref: TypeRef): unknown {
  const atom = resolve(ref, value)
  if (atom.kind === 'scalar') return value
  if (atom.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || atom.atomic) return null
    const out: unknown[] = []
    for (const item of value) {
      const pe = listItemElement(atom, item)
      if (typeof pe === 'string') {
        out.push(item)
        continue
      }
      if (set.has([pe])) continue
      const sub = set.withPrefix(pe)
      out.push(sub.isEmpty() ? item : removeItems(item, sub, atom.elem))
    }
    return out.length > 0 ? out : null
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0 || atom.atomic) return null
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const pe: PathElement = {kind: 'field', name: key}
    if (set.has([pe])) continue
    const sub = set.withPrefix(pe)
    setOwn(out, key, sub.isEmpty() ? child : removeItems(child, sub, childType(atom, key)))
  }
  return Object.keys(out).length > 0 ? out : null
}

// ---------- Go's view of a stored object ----------

/** Struct types Kubernetes holds by value (not pointer): always present once encoded, even empty. */
const valueStructs = new Set([
  'ObjectMeta',
  'PodTemplateSpec',
  'PodSpec',
  'ResourceRequirements',
  'VolumeResourceRequirements',
  'DeploymentStrategy',
  'StatefulSetUpdateStrategy',
  'DaemonSetUpdateStrategy',
  'NodeDaemonEndpoints',
  'DaemonEndpoint',
  'NodeSystemInfo',
  'LoadBalancerStatus',
  'PodAffinityTerm',
  'NodeSelectorTerm',
])
const pointerStructs = new Set(['LabelSelector'])

function isValueStruct(name: string, field: Field): field is Field & ObjectSchema {
  if (field.type !== 'object' || field.pointer || pointerStructs.has(field.name)) return false
  return name === 'metadata' || name === 'spec' || name === 'status' || valueStructs.has(field.name) || field.required === true
}

function zeroOf(name: string, field: Field): unknown {
  if (isValueStruct(name, field)) return withGoZeroValues({}, field)
  return scalarZero(field)
}

/** Go's zero value of a scalar field ("" for a string, 0, false, "0" for a Quantity); null for the rest
 *  (nil maps, slices, pointers, times, raw values). */
export function scalarZero(schema: Schema): unknown {
  switch (schema.type) {
    case 'string':
      return ''
    case 'integer':
    case 'number':
    case 'int-or-string':
      return 0
    case 'boolean':
      return false
    case 'quantity':
      return '0'
    default:
      return null
  }
}

/**
 * The object as Kubernetes' Go types encode it: struct fields held by value are present (as {}) and
 * fields without omitempty (declared `required`) hold their zero value. Field-set comparisons run on
 * this form so that ownership matches Kubernetes' (which container a "." marker goes on).
 */
export function withGoZeroValues(value: unknown, ref: TypeRef): unknown {
  if (ref === undefined || ref.type === 'raw') return value
  if (Array.isArray(value) && ref.type === 'array') return value.map((item) => withGoZeroValues(item, ref.items))
  if (!isPlainObject(value)) return value
  if (ref.type === 'map') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withGoZeroValues(v, ref.values)]))
  }
  if (ref.type !== 'object') return value
  const {fields, zeros} = zeroPlan(ref)
  const out: Record<string, unknown> = {}
  for (const key in value) {
    const field = fields.get(key)
    setOwn(out, key, field ? withGoZeroValues(value[key], field) : value[key])
  }
  for (const [name, zero] of zeros) if (!Object.hasOwn(value, name)) out[name] = zero
  return out
}

/** A struct's fields, and the zero value of each field Go always encodes (shared between calls:
 *  the zero-valued form is only read, by comparisons). */
interface ZeroPlan {
  fields: Map<string, Field>
  zeros: [string, unknown][]
}
const zeroPlans = new WeakMap<ObjectSchema, ZeroPlan>()

function zeroPlan(schema: ObjectSchema): ZeroPlan {
  let plan = zeroPlans.get(schema)
  if (!plan) {
    const fields = structFields(schema)
    const zeros: [string, unknown][] = []
    for (const [name, field] of fields) if (field.required || isValueStruct(name, field)) zeros.push([name, zeroOf(name, field)])
    plan = {fields, zeros}
    zeroPlans.set(schema, plan)
  }
  return plan
}

/** Nulls dropped from typed maps and structs, as decoding into Go types and encoding again drops them. */
export function dropNulls(value: unknown, ref: TypeRef): unknown {
  if (ref === undefined || ref.type === 'raw') return value
  if (Array.isArray(value)) return ref.type === 'array' ? value.map((item) => dropNulls(item, ref.items)) : value
  if (!isPlainObject(value) || (ref.type !== 'object' && ref.type !== 'map')) return value
  const atom = resolve(ref, value)
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (child === null) continue
    setOwn(out, key, dropNulls(child, childType(atom, key)))
  }
  return out
}
