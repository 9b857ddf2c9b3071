// Discovery and OpenAPI over HTTP, generated from the declarations.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('discovery', () => {
  let server: RunningOrch
  before(async () => {
    server = await startOrchServer(['--controllers='])
  })
  after(async () => server.cleanup())

  it('/version answers without credentials with a Kubernetes-shaped version', async () => {
    const result = await call(server.url, 'GET', '/version')
    assert.equal(result.status, 200)
    assert.equal(result.json.major, '1')
    assert.match(result.json.gitVersion, /^v1\.\d+\.\d+/)
    // JSON whatever the Accept, as kube-apiserver writes it
    for (const accept of ['text/html', 'foo']) assert.equal((await call(server.url, 'GET', '/version', undefined, {Accept: accept})).status, 200, accept)
  })

  it('/openapi/v3 answers another spelling of a group version\'s path (//apis//apps/v1) with the same document, cached once per group version', async () => {
    const plain = await call(server.url, 'GET', '/openapi/v3/apis/apps/v1')
    const doubled = await call(server.url, 'GET', '/openapi/v3//apis//apps/v1')
    assert.equal(doubled.status, 200)
    assert.equal(doubled.text, plain.text)
  })

  it('/api lists v1 with the address that answered', async () => {
    const result = (await call(server.url, 'GET', '/api')).json
    assert.equal(result.kind, 'APIVersions')
    assert.deepEqual(result.versions, ['v1'])
    assert.match(result.serverAddressByClientCIDRs[0].serverAddress, /^127\.0\.0\.1:\d+$/)
  })

  it('/api/v1 is an APIResourceList with verbs, namespaced, kind and shortNames', async () => {
    const result = (await call(server.url, 'GET', '/api/v1')).json
    assert.equal(result.kind, 'APIResourceList')
    assert.equal(result.groupVersion, 'v1')
    const byName = Object.fromEntries(result.resources.map((r: any) => [r.name, r]))
    assert.deepEqual(byName.configmaps.shortNames, ['cm'])
    assert.equal(byName.configmaps.namespaced, true)
    assert.equal(byName.namespaces.namespaced, false)
    assert.ok(byName.namespaces.verbs.includes('watch'))
    assert.ok(!byName.namespaces.verbs.includes('deletecollection'))
    assert.ok(byName['namespaces/status'])
    assert.ok(byName['namespaces/finalize'])
    assert.ok(byName['pods/status'])
    assert.equal(byName.nodes.kind, 'Node')
  })

  it('/apis lists the groups with their preferred versions; /apis/{g} and /apis/{g}/{v} answer', async () => {
    const groups = (await call(server.url, 'GET', '/apis')).json
    assert.equal(groups.kind, 'APIGroupList')
    const names = groups.groups.map((g: any) => g.name)
    for (const g of ['apps', 'coordination.orch.io', 'networking.orch.io', 'storagemigration.orch.io', 'certificates.orch.io', 'admissionregistration.orch.io']) {
      assert.ok(names.includes(g), g)
    }
    const apps = (await call(server.url, 'GET', '/apis/apps')).json
    assert.equal(apps.kind, 'APIGroup')
    assert.equal(apps.preferredVersion.groupVersion, 'apps/v1')
    const resources = (await call(server.url, 'GET', '/apis/apps/v1')).json
    const sts = resources.resources.find((r: any) => r.name === 'statefulsets')
    assert.deepEqual(sts.shortNames, ['sts'])
    assert.equal((await call(server.url, 'GET', '/apis/nothing.orch.io')).status, 404)
  })

  it('aggregated discovery (apidiscovery.orch.io/v2 and v2beta1): /api and /apis answer every group version\'s resources in one APIGroupDiscoveryList, with an ETag for If-None-Match', async () => {
    const accept = (v: string) => ({Accept: `application/json;g=apidiscovery.orch.io;v=${v};as=APIGroupDiscoveryList,application/json`})
    const apis = await call(server.url, 'GET', '/apis', undefined, accept('v2'))
    assert.equal(apis.status, 200, apis.text)
    assert.equal(apis.headers['content-type'], 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList')
    assert.equal(apis.headers.vary, 'Accept')
    assert.equal(apis.json.kind, 'APIGroupDiscoveryList')
    assert.equal(apis.json.apiVersion, 'apidiscovery.orch.io/v2')
    const plainNames = (await call(server.url, 'GET', '/apis')).json.groups.map((g: any) => g.name)
    assert.deepEqual(apis.json.items.map((g: any) => g.metadata.name), plainNames, 'the groups of /apis, in the same order')
    const apps = apis.json.items.find((g: any) => g.metadata.name === 'apps')
    assert.deepEqual(apps.metadata, {name: 'apps', creationTimestamp: null})
    assert.equal(apps.versions[0].version, 'v1')
    assert.equal(apps.versions[0].freshness, 'Current')
    const sts = apps.versions[0].resources.find((r: any) => r.resource === 'statefulsets')
    assert.deepEqual(
      {...sts, subresources: sts.subresources.map((s: any) => s.subresource)},
      {
        resource: 'statefulsets',
        responseKind: {group: '', version: '', kind: 'StatefulSet'},
        scope: 'Namespaced',
        singularResource: 'statefulset',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['sts'],
        categories: ['all'],
        subresources: ['scale', 'status'],
      },
    )
    assert.deepEqual(sts.subresources.find((s: any) => s.subresource === 'scale').responseKind, {group: 'autoscaling', version: 'v1', kind: 'Scale'})

    const core = await call(server.url, 'GET', '/api', undefined, accept('v2beta1'))
    assert.equal(core.headers['content-type'], 'application/json;g=apidiscovery.orch.io;v=v2beta1;as=APIGroupDiscoveryList')
    assert.equal(core.json.apiVersion, 'apidiscovery.orch.io/v2beta1')
    assert.equal(core.json.items.length, 1)
    assert.deepEqual(core.json.items[0].metadata, {creationTimestamp: null})
    const configmaps = core.json.items[0].versions[0].resources.find((r: any) => r.resource === 'configmaps')
    assert.equal(configmaps.scope, 'Namespaced')
    assert.deepEqual(core.json.items[0].versions[0].resources.find((r: any) => r.resource === 'nodes').scope, 'Cluster')

    const etag = apis.headers.etag
    assert.match(String(etag), /^"[0-9a-f]{32}"$/)
    const again = await call(server.url, 'GET', '/apis', undefined, {...accept('v2'), 'If-None-Match': String(etag)})
    assert.equal(again.status, 304)
    assert.equal(again.text, '')
  })

  it("kubectl's Accept (apidiscovery.k8s.io first) gets the plain documents; an Accept of nothing servable is 406", async () => {
    const kubectl = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'
    const apis = await call(server.url, 'GET', '/apis', undefined, {Accept: kubectl})
    assert.equal(apis.headers['content-type'], 'application/json')
    assert.equal(apis.json.kind, 'APIGroupList')
    const none = await call(server.url, 'GET', '/api', undefined, {Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'})
    assert.equal(none.status, 406, none.text)
  })

  it('/openapi/v3 lists every group version; each document has the kinds as components', async () => {
    const root = (await call(server.url, 'GET', '/openapi/v3')).json
    assert.ok(root.paths['api/v1'])
    assert.ok(root.paths['apis/apps/v1'])
    const core = (await call(server.url, 'GET', '/' + root.paths['api/v1'].serverRelativeURL.replace(/^\//, ''))).json
    assert.equal(core.openapi.startsWith('3.'), true)
    assert.ok(core.components.schemas['io.orch.api.core.v1.ConfigMap'])
    const v2 = await call(server.url, 'GET', '/openapi/v2')
    assert.equal(v2.status, 200)
    assert.equal(v2.json.swagger, '2.0')
  })

  it('/openapi/v2 asked as protobuf is gnostic\'s protobuf (kubectl validates kind: List with it); an Accept it cannot serve is 406', async () => {
    const result = await call(server.url, 'GET', '/openapi/v2', undefined, {Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'})
    assert.equal(result.status, 200)
    assert.equal(result.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf')
    assert.ok(result.raw.length > 1000)
    assert.equal((await call(server.url, 'GET', '/openapi/v2', undefined, {Accept: 'application/yaml'})).status, 406)
  })
})
