// `/api/v1/nodes/{name}/proxy/{path}`: the request is passed on to the node's agent — its
// InternalIP (else Hostname) address and `status.daemonEndpoints.agentEndpoint.Port` — over HTTPS,
// presenting the server's agent-client credentials (the admin certificate), as Kubernetes' apiserver
// does with its kubelet client certificate. Like Kubernetes without --kubelet-certificate-authority,
// the agent's serving certificate is not verified. The agent's answer is passed back as it is.
import type {IncomingMessage, ServerResponse} from 'node:http'
import {request as httpsRequest} from 'node:https'
import type {AnyObject} from '../api/types.js'
import {errors} from '../machinery/status.js'

export interface AgentCredentials {
  cert: string
  key: string
}

/** Where a node's agent listens, or undefined when its status does not say. */
export function agentAddress(node: AnyObject): {host: string; port: number} | undefined {
  const addresses: AnyObject[] = Array.isArray(node.status?.addresses) ? node.status.addresses : []
  const host = addresses.find((a) => a.type === 'InternalIP')?.address ?? addresses.find((a) => a.type === 'Hostname')?.address
  const port = node.status?.daemonEndpoints?.agentEndpoint?.Port
  if (!host || typeof port !== 'number' || port <= 0) return undefined
  return {host, port}
}

/** Passes a request on to the agent of `node`; `path` is what follows `/proxy`. */
export async function proxyToAgent(
  request: IncomingMessage,
  response: ServerResponse,
  node: AnyObject,
  path: string,
  query: string,
  credentials: AgentCredentials | undefined,
): Promise<void> {
  const target = agentAddress(node)
  if (!target) throw errors.unavailable(`node "${node.metadata?.name}" has no agent address or port in its status`)
  await new Promise<void>((resolve, reject) => {
    const upstream = httpsRequest(
      {
        host: target.host,
        port: target.port,
        method: request.method,
        path: `${path || '/'}${query}`,
        headers: {'content-type': request.headers['content-type'] ?? 'application/json', accept: request.headers.accept ?? '*/*'},
        cert: credentials?.cert,
        key: credentials?.key,
        rejectUnauthorized: false,
        agent: false,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, {'content-type': answer.headers['content-type'] ?? 'application/octet-stream'})
        answer.pipe(response)
        answer.on('end', resolve)
        answer.on('error', reject)
      },
    )
    upstream.on('error', (error) => reject(errors.unavailable(`error trying to reach the agent of node "${node.metadata?.name}": ${error.message}`)))
    // a client that goes away ends the proxied request too (else it would stay in flight until the agent ends it)
    response.on('close', () => {
      if (response.writableFinished) return
      upstream.destroy()
      resolve()
    })
    request.pipe(upstream)
  })
}
