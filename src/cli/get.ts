// `orch get KIND [NAME...]`: the server's Table (default, wide) or the objects (json, yaml, name), by name
// or as a list (label and field selectors, one namespace or all), optionally followed by a watch that
// prints each change as it comes, with the columns lined up with the rows printed before. The objects come
// in the client's wire encoding (--wire); what is printed does not depend on it. `orch get --raw PATH`
// prints the answer to a GET of PATH: as sent when it is JSON or text, decoded to JSON when --wire asked
// for protobuf or CBOR and the server answered so.
import type {AnyObject} from '../api/types.js'
import {
  ApiStatusError,
  WIRE_ACCEPT,
  decodeResponseBody,
  isApiStatusError,
  optionsQuery,
  resourcePath,
  watchEvents,
  type ResourceLocator,
  type RestClient,
} from '../client/index.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'
import {
  TABLE_ACCEPT,
  TablePrinter,
  asTable,
  formatObjects,
  formatOne,
  isTableFormat,
  noResourcesMessage,
  outputFormat,
  printable,
  sortKeys,
  toJson,
  toYaml,
  withTypeMeta,
  type OutputFormat,
  type Table,
  type TableOptions,
} from './printers.js'
import {kindName, objectName, resolveResource, type ResourceInfo} from './resources.js'
import {sortByPath} from './sort.js'

export interface GetOptions extends ConnectOptions {
  /** the resource word: configmaps, cm, ConfigMap, statefulsets.apps, ... */
  resource: string
  names: string[]
  /** -o: json, yaml, name, wide (absent: the table) */
  output?: string
  allNamespaces?: boolean
  selector?: string
  fieldSelector?: string
  watch?: boolean
  /** --show-managed-fields: keep metadata.managedFields in json and yaml */
  showManagedFields?: boolean
  /** --show-labels: a LABELS column in the table */
  showLabels?: boolean
  /** --ignore-not-found: a missing named object is no error; an empty list prints no message */
  ignoreNotFound?: boolean
  /** --no-headers: the table without its header line */
  noHeaders?: boolean
  /** -L: a column per label key, holding the object's value of it */
  labelColumns?: string[]
  /** --sort-by: a JSONPath field of the objects to order the rows or items by */
  sortBy?: string
  /** --output-watch-events (with -w): an EVENT column, or json/yaml events {type, object} */
  outputWatchEvents?: boolean
  /** --watch-only: print the changes only, not what exists when the watch starts */
  watchOnly?: boolean
}

const PAGE = 500

/** Runs `orch get`; sets the exit code (1 when any named object could not be read). */
export function runGet(options: GetOptions): Promise<void> {
  return withSession(options, (session) => get(session, options))
}

export interface RawGetOptions extends ConnectOptions {
  /** an absolute API path, optionally with a query: /api/v1/namespaces?limit=1 */
  path: string
}

const encodedTypes = new Set(['application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf', 'application/cbor'])

/** Runs `orch get --raw PATH`: the body of a GET, or its decoded JSON for a protobuf or CBOR answer. */
export function runGetRaw(options: RawGetOptions): Promise<void> {
  return withSession(options, async (session) => {
    if (!options.path.startsWith('/')) throw new Error(`--raw takes an absolute path, e.g. /api/v1/namespaces (got "${options.path}")`)
    const wire = session.client.wire
    const accept = wire === 'json' ? 'application/json, */*' : `${WIRE_ACCEPT[wire]}, */*`
    const response = await session.client.request({method: 'GET', path: options.path, accept})
    const contentType = String(response.headers['content-type'] ?? '')
    if (response.status < 200 || response.status > 299) throw ApiStatusError.fromResponse(response.status, response.body, contentType)
    const type = contentType.split(';')[0].trim().toLowerCase()
    if (encodedTypes.has(type)) process.stdout.write(toJson(decodeResponseBody(contentType, response.body)))
    else process.stdout.write(response.body)
    return 0
  })
}

/** Exits quietly when stdout's reader goes away (`orch get -w | head`). */
function exitOnClosedStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
}

/** A resource word of the command line and the names asked for in it (none: the whole collection). */
interface Wanted {
  word: string
  names: string[]
}

/** One resource type to read and the names asked for in it. */
interface Request {
  info: ResourceInfo
  names: string[]
}

/**
 * The resource words and names of `KIND[,KIND...] [NAME...]` or `KIND/NAME...` (several types allowed), as
 * kubectl reads them; the two forms cannot be mixed.
 */
export function parseGetArgs(resource: string, names: string[]): Wanted[] {
  const args = [resource, ...names]
  if (args.some((arg) => arg.includes('/'))) {
    if (!args.every((arg) => arg.includes('/'))) {
      throw new Error(
        "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'orch get resource/<resource_name>' instead of 'orch get resource resource/<resource_name>')",
      )
    }
    return args.map((arg) => {
      const [word, name, ...rest] = arg.split('/')
      if (!word || !name || rest.length > 0) throw new Error(`arguments in resource/name form must have a single resource and name: "${arg}"`)
      return {word, names: [name]}
    })
  }
  const words = resource.split(',')
  if (words.some((word) => word.trim() === '')) throw new Error(`"${resource}" is not a resource type or a comma-separated list of them`)
  return words.map((word) => ({word, names}))
}

function checkUsage(options: GetOptions, wanted: Wanted[]): void {
  const names = wanted.flatMap((w) => w.names)
  if (names.length > 0 && options.allNamespaces) {
    throw new Error('a resource cannot be retrieved by name across all namespaces')
  }
  if (names.length > 0 && options.selector) throw new Error('name cannot be provided when a selector is specified')
  if (options.watch && new Set(wanted.map((w) => w.word.toLowerCase())).size > 1) throw new Error('you may only specify a single resource type')
  if (options.watch && names.length > 1) {
    throw new Error(`watch is only supported on individual resources and resource collections, but ${names.length} resources were found`)
  }
  if (options.outputWatchEvents && !options.watch && !options.watchOnly) throw new Error('--output-watch-events option can only be used with --watch or --watch-only')
}

/** The printer options of the table flags. */
function tableOptions(options: GetOptions, wide: boolean, withNamespace: boolean): TableOptions {
  return {
    wide,
    withNamespace,
    showLabels: options.showLabels,
    labelColumns: (options.labelColumns ?? []).flatMap((l) => l.split(',')).map((l) => l.trim()).filter(Boolean),
    noHeaders: options.noHeaders,
  }
}

/** The Table's rows in --sort-by order (rows carry their whole objects when sorting: includeObject=Object). */
function sortTable(table: Table | undefined, sortBy: string | undefined): Table | undefined {
  if (!table || !sortBy) return table
  return {...table, rows: sortByPath(table.rows, sortBy, (row) => row.object)}
}

function sortObjects(objects: AnyObject[], sortBy: string | undefined): AnyObject[] {
  return sortBy ? sortByPath(objects, sortBy, (o) => o) : objects
}

/** The resource types the words name, each once, with the names asked for in it (in the order given). */
async function requestsOf(client: RestClient, wanted: Wanted[]): Promise<Request[]> {
  const out: Request[] = []
  for (const {word, names} of wanted) {
    const info = await resolveResource(client, word)
    const same = out.find((r) => r.info.group === info.group && r.info.version === info.version && r.info.resource === info.resource)
    if (!same) out.push({info, names: [...names]})
    else for (const name of names) if (!same.names.includes(name)) same.names.push(name)
  }
  return out
}

/** Where a resource type's objects are read: the namespace (none for cluster-scoped types and -A). */
function locate(session: Session, options: GetOptions, info: ResourceInfo): {locator: ResourceLocator; allNamespaces: boolean} {
  const allNamespaces = Boolean(options.allNamespaces) && info.namespaced
  const namespace = info.namespaced && !allNamespaces ? session.namespace : undefined
  return {locator: {group: info.group, version: info.version, resource: info.resource, namespace}, allNamespaces}
}

async function get(session: Session, options: GetOptions): Promise<number> {
  // --watch-only is a watch that does not print what is there first
  if (options.watchOnly) options = {...options, watch: true}
  const wanted = parseGetArgs(options.resource, options.names)
  checkUsage(options, wanted)
  const requests = await requestsOf(session.client, wanted)
  if (requests.length > 1) return getMany(session, options, requests)
  return getOne(session, {...options, names: requests[0].names}, requests[0].info)
}

/** One resource type: its Table or objects, then (-w) its changes. */
async function getOne(session: Session, options: GetOptions, info: ResourceInfo): Promise<number> {
  const {client} = session
  const {locator, allNamespaces} = locate(session, options, info)
  const namespace = locator.namespace
  const format = outputFormat(options.output)
  const printOptions = {showManagedFields: options.showManagedFields}
  const reader = new Reader(session, locator, options)

  let code = 0
  let resourceVersion: string | undefined
  const events = Boolean(options.watch && options.outputWatchEvents)
  const printer = new TablePrinter({...tableOptions(options, format === 'wide', allNamespaces), withEvents: events})
  const stream = new WatchStream(info, options, format, printer)
  if (isTableFormat(format)) {
    const table = sortTable(options.names.length > 0 ? await reader.namedTable() : await reader.listTable(), options.sortBy)
    if (reader.failed) code = 1
    resourceVersion = table?.metadata?.resourceVersion
    if (options.watchOnly) {
      // nothing of the list is printed; the watch goes on from its version
    } else {
      const printed = table ? printer.print(table, 'ADDED') : false
      if (!printed && options.names.length === 0 && !options.ignoreNotFound) process.stderr.write(noResourcesMessage(namespace) + '\n')
    }
  } else {
    const objectFormat = format as Exclude<OutputFormat, 'table' | 'wide'>
    let objects: AnyObject[]
    if (options.names.length > 0) {
      objects = sortObjects(await reader.namedObjects(), options.sortBy)
      if (reader.failed) code = 1
      resourceVersion = objects[0]?.metadata?.resourceVersion
      if (!options.watch && objects.length > 0) process.stdout.write(formatObjects(objects, objectFormat, info, options.names.length === 1, printOptions))
    } else {
      const list = await client.listAll(locator, {labelSelector: options.selector, fieldSelector: options.fieldSelector, limit: PAGE})
      objects = sortObjects(list.items, options.sortBy)
      resourceVersion = list.metadata?.resourceVersion
      if (!options.watch) process.stdout.write(formatObjects(objects, objectFormat, info, false, printOptions))
    }
    // a watch prints each object as its own document, as kubectl does, so the stream is one kind of thing
    if (options.watch && !options.watchOnly) for (const object of objects) stream.object('ADDED', object)
  }
  if (!options.watch || code !== 0) return code
  await watchChanges(client, locator, options, format, stream, resourceVersion)
  return 0
}

/**
 * What get -w prints per event: a table row (lined up with the rows above; EVENT first with
 * --output-watch-events), or an object as kubectl prints it in a watch: an indented JSON document, a YAML
 * document (`---` between documents), a name; with --output-watch-events JSON and YAML print the event,
 * {type, object} (JSON on one line, as kubectl prints it).
 */
class WatchStream {
  private first = true

  constructor(
    private readonly info: ResourceInfo,
    private readonly options: GetOptions,
    private readonly format: OutputFormat,
    readonly printer: TablePrinter,
  ) {}

  object(type: string, object: AnyObject): void {
    const format = this.format as 'json' | 'yaml' | 'name'
    const printOptions = {showManagedFields: this.options.showManagedFields}
    if (!this.options.outputWatchEvents || format === 'name') {
      process.stdout.write(formatOne(object, format, this.info, this.first, printOptions))
    } else {
      const event = {type, object: withTypeMeta(printable(object, printOptions), this.info)}
      if (format === 'json') process.stdout.write(JSON.stringify(sortKeysExceptTop(event)) + '\n')
      else process.stdout.write((this.first ? '' : '---\n') + toYaml(event))
    }
    this.first = false
  }
}

/** The event with its object's keys sorted but `type` before `object`, as kubectl prints a JSON watch event. */
function sortKeysExceptTop(event: {type: string; object: AnyObject}): unknown {
  return {type: event.type, object: sortKeys(event.object)}
}

/** The Table with `kind[.group]/` in front of each name, as kubectl prints rows of several types. */
function withKindPrefix(table: Table, info: ResourceInfo): Table {
  const found = table.columnDefinitions.findIndex((c) => c.format === 'name')
  const column = found >= 0 ? found : 0
  const rows = table.rows.map((row) => ({...row, cells: row.cells.map((cell, i) => (i === column ? objectName(info, String(cell)) : cell))}))
  return {...table, rows}
}

/**
 * Several resource types (`cm,sts`, `cm/a sts/web`), as kubectl prints them: one Table per type that has
 * rows, separated by a blank line, names as `kind[.group]/name` when rows of more than one type are
 * printed; or every object in one List (json, yaml), or one name line each.
 */
async function getMany(session: Session, options: GetOptions, requests: Request[]): Promise<number> {
  const format = outputFormat(options.output)
  const named = requests.some((r) => r.names.length > 0)
  let code = 0
  const read: {info: ResourceInfo; allNamespaces: boolean; table?: Table; objects: AnyObject[]}[] = []
  for (const request of requests) {
    const {locator, allNamespaces} = locate(session, options, request.info)
    const reader = new Reader(session, locator, {...options, names: request.names})
    if (isTableFormat(format)) {
      const table = request.names.length > 0 ? await reader.namedTable() : await reader.listTable()
      read.push({info: request.info, allNamespaces, table: sortTable(table, options.sortBy), objects: []})
    } else if (request.names.length > 0) {
      read.push({info: request.info, allNamespaces, objects: sortObjects(await reader.namedObjects(), options.sortBy)})
    } else {
      const list = await session.client.listAll(locator, {labelSelector: options.selector, fieldSelector: options.fieldSelector, limit: PAGE})
      read.push({info: request.info, allNamespaces, objects: sortObjects(list.items, options.sortBy)})
    }
    if (reader.failed) code = 1
  }
  if (isTableFormat(format)) {
    const shown = read.filter((r) => r.table && r.table.rows.length > 0)
    const prefix = new Set(shown.map((r) => kindName(r.info))).size > 1
    shown.forEach((r, i) => {
      // kubectl separates the tables by a blank line only when they have headers
      if (i > 0 && !options.noHeaders) process.stdout.write('\n')
      const table = r.table as Table
      new TablePrinter(tableOptions(options, format === 'wide', r.allNamespaces)).print(prefix ? withKindPrefix(table, r.info) : table)
    })
    if (shown.length === 0 && !named && !options.ignoreNotFound) {
      const namespaced = requests.some((r) => r.info.namespaced) && !options.allNamespaces
      process.stderr.write(noResourcesMessage(namespaced ? session.namespace : undefined) + '\n')
    }
    return code
  }
  if (format === 'name') {
    for (const r of read) for (const o of r.objects) process.stdout.write(objectName(r.info, o.metadata?.name ?? '') + '\n')
    return code
  }
  const printOptions = {showManagedFields: options.showManagedFields}
  const objects = read.flatMap((r) => r.objects.map((o) => withTypeMeta(printable(o, printOptions), r.info)))
  if (objects.length > 0 || !named) process.stdout.write(formatObjects(objects, format as 'json' | 'yaml', requests[0].info, false))
  return code
}

/** Reads named objects or whole lists, as Tables or objects, reporting (not throwing) per-name API errors. */
class Reader {
  failed = false

  constructor(
    private readonly session: Session,
    private readonly locator: ResourceLocator,
    private readonly options: GetOptions,
  ) {}

  private async each<T>(read: (name: string) => Promise<T>): Promise<T[]> {
    const out: T[] = []
    for (const name of this.options.names) {
      try {
        out.push(await read(name))
      } catch (error) {
        if (!isApiStatusError(error)) throw error
        if (error.code === 404 && this.options.ignoreNotFound) continue
        reportError(error.code === 404 ? await this.missingNamespace(error) : error, this.session.server)
        this.failed = true
      }
    }
    return out
  }

  /** kubectl's check after a named object is not found: when its namespace is missing, that is the error. */
  private async missingNamespace(notFound: ApiStatusError): Promise<ApiStatusError> {
    const namespace = this.locator.namespace
    if (!namespace) return notFound
    try {
      await this.session.client.get({group: '', version: 'v1', resource: 'namespaces', name: namespace})
      return notFound
    } catch (error) {
      return isApiStatusError(error) && error.code === 404 ? error : notFound
    }
  }

  /** The Tables of the named objects merged into one (undefined when none could be read). */
  async namedTable(): Promise<Table | undefined> {
    const query = this.options.sortBy ? {includeObject: 'Object'} : undefined
    const tables = await this.each(async (name) =>
      asTable(await this.session.client.requestJson({method: 'GET', path: resourcePath({...this.locator, name}), query, accept: TABLE_ACCEPT})),
    )
    if (tables.length === 0) return undefined
    return {...tables[0], rows: tables.flatMap((t) => t.rows)}
  }

  namedObjects(): Promise<AnyObject[]> {
    return this.each((name) => this.session.client.get({...this.locator, name}))
  }

  /** The whole collection's Table, read in pages; the first page's resourceVersion is the snapshot's. */
  async listTable(): Promise<Table> {
    let merged: Table | undefined
    let token: string | undefined
    do {
      const page = asTable(
        await this.session.client.requestJson({
          method: 'GET',
          path: resourcePath(this.locator),
          query: {
            ...optionsQuery({labelSelector: this.options.selector, fieldSelector: this.options.fieldSelector, limit: PAGE, continue: token}),
            // --sort-by reads fields of the whole objects
            includeObject: this.options.sortBy ? 'Object' : undefined,
          },
          accept: TABLE_ACCEPT,
        }),
      )
      merged = merged ? {...merged, rows: [...merged.rows, ...page.rows]} : page
      token = page.metadata?.continue
    } while (token)
    return merged
  }
}

function joinSelectors(...selectors: (string | undefined)[]): string | undefined {
  const parts = selectors.filter((s): s is string => Boolean(s))
  return parts.length > 0 ? parts.join(',') : undefined
}

/**
 * Watches from the resourceVersion of what was printed and prints each change: a table row (lined up with
 * the rows above), a JSON or YAML document, or a name. Resumes from the last version seen when the server
 * ends the watch; returns only on failure (thrown) or interruption.
 */
async function watchChanges(
  client: RestClient,
  locator: ResourceLocator,
  options: GetOptions,
  format: OutputFormat,
  stream: WatchStream,
  from: string | undefined,
): Promise<never> {
  exitOnClosedStdout()
  const fieldSelector = joinSelectors(options.names[0] ? `metadata.name=${options.names[0]}` : undefined, options.fieldSelector)
  const table = isTableFormat(format)
  let resourceVersion = from
  let columns: unknown[] | undefined
  while (true) {
    const events = watchEvents(client, locator, {
      resourceVersion,
      labelSelector: options.selector,
      fieldSelector,
      allowWatchBookmarks: true,
      headers: table ? {accept: TABLE_ACCEPT} : undefined,
    })
    for await (const event of events) {
      const object = event.object as AnyObject
      if (event.type === 'BOOKMARK') {
        resourceVersion = object?.metadata?.resourceVersion ?? resourceVersion
        continue
      }
      if (table) {
        // only a watch's first Table carries the column definitions (NoHeaders after it): keep them
        if (object?.kind === 'Table' && Array.isArray(object.columnDefinitions)) columns = object.columnDefinitions
        const t = asTable(object?.kind === 'Table' && object.columnDefinitions == null && columns ? {...object, columnDefinitions: columns} : object)
        stream.printer.print(t, event.type)
        resourceVersion = t.rows.at(-1)?.object?.metadata?.resourceVersion ?? t.metadata?.resourceVersion ?? resourceVersion
      } else {
        stream.object(event.type, object)
        resourceVersion = object?.metadata?.resourceVersion ?? resourceVersion
      }
    }
  }
}
