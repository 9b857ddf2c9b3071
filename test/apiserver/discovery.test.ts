import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {readdirSync, statSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {join} from 'node:path'
import {configMap} from '../../src/api/core/configmap.js'
import {namespace} from '../../src/api/core/namespace.js'
import {labelSelector, objectMeta} from '../../src/api/meta.js'
import type {KindDeclaration, ObjectSchema, Schema} from '../../src/api/types.js'
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  compareKubeAwareVersions,
  servedGroups,
  storageVersionHash,
  versionInfo,
} from '../../src/apiserver/discovery.js'
import {definitionName, openAPIEtag, openAPIPackage, openAPIV2, openAPIV3Document, openAPIV3Root, type Json} from '../../src/apiserver/openapi.js'

// ---------- fixtures ----------

const podTemplateSpec: ObjectSchema = {
  type: 'object',
  name: 'PodTemplateSpec',
  fields: {metadata: {...objectMeta, proto: 1}, spec: {type: 'object', name: 'PodSpec', proto: 2, fields: {hostname: {type: 'string', proto: 16}}}},
}
const statefulSet: KindDeclaration = {
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  resource: 'statefulsets',
  singular: 'statefulset',
  shortNames: ['sts'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    {name: 'scale', verbs: ['get', 'patch', 'update'], kind: {group: 'autoscaling', version: 'v1', kind: 'Scale'}, writes: 'custom'},
  ],
  schema: {
    type: 'object',
    name: 'StatefulSet',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'StatefulSetSpec',
        proto: 2,
        fields: {
          replicas: {type: 'integer', format: 'int32', proto: 1},
          selector: {...labelSelector, proto: 2, required: true},
          template: {...podTemplateSpec, proto: 3, required: true},
          maxUnavailable: {type: 'int-or-string', proto: 4},
        },
      },
    },
  },
}
const shared: ObjectSchema = {type: 'object', name: 'Shared', fields: {holder: {type: 'string', proto: 1}, size: {type: 'quantity', proto: 2}}}
const lease = (version: string, kind = 'Lease'): KindDeclaration => ({
  group: 'coordination.orch.io',
  version,
  kind,
  resource: `${kind.toLowerCase()}s`,
  singular: kind.toLowerCase(),
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: {type: 'object', name: kind, fields: {metadata: {...objectMeta, proto: 1}, spec: {...shared, proto: 2}, renewTime: {type: 'time', micro: true, proto: 3}}},
})
const review: KindDeclaration = {
  group: 'example.com',
  version: 'v1alpha1',
  kind: 'Review',
  resource: 'reviews',
  singular: 'review',
  namespaced: false,
  verbs: ['create'],
  schema: {type: 'object', name: 'Review', fields: {spec: {type: 'raw', proto: 1}}},
}
const core = [configMap, namespace]
const synthetic = [...core, review, lease('v1beta1'), statefulSet, lease('v1'), lease('v1', 'OtherLease')]

/** Every kind declaration exported by a module under src/api when the test runs (other kinds are being added). */
async function existingDeclarations(): Promise<KindDeclaration[]> {
  const found = new Map<string, KindDeclaration>()
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry)
      return statSync(path).isDirectory() ? walk(path) : path.endsWith('.js') ? [path] : []
    })
  for (const file of walk(fileURLToPath(new URL('../../src/api/', import.meta.url))).sort()) {
    let module: Record<string, unknown>
    try {
      module = await import(file)
    } catch {
      continue // someone else's kind that does not load yet: its own tests report it
    }
    const values = Object.values(module).flatMap((v) => (Array.isArray(v) ? v : [v]))
    for (const v of values as Partial<KindDeclaration>[]) {
      if (v && typeof v === 'object' && typeof v.kind === 'string' && typeof v.resource === 'string' && Array.isArray(v.verbs) && v.schema?.type === 'object') {
        const d = v as KindDeclaration
        if (!found.has(`${d.group}/${d.version}/${d.kind}`)) found.set(`${d.group}/${d.version}/${d.kind}`, d)
      }
    }
  }
  return [...found.values()]
}
const existing = await existingDeclarations()

// ---------- document checks ----------

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

function walk(value: unknown, visit: (node: Json, path: string) => void, path = '#'): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}/${i}`))
  else if (value && typeof value === 'object') {
    visit(value as Json, path)
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`)
  }
}

function operations(doc: Json): {path: string; method: string; op: Json}[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({path, method, op: item[method] as Json})),
  )
}

/** Every $ref resolves in the document, operationIds are unique, path templates have path parameters. */
function assertWellFormed(doc: Json, flavor: 'v2' | 'v3'): void {
  const prefix = flavor === 'v3' ? '#/components/schemas/' : '#/definitions/'
  const schemas: Json = flavor === 'v3' ? doc.components.schemas : doc.definitions
  walk(doc, (node, at) => {
    if ('$ref' in node) {
      assert.ok(typeof node.$ref === 'string' && node.$ref.startsWith(prefix), `${at}: ${node.$ref}`)
      assert.ok(schemas[node.$ref.slice(prefix.length)], `${at}: dangling ${node.$ref}`)
      if (flavor === 'v3') assert.deepEqual(Object.keys(node), ['$ref'], `${at}: $ref with siblings`)
    }
    if ('allOf' in node) assert.ok(node.allOf.length === 1 && node.allOf[0].$ref, `${at}: allOf is a wrapped $ref`)
  })
  for (const [name, schema] of Object.entries(schemas)) {
    walk(schema, (node, at) => {
      if (typeof node.type === 'string' && !at.endsWith('/properties')) {
        assert.ok(['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(node.type), `${name}${at}: type ${node.type}`)
        if (node.type === 'array') assert.ok(node.items, `${name}${at}: array without items`)
      }
      if (Array.isArray(node.required) && node.properties) {
        for (const r of node.required) assert.ok(node.properties[r], `${name}: required ${r} is no property`)
      }
      if (node['x-kubernetes-list-type'] === 'map') assert.ok(node['x-kubernetes-list-map-keys']?.length, `${name}${at}: map list without keys`)
    })
  }
  const ids = new Set<string>()
  for (const {path, method, op} of operations(doc)) {
    assert.ok(op.operationId, `${method} ${path}: no operationId`)
    assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`)
    ids.add(op.operationId)
    assert.ok(op.responses?.['200'], `${op.operationId}: no 200 response`)
    const params: Json[] = [...(doc.paths[path].parameters ?? []), ...(op.parameters ?? [])]
    for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
      assert.ok(params.some((p) => p.name === name && p.in === 'path' && p.required === true), `${op.operationId}: no path parameter ${name}`)
    }
    const names = params.map((p) => `${p.in}:${p.name}`)
    assert.equal(new Set(names).size, names.length, `${op.operationId}: repeated parameters`)
  }
}

function operationIds(doc: Json): string[] {
  return operations(doc).map(({op}) => op.operationId)
}

function deref(doc: Json, schema: Json): Json {
  const ref = schema.$ref ?? schema.allOf?.[0]?.$ref
  return ref ? doc.components.schemas[ref.split('/').pop()] : schema
}

// ---------- discovery ----------

describe('discovery', () => {
  it('serves /version as kubectl 1.32 expects', () => {
    const v = versionInfo({gitCommit: 'abc', buildDate: '2026-01-02T03:04:05Z'})
    assert.deepEqual(Object.keys(v), ['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'])
    assert.equal(v.major, '1')
    assert.equal(v.minor, '32')
    assert.match(v.gitVersion, /^v1\.32\.\d+(-[0-9A-Za-z.-]+)?$/)
    assert.equal(v.gitCommit, 'abc')
    assert.equal(v.buildDate, '2026-01-02T03:04:05Z')
    assert.ok(v.goVersion.includes(process.versions.node))
    assert.match(v.platform, /^[a-z0-9]+\/[a-z0-9]+$/)
  })

  it('serves /api', () => {
    assert.deepEqual(apiVersions('10.0.0.1:6443'), {kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443'}]})
  })

  it('lists the core resources and subresources as Kubernetes does', () => {
    const list = apiResourceList(core, '', 'v1')
    assert.ok(list)
    assert.deepEqual(Object.keys(list), ['kind', 'groupVersion', 'resources'])
    assert.equal(list.groupVersion, 'v1')
    assert.deepEqual(list.resources, [
      {
        name: 'configmaps',
        singularName: 'configmap',
        namespaced: true,
        kind: 'ConfigMap',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['cm'],
        storageVersionHash: 'qFsyl6wFWjQ=',
      },
      {
        name: 'namespaces',
        singularName: 'namespace',
        namespaced: false,
        kind: 'Namespace',
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['ns'],
        storageVersionHash: 'Q3oi5N2YM8M=',
      },
      {name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update']},
      {name: 'namespaces/status', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['get', 'patch', 'update']},
    ])
    assert.equal(apiResourceList(core, '', 'v2'), undefined)
    assert.equal(apiResourceList(core, 'apps', 'v1'), undefined)
  })

  it('names a subresource kind of another group version, and omits storage hashes of virtual kinds', () => {
    const apps = apiResourceList(synthetic, 'apps', 'v1')
    assert.ok(apps)
    assert.equal(apps.apiVersion, 'v1')
    assert.equal(apps.groupVersion, 'apps/v1')
    assert.deepEqual(apps.resources.map((r) => r.name), ['statefulsets', 'statefulsets/scale', 'statefulsets/status'])
    assert.deepEqual(apps.resources[0].categories, ['all'])
    assert.equal(apps.resources[0].storageVersionHash, storageVersionHash('apps', 'v1', 'StatefulSet'))
    assert.deepEqual(apps.resources[1], {name: 'statefulsets/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update']})
    assert.deepEqual(apps.resources[2], {name: 'statefulsets/status', singularName: '', namespaced: true, kind: 'StatefulSet', verbs: ['get', 'patch', 'update']})
    const reviews = apiResourceList(synthetic, 'example.com', 'v1alpha1')
    assert.deepEqual(reviews?.resources, [{name: 'reviews', singularName: 'review', namespaced: false, kind: 'Review', verbs: ['create']}])
  })

  it('lists groups by Kubernetes priority, versions preferred first', () => {
    const list = apiGroupList(synthetic)
    assert.equal(list.kind, 'APIGroupList')
    assert.equal(list.apiVersion, 'v1')
    assert.deepEqual(list.groups.map((g) => g.name), ['apps', 'coordination.orch.io', 'example.com'])
    assert.deepEqual(list.groups[1], {
      name: 'coordination.orch.io',
      versions: [
        {groupVersion: 'coordination.orch.io/v1', version: 'v1'},
        {groupVersion: 'coordination.orch.io/v1beta1', version: 'v1beta1'},
      ],
      preferredVersion: {groupVersion: 'coordination.orch.io/v1', version: 'v1'},
    })
    assert.deepEqual(apiGroup(synthetic, 'apps'), {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{groupVersion: 'apps/v1', version: 'v1'}],
      preferredVersion: {groupVersion: 'apps/v1', version: 'v1'},
    })
    assert.equal(apiGroup(synthetic, 'batch'), undefined)
    assert.equal(apiGroup(synthetic, ''), undefined)
    assert.deepEqual(apiGroupList(core).groups, [])
  })

  it('orders versions as Kubernetes does', () => {
    const sorted = ['v1alpha1', 'v2', 'foo', 'v1', 'v1beta2', 'v1beta1', 'v10', 'bar'].sort(compareKubeAwareVersions)
    assert.deepEqual(sorted, ['v10', 'v2', 'v1', 'v1beta2', 'v1beta1', 'v1alpha1', 'bar', 'foo'])
  })

  it('describes every declared kind once', () => {
    for (const [group, versions] of servedGroups(existing)) {
      for (const version of versions) {
        const list = apiResourceList(existing, group, version)
        assert.ok(list, `${group}/${version}`)
        const names = list.resources.map((r) => r.name)
        assert.equal(new Set(names).size, names.length, `${group}/${version}: repeated resource names`)
        for (const d of existing.filter((x) => x.group === group && x.version === version)) {
          assert.ok(names.includes(d.resource), `${group}/${version}: ${d.resource} missing`)
          for (const sub of d.subresources ?? []) assert.ok(names.includes(`${d.resource}/${sub.name}`))
        }
      }
    }
  })
})

// ---------- OpenAPI ----------

describe('openapi', () => {
  it('maps groups to Kubernetes package names', () => {
    assert.equal(openAPIPackage('', 'v1'), 'io.orch.api.core.v1')
    assert.equal(openAPIPackage('apps', 'v1'), 'io.orch.api.apps.v1')
    assert.equal(openAPIPackage('coordination.orch.io', 'v1'), 'io.orch.api.coordination.v1')
    assert.equal(openAPIPackage('networking.orch.io', 'v1beta1'), 'io.orch.api.networking.v1beta1')
    assert.equal(openAPIPackage('rbac.authorization.orch.io', 'v1'), 'io.orch.api.rbac.v1')
    assert.equal(openAPIPackage('meta.orch.io', 'v1'), 'io.orch.apimachinery.pkg.apis.meta.v1')
    assert.equal(definitionName({group: '', version: 'v1', kind: 'ConfigMap'}), 'io.orch.api.core.v1.ConfigMap')
  })

  it('generates a well-formed v3 document for the core group', () => {
    const doc = openAPIV3Document(core, '', 'v1')
    assert.ok(doc)
    assert.equal(doc.openapi, '3.0.0')
    assertWellFormed(doc, 'v3')
    const schemas = doc.components.schemas
    const cm = schemas['io.orch.api.core.v1.ConfigMap']
    assert.deepEqual(cm.properties.data, {type: 'object', additionalProperties: {type: 'string'}})
    assert.deepEqual(cm.properties.binaryData, {type: 'object', additionalProperties: {type: 'string', format: 'byte'}})
    assert.deepEqual(cm.properties.immutable, {type: 'boolean'})
    assert.equal(cm.properties.apiVersion.type, 'string')
    assert.equal(deref(doc, cm.properties.metadata), schemas['io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta'])
    assert.deepEqual(cm['x-kubernetes-group-version-kind'], [{group: '', kind: 'ConfigMap', version: 'v1'}])
    const list = schemas['io.orch.api.core.v1.ConfigMapList']
    assert.deepEqual(list['x-kubernetes-group-version-kind'], [{group: '', kind: 'ConfigMapList', version: 'v1'}])
    assert.deepEqual(list.required, ['items'])
    assert.deepEqual(list.properties.items.items, {$ref: '#/components/schemas/io.orch.api.core.v1.ConfigMap'})

    const meta = schemas['io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta']
    assert.deepEqual(meta.properties.ownerReferences, {
      type: 'array',
      items: {$ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.OwnerReference'},
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    })
    assert.equal(meta.properties.finalizers['x-kubernetes-list-type'], 'set')
    assert.equal(deref(doc, meta.properties.creationTimestamp).format, 'date-time')
    assert.equal(schemas['io.orch.apimachinery.pkg.apis.meta.v1.OwnerReference']['x-kubernetes-map-type'], 'atomic')
    assert.deepEqual(schemas['io.orch.apimachinery.pkg.apis.meta.v1.OwnerReference'].required, ['apiVersion', 'kind', 'name', 'uid'])

    const status = schemas['io.orch.api.core.v1.NamespaceStatus']
    assert.equal(status.properties.conditions['x-kubernetes-list-type'], 'map')
    assert.deepEqual(status.properties.conditions['x-kubernetes-list-map-keys'], ['type'])
    assert.deepEqual(status.properties.phase, {type: 'string', enum: ['Active', 'Terminating']})
    assert.equal(schemas['io.orch.api.core.v1.NamespaceSpec'].properties.finalizers['x-kubernetes-list-type'], 'atomic')
    assert.deepEqual(schemas['io.orch.api.core.v1.NamespaceCondition'].required, ['type', 'status'])
  })

  it('names operations as Kubernetes does', () => {
    const doc = openAPIV3Document(core, '', 'v1')
    assert.ok(doc)
    const ids = operationIds(doc)
    for (const id of [
      'getCoreV1APIResources',
      'listCoreV1NamespacedConfigMap',
      'createCoreV1NamespacedConfigMap',
      'deletecollectionCoreV1NamespacedConfigMap',
      'readCoreV1NamespacedConfigMap',
      'replaceCoreV1NamespacedConfigMap',
      'patchCoreV1NamespacedConfigMap',
      'deleteCoreV1NamespacedConfigMap',
      'listCoreV1ConfigMapForAllNamespaces',
      'watchCoreV1NamespacedConfigMapList',
      'watchCoreV1NamespacedConfigMap',
      'watchCoreV1ConfigMapListForAllNamespaces',
      'listCoreV1Namespace',
      'readCoreV1NamespaceStatus',
      'replaceCoreV1NamespaceStatus',
      'patchCoreV1NamespaceStatus',
      'replaceCoreV1NamespaceFinalize',
      'watchCoreV1NamespaceList',
    ]) {
      assert.ok(ids.includes(id), `missing ${id}`)
    }
    assert.ok(!ids.includes('deletecollectionCoreV1Namespace'), 'namespaces have no deletecollection')
    const item = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}']
    assert.deepEqual(item.parameters.map((p: Json) => p.name), ['name', 'namespace', 'pretty'])
    const patch = item.patch
    assert.equal(patch['x-kubernetes-action'], 'patch')
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], {group: '', kind: 'ConfigMap', version: 'v1'})
    assert.deepEqual(Object.keys(patch.requestBody.content), [
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ])
    // kubectl looks for fieldValidation on a PATCH operation of the kind to use server-side validation
    assert.ok(patch.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'))
    const list = doc.paths['/api/v1/namespaces/{namespace}/configmaps'].get
    assert.equal(list['x-kubernetes-action'], 'list')
    assert.ok(list.parameters.some((p: Json) => p.name === 'watch'))
    assert.ok(list.responses['200'].content['application/json;stream=watch'])
    assert.equal(doc.paths['/api/v1/watch/namespaces/{namespace}/configmaps'].get['x-kubernetes-action'], 'watchlist')
    assert.equal(doc.paths['/api/v1/namespaces/{namespace}/configmaps'].post.requestBody.required, true)
    for (const {op} of operations(doc)) if (op.operationId !== 'getCoreV1APIResources') assert.ok(op['x-kubernetes-action'], op.operationId)
  })

  it('shares named schemas across packages and kinds', () => {
    const apps = openAPIV3Document(synthetic, 'apps', 'v1')
    assert.ok(apps)
    assertWellFormed(apps, 'v3')
    const schemas = apps.components.schemas
    const spec = schemas['io.orch.api.apps.v1.StatefulSetSpec']
    assert.equal(spec.properties.template.allOf?.[0]?.$ref ?? spec.properties.template.$ref, '#/components/schemas/io.orch.api.core.v1.PodTemplateSpec')
    assert.ok(schemas['io.orch.api.core.v1.PodSpec'])
    assert.equal(schemas['io.orch.apimachinery.pkg.apis.meta.v1.LabelSelector']['x-kubernetes-map-type'], 'atomic')
    assert.equal(deref(apps, spec.properties.maxUnavailable)['x-kubernetes-int-or-string'], true)
    const scale = schemas['io.orch.api.autoscaling.v1.Scale']
    assert.deepEqual(scale['x-kubernetes-group-version-kind'], [{group: 'autoscaling', kind: 'Scale', version: 'v1'}])
    const ids = operationIds(apps)
    for (const id of ['readAppsV1NamespacedStatefulSetScale', 'patchAppsV1NamespacedStatefulSetScale', 'replaceAppsV1NamespacedStatefulSetStatus', 'listAppsV1StatefulSetForAllNamespaces']) {
      assert.ok(ids.includes(id), `missing ${id}`)
    }
    const readScale = apps.paths['/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}/scale'].get
    assert.deepEqual(readScale['x-kubernetes-group-version-kind'], {group: 'autoscaling', kind: 'Scale', version: 'v1'})
    assert.deepEqual(readScale.tags, ['apps_v1'])

    const coordination = openAPIV3Document(synthetic, 'coordination.orch.io', 'v1')
    assert.ok(coordination)
    assertWellFormed(coordination, 'v3')
    const lease = coordination.components.schemas['io.orch.api.coordination.v1.Lease']
    const other = coordination.components.schemas['io.orch.api.coordination.v1.OtherLease']
    assert.deepEqual(lease.properties.spec, {$ref: '#/components/schemas/io.orch.api.coordination.v1.Shared'})
    assert.deepEqual(other.properties.spec, lease.properties.spec)
    assert.equal(Object.keys(coordination.components.schemas).filter((k) => k.endsWith('.Shared')).length, 1)
    assert.ok(coordination.components.schemas['io.orch.apimachinery.pkg.api.resource.Quantity'])
    assert.ok(coordination.components.schemas['io.orch.apimachinery.pkg.apis.meta.v1.MicroTime'])
    assert.ok(operationIds(coordination).includes('listCoordinationV1NamespacedLease'))

    const review = openAPIV3Document(synthetic, 'example.com', 'v1alpha1')
    assert.ok(review)
    assertWellFormed(review, 'v3')
    assert.deepEqual(operationIds(review).sort(), ['createExampleComV1alpha1Review', 'getExampleComV1alpha1APIResources'])
    assert.equal(review.components.schemas['io.orch.api.example.v1alpha1.Review'].properties.spec['x-kubernetes-preserve-unknown-fields'], true)
    assert.equal(openAPIV3Document(synthetic, 'batch', 'v1'), undefined)
  })

  it('indexes the v3 documents by their hash', () => {
    const root = openAPIV3Root(synthetic)
    assert.deepEqual(Object.keys(root.paths), ['api/v1', 'apis/apps/v1', 'apis/coordination.orch.io/v1', 'apis/coordination.orch.io/v1beta1', 'apis/example.com/v1alpha1'])
    const hash = openAPIEtag(openAPIV3Document(synthetic, 'apps', 'v1'))
    assert.match(hash, /^[0-9A-F]{128}$/)
    assert.equal(root.paths['apis/apps/v1'].serverRelativeURL, `/openapi/v3/apis/apps/v1?hash=${hash}`)
    assert.deepEqual(openAPIV3Root(synthetic), root, 'the index is deterministic')
  })

  it('generates a well-formed Swagger 2.0 document with the same definitions', () => {
    const doc = openAPIV2(synthetic)
    assert.equal(doc.swagger, '2.0')
    assertWellFormed(doc, 'v2')
    assert.deepEqual(doc.definitions['io.orch.api.core.v1.ConfigMap'].properties.data, {type: 'object', additionalProperties: {type: 'string'}})
    assert.deepEqual(doc.definitions['io.orch.apimachinery.pkg.util.intstr.IntOrString'].type, 'string')
    const create = doc.paths['/api/v1/namespaces/{namespace}/configmaps'].post
    assert.deepEqual(create.parameters[0], {name: 'body', in: 'body', required: true, schema: {$ref: '#/definitions/io.orch.api.core.v1.ConfigMap'}})
    assert.deepEqual(create.consumes, ['*/*'])
    assert.ok(doc.paths['/api/v1/namespaces/{name}/status'].patch.consumes.includes('application/strategic-merge-patch+json'))
    assert.ok(operationIds(doc).includes('readAppsV1NamespacedStatefulSetScale'))
  })

  it('describes every declared kind in well-formed documents', () => {
    assert.ok(existing.some((d) => d.kind === 'ConfigMap'))
    for (const [group, versions] of servedGroups(existing)) {
      for (const version of versions) {
        const doc = openAPIV3Document(existing, group, version)
        assert.ok(doc, `${group}/${version}`)
        assertWellFormed(doc, 'v3')
        for (const d of existing.filter((x) => x.group === group && x.version === version)) {
          const schema: Json = doc.components.schemas[definitionName(d)]
          assert.ok(schema, `${definitionName(d)} missing`)
          assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{group, kind: d.kind, version}])
        }
      }
    }
    assertWellFormed(openAPIV2(existing), 'v2')
  })

  it('finds no two different structs of one name in a group version', () => {
    const seen = new Map<string, string>()
    const visit = (schema: Schema, gv: string, stack: Set<ObjectSchema>) => {
      if (schema.type === 'array') return visit(schema.items, gv, stack)
      if (schema.type === 'map') return visit(schema.values, gv, stack)
      if (schema.type !== 'object' || stack.has(schema)) return
      const shape = JSON.stringify({fields: Object.keys(schema.fields).sort(), structType: schema.structType})
      const key = `${gv} ${schema.name}`
      assert.equal(seen.get(key) ?? shape, shape, `two structs named ${schema.name} in ${gv}`)
      seen.set(key, shape)
      stack.add(schema)
      for (const field of Object.values(schema.fields)) visit(field, gv, stack)
      stack.delete(schema)
    }
    for (const d of existing) for (const field of Object.values(d.schema.fields)) visit(field, `${d.group}/${d.version}`, new Set())
  })
})
