// A real HTTPS admission webhook server for tests: its own CA, a serving certificate for 127.0.0.1
// and the given DNS names, and a handler per path that answers AdmissionReviews.
import {createServer, type Server} from 'node:https'
import type {AddressInfo} from 'node:net'
import {createCA, createSignedCert, type CertKeyPair} from '../../src/machinery/pki.js'

export interface ReviewAnswer {
  status?: number
  body?: unknown
  delayMs?: number
  rawBody?: string
}

/** `url` is the request's path and query as sent (e.g. `/check?timeout=10s`). */
export type ReviewHandler = (review: any, raw: string, url: string) => ReviewAnswer

export interface WebhookServer {
  url: string
  port: number
  /** the CA's PEM, base64 (a caBundle) */
  caBundle: string
  ca: CertKeyPair
  /** every AdmissionReview received, by path */
  received: Map<string, any[]>
  handle(path: string, handler: ReviewHandler): void
  close(): Promise<void>
}

/** allow, with the request's uid */
export function allow(review: any, extra: Record<string, unknown> = {}): ReviewAnswer {
  return {body: {apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true, ...extra}}}
}

export function deny(review: any, status: Record<string, unknown>): ReviewAnswer {
  return {body: {apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: false, status}}}
}

export async function startWebhookServer(dnsNames: string[] = []): Promise<WebhookServer> {
  const ca = await createCA('webhook test CA')
  const serving = await createSignedCert({ca, commonName: 'webhook', usages: ['server auth'], validitySeconds: 3600, ipAddresses: ['127.0.0.1'], dnsNames})
  const handlers = new Map<string, ReviewHandler>()
  const received = new Map<string, any[]>()
  const timers = new Set<NodeJS.Timeout>()
  const server: Server = createServer({cert: serving.certPem, key: serving.keyPem}, (request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (c: Buffer) => chunks.push(c))
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const path = (request.url ?? '/').split('?')[0]
      let review: any
      try {
        review = JSON.parse(raw)
      } catch {
        response.writeHead(400).end()
        return
      }
      received.set(path, [...(received.get(path) ?? []), review])
      const handler: ReviewHandler = handlers.get(path) ?? ((r: any) => allow(r))
      const answer: ReviewAnswer = handler(review, raw, request.url ?? '/')
      const send = () => {
        if (response.destroyed) return
        const text = answer.rawBody ?? JSON.stringify(answer.body ?? {})
        response.writeHead(answer.status ?? 200, {'Content-Type': 'application/json'})
        response.end(text)
      }
      if (answer.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer)
          send()
        }, answer.delayMs)
        timers.add(timer)
      } else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    ca,
    received,
    handle: (path, handler) => handlers.set(path, handler),
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
