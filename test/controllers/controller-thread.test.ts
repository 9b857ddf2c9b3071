// The controllers' own thread (src/apiserver/controller-thread.ts), against a real server started
// without controllers: they reconcile from the thread, their log lines come out of the caller's
// logger, stop() ends the thread, and a start that fails rejects with the thread's reason.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {startControllerThread} from '../../src/apiserver/controller-thread.js'
import {createLogger} from '../../src/machinery/log.js'
import {call, waitForCollection} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'

describe('controllers on their own thread', {timeout: 90_000}, () => {
  let server: OrchServer
  before(async () => {
    server = await startOrchServer(['--controllers='])
  })
  after(async () => {
    await server?.cleanup()
  })
  const credentials = () => ({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key)})

  it('the controllers run on a thread of their own: a namespace is emptied and removed, their log lines come out of the server logger, stop() ends it and may be called twice', async () => {
    const lines: string[] = []
    const logger = createLogger({write: (line) => lines.push(line), base: {server: 'test'}})
    const controllers = await startControllerThread(credentials(), ['namespace'], logger, {}, 0)
    try {
      assert.ok(
        lines.some((line) => /INFO controllers started server=test controllers=namespace$/.test(line)),
        `the thread's "controllers started" through the caller's logger, with its fields: ${lines.join('\n')}`,
      )
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'threaded'}})).status, 201)
      const configMap = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'inside'}, data: {a: 'b'}}
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces/threaded/configmaps', configMap)).status, 201)
      assert.equal((await call(server.url, 'DELETE', '/api/v1/namespaces/threaded')).status, 200)
      await waitForCollection(server.url, '/api/v1/namespaces', (items) => !items.some((ns) => ns.metadata.name === 'threaded'), 'the namespace controller to remove the namespace')
    } finally {
      await controllers.stop()
    }
    await controllers.stop() // a second stop is harmless
  })

  it('a start that fails rejects with the reason the thread gave', async () => {
    const logger = createLogger({write: () => undefined})
    const bad = {...credentials(), server: 'not a url'}
    await assert.rejects(startControllerThread(bad, ['namespace'], logger), /server "not a url" is not a URL/)
  })
})
