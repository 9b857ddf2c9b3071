import {Command, Flags} from '@oclif/core'
import {runApply} from '../src/cli/apply.js'
import {globalFlags} from '../src/cli/connect.js'

export default class Apply extends Command {
  static override summary = 'Create or update objects from manifests.'
  static override description =
    `Reads objects from YAML or JSON manifests (several documents per file, kind List unpacked) and brings each to the state the manifest gives: an absent object is created; a present one is replaced (PUT at its live resourceVersion) when a field the manifest gives differs, else left unchanged. Prints one line per object: "configmap/x created", "configured" or "unchanged". A namespaced object without a namespace goes to -n or the context's namespace. A manifest that cannot be parsed fails the command before anything is sent; an object the server refuses is reported on one line, the others are still applied, and the command exits 1.`
  static override examples = [
    '<%= config.bin %> apply -f settings.yaml',
    '<%= config.bin %> apply -f manifests/ -n shop',
    'cat app.json | <%= config.bin %> apply -f -',
  ]

  static override flags = {
    filename: Flags.string({
      char: 'f',
      description: 'a manifest file, a directory (its .yaml, .yml and .json files in name order), or - for stdin',
      multiple: true,
      required: true,
    }),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Apply)
    await runApply({
      server: flags.server,
      kubeconfig: flags.kubeconfig,
      context: flags.context,
      namespace: flags.namespace,
      filenames: flags.filename,
    })
  }
}
