// persistentVolumeClaimRetentionPolicy on scale down, as Kubernetes 1.32 does it (StatefulSetAutoDeletePVC):
// the StatefulSet controller never deletes a claim itself. It rewrites the claim's owner references
// (updateClaimOwnerRefForSetAndPod) so that, with whenScaled: Delete, the condemned pod is the claim's
// controller owner, and deletes the pod; the garbage collector deletes the claim once the pod object is
// gone — not while it is terminating.
//
// The server runs only the garbage collector; the test drives a StatefulSet controller by hand, one
// reconcile at a time, so what each sync did is known exactly. The pods are bound to a node, so a
// deleted pod stays Terminating until the test (playing the node's agent) deletes it with grace 0.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {RestClient} from '../../src/client/index.js'
import {StatefulSetController} from '../../src/controllers/statefulset.js'
import {silentLogger} from '../../src/machinery/log.js'
import {call, waitForCollection} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {statefulSet} from '../support/statefulset.js'

const setsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`
const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const claimsPath = (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`
const namesOf = (items: any[]) => items.map((i) => i.metadata.name).sort()

type Policy = {whenScaled?: 'Retain' | 'Delete'; whenDeleted?: 'Retain' | 'Delete'}

interface Env {
  server: OrchServer
  client: RestClient
}

async function startEnv(controllers: string): Promise<Env> {
  const server = await startOrchServer([`--controllers=${controllers}`])
  const client = new RestClient({server: server.url, ca: Buffer.from(server.ca), cert: Buffer.from(server.cert), key: Buffer.from(server.key)})
  return {server, client}
}

async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.client.close()
  await env?.server.cleanup()
}

describe('StatefulSet claim retention on scale down, with the garbage collector', {timeout: 120_000}, () => {
  /** the garbage collector runs; the StatefulSet controller is driven by hand */
  let gc: Env
  /** no controller runs: the StatefulSet controller driven by hand stands in for the garbage collector */
  let bare: Env
  /** the server of the test's latest harness, which the helpers talk to */
  let server: OrchServer
  let namespaces = 0

  before(async () => {
    ;[gc, bare] = await Promise.all([startEnv('garbagecollector'), startEnv('')])
  })
  after(async () => {
    await Promise.all([stopEnv(gc), stopEnv(bare)])
  })

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await call(server.url, method, path, body)
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
    return r.json
  }

  /** A Parallel set `web` of 3 pods bound to a node, with claim template `data`, in a namespace of its own. */
  async function harness(policy: Policy, env: Env = gc) {
    server = env.server
    const client = env.client
    const ns = `retention-${++namespaces}`
    await ok('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}})
    const body = statefulSet('web', {replicas: 3, claims: ['data'], spec: {podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: policy}})
    body.spec.template.spec.nodeName = 'node-a'
    const set = await ok('POST', setsPath(ns), body)
    const controller = new StatefulSetController(client, silentLogger, {})
    const h = {
      ns,
      set,
      sync: async (times = 1) => {
        for (let i = 0; i < times; i++) await controller.reconcile(`${ns}/web`)
      },
      pod: (name: string) => ok('GET', `${podsPath(ns)}/${name}`),
      claim: async (name: string) => {
        const r = await call(server.url, 'GET', `${claimsPath(ns)}/${name}`)
        return r.status === 404 ? undefined : r.json
      },
      claimNames: async () => namesOf((await ok('GET', claimsPath(ns))).items),
      async scale(replicas: number): Promise<void> {
        const current = await ok('GET', `${setsPath(ns)}/web`)
        current.spec.replicas = replicas
        await ok('PUT', `${setsPath(ns)}/web`, current)
      },
      /** the node's agent: the terminating pod stopped, deleted with grace 0 */
      async finishDeletion(name: string): Promise<void> {
        await ok('DELETE', `${podsPath(ns)}/${name}`, {kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0})
        await waitForCollection(server.url, podsPath(ns), (pods) => !pods.some((p) => p.metadata.name === name), `${name} gone`)
      },
    }
    await h.sync(2)
    assert.deepEqual(namesOf((await ok('GET', podsPath(ns))).items), ['web-0', 'web-1', 'web-2'])
    assert.deepEqual(await h.claimNames(), ['data-web-0', 'data-web-1', 'data-web-2'])
    return h
  }

  const podRef = (pod: any) => ({apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true})
  const setRef = (set: any) => ({apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true})

  /** Scale 3 → 2: web-2 is deleted (Terminating) and data-web-2 stays, owned by web-2 alone, until web-2 is gone. */
  async function scaleDownKeepsClaimUntilPodGone(h: Awaited<ReturnType<typeof harness>>): Promise<void> {
    const web2 = await h.pod('web-2')
    await h.scale(2)
    await h.sync()
    const terminating = await h.pod('web-2')
    assert.equal(terminating.metadata.uid, web2.metadata.uid)
    assert.ok(terminating.metadata.deletionTimestamp, 'web-2 is terminating')
    const claim = await h.claim('data-web-2')
    assert.ok(claim, 'data-web-2 is not deleted while web-2 is terminating')
    assert.equal(claim.metadata.deletionTimestamp, undefined)
    assert.deepEqual(claim.metadata.ownerReferences, [podRef(web2)], 'the condemned pod is the claim\'s only owner, as its controller')
    await h.sync(2)
    assert.ok(await h.claim('data-web-2'), 'later syncs leave the claim alone while web-2 terminates')
    await h.finishDeletion('web-2')
    await waitForCollection(server.url, claimsPath(h.ns), (claims) => !claims.some((c) => c.metadata.name === 'data-web-2'), 'the garbage collector deletes data-web-2')
    assert.deepEqual(await h.claimNames(), ['data-web-0', 'data-web-1'])
  }

  it('"whenScaled: Delete" with whenDeleted: Retain: a scaled-down pod\'s claim gets that pod as controller owner and is deleted by the garbage collector "once that pod is gone", not while it terminates', async () => {
    const h = await harness({whenScaled: 'Delete'})
    for (const name of ['data-web-0', 'data-web-1', 'data-web-2']) assert.equal((await h.claim(name)).metadata.ownerReferences, undefined, `${name}: no owner while in range`)
    await scaleDownKeepsClaimUntilPodGone(h)
    for (const name of ['data-web-0', 'data-web-1']) assert.equal((await h.claim(name)).metadata.ownerReferences, undefined, `${name} untouched`)
  })

  it('"whenScaled: Delete" and "whenDeleted: Delete": the set owns a claim in range; once scaled down the pod replaces it as the only owner, and the claim goes once the pod is gone', async () => {
    const h = await harness({whenScaled: 'Delete', whenDeleted: 'Delete'})
    for (const name of ['data-web-0', 'data-web-1', 'data-web-2']) assert.deepEqual((await h.claim(name)).metadata.ownerReferences, [setRef(h.set)], `${name}: the set controls it`)
    await scaleDownKeepsClaimUntilPodGone(h)
    for (const name of ['data-web-0', 'data-web-1']) assert.deepEqual((await h.claim(name)).metadata.ownerReferences, [setRef(h.set)], `${name} untouched`)
  })

  it('Parallel: a set scaled back up while the condemned pod terminates takes that pod\'s ownership off its claim again ("Enforce the StatefulSet invariants" on a terminating replica), so the claim is retained and reused', async () => {
    const h = await harness({whenScaled: 'Delete'})
    const before = await h.claim('data-web-2')
    await h.scale(2)
    await h.sync()
    assert.ok((await h.pod('web-2')).metadata.deletionTimestamp)
    assert.equal((await h.claim('data-web-2')).metadata.ownerReferences.length, 1, 'handed to web-2')
    await h.scale(3)
    await h.sync()
    assert.ok((await h.pod('web-2')).metadata.deletionTimestamp, 'web-2 still terminating, in range again')
    assert.equal((await h.claim('data-web-2')).metadata.ownerReferences, undefined, 'no owner: whenDeleted Retain, ordinal in range')
    await h.finishDeletion('web-2')
    await h.sync(2)
    const web2 = await h.pod('web-2')
    assert.equal(web2.metadata.deletionTimestamp, undefined, 'web-2 re-created')
    const claim = await h.claim('data-web-2')
    assert.equal(claim?.metadata.uid, before.metadata.uid, 'the same claim, not deleted by the garbage collector')
    assert.deepEqual(web2.spec.volumes.find((v: any) => v.name === 'data'), {name: 'data', persistentVolumeClaim: {claimName: 'data-web-2'}})
  })

  it('a set deleted while a scaled-down pod terminates: the claim "whenScaled: Delete" handed to that pod stays until the pod is gone, then the garbage collector deletes it', async () => {
    const h = await harness({whenScaled: 'Delete'})
    await h.scale(2)
    await h.sync()
    assert.ok((await h.pod('web-2')).metadata.deletionTimestamp)
    await ok('DELETE', `${setsPath(h.ns)}/web`)
    // the controller's sync of the set's key, now that the set is gone
    await h.sync()
    assert.ok(await h.claim('data-web-2'), 'data-web-2 stays while web-2 terminates')
    await h.finishDeletion('web-2')
    await waitForCollection(server.url, claimsPath(h.ns), (claims) => !claims.some((c) => c.metadata.name === 'data-web-2'), 'the garbage collector deletes data-web-2')
  })

  it('without the garbage collector the StatefulSet controller makes the same deletes "once that pod is gone": on scale down, and after the set is deleted', async () => {
    const scaled = await harness({whenScaled: 'Delete'}, bare)
    await scaled.scale(2)
    await scaled.sync()
    assert.ok((await scaled.pod('web-2')).metadata.deletionTimestamp)
    await scaled.sync(2)
    assert.ok(await scaled.claim('data-web-2'), 'data-web-2 stays while web-2 terminates')
    await scaled.finishDeletion('web-2')
    await scaled.sync()
    assert.deepEqual(await scaled.claimNames(), ['data-web-0', 'data-web-1'], 'web-2 gone: its claim deleted by the next sync')

    const deleted = await harness({whenScaled: 'Delete'}, bare)
    await deleted.scale(2)
    await deleted.sync()
    await ok('DELETE', `${setsPath(deleted.ns)}/web`)
    await deleted.sync()
    const pods = (await ok('GET', podsPath(deleted.ns))).items
    assert.deepEqual(pods.filter((p: any) => !p.metadata.deletionTimestamp), [], 'the set\'s pods are deleted')
    assert.deepEqual(await deleted.claimNames(), ['data-web-0', 'data-web-1', 'data-web-2'], 'data-web-2 stays while web-2 terminates')
    await deleted.finishDeletion('web-2')
    await deleted.sync()
    assert.deepEqual(await deleted.claimNames(), ['data-web-0', 'data-web-1'], 'web-2 gone: the sync of the set\'s key deletes its claim')
  })

  it('"whenScaled: Retain": a scaled-down pod\'s claim gets no pod owner and outlives the pod', async () => {
    const h = await harness({whenScaled: 'Retain', whenDeleted: 'Delete'})
    await h.scale(2)
    await h.sync()
    assert.ok((await h.pod('web-2')).metadata.deletionTimestamp)
    await h.finishDeletion('web-2')
    await h.sync()
    const claim = await h.claim('data-web-2')
    assert.ok(claim, 'data-web-2 retained')
    assert.deepEqual(claim.metadata.ownerReferences, [setRef(h.set)], 'still the set\'s, for whenDeleted: Delete')
  })
})
