import {Command, Flags} from '@oclif/core'
import {DEFAULT_POD_SOCKET, runPods} from '../src/cli/pods.js'

export default class Pods extends Command {
  static override summary = "List or watch the pods an agent runs, from its local socket."
  static override description =
    "Talks to the agent's pod-info gRPC service on its UNIX socket (gate PodsAPI on the agent; the socket is readable by root only). Prints NAMESPACE NAME UID PHASE IP, or the Pod objects with -o json|yaml. --watch prints each change as the agent sees it, before the API server does, until interrupted. --fields sends a field mask (e.g. status.phase,status.podIPs)."
  static override examples = [
    '<%= config.bin %> pods --socket /var/lib/agent/pods/agent.sock',
    '<%= config.bin %> pods --watch',
    '<%= config.bin %> pods --uid 1f0c... -o yaml --fields metadata.name,status.phase',
  ]

  static override flags = {
    socket: Flags.string({description: "the agent's pod-info socket", default: DEFAULT_POD_SOCKET}),
    watch: Flags.boolean({char: 'w', description: 'print each change until interrupted', default: false}),
    uid: Flags.string({description: 'only the pod with this UID'}),
    fields: Flags.string({description: 'comma-separated field paths to return (a field mask)'}),
    output: Flags.option({char: 'o', options: ['table', 'json', 'yaml'] as const, default: 'table' as const, description: 'output format'})(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Pods)
    await runPods({
      socket: flags.socket,
      watch: flags.watch,
      uid: flags.uid,
      fields: flags.fields?.split(',').map((s) => s.trim()).filter(Boolean),
      output: flags.output,
    })
  }
}
