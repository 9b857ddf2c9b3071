// parseRequestTarget answers what `new URL(target, base)` answers, for plain targets without the parser.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {parseRequestTarget} from '../../src/apiserver/requestinfo.js'
import {prng} from '../support/prng.js'

function viaURL(target: string): {path: string; query: [string, string][]} | 'invalid' {
  try {
    const url = new URL(target, 'https://orch')
    return {path: url.pathname, query: [...url.searchParams]}
  } catch {
    return 'invalid'
  }
}

function parsed(target: string): {path: string; query: [string, string][]} | 'invalid' {
  try {
    const {path, query} = parseRequestTarget(target)
    return {path, query: [...query]}
  } catch (error) {
    assert.equal((error as {code?: number}).code, 400, 'a target the URL parser refuses is a 400')
    return 'invalid'
  }
}

describe('request targets', () => {
  it('path and query are what the WHATWG URL parser makes of the target, plain or not; one it refuses is a 400, not a 500', () => {
    const targets = [
      '/api/v1/namespaces/default/configmaps',
      '/apis/coordination.orch.io/v1/namespaces/x/leases?watch=1&resourceVersion=10',
      '/api/v1/namespaces/default/configmaps?labelSelector=a%3Db,c+in+(d)&limit=5',
      '/api/v1/namespaces/a/../kube-system/configmaps',
      '/api/v1/./namespaces',
      '/api/v1/namespaces/%2e%2e/x',
      '//evil.example/api/v1',
      '/api/v1\\namespaces',
      '/api/v1/namespaces?x=1#fragment',
      '/api/v1/namespaces?q=a b&r="<>"',
      "/api/v1/namespaces?q='quoted'",
      '/api/v1/namespaces/é',
      '/version?',
      '/',
      '*',
      '/api/v1/namespaces/x/configmaps/a.b..c',
      '/api/v1/namespaces/..x/y',
      '/api/v1/namespaces/x/..',
      '//[x/api',
    ]
    for (const target of targets) assert.deepEqual(parsed(target), viaURL(target), target)
  })

  it('random targets over the characters that matter agree with the URL parser (seeded)', () => {
    const random = prng(20261124)
    const alphabet = ['/', '/', 'a', 'Z', '9', '.', '..', '%2F', '%', '?', '&', '=', '#', '+', ' ', "'", '"', '\\', '~', ':', '@', '[', '|', 'é']
    for (let n = 0; n < 5_000; n++) {
      let target = '/'
      const length = 1 + Math.floor(random() * 12)
      for (let i = 0; i < length; i++) target += alphabet[Math.floor(random() * alphabet.length)]
      assert.deepEqual(parsed(target), viaURL(target), target)
    }
  })
})
