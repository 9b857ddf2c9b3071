// GET pods/{name}/log (Kubernetes' LogREST and LogLocation): the PodLogOptions of the query are
// decoded (400 when they do not) and validated (422 on PodLogOptions), the container chosen (the
// only one, else `container` must name one of the pod's), and the pod's node agent asked for
// `/containerLogs/{namespace}/{pod}/{container}` with the same options; its answer streams back as
// `text/plain` (chunk by chunk, so `follow` goes on as long as the agent writes). An agent's 400 is
// this 400 with the agent's text, its 500 an internal error. A pod not bound to a node has no logs
// yet: an empty 200, as Kubernetes' LocationStreamer without a location.
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {AnyObject} from '../api/types.js'
import {ApiError, errors} from '../machinery/status.js'
import {agentLogQuery, decodePodLogOptions, validatePodLogOptions} from '../machinery/pod-log-options.js'
import {exchangeWithAgent, type AgentCredentials} from './node-proxy.js'

/** The container whose log is read (validateContainer): the pod's only one, else the one named. */
export function logContainer(pod: AnyObject, container: string | undefined): string {
  const name = pod.metadata?.name
  const containers: AnyObject[] = pod.spec?.containers ?? []
  const all: AnyObject[] = [...(pod.spec?.initContainers ?? []), ...containers, ...(pod.spec?.ephemeralContainers ?? [])]
  if (!container) {
    if (containers.length === 1) return containers[0].name
    if (containers.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`)
    throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.map((c) => c.name).join(' ')}]`)
  }
  if (!all.some((c) => c.name === container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`)
  return container
}

const MAX_ERROR_BODY = 50_000

/** Serves GET pods/{name}/log. `getPod` and `getNode` throw the registry's errors (404). */
export async function servePodLog(
  request: IncomingMessage,
  response: ServerResponse,
  name: string,
  query: URLSearchParams,
  lookups: {getPod(): Promise<AnyObject>; getNode(name: string): Promise<AnyObject>; credentials?: AgentCredentials},
): Promise<void> {
  const options = decodePodLogOptions(query)
  const problems = validatePodLogOptions(options)
  if (problems.length > 0) throw errors.invalid({group: '', kind: 'PodLogOptions'}, name, problems)
  const pod = await lookups.getPod()
  const container = logContainer(pod, options.container)
  const nodeName = pod.spec?.nodeName
  if (!nodeName) {
    response.writeHead(200, {'Content-Type': 'text/plain'})
    response.end()
    return
  }
  const node = await lookups.getNode(nodeName)
  const path = `/containerLogs/${encodeURIComponent(pod.metadata!.namespace)}/${encodeURIComponent(pod.metadata!.name)}/${encodeURIComponent(container)}${agentLogQuery(options)}`
  await exchangeWithAgent(node, response, lookups.credentials, {method: 'GET', path}, (answer, settle) => {
    const code = answer.statusCode ?? 502
    if (code < 200 || code > 206) {
      // GenericHttpResponseChecker: the agent's text becomes the error
      const chunks: Buffer[] = []
      let size = 0
      answer.on('data', (chunk: Buffer) => {
        if (size < MAX_ERROR_BODY) chunks.push(chunk)
        size += chunk.length
      })
      answer.on('end', () => {
        const text = Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY).toString('utf8')
        if (code === 400) settle.reject(errors.badRequest(text))
        else if (code === 500) settle.reject(errors.internal(text))
        else settle.reject(new ApiError(code, code === 404 ? 'NotFound' : code === 403 ? 'Forbidden' : code === 401 ? 'Unauthorized' : 'InternalError', text, {group: '', kind: 'pods/log', name}))
      })
      answer.on('error', settle.reject)
      return
    }
    response.writeHead(200, {'Content-Type': 'text/plain', ...(options.follow ? {'Transfer-Encoding': 'chunked'} : {})})
    answer.pipe(response)
    answer.on('end', settle.resolve)
    answer.on('error', () => {
      response.destroy()
      settle.resolve()
    })
  })
}
