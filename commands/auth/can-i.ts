import {Args, Command, Flags} from '@oclif/core'
import {runCanI, runCanIList} from '../../src/cli/auth.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'
import {fail} from '../../src/cli/fail.js'

export default class CanI extends Command {
  static override summary = 'Check whether an action is allowed.'
  static override description =
    `Asks the server (a SelfSubjectAccessReview) whether you may do VERB on a resource or a non-resource URL. Prints yes (exit 0) or no (exit 1), with the authorizer's reason when it gave one. RESOURCE is a plural, singular, short name or Kind, optionally resource.group or resource/subresource; a URL starts with /. With --list, prints every action allowed in the namespace (a SelfSubjectRulesReview) as kubectl's table: Resources, Non-Resource URLs, Resource Names, Verbs.`
  static override examples = [
    '<%= config.bin %> auth can-i create configmaps',
    '<%= config.bin %> auth can-i update certificatesigningrequests/approval',
    '<%= config.bin %> auth can-i get nodes my-node --subresource status',
    '<%= config.bin %> auth can-i list pods -A',
    '<%= config.bin %> auth can-i get /healthz',
    '<%= config.bin %> auth can-i --list -n shop',
  ]

  static override args = {
    verb: Args.string({description: 'get, list, watch, create, update, patch, delete, deletecollection, or *'}),
    resource: Args.string({description: 'the resource (or a URL starting with /)'}),
    name: Args.string({description: 'a single object name'}),
  }

  static override flags = {
    subresource: Flags.string({description: 'the subresource, e.g. status, scale, approval'}),
    'all-namespaces': Flags.boolean({char: 'A', description: 'in every namespace', default: false}),
    quiet: Flags.boolean({char: 'q', description: 'print nothing; the exit code answers', default: false}),
    list: Flags.boolean({description: 'print all allowed actions', default: false}),
    'no-headers': Flags.boolean({description: 'with --list: print the actions without the header line', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(CanI)
    // kubectl's checks and messages
    if (flags.list) {
      if (args.verb !== undefined) fail('list option must be specified with no arguments', 1)
      if (flags.quiet || flags['all-namespaces'] || flags.subresource) {
        fail("list option can't be specified with neither quiet, all-namespaces nor subresource options", 1)
      }
      await runCanIList({...connectOptions(flags), noHeaders: flags['no-headers']})
      return
    }
    if (args.verb === undefined || args.resource === undefined) {
      fail('you must specify two arguments: verb resource or verb resource/resourceName.', 1)
    }
    if (flags['no-headers']) fail('--no-headers cannot be set without --list specified', 1)
    await runCanI({
      ...connectOptions(flags),
      verb: args.verb,
      target: args.resource,
      name: args.name,
      subresource: flags.subresource,
      allNamespaces: flags['all-namespaces'],
      quiet: flags.quiet,
    })
  }
}
