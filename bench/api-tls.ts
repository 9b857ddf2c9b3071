// P4 of bench/api: a TLS handshake plus one request, on a new connection each time (no keep-alive),
// 16 at a time: what a client that does not reuse connections (curl in a loop, a short-lived CLI)
// costs the server. Orch's `GET /version`-sized answer against the bare node:https server's.
import {request} from 'node:https'

export interface TlsTarget {
  url: string
  tls: {ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer}
}

/** One GET on a fresh TLS connection (agent: false): resolves when the body is read. */
function handshakeAndGet(target: TlsTarget, path: string): Promise<void> {
  const url = new URL(path, target.url)
  return new Promise((resolve, reject) => {
    const req = request(
      {hostname: url.hostname, port: url.port, path: url.pathname, method: 'GET', agent: false, ...target.tls, headers: {Connection: 'close'}},
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`GET ${path}: ${response.statusCode}`))
          response.resume()
          return
        }
        response.on('data', () => {})
        response.on('end', () => resolve())
        response.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** Handshake+request pairs per second: `count` of them, `concurrency` in flight. */
export async function handshakeRate(target: TlsTarget, path: string, count: number, concurrency: number): Promise<number> {
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < count) {
      next++
      await handshakeAndGet(target, path)
    }
  }
  await Promise.all(Array.from({length: concurrency}, worker))
  return count / ((performance.now() - started) / 1000)
}
