import {Args, Command} from '@oclif/core'
import {connectOptions, globalFlags} from '../src/cli/connect.js'
import {runDescribe} from '../src/cli/describe.js'

export default class Describe extends Command {
  static override summary = 'Show the details of objects and the events about them.'
  static override description =
    `Prints a page per named object, as kubectl describe does: for a pod its node, status, IPs, containers (image, ports, requests and limits), conditions, QoS class, node selector and tolerations; for other kinds the name, labels and annotations. Each page ends with the Events whose involvedObject is the object (Type, Reason, Age, From, Message), which is where the scheduler says why a pod is Pending.`
  static override examples = ['<%= config.bin %> describe pod web-0', '<%= config.bin %> describe pods web-0 web-1 -n shop', '<%= config.bin %> describe node worker-1']

  static override strict = false
  static override args = {
    kind: Args.string({description: 'the resource type (plural, singular, short name or Kind)', required: true}),
    names: Args.string({description: 'names of the objects to describe', required: true}),
  }

  static override flags = {...globalFlags}

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Describe)
    const [kind, ...names] = argv as string[]
    await runDescribe({...connectOptions(flags), resource: kind!, names})
  }
}
