// Pod garbage collection against a real server: pods bound to a node that does not exist are deleted
// (grace 0) once the node has been missing for the quarantine; pods of existing nodes stay.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {PodGCController} from '../../src/controllers/podgc.js'
import {RestClient} from '../../src/client/index.js'
import {createLogger} from '../../src/machinery/log.js'
import {call} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'

describe('podgc', {timeout: 60_000}, () => {
  let server: OrchServer
  let client: RestClient
  let clock = 1_000_000
  let gc: PodGCController

  before(async () => {
    server = await startOrchServer(['--controllers', 'namespace'])
    client = new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key)})
    gc = new PodGCController(client, createLogger({write: () => undefined}), {quarantineMs: 40_000, checkPeriodMs: 3_600_000, now: () => clock})
  })
  after(async () => {
    await gc?.stop()
    await client?.close()
    await server?.cleanup()
  })

  const pod = (name: string, nodeName: string) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {nodeName, containers: [{name: 'c', image: 'busybox'}]}})

  it('a pod bound to a node that does not exist is deleted after the 40 s quarantine, even while Terminating; pods of existing nodes stay', async () => {
    assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'real'}})).status, 201)
    for (const [name, node] of [['on-real', 'real'], ['on-ghost', 'ghost'], ['terminating-on-ghost', 'ghost']]) {
      assert.equal((await call(server.url, 'POST', '/api/v1/namespaces/default/pods', pod(name, node))).status, 201)
    }
    const marked = await call(server.url, 'DELETE', '/api/v1/namespaces/default/pods/terminating-on-ghost')
    assert.ok(marked.json.metadata.deletionTimestamp, 'bound: only marked')
    await gc.start()
    const names = async () => (await call(server.url, 'GET', '/api/v1/namespaces/default/pods')).json.items.map((p: any) => p.metadata.name).sort()
    await gc.collect()
    assert.deepEqual(await names(), ['on-ghost', 'on-real', 'terminating-on-ghost'], 'quarantine not over yet')
    clock += 40_000
    await gc.collect()
    assert.deepEqual(await names(), ['on-real'])
  })
})
