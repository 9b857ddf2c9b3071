import {Args, Command, Flags} from '@oclif/core'
import {runCheckpoint} from '../src/cli/checkpoint.js'
import {connectOptions, globalFlags} from '../src/cli/connect.js'

export default class Checkpoint extends Command {
  static override summary = "Checkpoint a running container through its node's agent."
  static override description =
    "Asks the agent of the pod's node (through the server's nodes/NODE/proxy subresource, or directly with --agent URL) to checkpoint the container, and prints the archive's path on the node (under {root}/checkpoints, readable by root only). Needs permission for nodes/proxy on the server and nodes/checkpoint on the agent."
  static override examples = ['<%= config.bin %> checkpoint web-0 -c app -n shop', '<%= config.bin %> checkpoint web-0 --timeout 60 --agent https://10.0.0.5:10250']

  static override args = {pod: Args.string({description: 'the pod', required: true})}
  static override flags = {
    container: Flags.string({char: 'c', description: 'the container (may be left out when the pod has one)'}),
    timeout: Flags.integer({description: 'seconds the runtime may take (0: its default)', min: 0}),
    agent: Flags.string({description: "the agent's URL, e.g. https://10.0.0.5:10250, instead of the server's proxy"}),
    'insecure-skip-tls-verify': Flags.boolean({description: "with --agent: do not verify the agent's certificate", default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Checkpoint)
    await runCheckpoint({
      ...connectOptions(flags),
      pod: args.pod,
      container: flags.container,
      timeoutSeconds: flags.timeout,
      agent: flags.agent,
      insecureSkipTLSVerify: flags['insecure-skip-tls-verify'],
    })
  }
}
