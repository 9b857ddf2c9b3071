import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {runDelete} from '../src/cli/delete.js'

export default class Delete extends Command {
  static override summary = 'Delete objects by name, label selector, --all, or manifest.'
  static override description =
    `Deletes the named objects (KIND NAME... or KIND/NAME...), those a label selector chooses, every object of a type with --all, or the objects of manifests (-f). Prints one line per deletion, e.g. configmap "x" deleted. An object that does not exist is an error (exit 1, the others are still deleted) unless --ignore-not-found.`
  static override examples = [
    '<%= config.bin %> delete configmap settings',
    '<%= config.bin %> delete cm/settings cm/flags -n shop',
    '<%= config.bin %> delete configmaps -l app=web',
    '<%= config.bin %> delete -f settings.yaml --ignore-not-found',
  ]

  static override strict = false
  static override args = {
    kind: Args.string({description: 'the resource type, or KIND/NAME'}),
    names: Args.string({description: 'names of objects to delete'}),
  }

  static override flags = {
    filename: Flags.string({char: 'f', description: 'a manifest file, a directory, or - for stdin: delete its objects', multiple: true}),
    selector: Flags.string({char: 'l', description: 'delete the objects this label selector chooses'}),
    all: Flags.boolean({description: 'delete every object of the type in the namespace', default: false}),
    'all-namespaces': Flags.boolean({char: 'A', description: 'with --all or -l: in every namespace', default: false}),
    'ignore-not-found': Flags.boolean({description: 'an object that does not exist is no error', default: false}),
    cascade: Flags.option({options: ['background', 'foreground', 'orphan'] as const, description: 'what happens to dependents', default: 'background'})(),
    'grace-period': Flags.integer({description: 'seconds the object gets to terminate (-1: its default)', default: -1, min: -1}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Delete)
    await runDelete({
      ...connectOptions(flags),
      args: argv as string[],
      filenames: flags.filename ?? [],
      selector: flags.selector,
      all: flags.all,
      allNamespaces: flags['all-namespaces'],
      ignoreNotFound: flags['ignore-not-found'],
      cascade: flags.cascade,
      gracePeriod: flags['grace-period'],
    })
  }
}
