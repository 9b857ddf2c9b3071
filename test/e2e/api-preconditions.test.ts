// Update preconditions on every write path, as Kubernetes 1.32 checks them: the resourceVersion a
// server-side apply or a patched Scale carries (Store.Update's optimistic lock), the uid a PUT of a
// subresource carries (the storage's precondition), and the name admission is told of a single DELETE.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {AnyObject} from '../../src/api/types.js'
import {call, eventually, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

const CM = '/api/v1/namespaces/default/configmaps'
const STS = '/apis/apps/v1/namespaces/default/statefulsets'
const APPLY = {'Content-Type': 'application/apply-patch+yaml'}
const MERGE = {'Content-Type': 'application/merge-patch+json'}
const STALE = 'Operation cannot be fulfilled on configmaps "%s": the object has been modified; please apply your changes to the latest version and try again'

function statefulSet(name: string): AnyObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name},
    spec: {replicas: 1, serviceName: name, selector: {matchLabels: {app: name}}, template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'c', image: 'i'}]}}},
  }
}

function staleMessage(resource: string, name: string): string {
  return STALE.replace('configmaps "%s"', `${resource} "${name}"`)
}

function uidPreconditionMessage(resource: string, name: string, key: string, given: string, stored: string): string {
  return `Operation cannot be fulfilled on ${resource} "${name}": StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${given}, UID in object meta: ${stored}`
}

describe('update preconditions on every write path', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  before(async () => {
    server = await startOrchServer(['--controllers='])
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
  })
  after(async () => server.cleanup())

  /** creates the object, then changes it: answers the resourceVersion it had before the change and the stored object */
  async function createdAndChanged(path: string, body: AnyObject): Promise<{stale: string; live: AnyObject & {metadata: AnyObject}}> {
    const created = await api('POST', path, body)
    assert.equal(created.status, 201, created.text)
    const changed = await api('PATCH', `${path}/${body.metadata!.name}`, {metadata: {labels: {changed: 'yes'}}}, MERGE)
    assert.equal(changed.status, 200, changed.text)
    return {stale: created.json.metadata.resourceVersion, live: changed.json}
  }

  it('a server-side apply carrying a stale metadata.resourceVersion is 409 "the object has been modified; please apply your changes to the latest version and try again"; the current one is written, none is unconditional, and an apply that creates drops it', async () => {
    const {stale, live} = await createdAndChanged(CM, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'applied'}})
    const config = (resourceVersion: string | undefined, value: string) =>
      JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'applied', resourceVersion}, data: {key: value}})
    const refused = await api('PATCH', `${CM}/applied?fieldManager=ssa`, config(stale, 'stale'), APPLY)
    assert.equal(refused.status, 409, refused.text)
    assert.equal(refused.json.reason, 'Conflict')
    assert.equal(refused.json.message, staleMessage('configmaps', 'applied'))
    assert.equal((await api('GET', `${CM}/applied`)).json.data, undefined)
    const current = await api('PATCH', `${CM}/applied?fieldManager=ssa`, config(live.metadata!.resourceVersion, 'current'), APPLY)
    assert.equal(current.status, 200, current.text)
    assert.equal(current.json.data.key, 'current')
    const unconditional = await api('PATCH', `${CM}/applied?fieldManager=ssa`, config(undefined, 'any'), APPLY)
    assert.equal(unconditional.status, 200, unconditional.text)
    // absent: Store.Update creates it and the storage drops the version (no precondition to fail)
    const created = await api('PATCH', `${CM}/applied-new?fieldManager=ssa`, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'applied-new', resourceVersion: stale}}), APPLY)
    assert.equal(created.status, 201, created.text)
  })

  it('a server-side apply to /status or /scale carrying a stale metadata.resourceVersion is 409 on statefulsets.apps; the current one is written', async () => {
    const {stale, live} = await createdAndChanged(STS, statefulSet('applied-sts'))
    const status = (resourceVersion: string) => JSON.stringify({apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'applied-sts', resourceVersion}, status: {replicas: 1}})
    const refusedStatus = await api('PATCH', `${STS}/applied-sts/status?fieldManager=ssa`, status(stale), APPLY)
    assert.equal(refusedStatus.status, 409, refusedStatus.text)
    assert.equal(refusedStatus.json.message, staleMessage('statefulsets.apps', 'applied-sts'))
    const scale = (resourceVersion: string, replicas: number) => JSON.stringify({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'applied-sts', resourceVersion}, spec: {replicas}})
    const refusedScale = await api('PATCH', `${STS}/applied-sts/scale?fieldManager=ssa&force=true`, scale(stale, 4), APPLY)
    assert.equal(refusedScale.status, 409, refusedScale.text)
    assert.equal(refusedScale.json.message, staleMessage('statefulsets.apps', 'applied-sts'))
    assert.equal((await api('GET', `${STS}/applied-sts`)).json.spec.replicas, 1)
    const appliedStatus = await api('PATCH', `${STS}/applied-sts/status?fieldManager=ssa`, status(live.metadata!.resourceVersion), APPLY)
    assert.equal(appliedStatus.status, 200, appliedStatus.text)
    const appliedScale = await api('PATCH', `${STS}/applied-sts/scale?fieldManager=ssa&force=true`, scale(appliedStatus.json.metadata.resourceVersion, 4), APPLY)
    assert.equal(appliedScale.status, 200, appliedScale.text)
    assert.equal(appliedScale.json.spec.replicas, 4)
  })

  it('a merge, JSON or strategic merge patch of /scale setting a stale metadata.resourceVersion is 409 on statefulsets.apps (scaleUpdatedObjectInfo copies it to the StatefulSet); the current one is written', async () => {
    const {stale} = await createdAndChanged(STS, statefulSet('patched-sts'))
    const patches: Array<[string, unknown]> = [
      ['application/merge-patch+json', {metadata: {resourceVersion: stale}, spec: {replicas: 5}}],
      ['application/json-patch+json', [{op: 'replace', path: '/metadata/resourceVersion', value: stale}, {op: 'replace', path: '/spec/replicas', value: 5}]],
      ['application/strategic-merge-patch+json', {metadata: {resourceVersion: stale}, spec: {replicas: 5}}],
    ]
    for (const [contentType, patch] of patches) {
      const refused = await api('PATCH', `${STS}/patched-sts/scale`, patch, {'Content-Type': contentType})
      assert.equal(refused.status, 409, `${contentType}: ${refused.text}`)
      assert.equal(refused.json.message, staleMessage('statefulsets.apps', 'patched-sts'))
    }
    assert.equal((await api('GET', `${STS}/patched-sts`)).json.spec.replicas, 1)
    const current = (await api('GET', `${STS}/patched-sts/scale`)).json.metadata.resourceVersion
    const written = await api('PATCH', `${STS}/patched-sts/scale`, {metadata: {resourceVersion: current}, spec: {replicas: 5}}, MERGE)
    assert.equal(written.status, 200, written.text)
    assert.equal(written.json.spec.replicas, 5)
  })

  it('"Precondition failed: UID in precondition: X, UID in object meta: Y" (a StorageError, 409): a PUT of /status, of a namespace\'s /status and /finalize, and of /scale with a wrong metadata.uid writes nothing', async () => {
    const {live} = await createdAndChanged(STS, statefulSet('uid-sts'))
    const uid = live.metadata!.uid
    const stsKey = '/registry/apps/statefulsets/default/uid-sts'
    const status = await api('PUT', `${STS}/uid-sts/status`, {...live, metadata: {...live.metadata, uid: 'not-the-uid'}, status: {replicas: 3}})
    assert.equal(status.status, 409, status.text)
    assert.equal(status.json.reason, 'Conflict')
    assert.equal(status.json.message, uidPreconditionMessage('statefulsets.apps', 'uid-sts', stsKey, 'not-the-uid', uid))
    const scale = (await api('GET', `${STS}/uid-sts/scale`)).json
    const scaled = await api('PUT', `${STS}/uid-sts/scale`, {...scale, metadata: {...scale.metadata, uid: 'not-the-uid'}, spec: {replicas: 3}})
    assert.equal(scaled.status, 409, scaled.text)
    assert.equal(scaled.json.message, uidPreconditionMessage('statefulsets.apps', 'uid-sts', stsKey, 'not-the-uid', uid))
    const after = (await api('GET', `${STS}/uid-sts`)).json
    assert.equal(after.spec.replicas, 1)
    assert.equal(after.status?.replicas ?? 0, 0)

    const namespace = (await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'uid-ns'}})).json
    const nsKey = '/registry/core/namespaces/uid-ns'
    for (const subresource of ['status', 'finalize']) {
      const body = {...namespace, metadata: {...namespace.metadata, uid: 'not-the-uid'}, spec: {finalizers: []}, status: {phase: 'Terminating'}}
      const refused = await api('PUT', `/api/v1/namespaces/uid-ns/${subresource}`, body)
      assert.equal(refused.status, 409, `${subresource}: ${refused.text}`)
      assert.equal(refused.json.message, uidPreconditionMessage('namespaces', 'uid-ns', nsKey, 'not-the-uid', namespace.metadata.uid))
    }
    const stored = (await api('GET', '/api/v1/namespaces/uid-ns')).json
    assert.deepEqual([stored.spec.finalizers, stored.status.phase], [['orch'], 'Active'])
  })

  it('a PUT that would create (a Lease) with a metadata.uid fails the uid precondition against the absent object: 409 "UID in object meta: " (empty), nothing created', async () => {
    const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases'
    const refused = await api('PUT', `${leases}/absent`, {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'absent', uid: 'some-uid'}, spec: {}})
    assert.equal(refused.status, 409, refused.text)
    assert.equal(refused.json.message, uidPreconditionMessage('leases.coordination.orch.io', 'absent', '/registry/coordination.orch.io/leases/default/absent', 'some-uid', ''))
    assert.equal((await api('GET', `${leases}/absent`)).status, 404)
    assert.equal((await api('PUT', `${leases}/absent`, {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'absent'}, spec: {}})).status, 201)
  })

  it('a PUT that would create (a Lease) carrying a resourceVersion creates it (201): Store.Update checks no resourceVersion against an absent object, and the storage clears it', async () => {
    const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases'
    const created = await api('PUT', `${leases}/with-version`, {apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: {name: 'with-version', resourceVersion: '12345'}, spec: {holderIdentity: 'a'}})
    assert.equal(created.status, 201, created.text)
    assert.notEqual(created.json.metadata.resourceVersion, '12345')
    assert.equal((await api('GET', `${leases}/with-version`)).json.spec.holderIdentity, 'a')
  })

  it('a patch or an apply of /scale naming another uid is 409 on statefulsets/scale.apps "Precondition failed: UID in precondition: X, UID in object meta: Y" (scaleUpdatedObjectInfo), the parent unchanged', async () => {
    const {live} = await createdAndChanged(STS, statefulSet('uid-scale'))
    const expected = `Operation cannot be fulfilled on statefulsets/scale.apps "uid-scale": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${live.metadata!.uid}`
    const patched = await api('PATCH', `${STS}/uid-scale/scale`, {metadata: {uid: 'not-the-uid'}, spec: {replicas: 2}}, MERGE)
    assert.equal(patched.status, 409, patched.text)
    assert.equal(patched.json.message, expected)
    const applied = await api('PATCH', `${STS}/uid-scale/scale?fieldManager=ssa&force=true`, JSON.stringify({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: 'uid-scale', uid: 'not-the-uid'}, spec: {replicas: 2}}), APPLY)
    assert.equal(applied.status, 409, applied.text)
    assert.equal(applied.json.message, expected)
    assert.equal((await api('GET', `${STS}/uid-scale`)).json.spec.replicas, 1)
  })

  it('a ValidatingAdmissionPolicy denying a single DELETE names the object (configmaps "keep" is forbidden, details.name keep); a deletecollection names "Unknown"', async () => {
    const adm = '/apis/admissionregistration.orch.io/v1'
    assert.equal((await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'guarded', labels: {guarded: 'yes'}}})).status, 201)
    const base = '/api/v1/namespaces/guarded/configmaps'
    assert.equal((await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'keep', labels: {protected: 'yes'}}})).status, 201)
    const policy = await api('POST', `${adm}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: {name: 'protected-configmaps'},
      spec: {
        matchConstraints: {
          resourceRules: [{apiGroups: [''], apiVersions: ['*'], operations: ['DELETE'], resources: ['configmaps']}],
          namespaceSelector: {matchLabels: {guarded: 'yes'}},
        },
        validations: [{expression: "!has(oldObject.metadata.labels) || !('protected' in oldObject.metadata.labels)", message: 'protected configmaps stay'}],
      },
    })
    assert.equal(policy.status, 201, policy.text)
    const binding = await api('POST', `${adm}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.orch.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: {name: 'protected-configmaps'},
      spec: {policyName: 'protected-configmaps', validationActions: ['Deny']},
    })
    assert.equal(binding.status, 201, binding.text)
    const denial = "ValidatingAdmissionPolicy 'protected-configmaps' with binding 'protected-configmaps' denied request: protected configmaps stay"
    const single = await eventually(() => api('DELETE', `${base}/keep`), (r) => r.status !== 200, 'the policy to take effect')
    assert.equal(single.status, 422, single.text)
    assert.equal(single.json.message, `configmaps "keep" is forbidden: ${denial}`)
    assert.equal(single.json.details.name, 'keep')
    const collection = await api('DELETE', base)
    assert.equal(collection.status, 422, collection.text)
    assert.equal(collection.json.message, `configmaps "Unknown" is forbidden: ${denial}`)
    assert.equal(collection.json.details.name, 'Unknown')
    assert.equal((await api('GET', `${base}/keep`)).status, 200)
  })
})
