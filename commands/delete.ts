import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {dryRunModes} from '../src/cli/apply.js'
import {booleanFlagValues} from '../src/cli/argv.js'
import {fail} from '../src/cli/fail.js'
import {parseDuration, runDelete} from '../src/cli/delete.js'

export default class Delete extends Command {
  static override summary = 'Delete objects by name, label selector, --all, or manifest.'
  static override description =
    `Deletes the named objects (KIND NAME... or KIND/NAME...), those a label selector chooses, every object of a type with --all, or the objects of manifests (-f). Prints one line per deletion, e.g. configmap "x" deleted (-o name: configmap/x), then, as kubectl, waits until the objects are gone (their finalizers done) unless --wait=false; --timeout bounds the wait. --dry-run=server has the server check each deletion without doing it, --dry-run=client sends nothing ("deleted (server dry run)", "deleted (dry run)"). An object that does not exist is an error (exit 1, the others are still deleted) unless --ignore-not-found.`
  static override examples = [
    '<%= config.bin %> delete configmap settings',
    '<%= config.bin %> delete cm/settings cm/flags -n shop',
    '<%= config.bin %> delete configmaps -l app=web',
    '<%= config.bin %> delete -f settings.yaml --ignore-not-found',
    '<%= config.bin %> delete namespace shop --wait=false',
    '<%= config.bin %> delete cm settings --dry-run=server -o name',
  ]

  static override strict = false
  static override args = {
    kind: Args.string({description: 'the resource type, or KIND/NAME'}),
    names: Args.string({description: 'names of objects to delete'}),
  }

  static override flags = {
    filename: Flags.string({char: 'f', description: 'a manifest file, a directory, an http(s) URL, or - for stdin: delete its objects', multiple: true}),
    recursive: Flags.boolean({char: 'R', description: 'read the directories of -f recursively', default: false}),
    selector: Flags.string({char: 'l', description: 'delete the objects this label selector chooses'}),
    all: Flags.boolean({description: 'delete every object of the type in the namespace', default: false}),
    'all-namespaces': Flags.boolean({char: 'A', description: 'with --all or -l: in every namespace', default: false}),
    'ignore-not-found': Flags.boolean({description: 'an object that does not exist is no error', default: false}),
    cascade: Flags.option({options: ['background', 'foreground', 'orphan'] as const, description: 'what happens to dependents', default: 'background'})(),
    'grace-period': Flags.integer({description: 'seconds the object gets to terminate (-1: its default)', default: -1, min: -1}),
    now: Flags.boolean({description: 'delete at once: the same as --grace-period=1', default: false}),
    output: Flags.string({char: 'o', description: 'name: print kind/name for each deleted object', options: ['name']}),
    'dry-run': Flags.option({
      options: dryRunModes,
      description: 'server: the server checks each deletion but deletes nothing; client: nothing is sent',
      default: 'none',
    })(),
    wait: Flags.boolean({description: 'wait until the objects are gone (finalizers done) before returning; --wait=false: do not', default: true, allowNo: true}),
    timeout: Flags.string({description: 'how long --wait waits, e.g. 30s, 5m (0: no limit)', default: '0s'}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Delete, booleanFlagValues(this.argv, {wait: {allowNo: true}, now: {allowNo: false}, 'ignore-not-found': {allowNo: false}, all: {allowNo: false}, recursive: {allowNo: false}}))
    let timeoutMs = 0
    try {
      timeoutMs = parseDuration(flags.timeout)
    } catch (error) {
      fail((error as Error).message, 2)
    }
    // a usage error, as kubectl's Complete returns it (exit 1)
    if (flags.now && flags['grace-period'] >= 0) fail('--now and --grace-period cannot be specified together', 1)
    await runDelete({
      ...connectOptions(flags),
      args: argv as string[],
      filenames: flags.filename ?? [],
      recursive: flags.recursive,
      selector: flags.selector,
      all: flags.all,
      allNamespaces: flags['all-namespaces'],
      ignoreNotFound: flags['ignore-not-found'],
      cascade: flags.cascade,
      gracePeriod: flags.now ? 1 : flags['grace-period'],
      output: flags.output,
      dryRun: flags['dry-run'],
      wait: flags.wait,
      timeoutMs,
    })
  }
}
