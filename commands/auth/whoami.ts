import {Command, Flags} from '@oclif/core'
import {runWhoami} from '../../src/cli/auth.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'

export default class Whoami extends Command {
  static override summary = 'Show who the server takes you for.'
  static override description = 'Prints the user name, UID, groups and extra attributes the server authenticated your credentials as (a SelfSubjectReview).'
  static override examples = ['<%= config.bin %> auth whoami', '<%= config.bin %> auth whoami -o yaml']

  static override flags = {
    output: Flags.option({char: 'o', description: 'output format', options: ['json', 'yaml'] as const})(),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Whoami)
    await runWhoami({...connectOptions(flags), output: flags.output})
  }
}
