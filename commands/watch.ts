import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {runWatch} from '../src/cli/watch.js'

export default class Watch extends Command {
  static override summary = 'Print one line per change of a resource type, until interrupted.'
  static override description =
    `Watches the objects of a resource type and prints one line per event: "EVENT KIND[.GROUP]/NAME RESOURCEVERSION", with the namespace as a fourth field under -A, e.g. "MODIFIED configmap/settings 415". Every existing object is first printed as ADDED. With -o json each event is one line of JSON instead ({"type":...,"object":...}). Runs until interrupted, or for --timeout seconds.`
  static override examples = [
    '<%= config.bin %> watch configmaps',
    '<%= config.bin %> watch statefulsets.apps -A -l app=web',
    '<%= config.bin %> watch namespaces -o json --timeout 60',
  ]

  static override args = {
    kind: Args.string({description: 'the resource type (plural, singular, short name or Kind)', required: true}),
  }

  static override flags = {
    'all-namespaces': Flags.boolean({char: 'A', description: 'watch every namespace (the namespace becomes a fourth field)', default: false}),
    selector: Flags.string({char: 'l', description: 'label selector, e.g. app=web'}),
    'field-selector': Flags.string({description: 'field selector, e.g. metadata.name=x'}),
    output: Flags.string({char: 'o', description: 'json: one JSON event per line', options: ['json']}),
    timeout: Flags.integer({description: 'stop after this many seconds (exit 0)', min: 1}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Watch)
    await runWatch({
      ...connectOptions(flags),
      resource: args.kind,
      allNamespaces: flags['all-namespaces'],
      selector: flags.selector,
      fieldSelector: flags['field-selector'],
      output: flags.output,
      timeoutSeconds: flags.timeout,
    })
  }
}
