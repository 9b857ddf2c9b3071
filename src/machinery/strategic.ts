// Strategic merge patch, ported from Kubernetes' k8s.io/apimachinery/pkg/util/strategicpatch
// (StrategicMergeMapPatch: mergeMap with MergeParallelList and IgnoreUnmatchedNulls), reading the
// patch strategies and merge keys from our schemas instead of Go struct tags.
//
//  - maps and structs merge key by key, `null` deletes;
//  - lists whose patchStrategy includes `merge` merge by patchMergeKey (lists of primitives as sets);
//    every other list is replaced whole; a field with patchStrategy `replace` is replaced whole;
//  - directives: `$patch: replace|delete` (maps and list items), `$retainKeys`,
//    `$deleteFromPrimitiveList/<list>`, `$setElementOrder/<list>`;
//  - ordering is Kubernetes': without `$setElementOrder`, items the patch adds come before the
//    existing ones, patched items keep the patch's relative order, the others their own;
//  - free-form (`raw`) fields merge as JSON merge patch.
//
// The result is what Kubernetes stores once it decodes the merged map into its Go types: nulls and
// leftover directive keys in typed objects are dropped.
import type {Field, Schema} from '../api/types.js'
import {goFormat} from './field-path.js'
import {setOwn} from './own-keys.js'
import {applyMergePatch} from './patch.js'
import {ApiError, errors} from './status.js'
import {type TypeRef, isPlainObject, structFields} from './typed-value.js'

type Obj = Record<string, unknown>

const directiveMarker = '$patch'
const retainKeysDirective = '$retainKeys'
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList'
const setElementOrderPrefix = '$setElementOrder'

// mergepatch's errors. Those Kubernetes answers 400 or 422 (interpretStrategicMergePatchError) keep
// its status; the others, which it answers 500 with their message, are 400 here.
const badRequest = (message: string): ApiError => errors.badRequest(message)
const errBadPatchFormatForPrimitiveList = () => badRequest('invalid patch format of primitive list')
const errBadPatchFormatForRetainKeys = () => badRequest('invalid patch format of retainKeys')
const errBadPatchFormatForSetElementOrderList = () => badRequest('invalid patch format of setElementOrder list')
const errNoListOfLists = () => new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {})

/** Go's reflect type name of a decoded JSON value */
function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '%!s(<nil>)'
  if (Array.isArray(value)) return '[]interface {}'
  if (isPlainObject(value)) return 'map[string]interface {}'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64'
  return typeof value === 'boolean' ? 'bool' : 'string'
}

/** Go's %s of a value */
function goString(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return '%!s(<nil>)'
  return `%!s(${goTypeName(value)}=${goFormat(value)})`
}

const errBadArgType = (expected: string, actual: unknown) => badRequest(`expected a ${expected}, but received a ${goTypeName(actual)}`)
const errNoMergeKey = (m: unknown, key: string) => badRequest(`map: ${goFormat(m)} does not contain declared merge key: ${key}`)
const errBadPatchType = (t: unknown, m: unknown) => badRequest(`unknown patch type: ${goString(t)} in map: ${goFormat(m)}`)

// ---------- patch metadata from the schema ----------

interface PatchMeta {
  strategies: string[]
  mergeKey: string
}

const noMeta: PatchMeta = {strategies: [], mergeKey: ''}

function schemaName(schema: TypeRef): string {
  return schema?.type === 'object' ? schema.name : ''
}

/** LookupPatchMetadataForStruct: the field's schema and strategy (map values: the value schema). */
function lookupField(schema: TypeRef, key: string): {sub: TypeRef; meta: PatchMeta; field?: Field} {
  if (schema?.type === 'map') return {sub: schema.values, meta: noMeta}
  if (schema?.type !== 'object') return {sub: undefined, meta: noMeta}
  const field = structFields(schema).get(key)
  if (!field) return {sub: undefined, meta: noMeta}
  const strategies = field.patchStrategy ? field.patchStrategy.split(',') : []
  return {sub: field, meta: {strategies, mergeKey: field.type === 'array' ? (field.patchMergeKey ?? '') : ''}, field}
}

/** LookupPatchMetadataForSlice: the list's item schema and its strategy. */
function lookupSlice(schema: TypeRef, key: string, strict: boolean): {sub: TypeRef; meta: PatchMeta} {
  const {sub, meta, field} = lookupField(schema, key)
  if (strict && schema?.type === 'object' && !field) {
    throw badRequest(`unable to find api field in struct ${schema.name} for the json field ${JSON.stringify(key)}`)
  }
  if (strict && field && field.type !== 'array') throw badRequest(`expected slice or array type, but got: struct`)
  return {sub: sub?.type === 'array' ? sub.items : undefined, meta}
}

/** extractRetainKeysPatchStrategy: the strategy besides retainKeys. */
function otherStrategy(strategies: string[]): string {
  if (strategies.length === 0) return ''
  if (strategies.length === 1) return strategies[0] === 'retainKeys' ? '' : strategies[0]
  if (strategies.length === 2) {
    if (strategies[0] === 'retainKeys') return strategies[1]
    if (strategies[1] === 'retainKeys') return strategies[0]
  }
  throw badRequest(`unexpected patch strategy: [${strategies.join(' ')}]`)
}

// ---------- helpers ----------

type Kind = 'map' | 'slice' | 'scalar'

function kindOf(value: unknown): Kind {
  return Array.isArray(value) ? 'slice' : isPlainObject(value) ? 'map' : 'scalar'
}

function sameGoType(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b
  return kindOf(a) === kindOf(b) && (kindOf(a) !== 'scalar' || typeof a === typeof b)
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/')
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === deleteFromPrimitiveListPrefix ? errBadPatchFormatForPrimitiveList() : errBadPatchFormatForSetElementOrderList()
  }
  return key.slice(slash + 1)
}

/** removeDirectives: a map holding `$patch` is dropped (undefined); lists lose such items. */
function removeDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(removeDirectives).filter((v) => v !== undefined)
  if (isPlainObject(value)) {
    if (directiveMarker in value) return undefined
    const out: Obj = {}
    for (const [k, v] of Object.entries(value)) {
      const kept = removeDirectives(v)
      if (kept !== undefined) setOwn(out, k, kept)
    }
    return out
  }
  return value
}

function discardNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(discardNulls)
  if (isPlainObject(value)) {
    const out: Obj = {}
    for (const [k, v] of Object.entries(value)) if (v !== null) setOwn(out, k, discardNulls(v))
    return out
  }
  return value
}

/** original[k] = removeDirectives(patchV), or no key when patchV is itself a directive */
function setWithoutDirectives(target: Obj, key: string, value: unknown): void {
  const kept = removeDirectives(value)
  if (kept === undefined) delete target[key]
  else setOwn(target, key, kept)
}

function primitivesEqual(a: unknown, b: unknown): boolean {
  return a === b
}

function findByKey(list: unknown[], key: string, value: unknown): number {
  for (const [i, item] of list.entries()) {
    if (!isPlainObject(item)) throw badRequest(`value for key ${i} is not a map`)
    if (key in item && primitivesEqual(item[key], value)) return i
  }
  return -1
}

function sliceElementKind(...slices: unknown[][]): Kind {
  let kind: Kind | undefined
  let type: string | undefined
  for (const slice of slices) {
    for (const item of slice) {
      if (item === null || item === undefined) throw badRequest('list element types are not identical: a list item is null')
      const itemType = goTypeName(item).replace('int64', 'float64')
      if (kind === undefined) {
        kind = kindOf(item)
        type = itemType
        if (kind === 'slice') throw errNoListOfLists()
      } else if (type !== itemType) {
        throw badRequest(`list element types are not identical: ${goFormat(slices)}`)
      }
    }
  }
  if (kind === undefined) throw badRequest('no elements in any of the given slices')
  return kind
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: Kind): number {
  const valueOf = (v: unknown) => (kind === 'map' ? (isPlainObject(v) ? v[mergeKey] : undefined) : v)
  const wanted = valueOf(item)
  return list.findIndex((v) => primitivesEqual(valueOf(v), wanted))
}

// ---------- ordering ----------

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isPlainObject(item)) throw errBadArgType('map[string]interface {}', item)
      if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey)
    }
  }
}

function isDeleteItem(item: unknown): boolean {
  return isPlainObject(item) && item[directiveMarker] === 'delete'
}

/** normalizeSliceOrder: sorted by position in `order`; `$patch: delete` items last. */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: Kind): unknown[] {
  let toDelete: unknown[] = []
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, toSort, order)
    toDelete = toSort.filter(isDeleteItem)
    toSort = toSort.filter((item) => !isDeleteItem(item))
  }
  const ranked = toSort.map((item, i) => ({item, i, at: indexIn(order, item, mergeKey, kind)}))
  ranked.sort((a, b) => {
    if (a.at >= 0 && b.at >= 0) return a.at - b.at || a.i - b.i
    if (a.at >= 0 !== b.at >= 0) return a.at >= 0 ? -1 : 1
    return a.i - b.i
  })
  return [...ranked.map((r) => r.item), ...toDelete]
}

/** mergeSortedSlice: server-only items (left) go before a patch item only when both are in the
 *  server's order and the server item came first there. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, kind: Kind): unknown[] {
  const out: unknown[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++])
    else if (j >= right.length) out.push(left[i++])
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind)
      const ri = indexIn(serverOrder, right[j], mergeKey, kind)
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
      else out.push(right[j++])
    }
  }
  return out
}

function normalizeElementOrder(patch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, kind: Kind): unknown[] {
  const sortedPatch = normalizeSliceOrder(patch, patchOrder, mergeKey, kind)
  const sortedServer = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind)
  return mergeSortedSlice(sortedServer, sortedPatch, serverOrder, mergeKey, kind)
}

/** [items present in partitionBy, the others] */
function partition(list: unknown[], partitionBy: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = []
  const serverOnly: unknown[] = []
  for (const item of list) {
    let found: boolean
    if (mergeKey === '') found = partitionBy.some((v) => primitivesEqual(v, item))
    else {
      if (!isPlainObject(item)) throw errBadArgType('map[string]interface {}', item)
      if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey)
      found = findByKey(partitionBy, mergeKey, item[mergeKey]) >= 0
    }
    ;(found ? inPatch : serverOnly).push(item)
  }
  return [inPatch, serverOnly]
}

// ---------- lists ----------

/**
 * The caller's view of a list after patch.go changed it in place: Go's `append(s[:i], s[i+1:]...)`
 * deletes by shifting the backing array, and appends write into it while the original length lasts.
 * `$setElementOrder` orders server-only items by this view, so its results depend on it.
 */
interface Backing {
  view: unknown[]
  length: number
  shared: boolean
}

function mergeSliceHandler(
  original: unknown,
  patch: unknown,
  schema: TypeRef,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
  backing?: Backing,
): unknown[] {
  if (!Array.isArray(original)) throw errBadArgType('[]interface {}', original)
  if (!Array.isArray(patch)) throw errBadArgType('[]interface {}', patch)
  if (strategy === 'merge' || isDeleteList) return mergeSlice(original, patch, schema, mergeKey, isDeleteList, backing)
  return patch
}

function mergeSlice(original: unknown[], patch: unknown[], schema: TypeRef, mergeKey: string, isDeleteList: boolean, backing?: Backing): unknown[] {
  if (original.length === 0 && patch.length === 0) return original
  const kind = sliceElementKind(original, patch)
  let merged: unknown[]
  if (kind !== 'map') {
    if (isDeleteList) return original.filter((v) => !patch.some((d) => primitivesEqual(d, v)))
    merged = []
    for (const v of [...original, ...patch]) if (!merged.some((m) => primitivesEqual(m, v))) merged.push(v)
  } else {
    if (mergeKey === '') throw badRequest(`cannot merge lists without merge key for ${schemaName(schema)}`)
    ;[original, patch] = mergeSliceWithSpecialElements(original, patch, mergeKey, backing)
    merged = mergeSliceWithoutSpecialElements(original, patch, mergeKey, schema, backing)
  }
  const [patchItems, serverOnly] = partition(merged, patch, mergeKey)
  return normalizeElementOrder(patchItems, serverOnly, patch, original, mergeKey, kind)
}

/** `$patch` items: delete removes the items with that key, replace makes the rest of the patch the list. */
function mergeSliceWithSpecialElements(original: unknown[], patch: unknown[], mergeKey: string, backing?: Backing): [unknown[], unknown[]] {
  const plain: unknown[] = []
  let replace = false
  for (const item of patch) {
    const typed = item as Obj
    if (!(directiveMarker in typed)) {
      plain.push(item)
      continue
    }
    const directive = typed[directiveMarker]
    if (directive === 'delete') {
      if (!(mergeKey in typed)) throw errNoMergeKey(typed, mergeKey)
      for (let at = findByKey(original, mergeKey, typed[mergeKey]); at >= 0; at = findByKey(original, mergeKey, typed[mergeKey])) {
        original = [...original.slice(0, at), ...original.slice(at + 1)]
        if (backing?.shared) {
          backing.view.copyWithin(at, at + 1, backing.length)
          backing.length--
        }
      }
    } else if (directive === 'replace') {
      replace = true
    } else if (directive === 'merge') {
      throw badRequest('merging lists cannot yet be specified in the patch')
    } else {
      throw errBadPatchType(directive, typed)
    }
  }
  if (replace && backing) backing.shared = false
  return replace ? [plain, []] : [original, plain]
}

function mergeSliceWithoutSpecialElements(original: unknown[], patch: unknown[], mergeKey: string, schema: TypeRef, backing?: Backing): unknown[] {
  const out = [...original]
  for (const item of patch) {
    const typed = item as Obj
    if (!(mergeKey in typed)) throw errNoMergeKey(typed, mergeKey)
    const at = findByKey(out, mergeKey, typed[mergeKey])
    if (at >= 0) out[at] = mergeMap(out[at] as Obj, typed, schema)
    else {
      out.push(item)
      if (backing?.shared) {
        if (backing.length < backing.view.length) backing.view[backing.length++] = item
        else backing.shared = false
      }
    }
  }
  return out
}

// ---------- maps ----------

function handleDirectiveInMergeMap(directive: unknown, patch: Obj): Obj {
  if (directive === 'replace') {
    const out = {...patch}
    delete out[directiveMarker]
    return out
  }
  if (directive === 'delete') return {}
  throw errBadPatchType(directive, patch)
}

/** `$retainKeys`: fields of the original not listed are cleared; the patch may set only listed ones. */
function applyRetainKeys(original: Obj, patch: Obj): void {
  if (!(retainKeysDirective in patch)) return
  const retain = patch[retainKeysDirective]
  delete patch[retainKeysDirective]
  if (!Array.isArray(retain)) throw errBadPatchFormatForRetainKeys()
  const keep = new Set(retain.filter((v): v is string => typeof v === 'string'))
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue
    if (!keep.has(k)) throw errBadPatchFormatForRetainKeys()
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k]
}

function validatePatchWithSetOrderList(patchList: unknown[], setOrder: unknown[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return
  const nonDelete = mergeKey ? patchList.filter((item) => {
    if (!isPlainObject(item)) throw errBadArgType('map[string]interface {}', item)
    return !isDeleteItem(item)
  }) : patchList
  const keyOf = (item: unknown) => {
    if (!mergeKey) return item
    if (!isPlainObject(item)) throw errBadArgType('map[string]interface {}', item)
    if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey)
    return item[mergeKey]
  }
  let p = 0
  let s = 0
  while (p < nonDelete.length && s < setOrder.length) {
    if (isPlainObject(nonDelete[p]) && directiveMarker in (nonDelete[p] as Obj)) {
      p++
      continue
    }
    if (primitivesEqual(keyOf(nonDelete[p]), keyOf(setOrder[s]))) p++
    s++
  }
  if (p < nonDelete.length && s >= setOrder.length) {
    throw badRequest(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goFormat(setOrder)}\n`)
  }
}

/** `$setElementOrder/<list>`: merges that list now and orders it as the directive says. */
function mergePatchIntoOriginal(original: Obj, patch: Obj, schema: TypeRef): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(setElementOrderPrefix)) continue
    const setOrder = patch[key]
    delete patch[key]
    if (!Array.isArray(setOrder)) throw errBadArgType('[]interface {}', setOrder)
    const originalKey = extractKey(key, setElementOrderPrefix)
    const foundOriginal = Object.hasOwn(original, originalKey)
    const foundPatch = Object.hasOwn(patch, originalKey)
    const originalList = original[originalKey]
    const patchList = patch[originalKey]
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('[]interface {}', originalList)
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('[]interface {}', patchList)
    const originalItems = foundOriginal ? (originalList as unknown[]) : []
    const patchItems = foundPatch ? (patchList as unknown[]) : []
    const {sub, meta} = lookupSlice(schema, originalKey, true)
    const strategy = otherStrategy(meta.strategies)
    validatePatchWithSetOrderList(patchItems, setOrder, meta.mergeKey)
    const backing: Backing = {view: [...originalItems], length: originalItems.length, shared: true}
    let merged: unknown[]
    if (foundOriginal && !foundPatch) merged = originalItems
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchItems) as unknown[]
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalItems, patchItems, sub, strategy, meta.mergeKey, false, backing)
    else continue
    const [inOrder, serverOnly] = partition(merged, setOrder, meta.mergeKey)
    const kind = sliceElementKind(originalItems, patchItems)
    setOwn(original, originalKey, normalizeElementOrder(inOrder, serverOnly, setOrder, backing.view, meta.mergeKey, kind))
    delete patch[originalKey]
  }
}

function mergeMap(original: Obj | null | undefined, patchIn: Obj, schema: TypeRef): Obj {
  if (directiveMarker in patchIn) return handleDirectiveInMergeMap(patchIn[directiveMarker], patchIn)
  const out: Obj = isPlainObject(original) ? {...original} : {}
  const patch: Obj = {...patchIn}
  applyRetainKeys(out, patch)
  mergePatchIntoOriginal(out, patch, schema)
  for (const [patchKey, patchV] of Object.entries(patch)) {
    let key = patchKey
    let isDeleteList = false
    if (patchKey.startsWith(deleteFromPrimitiveListPrefix)) {
      key = extractKey(patchKey, deleteFromPrimitiveListPrefix)
      isDeleteList = true
    }
    if (patchV === null) {
      delete out[key]
      continue
    }
    const field = lookupField(schema, key)
    // any key is a key: out[key] would read Object.prototype's members (own-keys.ts)
    const found = Object.hasOwn(out, key)
    const originalV = found ? out[key] : undefined
    if (field.sub?.type === 'raw' && !isDeleteList && otherStrategy(field.meta.strategies) !== 'replace') {
      // free-form: RFC 7386 all the way down
      setOwn(out, key, applyMergePatch(originalV, patchV))
      continue
    }
    if (!found || !sameGoType(originalV, patchV)) {
      if (!isDeleteList) setWithoutDirectives(out, key, discardNulls(patchV))
      continue
    }
    const kind = kindOf(patchV)
    if (kind === 'map') {
      if (otherStrategy(field.meta.strategies) === 'replace') setOwn(out, key, patchV)
      else setOwn(out, key, mergeMap(originalV as Obj, patchV as Obj, field.sub))
    } else if (kind === 'slice') {
      const {sub, meta} = lookupSlice(schema, key, false)
      setOwn(out, key, mergeSliceHandler(originalV, patchV, sub, otherStrategy(meta.strategies), meta.mergeKey, isDeleteList))
    } else {
      setOwn(out, key, patchV)
    }
  }
  return out
}

// ---------- decoding the result ----------

function isDirectiveKey(key: string): boolean {
  return key === directiveMarker || key === retainKeysDirective || key.startsWith(`${setElementOrderPrefix}/`) || key.startsWith(`${deleteFromPrimitiveListPrefix}/`)
}

/** What survives decoding into Go types: typed maps and structs lose null values and directive keys. */
function asDecoded(value: unknown, schema: TypeRef): unknown {
  if (schema === undefined || schema.type === 'raw') return value
  if (Array.isArray(value)) return schema.type === 'array' ? value.map((item) => asDecoded(item, schema.items)) : value
  if (!isPlainObject(value)) return value
  if (schema.type === 'map') {
    const out: Obj = {}
    for (const [k, v] of Object.entries(value)) if (v !== null) setOwn(out, k, asDecoded(v, schema.values))
    return out
  }
  if (schema.type !== 'object') return value
  const fields = structFields(schema)
  const out: Obj = {}
  for (const [k, v] of Object.entries(value)) {
    if (v === null || (!fields.has(k) && isDirectiveKey(k))) continue
    setOwn(out, k, asDecoded(v, fields.get(k)))
  }
  return out
}

/**
 * StrategicMergePatch(original, patch, schema): `schema` is the kind's schema (a declaration's
 * `schema`). Neither input is modified. Throws ApiError 400 (422 for lists of lists) with
 * Kubernetes' messages when the patch is malformed.
 */
export function strategicMergePatch(original: unknown, patch: unknown, schema: Schema): Record<string, any> {
  if (!isPlainObject(patch)) {
    throw badRequest(`json: cannot unmarshal ${Array.isArray(patch) ? 'array' : patch === null ? 'null' : typeof patch} into Go value of type map[string]interface {}`)
  }
  const merged = mergeMap(isPlainObject(original) ? original : {}, patch, schema)
  return asDecoded(merged, schema) as Record<string, any>
}

/** Kubernetes' name for it */
export const StrategicMergePatch = strategicMergePatch
