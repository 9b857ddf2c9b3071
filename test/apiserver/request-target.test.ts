// parseRequestTarget keeps the path as Go's server does: no dot-segment resolution, escapes decoded later.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {parseRequestTarget, pathSegmentNameProblems} from '../../src/apiserver/requestinfo.js'

function parsed(target: string): {path: string; query: [string, string][]} | number {
  try {
    const {path, query} = parseRequestTarget(target)
    return {path, query: [...query]}
  } catch (error) {
    return (error as {code: number}).code
  }
}

describe('request targets', () => {
  it('"dot segments are not resolved": /configmaps/.. stays a name (the handler refuses it) and never becomes the namespace above', () => {
    for (const target of [
      '/api/v1/namespaces/default/configmaps/..',
      '/api/v1/namespaces/default/configmaps/%2e%2e',
      '/api/v1/namespaces/default/configmaps/.',
      '/api/v1/namespaces/a/../kube-system/configmaps',
      '/api/v1/./namespaces',
      '/api/v1\\namespaces',
    ]) {
      assert.deepEqual(parsed(target), {path: target, query: []}, target)
    }
  })

  it('the query is decoded as a form; a fragment is dropped; an absolute-form target gives its path', () => {
    assert.deepEqual(parsed('/api/v1/namespaces/default/configmaps?labelSelector=a%3Db,c+in+(d)&limit=5'), {
      path: '/api/v1/namespaces/default/configmaps',
      query: [['labelSelector', 'a=b,c in (d)'], ['limit', '5']],
    })
    assert.deepEqual(parsed('/api/v1/namespaces?x=1#fragment'), {path: '/api/v1/namespaces', query: [['x', '1']]})
    assert.deepEqual(parsed('/version?'), {path: '/version', query: []})
    assert.deepEqual(parsed('https://orch.example:6443/api/v1?watch=1'), {path: '/api/v1', query: [['watch', '1']]})
  })

  it('a target that is no path, starts with //, or holds an escape that does not decode is 400', () => {
    for (const target of ['*', '//evil.example/api/v1', '/api/v1/namespaces/%zz', 'api/v1']) assert.equal(parsed(target), 400, target)
  })

  it("IsValidPathSegmentName: may not be '.' or '..', may not contain '/' or '%'", () => {
    assert.deepEqual(pathSegmentNameProblems('..'), ["may not be '..'"])
    assert.deepEqual(pathSegmentNameProblems('.'), ["may not be '.'"])
    assert.deepEqual(pathSegmentNameProblems('a/b%c'), ["may not contain '/'", "may not contain '%'"])
    assert.deepEqual(pathSegmentNameProblems('a..b'), [])
  })
})
