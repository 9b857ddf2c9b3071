// The Impersonate-* headers as Kubernetes' buildImpersonationRequests reads them, and as client-go's
// impersonating round tripper writes them (the end-to-end behaviour is in test/e2e/authentication-impersonation).
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {impersonatedUser, impersonationAttributes, impersonationTargets, splitServiceAccountUsername} from '../../src/apiserver/impersonation.js'
import {impersonationHeaders} from '../../src/client/index.js'

describe('impersonation headers', () => {
  it('a service account user name needs a namespace label and a subdomain name, else it is a plain user', () => {
    assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:team-a:builder.v2'), {namespace: 'team-a', name: 'builder.v2'})
    for (const name of ['system:serviceaccount:team.a:builder', 'system:serviceaccount:team-a', 'system:serviceaccount:a:b:c', 'system:serviceaccount::b', 'serviceaccount:a:b']) {
      assert.equal(splitServiceAccountUsername(name), undefined, name)
    }
    assert.deepEqual(impersonationTargets({'impersonate-user': ['system:serviceaccount:a:b:c']}), [{kind: 'User', name: 'system:serviceaccount:a:b:c'}])
  })

  it('only the first Impersonate-User and Impersonate-Uid count; extra keys are %-unescaped, a malformed escape kept as sent', () => {
    const targets = impersonationTargets({
      'impersonate-user': ['jane', 'john'],
      'impersonate-uid': ['u1', 'u2'],
      'impersonate-extra-a%2fb': ['x'],
      'impersonate-extra-50%': ['y'],
    })
    assert.deepEqual(targets, [
      {kind: 'User', name: 'jane'},
      {kind: 'UserExtra', name: 'x', extraKey: 'a/b'},
      {kind: 'UserExtra', name: 'y', extraKey: '50%'},
      {kind: 'UID', name: 'u1'},
    ])
    assert.deepEqual(impersonatedUser(targets), {username: 'jane', uid: 'u1', groups: ['system:authenticated'], extra: {'a/b': ['x'], '50%': ['y']}})
    assert.deepEqual(impersonationTargets({'impersonate-user': ['']}), [], 'an empty user impersonates nobody')
    assert.throws(() => impersonationTargets({'impersonate-user': [''], 'impersonate-group': ['g']}), (e: any) => e.code === 400 && /without impersonating a user/.test(e.message))
  })

  it('what the real user is asked for: verb impersonate on users, groups, serviceaccounts (namespaced), uids and userextras/KEY', () => {
    const user = {username: 'bob', groups: []}
    assert.deepEqual(impersonationAttributes(user, {kind: 'ServiceAccount', namespace: 'ns', name: 'sa'}), {
      user, verb: 'impersonate', isResourceRequest: true, apiGroup: '', apiVersion: '', name: 'sa', resource: 'serviceaccounts', namespace: 'ns',
    })
    assert.deepEqual(impersonationAttributes(user, {kind: 'UserExtra', name: 'v', extraKey: 'scopes'}), {
      user, verb: 'impersonate', isResourceRequest: true, apiGroup: 'authentication.orch.io', apiVersion: 'v1', name: 'v', resource: 'userextras', subresource: 'scopes',
    })
  })

  it('the client sends one header line per group and extra value, extra keys %-escaped where they are no header token', () => {
    assert.deepEqual(impersonationHeaders({user: 'jane', uid: 'u1', groups: ['a', 'b'], extra: {'example.com/team': ['x', 'y'], '50%': ['z']}}), {
      'impersonate-user': 'jane',
      'impersonate-uid': 'u1',
      'impersonate-group': ['a', 'b'],
      'impersonate-extra-example.com%2Fteam': ['x', 'y'],
      'impersonate-extra-50%25': ['z'],
    })
    assert.deepEqual(impersonationHeaders({user: 'jane'}), {'impersonate-user': 'jane'})
  })
})
