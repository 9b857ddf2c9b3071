// The authorization seam: everything is allowed until RBAC; a denial is Kubernetes' 403 message.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {authorize, forbidden} from '../../src/apiserver/authorize.js'
import {resolveRequestInfo} from '../../src/apiserver/requestinfo.js'

const bob = {username: 'bob', groups: ['system:authenticated']}
const info = (method: string, path: string) => resolveRequestInfo(method, path, new URLSearchParams(path.split('?')[1] ?? ''))

describe('authorize', () => {
  it('allows every request (no policy yet)', async () => {
    assert.deepEqual(await authorize(bob, info('DELETE', '/api/v1/namespaces/default/configmaps/x')), {allowed: true})
    assert.deepEqual(await authorize(bob, info('GET', '/apis')), {allowed: true})
  })

  it('a denial names user, verb, resource, subresource and namespace as Kubernetes does', () => {
    const named = forbidden(bob, info('GET', '/api/v1/namespaces/default/configmaps/x'))
    assert.equal(named.code, 403)
    assert.equal(named.reason, 'Forbidden')
    assert.equal(named.message, 'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"')
    assert.deepEqual(named.toStatus().details, {name: 'x', group: undefined, kind: 'configmaps'})

    assert.equal(
      forbidden(bob, info('PUT', '/apis/apps/v1/namespaces/web/statefulsets/db/scale'), 'no RBAC policy matched').message,
      'statefulsets.apps "db" is forbidden: User "bob" cannot update resource "statefulsets/scale" in API group "apps" in the namespace "web": no RBAC policy matched',
    )
    assert.equal(
      forbidden(bob, info('GET', '/api/v1/nodes')).message,
      'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope',
    )
    assert.equal(forbidden(bob, info('GET', '/openapi/v3')).message, 'forbidden: User "bob" cannot get path "/openapi/v3"')
  })
})
