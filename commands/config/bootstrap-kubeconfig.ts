import {Command, Flags} from '@oclif/core'
import {runBootstrapKubeconfig} from '../../src/cli/config.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'

export default class BootstrapKubeconfig extends Command {
  static override summary = 'Print a kubeconfig that joins an agent with a bootstrap token.'
  static override description =
    "The server and CA are those of your kubeconfig (or --server); the user is the bootstrap token, which the server must know (orch server --bootstrap-token). Give the result to `orch agent --bootstrap-kubeconfig`."
  static override examples = ['<%= config.bin %> config bootstrap-kubeconfig --token abcdef.0123456789abcdef > bootstrap.kubeconfig']

  static override flags = {
    token: Flags.string({description: 'the bootstrap token (ID.SECRET)', required: true}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(BootstrapKubeconfig)
    runBootstrapKubeconfig({...connectOptions(flags), token: flags.token})
  }
}
