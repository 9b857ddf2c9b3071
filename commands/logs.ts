import {Args, Command, Flags} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {runLogs} from '../src/cli/logs.js'

export default class Logs extends Command {
  static override summary = "Print the logs of a pod's container."
  static override description =
    "Prints what a container of the pod wrote to stdout and stderr, read by the pod's node agent from its CRI log file, as kubectl logs does. A pod with several containers needs -c. With -f the output goes on until the container stops (or Ctrl-C); --previous prints the log of the container's previous instance (after a restart)."
  static override examples = [
    '<%= config.bin %> logs web-0',
    '<%= config.bin %> logs web-0 -c sidecar --tail 20',
    '<%= config.bin %> logs web-0 -f --since 5m --timestamps',
    '<%= config.bin %> logs web-0 --previous -n shop',
  ]

  static override args = {
    pod: Args.string({description: 'the name of the pod', required: true}),
  }

  static override flags = {
    ...globalFlags,
    container: Flags.string({char: 'c', description: 'the container to print the logs of (required when the pod has more than one)'}),
    follow: Flags.boolean({char: 'f', description: 'go on printing what the container writes until it stops'}),
    previous: Flags.boolean({char: 'p', description: "print the log of the container's previous instance"}),
    tail: Flags.integer({description: 'print only the last N lines (-1: all)', default: -1}),
    since: Flags.string({description: 'print only lines newer than this duration (5s, 2m, 3h)'}),
    timestamps: Flags.boolean({description: 'put the RFC 3339 timestamp of each line before it'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Logs)
    await runLogs({
      ...connectOptions(flags),
      pod: args.pod,
      container: flags.container,
      follow: flags.follow,
      previous: flags.previous,
      tail: flags.tail,
      since: flags.since,
      timestamps: flags.timestamps,
    })
  }
}
