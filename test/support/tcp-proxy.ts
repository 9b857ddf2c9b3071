// A TCP proxy on a free loopback port, for tests that take a client's connection away from a server
// without stopping the server: cut() drops every open connection, block() also drops new ones until
// unblock().
import {connect, createServer, type Socket} from 'node:net'

export interface TcpProxy {
  /** http://127.0.0.1:PORT */
  endpoint: string
  /** drops every open connection (both sides see it close) */
  cut(): void
  /** drops the open connections and every new one until unblock() */
  block(): void
  unblock(): void
  close(): Promise<void>
}

/** Forwards connections to target (http://host:port). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const {hostname, port} = new URL(target)
  const sockets = new Set<Socket>()
  let blocked = false
  const server = createServer((client) => {
    if (blocked) {
      client.destroy()
      return
    }
    const upstream = connect(Number(port), hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const cut = () => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    endpoint,
    cut,
    block() {
      blocked = true
      cut()
    },
    unblock() {
      blocked = false
    },
    close() {
      cut()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
