// kubectl's output formats. The default and `wide` print the server's Table (columns, cells and the
// humanised AGE all come from the server): no borders, upper-case headers, columns padded to their widest
// cell plus 3 spaces and at least 6 wide (kubectl's tabwriter: minwidth 6, padding 3), the last column
// unpadded; priority-0 columns only unless wide; a leading NAMESPACE column across namespaces. `json` and
// `yaml` print one object as it is and several as kubectl's client-side `List`, keys sorted as kubectl
// sorts them, metadata.managedFields left out unless asked for (kubectl's --show-managed-fields); `name`
// prints `kind[.group]/name`.
import {age} from '../api/columns.js'
import type {AnyObject} from '../api/types.js'
import {apiVersionOf, objectName, type ResourceInfo} from './resources.js'
import {dumpYaml} from '../machinery/go-yaml.js'

/** What the default and wide formats ask the server for: its Table, else (a kind without one) the object. */
export const TABLE_ACCEPT = 'application/json;as=Table;g=meta.orch.io;v=v1, application/json'

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name'

export const outputFormats = ['json', 'yaml', 'name', 'wide'] as const

/** The -o value as a format (absent = table). */
export function outputFormat(flag: string | undefined): OutputFormat {
  return flag === undefined || flag === '' ? 'table' : (flag as OutputFormat)
}

export function isTableFormat(format: OutputFormat): boolean {
  return format === 'table' || format === 'wide'
}

// ---------- tables ----------

export interface TableColumnDefinition {
  name: string
  type?: string
  format?: string
  priority?: number
}

export interface TableRow {
  cells: unknown[]
  object?: AnyObject
}

/** The parts of a meta.orch.io/v1 Table the printer reads. */
export interface Table {
  kind?: string
  columnDefinitions: TableColumnDefinition[]
  rows: TableRow[]
  metadata?: {resourceVersion?: string; continue?: string}
}

export function isTable(value: unknown): value is Table {
  const v = value as AnyObject
  return typeof v === 'object' && v !== null && v.kind === 'Table' && Array.isArray(v.columnDefinitions) && Array.isArray(v.rows)
}

/**
 * A Table made on the client from full objects, for a kind the server gives no Table for (it answered the
 * `application/json` fallback): NAME and AGE, as kubectl's default printer.
 */
export function tableOfObjects(objects: AnyObject[], now = new Date()): Table {
  return {
    kind: 'Table',
    columnDefinitions: [
      {name: 'Name', type: 'string', format: 'name', priority: 0},
      {name: 'Age', type: 'string', priority: 0},
    ],
    rows: objects.map((o) => ({cells: [o.metadata?.name ?? '', age(o.metadata?.creationTimestamp, now)], object: o})),
  }
}

/** A Table from the server's answer to a GET or list with TABLE_ACCEPT. */
export function asTable(body: AnyObject): Table {
  if (isTable(body)) return body
  if (Array.isArray(body.items)) return {...tableOfObjects(body.items), metadata: body.metadata}
  return tableOfObjects([body])
}

/** kubectl's rendering of one cell: strings up to their first line break (then `...`), null as <none>. */
function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return '<none>'
  if (typeof cell === 'string') {
    const cut = cell.search(/[\f\n\r]/)
    return cut >= 0 ? `${cell.slice(0, cut)}...` : cell
  }
  if (typeof cell === 'object') return JSON.stringify(cell)
  return String(cell)
}

/** Characters as a terminal counts them (code points, as Go's tabwriter counts runes). */
function textWidth(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

export interface TableOptions {
  /** print priority > 0 columns too (-o wide) */
  wide?: boolean
  /** a leading NAMESPACE column, from each row's object (-A) */
  withNamespace?: boolean
  /** a last LABELS column, from each row's object (--show-labels) */
  showLabels?: boolean
  /** one column per label key (-L), after the table's own: the key's last path segment upper-cased, its value */
  labelColumns?: string[]
  /** a leading EVENT column (get -w --output-watch-events): the type passed to render() */
  withEvents?: boolean
  /** no header line (--no-headers) */
  noHeaders?: boolean
}

/**
 * The LABELS cell of --show-labels as kubectl writes it (labels.Set.String): the `key=value` pairs sorted as
 * strings (so `app.orch.io/tier=fe` comes before `app=web`), or <none>.
 */
export function formatLabelPairs(labels: Record<string, string> | undefined): string {
  const pairs = Object.entries(labels ?? {}).map(([key, value]) => `${key}=${value}`)
  return pairs.length === 0 ? '<none>' : pairs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',')
}

/** kubectl's header of a -L column: the label key's last path segment, upper-cased (app.kubernetes.io/name: NAME). */
export function labelColumnHeader(key: string): string {
  return (key.split('/').at(-1) ?? key).toUpperCase()
}

/**
 * Prints Tables as kubectl does, remembering column widths between calls (as kubectl's watch output does)
 * so rows printed later line up with earlier ones; widths grow, never shrink. The header is printed with
 * the first rows.
 */
export class TablePrinter {
  private widths: number[] = []
  private headerPrinted = false

  constructor(
    private readonly options: TableOptions = {},
    private readonly write: (text: string) => void = (text) => void process.stdout.write(text),
  ) {
    // the EVENT column is as wide as its widest value (MODIFIED) from the start, as kubectl prints it
    if (options.withEvents) this.widths[0] = 'MODIFIED'.length + 3
  }

  /**
   * The lines (header unless printed before, then rows) of a Table; nothing for a Table without rows.
   * `event` fills the EVENT column of withEvents (ADDED, MODIFIED, DELETED).
   */
  render(table: Table, event = ''): string {
    if (table.rows.length === 0) return ''
    const shown = table.columnDefinitions.map((c, i) => ({column: c, index: i})).filter(({column}) => this.options.wide || !column.priority)
    const labelColumns = this.options.labelColumns ?? []
    const lead = (namespace: string, type: string) => [...(this.options.withEvents ? [type] : []), ...(this.options.withNamespace ? [namespace] : [])]
    const lines: string[][] = []
    if (!this.headerPrinted && !this.options.noHeaders) {
      const header = shown.map(({column}) => column.name.toUpperCase())
      header.push(...labelColumns.map(labelColumnHeader))
      if (this.options.showLabels) header.push('LABELS')
      lines.push([...lead('NAMESPACE', 'EVENT'), ...header])
    }
    for (const row of table.rows) {
      const cells = shown.map(({index}) => cellText(row.cells[index]))
      const labels: Record<string, string> | undefined = row.object?.metadata?.labels
      cells.push(...labelColumns.map((key) => labels?.[key] ?? ''))
      if (this.options.showLabels) cells.push(formatLabelPairs(labels))
      lines.push([...lead(String(row.object?.metadata?.namespace ?? ''), event), ...cells])
    }
    this.headerPrinted = true
    // every column but the last is padded: width = max(widest cell + 3, 6), remembered
    const columns = lines[0].length
    for (let c = 0; c < columns - 1; c++) {
      let width = Math.max(this.widths[c] ?? 0, 6)
      for (const line of lines) width = Math.max(width, textWidth(line[c]) + 3)
      this.widths[c] = width
    }
    return lines
      .map((line) => line.map((cell, c) => (c < columns - 1 ? cell + ' '.repeat(this.widths[c] - textWidth(cell)) : cell)).join('') + '\n')
      .join('')
  }

  /** Writes what render() gives; answers whether anything was written. */
  print(table: Table, event = ''): boolean {
    const text = this.render(table, event)
    if (text) this.write(text)
    return text !== ''
  }
}

/** kubectl's message on stderr when a get finds nothing: with the namespace when one was listed. */
export function noResourcesMessage(namespace?: string): string {
  return namespace ? `No resources found in ${namespace} namespace.` : 'No resources found'
}

// ---------- json, yaml, name ----------

/** The object with apiVersion and kind set (list items from some servers lack them), those two first. */
export function withTypeMeta(object: AnyObject, info: Pick<ResourceInfo, 'group' | 'version' | 'kind'>): AnyObject {
  const {apiVersion, kind, ...rest} = object
  return {apiVersion: apiVersion ?? apiVersionOf(info), kind: kind ?? info.kind, ...rest}
}

/** kubectl's client-side list of several objects (its keys in kubectl's order). */
export function listOf(items: AnyObject[], resourceVersion = ''): AnyObject {
  return {apiVersion: 'v1', items, kind: 'List', metadata: {resourceVersion}}
}

/**
 * The value with the keys of every object in sorted order, as kubectl prints objects (they are maps to it,
 * and Go writes map keys sorted). The output is then the same whatever order the keys arrived in, so the
 * same object read as JSON, protobuf or CBOR (--wire) prints the same.
 */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key])
  return out
}

/** JSON as kubectl prints it: keys sorted, 4-space indent, newline-terminated. */
export function toJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 4) + '\n'
}

/** YAML as kubectl prints it: keys sorted, block style, no line folding, no anchors. */
export function toYaml(value: unknown): string {
  return dumpYaml(value)
}

/** How json and yaml print objects. */
export interface ObjectPrintOptions {
  /** keep metadata.managedFields (kubectl's --show-managed-fields; by default they are left out) */
  showManagedFields?: boolean
}

/** The object as json/yaml print it: without metadata.managedFields unless asked for, as kubectl prints. */
export function printable(object: AnyObject, options: ObjectPrintOptions = {}): AnyObject {
  if (options.showManagedFields || object?.metadata?.managedFields === undefined) return object
  const {managedFields: _managedFields, ...metadata} = object.metadata
  return {...object, metadata}
}

/**
 * The json, yaml or name output of objects. `single` says the user asked for one object by name: then it is
 * printed as is; otherwise (a list, several names) the objects go into a List, even zero or one of them.
 * metadata.managedFields are left out unless options.showManagedFields.
 */
export function formatObjects(
  objects: AnyObject[],
  format: 'json' | 'yaml' | 'name',
  info: Pick<ResourceInfo, 'group' | 'version' | 'kind'>,
  single: boolean,
  options: ObjectPrintOptions = {},
): string {
  if (format === 'name') return objects.map((o) => objectName(info, o.metadata?.name ?? '') + '\n').join('')
  const typed = objects.map((o) => withTypeMeta(printable(o, options), info))
  const value = single && typed.length === 1 ? typed[0] : listOf(typed)
  return format === 'json' ? toJson(value) : toYaml(value)
}

/**
 * One object in a format, for streams (get --watch): a JSON document, a YAML document (after a `---`
 * separator unless it is the first), or a name line.
 */
export function formatOne(
  object: AnyObject,
  format: 'json' | 'yaml' | 'name',
  info: Pick<ResourceInfo, 'group' | 'version' | 'kind'>,
  first: boolean,
  options: ObjectPrintOptions = {},
): string {
  if (format === 'name') return objectName(info, object.metadata?.name ?? '') + '\n'
  const typed = withTypeMeta(printable(object, options), info)
  if (format === 'json') return toJson(typed)
  return (first ? '' : '---\n') + toYaml(typed)
}
