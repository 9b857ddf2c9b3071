import {Command, Flags} from '@oclif/core'
import {dryRunModes, runApply} from '../src/cli/apply.js'
import {booleanFlagValues} from '../src/cli/argv.js'
import {connectOptions, globalFlags} from '../src/cli/connect.js'

export default class Apply extends Command {
  static override summary = 'Create or update objects from manifests (server-side apply).'
  static override description =
    `Reads objects from YAML or JSON manifests (files, directories, -R for their subdirectories too, http(s) URLs, - for stdin; several documents per file, kind List unpacked) and applies each on the server: one PATCH with application/apply-patch+yaml, recorded in managedFields under --field-manager (default orch). The server creates an absent object and merges the manifest into a present one; prints one line per object as kubectl apply does, "configmap/x created", "configured" or "unchanged" (the object is read first to tell); -o name prints "configmap/x", -o json|yaml the applied objects. A field another manager owns with a different value is a conflict (one line, exit 1) unless --force-conflicts takes it over. --server-side=false uses create-or-replace instead (absent: created; present and different in a field the manifest gives: replaced, "configured"; else "unchanged"). A namespaced object without a namespace goes to -n or the context's namespace. As kubectl, a failure stops nothing else: every object that could be read is applied, then each error is printed on one line (a file or document that cannot be parsed: error parsing FILE: ...; an object the server refuses: its message), and the command exits 1.`
  static override examples = [
    '<%= config.bin %> apply -f settings.yaml',
    '<%= config.bin %> apply -f manifests/ -n shop',
    '<%= config.bin %> apply -f web.yaml --field-manager deploy-bot --force-conflicts',
    '<%= config.bin %> apply -f web.yaml --dry-run=server',
    'cat app.json | <%= config.bin %> apply -f -',
    '<%= config.bin %> apply -R -f manifests/ -o name',
    '<%= config.bin %> apply -f https://example.com/app.yaml',
  ]

  static override flags = {
    filename: Flags.string({
      char: 'f',
      description: 'a manifest file, a directory (its .yaml, .yml and .json files in name order), an http(s) URL, or - for stdin',
      multiple: true,
      required: true,
    }),
    'server-side': Flags.boolean({
      description: 'server-side apply (default); --server-side=false: create-or-replace on the client',
      default: true,
      allowNo: true,
    }),
    'field-manager': Flags.string({description: 'the manager that owns the applied fields (default: orch)'}),
    'force-conflicts': Flags.boolean({description: 'take over fields other managers own instead of failing with a conflict', default: false}),
    'dry-run': Flags.option({
      options: dryRunModes,
      description: 'server: the server checks and answers but stores nothing; client: nothing is sent',
      default: 'none',
    })(),
    recursive: Flags.boolean({char: 'R', description: 'read the directories of -f recursively', default: false}),
    output: Flags.string({char: 'o', description: 'name: print kind/name per object; json|yaml: print the applied objects (several as a List)', options: ['name', 'json', 'yaml']}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const argv = booleanFlagValues(this.argv, {'server-side': {allowNo: true}, 'force-conflicts': {allowNo: false}, recursive: {allowNo: false}})
    const {flags} = await this.parse(Apply, argv)
    await runApply({
      ...connectOptions(flags),
      filenames: flags.filename,
      serverSide: flags['server-side'],
      fieldManager: flags['field-manager'],
      forceConflicts: flags['force-conflicts'],
      dryRun: flags['dry-run'],
      output: flags.output,
      recursive: flags.recursive,
    })
  }
}
