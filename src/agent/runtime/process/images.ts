// The process runtime's image store. Containers run host commands, so there is nothing to download:
// an image is a record. It is present once pulled (and until removed), PullImage succeeds for any
// reference the image rules allow, and CreateContainer refuses an image that is not present, as a
// real runtime does. Records survive restarts in `<root>/images.json`.
//
// Image rules (option `imageRules`, or a file, one rule per line, `#` comments): a glob (`*` matches
// anything, `/` included) allows matching references; `!glob` refuses them. The first matching rule
// wins. When there is at least one allowing rule, a reference no rule matches is refused; with only
// refusing rules (or none) it is allowed. Rules match the reference as written and normalised
// (`busybox` -> `docker.io/library/busybox:latest`).
import {createHash} from 'node:crypto'
import {readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {DeepPartial, Image, ImageSpec} from '../../cri/types.js'
import {notFound} from './errors.js'

export interface ImageRecord {
  id: string
  /** normalised references that name this image */
  tags: string[]
  /** `name@sha256:...` when it was pulled by digest */
  digests: string[]
  pulledAt: string
}

/** Docker's reference normalisation: default registry docker.io, `library/` for official images, tag latest. */
export function normalizeReference(reference: string): string {
  let name = reference.trim()
  let suffix = ''
  const at = name.indexOf('@')
  if (at >= 0) {
    suffix = name.slice(at)
    name = name.slice(0, at)
  }
  const slash = name.indexOf('/')
  const first = slash >= 0 ? name.slice(0, slash) : ''
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost')
  if (!hasRegistry) name = `docker.io/${slash >= 0 ? name : `library/${name}`}`
  const lastPart = name.slice(name.lastIndexOf('/') + 1)
  if (!suffix && !lastPart.includes(':')) name = `${name}:latest`
  return name + suffix
}

export function parseImageRules(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
}

export class ImageStore {
  private readonly records = new Map<string, ImageRecord>()
  private readonly file: string
  private readonly rules: {allow: boolean; pattern: RegExp; text: string}[]
  private readonly rulesSource: string

  constructor(rootDir: string, rules: string[], rulesSource = 'the image rules') {
    this.file = join(rootDir, 'images.json')
    this.rules = rules.map((rule) => {
      const allow = !rule.startsWith('!')
      return {allow, pattern: globToRegExp(allow ? rule : rule.slice(1)), text: rule}
    })
    this.rulesSource = rulesSource
    try {
      for (const record of JSON.parse(readFileSync(this.file, 'utf8')) as ImageRecord[]) this.records.set(record.id, record)
    } catch {
      // first start, or an unreadable file: start empty (images are re-pulled)
    }
  }

  /** Why a reference may not be pulled, or null when it may. */
  refusal(reference: string): string | null {
    const normalized = normalizeReference(reference)
    for (const rule of this.rules) {
      if (rule.pattern.test(reference) || rule.pattern.test(normalized)) return rule.allow ? null : `refused by rule ${JSON.stringify(rule.text)} of ${this.rulesSource}`
    }
    return this.rules.some((rule) => rule.allow) ? `no rule of ${this.rulesSource} allows it` : null
  }

  pull(spec: DeepPartial<ImageSpec> | null | undefined): ImageRecord {
    const reference = spec?.image ?? ''
    if (!reference) throw notFound('PullImage: no image reference given')
    const existing = this.find(reference)
    if (existing) return existing
    const refused = this.refusal(reference)
    if (refused) throw notFound(`failed to pull image ${JSON.stringify(reference)}: not found (${refused})`)
    const normalized = normalizeReference(reference)
    const id = `sha256:${createHash('sha256').update(normalized.split('@')[0]!).digest('hex')}`
    const record = this.records.get(id) ?? {id, tags: [], digests: [], pulledAt: new Date().toISOString()}
    if (normalized.includes('@')) {
      if (!record.digests.includes(normalized)) record.digests.push(normalized)
    } else if (!record.tags.includes(normalized)) record.tags.push(normalized)
    this.records.set(id, record)
    this.save()
    return record
  }

  /** The image named by a reference, an image id (`sha256:...`) or an id's hex; null when not present. */
  find(reference: string): ImageRecord | null {
    if (!reference) return null
    const id = reference.startsWith('sha256:') ? reference : `sha256:${reference}`
    const byId = this.records.get(id)
    if (byId) return byId
    const normalized = normalizeReference(reference)
    for (const record of this.records.values()) if (record.tags.includes(normalized) || record.digests.includes(normalized)) return record
    return null
  }

  list(filter?: DeepPartial<ImageSpec> | null): ImageRecord[] {
    if (filter?.image) {
      const record = this.find(filter.image)
      return record ? [record] : []
    }
    return [...this.records.values()]
  }

  /** Removes an image; absent images are no error (CRI: RemoveImage is idempotent). */
  remove(spec: DeepPartial<ImageSpec> | null | undefined): void {
    const record = this.find(spec?.image ?? '')
    if (!record) return
    this.records.delete(record.id)
    this.save()
  }

  private save(): void {
    const temporary = `${this.file}.tmp`
    writeFileSync(temporary, JSON.stringify([...this.records.values()], null, 1), {mode: 0o600})
    renameSync(temporary, this.file)
  }
}

/** The CRI shape of an image record. */
export function toCriImage(record: ImageRecord): DeepPartial<Image> {
  return {
    id: record.id,
    repoTags: record.tags,
    repoDigests: record.digests,
    size: 0,
    uid: null,
    username: '',
    spec: {image: record.id, annotations: {}},
    pinned: false,
  }
}
