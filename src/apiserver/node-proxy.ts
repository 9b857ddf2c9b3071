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

/** What the answer callback of `exchangeWithAgent` settles. */
export interface Settle {
  resolve(): void
  reject(error: unknown): void
}

/**
 * One HTTPS request to the agent of `node` with the server's agent-client credentials (the agent's
 * serving certificate is not verified). `body` is piped upstream, else the request has none. Failing to
 * reach the agent is 503 before anything was answered; after that the client's response is cut off. A
 * client that goes away ends the upstream request too, else it would stay in flight until the agent ended it.
 */
export function exchangeWithAgent(
  node: AnyObject,
  response: ServerResponse,
  credentials: AgentCredentials | undefined,
  request: {method: string; path: string; headers?: Record<string, string>; body?: IncomingMessage},
  onAnswer: (answer: IncomingMessage, settle: Settle) => void,
): Promise<void> {
  const target = agentAddress(node)
  const nodeName = node.metadata?.name
  if (!target) return Promise.reject(errors.unavailable(`node "${nodeName}" has no agent address or port in its status`))
  return new Promise<void>((resolve, reject) => {
    const upstream = httpsRequest(
      {
        host: target.host,
        port: target.port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        cert: credentials?.cert,
        key: credentials?.key,
        rejectUnauthorized: false,
        agent: false,
      },
      (answer) => onAnswer(answer, {resolve, reject}),
    )
    upstream.on('error', (error) => {
      if (response.headersSent) {
        response.destroy()
        resolve()
      } else {
        reject(errors.unavailable(`error trying to reach the agent of node "${nodeName}": ${error.message}`))
      }
    })
    response.on('close', () => {
      if (response.writableFinished) return
      upstream.destroy()
      resolve()
    })
    if (request.body) request.body.pipe(upstream)
    else upstream.end()
  })
}

/** Passes a request on to the agent of `node`; `path` is what follows `/proxy`. */
export function proxyToAgent(
  request: IncomingMessage,
  response: ServerResponse,
  node: AnyObject,
  path: string,
  query: string,
  credentials: AgentCredentials | undefined,
): Promise<void> {
  const headers = {'content-type': request.headers['content-type'] ?? 'application/json', accept: request.headers.accept ?? '*/*'}
  return exchangeWithAgent(node, response, credentials, {method: request.method ?? 'GET', path: `${path || '/'}${query}`, headers, body: request}, (answer, settle) => {
    response.writeHead(answer.statusCode ?? 502, {'content-type': answer.headers['content-type'] ?? 'application/octet-stream'})
    answer.pipe(response)
    answer.on('end', settle.resolve)
    // the agent went away mid-answer: the headers are sent, so the client's response is cut off
    answer.on('error', () => {
      response.destroy()
      settle.resolve()
    })
  })
}
