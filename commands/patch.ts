import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {patchSubresources, patchTypes, runPatch} from '../src/cli/patch.js'

export default class Patch extends Command {
  static override summary = 'Update fields of one object with a JSON, merge or strategic merge patch.'
  static override description =
    `Sends one PATCH for the object KIND NAME (or KIND/NAME). The patch is JSON or YAML text given with -p (or -p @FILE, --patch-file FILE) and is, by --type: strategic (default; lists with a merge key such as containers by name are merged item by item), merge (RFC 7386: objects merged, lists replaced, null deletes) or json (RFC 6902: a list of operations). --subresource status or scale patches that subresource. Prints "configmap/x patched", or "configmap/x patched (no change)" when the object is as it was; with -o the patched object. The server's refusal is one line and exit 1.`
  static override examples = [
    `<%= config.bin %> patch configmap settings -p '{"data":{"mode":"fast"}}'`,
    `<%= config.bin %> patch cm/settings --type merge -p 'data: {mode: null}'`,
    `<%= config.bin %> patch statefulset web --type json -p '[{"op":"replace","path":"/spec/replicas","value":3}]'`,
    `<%= config.bin %> patch statefulsets.apps web --subresource scale --type merge -p '{"spec":{"replicas":5}}'`,
    '<%= config.bin %> patch node n1 -p @taints.yaml --dry-run=server',
  ]

  static override strict = false
  static override args = {
    kind: Args.string({description: 'the resource type, or KIND/NAME'}),
    name: Args.string({description: 'the name of the object'}),
  }

  static override flags = {
    patch: Flags.string({char: 'p', description: 'the patch, JSON or YAML; @FILE reads it from a file (@- from stdin)'}),
    'patch-file': Flags.string({description: 'a file holding the patch (JSON or YAML)'}),
    type: Flags.option({options: patchTypes, description: 'the kind of patch', default: 'strategic'})(),
    subresource: Flags.option({options: patchSubresources, description: 'patch this subresource of the object'})(),
    'dry-run': Flags.option({options: ['none', 'server'] as const, description: 'server: the server checks and answers but stores nothing', default: 'none'})(),
    'field-manager': Flags.string({description: 'the manager recorded for the changed fields', default: 'orch-patch'}),
    output: Flags.string({char: 'o', description: 'print the patched object instead of the result line', options: ['json', 'yaml', 'name']}),
    'show-managed-fields': Flags.boolean({description: 'with -o json|yaml: keep metadata.managedFields (left out by default)', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Patch)
    await runPatch({
      ...connectOptions(flags),
      args: argv as string[],
      type: flags.type,
      patch: flags.patch,
      patchFile: flags['patch-file'],
      subresource: flags.subresource,
      dryRun: flags['dry-run'],
      fieldManager: flags['field-manager'],
      output: flags.output,
      showManagedFields: flags['show-managed-fields'],
    })
  }
}
