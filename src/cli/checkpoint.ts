// `orch checkpoint POD -c CONTAINER`: asks the pod's node agent for a checkpoint of the container,
// through the server's nodes/{node}/proxy subresource (authorized as nodes/proxy, then by the agent as
// nodes/checkpoint), or straight at the agent with --agent URL, and prints the archive's path.
import type {AnyObject} from '../api/types.js'
import {RestClient} from '../client/index.js'
import {withSession, type ConnectOptions} from './connect.js'

export interface CheckpointOptions extends ConnectOptions {
  pod: string
  container?: string
  timeoutSeconds?: number
  /** the agent's URL, to skip the server's proxy */
  agent?: string
  /** with --agent: do not verify the agent's serving certificate */
  insecureSkipTLSVerify?: boolean
}

export function runCheckpoint(options: CheckpointOptions): Promise<void> {
  return withSession(options, async (session) => {
    const pod = await session.client.get<AnyObject>({group: '', version: 'v1', resource: 'pods', namespace: session.namespace, name: options.pod})
    const containers: AnyObject[] = pod.spec?.containers ?? []
    const container = options.container ?? (containers.length === 1 ? containers[0].name : undefined)
    if (!container) throw new Error(`pod "${options.pod}" has ${containers.length} containers: name one with -c (${containers.map((c) => c.name).join(', ')})`)
    if (!containers.some((c) => c.name === container)) throw new Error(`container "${container}" is not in pod "${options.pod}"`)
    const node = pod.spec?.nodeName
    if (!node && !options.agent) throw new Error(`pod "${options.pod}" is not bound to a node yet`)
    const path = `/checkpoint/${encodeURIComponent(session.namespace)}/${encodeURIComponent(options.pod)}/${encodeURIComponent(container)}`
    const query = options.timeoutSeconds !== undefined ? {timeout: String(options.timeoutSeconds)} : undefined
    let answer: AnyObject
    if (options.agent) {
      const direct = new RestClient({...session.client.config, server: options.agent, insecureSkipTLSVerify: options.insecureSkipTLSVerify}, {userAgent: 'orch-cli'})
      try {
        answer = await direct.requestJson({method: 'POST', path, query})
      } finally {
        await direct.destroy()
      }
    } else {
      answer = await session.client.requestJson({method: 'POST', path: `/api/v1/nodes/${encodeURIComponent(node)}/proxy${path}`, query})
    }
    for (const item of Array.isArray(answer.items) ? answer.items : []) process.stdout.write(`${item}\n`)
    return 0
  })
}
