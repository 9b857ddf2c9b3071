// Content negotiation: which serializer and which view (object, Table, PartialObjectMetadata) an
// Accept header asks for, and what a Content-Type names.

export interface MediaRange {
  type: string
  subtype: string
  params: Record<string, string>
  q: number
}

/** Parses an Accept (or Content-Type) header into media ranges, in the order given, q-sorted stably. */
export function parseMediaRanges(header: string | undefined): MediaRange[] {
  if (!header || header.trim() === '') return []
  const ranges: MediaRange[] = []
  for (const part of splitOutsideQuotes(header, ',')) {
    const [full, ...paramParts] = splitOutsideQuotes(part, ';').map((s) => s.trim())
    if (!full) continue
    // a lone `*` is `*/*`, as goautoneg reads it
    const [type, subtype] = full === '*' ? ['*', '*'] : full.toLowerCase().split('/')
    if (!type || subtype === undefined) continue
    const params: Record<string, string> = {}
    let q = 1
    for (const p of paramParts) {
      const eq = p.indexOf('=')
      if (eq < 0) continue
      const key = p.slice(0, eq).trim().toLowerCase()
      let value = p.slice(eq + 1).trim()
      if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      if (key === 'q') q = Number(value) || 0
      else params[key] = value
    }
    ranges.push({type, subtype, params, q})
  }
  return ranges
    .map((r, i) => ({r, i}))
    .sort((a, b) => b.r.q - a.r.q || a.i - b.i)
    .map(({r}) => r)
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const out: string[] = []
  let current = ''
  let quoted = false
  for (const ch of text) {
    if (ch === '"') quoted = !quoted
    if (ch === separator && !quoted) {
      out.push(current)
      current = ''
    } else current += ch
  }
  out.push(current)
  return out
}

/** The essence of a Content-Type: `application/json; charset=utf-8` -> `application/json`. */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase()
}

export type ViewKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList'

export interface Negotiated<S extends string, V extends string = ViewKind> {
  /** the serializer's media type, e.g. application/json */
  mediaType: S
  /** the view asked for, when not the object itself */
  view?: {as: V; group: string; version: string}
  /** pretty printing asked for (JSON) */
  pretty: boolean
}

export interface NegotiationOptions<S extends string, V extends string = ViewKind> {
  /** media types that can be served, in preference order (the first is the default) */
  mediaTypes: readonly S[]
  /** groups accepted for views (meta.orch.io; meta.k8s.io too for Kubernetes clients) */
  viewGroups: readonly string[]
  /** views that can be served for this request (e.g. none for a watch of a virtual kind) */
  views: readonly V[]
  /** versions accepted for views (default v1 and v1beta1, the meta group's) */
  viewVersions?: readonly string[]
}

const META_VIEW_VERSIONS = ['v1', 'v1beta1']

/** Picks the first acceptable range. Returns null when none can be served (406). */
export function negotiate<S extends string, V extends string = ViewKind>(accept: string | undefined, options: NegotiationOptions<S, V>): Negotiated<S, V> | null {
  const ranges = parseMediaRanges(accept)
  // no Accept is the default; one that names no media range (`garbage`) accepts nothing
  if (ranges.length === 0) return accept === undefined || accept.trim() === '' ? {mediaType: options.mediaTypes[0], pretty: false} : null
  // (a range with q=0 is still served, as Kubernetes' negotiation reads q only to order the ranges)
  for (const range of ranges) {
    const mediaType = matchMediaType(range, options.mediaTypes)
    if (!mediaType) continue
    const as = range.params['as']
    if (as === undefined) {
      return {mediaType, pretty: range.params['pretty'] === '1' || range.params['pretty'] === 'true'}
    }
    const group = range.params['g'] ?? ''
    const version = range.params['v'] ?? ''
    if (!options.views.includes(as as V)) continue
    if (!options.viewGroups.includes(group) || !(options.viewVersions ?? META_VIEW_VERSIONS).includes(version)) continue
    return {mediaType, view: {as: as as V, group, version}, pretty: false}
  }
  return null
}

function matchMediaType<S extends string>(range: MediaRange, supported: readonly S[]): S | undefined {
  if (range.type === '*' && range.subtype === '*') return supported[0]
  for (const candidate of supported) {
    const [type, subtype] = candidate.split('/')
    if (range.type === type && (range.subtype === '*' || range.subtype === subtype)) return candidate
  }
  return undefined
}
