// The agent's pod status writer and final delete against an API that behaves as orch's Node
// authorizer does: a write to a pod that no longer exists (forced deletion, podgc) is refused with
// 403 "no relationship found". The status of a pod that is gone is dropped, as the kubelet's status
// manager drops it (a GET: not found, or another uid), not retried forever; the final grace-0 DELETE
// of a pod already gone is quiet; a pod that still exists is retried.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {ApiPods} from '../../src/agent/api-pods.js'
import type {AnyObject} from '../../src/api/types.js'
import {ApiStatusError, type RestClient} from '../../src/client/index.js'
import {createLogger} from '../../src/machinery/log.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** An API holding `stored` pods (by name); writes to a pod it does not hold bound to node-a are 403, as the Node authorizer answers. */
function fakeApi(stored: Map<string, AnyObject>): {client: RestClient; calls: string[]} {
  const calls: string[] = []
  const forbidden = (verb: string, name: string): ApiStatusError =>
    new ApiStatusError({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: `pods "${name}" is forbidden: User "system:node:node-a" cannot ${verb} resource "pods": no relationship found between node 'node-a' and this object`})
  const notFound = (name: string): ApiStatusError => new ApiStatusError({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 404, reason: 'NotFound', message: `pods "${name}" not found`})
  const client = {
    async patch(locator: AnyObject) {
      calls.push(`patch ${locator.name}`)
      if (stored.get(locator.name)?.spec?.nodeName !== 'node-a') throw forbidden('patch', locator.name)
      return stored.get(locator.name)
    },
    async delete(locator: AnyObject) {
      calls.push(`delete ${locator.name}`)
      if (!stored.has(locator.name)) throw forbidden('delete', locator.name)
      stored.delete(locator.name)
      return {}
    },
    async get(locator: AnyObject) {
      calls.push(`get ${locator.name}`)
      const pod = stored.get(locator.name)
      if (!pod) throw notFound(locator.name)
      return pod
    },
    /** the Node authorizer of Kubernetes 1.32: a get of a pod not bound to node-a is 403 too */
    async getAsNodeAuthorizer(locator: AnyObject) {
      calls.push(`get ${locator.name}`)
      const pod = stored.get(locator.name)
      if (pod?.spec?.nodeName !== 'node-a') throw forbidden('get', locator.name)
      return pod
    },
  }
  return {client: client as unknown as RestClient, calls}
}

const pod = (name: string, uid: string, extra: AnyObject = {}): AnyObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name, namespace: 'default', uid, ...extra},
  spec: {nodeName: 'node-a'},
  status: {phase: 'Failed'},
})

function apiPods(client: RestClient, lines: string[]): ApiPods {
  const sink = {upsertPod: () => undefined, deletePod: () => undefined, setPods: () => undefined}
  return new ApiPods({client: () => client, nodeName: 'node-a', nodeUID: () => 'node-uid', sink, logger: createLogger({write: (line) => lines.push(line)})})
}

describe('pod status writes for pods that are gone', () => {
  it('the status of a deleted pod (403 no relationship, then 404 on GET) is dropped after one attempt, with no warning', async () => {
    const {client, calls} = fakeApi(new Map())
    const lines: string[] = []
    apiPods(client, lines).writeStatus(pod('gone', 'uid-1'))
    await sleep(2500)
    assert.deepEqual(calls, ['patch gone', 'get gone'])
    assert.deepEqual(lines.filter((l) => l.includes('WARN')), [])
  })

  it('the status of a pod replaced by another of the same name (another uid) is dropped', async () => {
    const {client, calls} = fakeApi(new Map([['again', {...pod('again', 'uid-new'), spec: {nodeName: 'node-b'}}]]))
    const lines: string[] = []
    apiPods(client, lines).writeStatus(pod('again', 'uid-old'))
    await sleep(1500)
    assert.deepEqual(calls, ['patch again', 'get again'])
  })

  it('a GET refused as the Node authorizer refuses it (403: not bound to this node) means gone too', async () => {
    for (const stored of [new Map<string, AnyObject>(), new Map([['gone', {...pod('gone', 'uid-new'), spec: {nodeName: 'node-b'}}]])]) {
      const {client, calls} = fakeApi(stored)
      const strict = {...client, get: (client as unknown as {getAsNodeAuthorizer: RestClient['get']}).getAsNodeAuthorizer} as unknown as RestClient
      const lines: string[] = []
      apiPods(strict, lines).writeStatus(pod('gone', 'uid-1'))
      await sleep(1500)
      assert.deepEqual(calls, ['patch gone', 'get gone'])
      assert.deepEqual(lines.filter((l) => l.includes('WARN')), [])
    }
  })

  it('the final grace-0 DELETE of a pod already gone is quiet', async () => {
    const {client, calls} = fakeApi(new Map())
    await apiPods(client, []).terminated(pod('forced', 'uid-2', {deletionTimestamp: '2025-01-01T00:00:00Z'}))
    assert.deepEqual(calls, ['delete forced', 'get forced'])
  })

  it('a refused write to a pod that still exists here is still an error (retried, logged)', async () => {
    const stored = new Map([['kept', pod('kept', 'uid-3')]])
    const {client} = fakeApi(stored)
    const failing = {
      ...client,
      patch: async () => {
        throw new ApiStatusError({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: 'forbidden'})
      },
      get: client.get,
    } as unknown as RestClient
    const lines: string[] = []
    const writer = apiPods(failing, lines)
    writer.writeStatus(pod('kept', 'uid-3'))
    await sleep(1500)
    await writer.stop()
    assert.ok(lines.some((l) => l.includes('WARN could not write pod status; retrying')), lines.join('\n'))
  })
})
