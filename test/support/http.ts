// Small HTTP helpers for end-to-end tests against a running orch server.
import {request as httpRequest} from 'node:http'
import {gunzipSync} from 'node:zlib'

export interface HttpResult {
  status: number
  headers: Record<string, string | string[] | undefined>
  raw: Buffer
  text: string
  json: any
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const init: RequestInit = {method, headers: {...headers}}
  if (body !== undefined) {
    init.body = typeof body === 'string' || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body)
    ;(init.headers as Record<string, string>)['Content-Type'] ??= 'application/json'
  }
  const response = await fetch(base + path, init)
  const raw = Buffer.from(await response.arrayBuffer())
  const text = raw.toString('utf8')
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  const out: Record<string, string> = {}
  response.headers.forEach((v, k) => (out[k] = v))
  return {status: response.status, headers: out, raw, text, json}
}

/** A request that does not decompress, to see Content-Encoding as sent. */
export function rawGet(base: string, path: string, headers: Record<string, string>): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, {method: 'GET', headers}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const raw = Buffer.concat(chunks)
        const decoded = res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw
        let json: any
        try {
          json = JSON.parse(decoded.toString())
        } catch {
          json = undefined
        }
        resolve({status: res.statusCode ?? 0, headers: res.headers, raw, text: decoded.toString(), json})
      })
    })
    req.on('error', reject)
    req.end()
  })
}

export interface WatchStream {
  events: any[]
  /** resolves when at least n events have arrived */
  waitFor(n: number): Promise<any[]>
  /** resolves when the server ends the stream */
  ended: Promise<void>
  status: number
  headers: Record<string, string | string[] | undefined>
  close(): void
}

/** Opens a watch (or any streaming GET) and collects newline-delimited JSON documents. */
export function openWatch(base: string, path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, {method: 'GET', headers}, (res) => {
      const events: any[] = []
      const waiters: {n: number; resolve: (e: any[]) => void}[] = []
      let buffer = ''
      let endResolve: () => void
      const ended = new Promise<void>((r) => (endResolve = r))
      const check = () => {
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (events.length >= waiters[i].n) waiters.splice(i, 1)[0].resolve(events.slice())
        }
      }
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString()
        let index
        while ((index = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, index).trim()
          buffer = buffer.slice(index + 1)
          if (line) events.push(JSON.parse(line))
        }
        check()
      })
      res.on('end', () => {
        if (buffer.trim()) events.push(JSON.parse(buffer))
        check()
        endResolve()
      })
      res.on('error', () => endResolve())
      resolve({
        events,
        status: res.statusCode ?? 0,
        headers: res.headers,
        ended,
        waitFor(n) {
          if (events.length >= n) return Promise.resolve(events.slice())
          return new Promise((r) => waiters.push({n, resolve: r}))
        },
        close() {
          req.destroy()
          endResolve()
        },
      })
    })
    req.on('error', reject)
    req.end()
  })
}
