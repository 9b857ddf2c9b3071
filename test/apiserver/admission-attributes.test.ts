// The admission attributes of a write, as Kubernetes' handlers build them.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {configMap} from '../../src/api/core/configmap.js'
import {namespace as namespaceDeclaration} from '../../src/api/core/namespace.js'
import {policyNamespace} from '../../src/admission/matching.js'
import {admissionAttributesOf} from '../../src/apiserver/admission-attributes.js'

const context = {now: new Date('2025-06-01T12:00:00Z'), warnings: []}
const lookups: string[] = []
const namespaceOf = async (name: string) => {
  lookups.push(name)
  return {metadata: {name, labels: {team: 'a'}}}
}

describe('admission attributes', () => {
  it('"the namespace object has the namespace of itself": a Namespace is admitted with its own name as namespace, and policies see no namespaceObject and look params up cluster-wide', async () => {
    const object = {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team-a'}}
    const attributes = admissionAttributesOf(namespaceDeclaration, namespaceOf, {operation: 'UPDATE', object, old: object, name: 'team-a', subresource: '', context, dryRun: false})
    assert.equal(attributes.namespace, 'team-a')
    assert.equal(await attributes.namespaceObject(), null)
    assert.equal(policyNamespace(attributes), '')
    assert.deepEqual(lookups, [])
  })

  it('a namespaced object is admitted in its namespace, whose object policies can read', async () => {
    const object = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'c', namespace: 'team-b'}}
    const attributes = admissionAttributesOf(configMap, namespaceOf, {operation: 'CREATE', object, old: null, name: 'c', subresource: '', context, dryRun: false})
    assert.equal(attributes.namespace, 'team-b')
    assert.equal(policyNamespace(attributes), 'team-b')
    assert.equal((await attributes.namespaceObject())?.metadata?.name, 'team-b')
  })
})
