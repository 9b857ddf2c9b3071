import {Args, Command, Flags} from '@oclif/core'
import {runCanI} from '../../src/cli/auth.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'

export default class CanI extends Command {
  static override summary = 'Check whether an action is allowed.'
  static override description =
    `Asks the server (a SelfSubjectAccessReview) whether you may do VERB on a resource or a non-resource URL. Prints yes (exit 0) or no (exit 1), with the authorizer's reason when it gave one. RESOURCE is a plural, singular, short name or Kind, optionally resource.group or resource/subresource; a URL starts with /.`
  static override examples = [
    '<%= config.bin %> auth can-i create configmaps',
    '<%= config.bin %> auth can-i update certificatesigningrequests/approval',
    '<%= config.bin %> auth can-i get nodes my-node --subresource status',
    '<%= config.bin %> auth can-i list pods -A',
    '<%= config.bin %> auth can-i get /healthz',
  ]

  static override args = {
    verb: Args.string({description: 'get, list, watch, create, update, patch, delete, deletecollection, or *', required: true}),
    resource: Args.string({description: 'the resource (or a URL starting with /)', required: true}),
    name: Args.string({description: 'a single object name'}),
  }

  static override flags = {
    subresource: Flags.string({description: 'the subresource, e.g. status, scale, approval'}),
    'all-namespaces': Flags.boolean({char: 'A', description: 'in every namespace', default: false}),
    quiet: Flags.boolean({char: 'q', description: 'print nothing; the exit code answers', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(CanI)
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
