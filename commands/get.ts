import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {fail} from '../src/cli/fail.js'
import {runGet, runGetRaw} from '../src/cli/get.js'
import {outputFormats} from '../src/cli/printers.js'

export default class Get extends Command {
  static override summary = 'Display one or many objects.'
  static override description =
    `Prints the objects of a resource type as the server's table (NAME and the type's own columns, AGE last), or with -o as JSON, YAML or kind/name lines. KIND is a plural, singular, short name or Kind, optionally with its group (statefulsets.apps); objects may also be named KIND/NAME (cm/settings sts/web), and several types given as KIND,KIND (then each type gets its own table, names as kind/name). Without NAME, every object in the namespace (-n, else the context's) is listed; -A lists all namespaces. --no-headers drops the header line, -L KEY adds a column of that label's values, --sort-by PATH orders rows by a JSONPath field. --watch then prints each change as it happens (with -o json|yaml each object as its own document; --output-watch-events adds the event type; --watch-only skips what exists). --wire protobuf|cbor has the objects sent in that encoding (the output is the same). --raw PATH prints the answer to a GET of PATH (decoded to JSON when --wire asks for protobuf or CBOR).`
  static override examples = [
    '<%= config.bin %> get namespaces',
    '<%= config.bin %> get configmaps -n shop -o wide',
    '<%= config.bin %> get cm settings -o yaml',
    '<%= config.bin %> get cm/settings statefulsets.apps/web',
    '<%= config.bin %> get cm,sts -n shop',
    '<%= config.bin %> get statefulsets.apps -A -l app=web',
    '<%= config.bin %> get configmaps --watch',
    '<%= config.bin %> get pods -L app --sort-by=.metadata.creationTimestamp',
    '<%= config.bin %> get configmaps --watch-only --output-watch-events',
    '<%= config.bin %> get cm settings -o yaml --wire protobuf',
    '<%= config.bin %> get --raw /api/v1/namespaces/default/configmaps --wire protobuf',
  ]

  static override strict = false
  static override args = {
    kind: Args.string({description: 'the resource type (plural, singular, short name or Kind), KIND,KIND..., or KIND/NAME; not with --raw'}),
    names: Args.string({description: 'names of objects to get (default: all)'}),
  }

  static override flags = {
    output: Flags.string({char: 'o', description: 'output format', options: [...outputFormats]}),
    'all-namespaces': Flags.boolean({char: 'A', description: 'list across all namespaces (adds a NAMESPACE column)', default: false}),
    selector: Flags.string({char: 'l', description: 'label selector, e.g. app=web,tier!=cache'}),
    'field-selector': Flags.string({description: 'field selector, e.g. metadata.name=x'}),
    watch: Flags.boolean({char: 'w', description: 'after printing, watch and print each change', default: false}),
    raw: Flags.string({description: 'GET this API path (e.g. /api/v1/namespaces) and print the answer'}),
    'show-managed-fields': Flags.boolean({description: 'with -o json|yaml: keep metadata.managedFields (left out by default)', default: false}),
    'show-labels': Flags.boolean({description: 'add a LABELS column (key=value,... or <none>) to the table', default: false}),
    'ignore-not-found': Flags.boolean({description: 'a named object that does not exist is no error, and an empty list prints nothing', default: false}),
    'no-headers': Flags.boolean({description: 'print the table without its header line', default: false}),
    'label-columns': Flags.string({
      char: 'L',
      description: "a column per label key (KEY,KEY... or repeated): the object's value of that label, headed by the key's last path segment",
      multiple: true,
      multipleNonGreedy: true,
    }),
    'sort-by': Flags.string({description: 'order rows or items by this JSONPath field, e.g. .metadata.name or {.spec.replicas}'}),
    'output-watch-events': Flags.boolean({description: 'with --watch: an EVENT column (ADDED, MODIFIED, DELETED), or json/yaml events {type, object}', default: false}),
    'watch-only': Flags.boolean({description: 'watch without printing what exists first', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Get)
    const [kind, ...names] = argv as string[]
    if (flags.raw !== undefined) {
      const other = [
        'output',
        'all-namespaces',
        'selector',
        'field-selector',
        'watch',
        'watch-only',
        'output-watch-events',
        'show-managed-fields',
        'show-labels',
        'ignore-not-found',
        'no-headers',
        'label-columns',
        'sort-by',
      ].filter((name) => flags[name as keyof typeof flags])
      if (argv.length > 0) fail('arguments may not be passed when --raw is specified', 2)
      if (other.length > 0) fail(`--raw may not be specified with other flags that filter the server request or alter the output (--${other.join(', --')})`, 2)
      await runGetRaw({...connectOptions(flags), path: flags.raw})
      return
    }
    if (kind === undefined) fail('you must specify the type of resource to get (or --raw PATH)', 2)
    await runGet({
      ...connectOptions(flags),
      resource: kind,
      names,
      output: flags.output,
      allNamespaces: flags['all-namespaces'],
      selector: flags.selector,
      fieldSelector: flags['field-selector'],
      watch: flags.watch,
      showManagedFields: flags['show-managed-fields'],
      showLabels: flags['show-labels'],
      ignoreNotFound: flags['ignore-not-found'],
      noHeaders: flags['no-headers'],
      labelColumns: flags['label-columns'],
      sortBy: flags['sort-by'],
      outputWatchEvents: flags['output-watch-events'],
      watchOnly: flags['watch-only'],
    })
  }
}
