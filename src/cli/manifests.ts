// Reading the manifests of -f (apply, delete): YAML documents or JSON values from files, directories, http(s)
// URLs and stdin, read as kubectl's resource builder reads them with ContinueOnError. A source that cannot
// be read, or a document that cannot be parsed, is an error of its own: the documents of that source before
// it are kept (the ones after it are not read, as kubectl's StreamVisitor stops at the first decode error),
// and the other sources are still read. A document that parses but is not an object with apiVersion, kind
// and metadata.name is an error too, and the documents after it are still read.
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import * as yaml from 'js-yaml'
import type {AnyObject} from '../api/types.js'
import {loadAllYaml} from '../machinery/go-yaml.js'
import {isPlainObject} from '../machinery/typed-value.js'

/** An object as a manifest must give it: apiVersion, kind and a name at least. */
export type ManifestObject = AnyObject & {apiVersion: string; kind: string; metadata: Record<string, any> & {name: string}}

/** One object of a manifest, and where it came from (for messages). */
export interface Manifest {
  /** the file name, or `STDIN` */
  source: string
  object: ManifestObject
}

/** A manifest that cannot be read or parsed, or a document that is not an object kubectl could map. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ManifestError'
  }
}

/** What was read: the objects, and the errors met on the way (each one line), in the order met. */
export interface ManifestsRead {
  manifests: Manifest[]
  errors: ManifestError[]
}

const manifestExtensions = /\.(ya?ml|json)$/i

/**
 * The files a -f value names: itself, or a directory's .yaml/.yml/.json files in name order (with
 * `recursive`, those of its subdirectories too, each directory's files before its subdirectories').
 * A path that does not exist fails the whole command, as kubectl's builder refuses it before reading.
 */
function filesOf(path: string, recursive = false): string[] {
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ManifestError(code === 'ENOENT' ? `the path "${path}" does not exist` : `the path "${path}" cannot be read: ${(error as Error).message}`)
  }
  if (!stats.isDirectory()) return [path]
  const names = readdirSync(path).sort()
  const files = names
    .filter((name) => manifestExtensions.test(name))
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile())
  if (!recursive) return files
  const subdirectories = names.map((name) => join(path, name)).filter((dir) => statSync(dir).isDirectory())
  return [...files, ...subdirectories.flatMap((dir) => filesOf(dir, true))]
}

/** The text at an http(s) URL, as kubectl's -f URL reads it; a non-2xx answer is kubectl's error. */
async function readUrl(url: string): Promise<string> {
  let response: Response
  try {
    response = await fetch(url, {redirect: 'follow'})
  } catch (error) {
    const cause = (error as {cause?: Error}).cause
    throw new ManifestError(`unable to read URL "${url}": ${cause?.message ?? (error as Error).message}`)
  }
  if (!response.ok) {
    throw new ManifestError(`unable to read URL "${url}", server reported ${response.status} ${response.statusText}, status code=${response.status}`)
  }
  return response.text()
}

const urlPattern = /^https?:\/\//i

/** Documents decoded from one text, up to the first that could not be; `error` is that one's. */
interface Decoded {
  documents: unknown[]
  error?: ManifestError
}

/** The top-level values of a JSON text: one value, or a stream of concatenated objects decoded in turn. */
function decodeJson(text: string, source: string): Decoded {
  let wholeTextProblem: string
  try {
    return {documents: [JSON.parse(text)]}
  } catch (error) {
    // maybe a stream of several objects: decoded one after another below
    wholeTextProblem = (error as Error).message
  }
  const documents: unknown[] = []
  let start = -1
  let depth = 0
  let inString = false
  let escaped = false
  const failure = (message: string): Decoded => ({documents, error: new ManifestError(`error parsing ${source}: ${message}`)})
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (start < 0) {
      if (/\s/.test(c)) continue
      if (c !== '{') return failure(documents.length === 0 ? wholeTextProblem : `invalid character '${c}' looking for beginning of value`)
      start = i
      depth = 1
    } else if (inString) {
      if (escaped) escaped = false
      else if (c === '\\') escaped = true
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{' || c === '[') depth++
    else if ((c === '}' || c === ']') && --depth === 0) {
      try {
        documents.push(JSON.parse(text.slice(start, i + 1)))
      } catch (error) {
        return failure((error as Error).message)
      }
      start = -1
    }
  }
  return start < 0 ? {documents} : failure('unexpected end of JSON input')
}

/** kubectl's YAMLReader: a line that starts with `---` followed by nothing but spaces or a comment ends a document. */
const documentSeparator = /^---[ \t]*(#.*)?$/

/** The documents of a YAML stream, each parsed on its own as kubectl parses them (line numbers count from
 *  the document's start), up to the first that fails. */
function decodeYaml(text: string, source: string): Decoded {
  const chunks: string[][] = [[]]
  for (const line of text.split('\n')) {
    if (documentSeparator.test(line.replace(/\r$/, ''))) chunks.push([])
    else chunks[chunks.length - 1].push(line)
  }
  const documents: unknown[] = []
  for (const chunk of chunks) {
    try {
      documents.push(...loadAllYaml(chunk.join('\n'), {json: false}))
    } catch (error) {
      return {documents, error: new ManifestError(`error parsing ${source}: error converting YAML to JSON: yaml: ${yamlProblem(error)}`)}
    }
  }
  return {documents}
}

/** go-yaml's words for a problem: `line N: reason` (js-yaml's reason; go-yaml's own texts differ). */
function yamlProblem(error: unknown): string {
  if (!(error instanceof yaml.YAMLException)) return (error as Error).message
  return error.mark ? `line ${error.mark.line + 1}: ${error.reason}` : error.reason
}

/** The objects of one text: YAML documents or JSON values; empty documents skipped, kind List unpacked. */
export function parseManifests(text: string, source: string): ManifestsRead {
  const decoded = /^\s*[{[]/.test(text) ? decodeJson(text, source) : decodeYaml(text, source)
  const several = decoded.documents.length > 1 || decoded.error !== undefined
  const read: ManifestsRead = {manifests: [], errors: []}
  const add = (value: unknown, where: string) => {
    if (value === null || value === undefined) return
    if (!isPlainObject(value)) {
      read.errors.push(new ManifestError(`error parsing ${source}: ${where} is not an object`))
      return
    }
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      value.items.forEach((item: unknown, i: number) => add(item, `${where}, item ${i + 1}`))
      return
    }
    const missing = [
      typeof value.apiVersion === 'string' && value.apiVersion !== '' ? '' : 'apiVersion not set',
      typeof value.kind === 'string' && value.kind !== '' ? '' : 'kind not set',
      isPlainObject(value.metadata) && typeof value.metadata.name === 'string' && value.metadata.name !== '' ? '' : 'metadata.name not set',
    ].filter(Boolean)
    if (missing.length > 0) read.errors.push(new ManifestError(`error validating ${source}: ${where}: ${missing.join(', ')}`))
    else read.manifests.push({source, object: value as ManifestObject})
  }
  decoded.documents.forEach((value, i) => add(value, several ? `document ${i + 1}` : 'the document'))
  if (decoded.error) read.errors.push(decoded.error)
  return read
}

/** How readManifests reads: stdin (for `-`), and whether directories are read recursively (-R). */
export interface ReadOptions {
  readStdin?: () => string
  recursive?: boolean
}

/**
 * Every object of the -f values (files, directories, http(s) URLs, `-` for stdin), in order, and the
 * errors of the sources and documents that could not be read. Only a path that does not exist throws.
 */
export async function readManifests(paths: string[], options: ReadOptions = {}): Promise<ManifestsRead> {
  const readStdin = options.readStdin ?? (() => readFileSync(0, 'utf8'))
  // kubectl expands every path before reading any
  const sources = paths.map((path) => (path === '-' || urlPattern.test(path) ? [path] : filesOf(path, options.recursive)))
  const read: ManifestsRead = {manifests: [], errors: []}
  for (const source of sources.flat()) {
    let text: string
    try {
      text = source === '-' ? readStdin() : urlPattern.test(source) ? await readUrl(source) : readFile(source)
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      read.errors.push(error)
      continue
    }
    const parsed = parseManifests(text, source === '-' ? 'STDIN' : source)
    read.manifests.push(...parsed.manifests)
    read.errors.push(...parsed.errors)
  }
  return read
}

function readFile(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new ManifestError(`the path "${file}" cannot be read: ${(error as Error).message}`)
  }
}
