// The printers and resource-word resolution on their own, without a server.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {TablePrinter, formatObjects, formatOne, noResourcesMessage, type Table} from '../../src/cli/printers.js'
import {pickResource, type ResourceInfo} from '../../src/cli/resources.js'
import {containsManifest} from '../../src/cli/apply.js'
import {parseManifests} from '../../src/cli/manifests.js'
import {eventLine} from '../../src/cli/watch.js'

const table = (rows: unknown[][], priorities: number[] = []): Table => ({
  kind: 'Table',
  columnDefinitions: ['Name', 'A', 'Wide', 'Age'].map((name, i) => ({name, priority: priorities[i] ?? 0})),
  rows: rows.map((cells) => ({cells, object: {metadata: {name: String(cells[0]), namespace: 'ns1'}}})),
})

describe('table printer', () => {
  it('a column is at least 6 wide, else its widest cell plus 3; the last column is not padded', () => {
    const text = new TablePrinter().render(table([['x', 'y', 'z', '1s']]))
    assert.equal(text, 'NAME   A     WIDE   AGE\nx      y     z      1s\n', 'A is 6 wide: its widest cell is 1')
  })

  it('priority-1 columns only when wide; NAMESPACE first across namespaces', () => {
    const t = table([['web', 'a', 'b', '5m']], [0, 0, 1, 0])
    assert.equal(new TablePrinter().render(t), 'NAME   A     AGE\nweb    a     5m\n')
    assert.equal(new TablePrinter({wide: true}).render(t), 'NAME   A     WIDE   AGE\nweb    a     b      5m\n')
    assert.equal(new TablePrinter({withNamespace: true}).render(t), 'NAMESPACE   NAME   A     AGE\nns1         web    a     5m\n')
  })

  it('null cells print <none>; strings stop at their first line break with ...', () => {
    const text = new TablePrinter().render(table([['a', null, 'one\ntwo', '1s']]))
    assert.equal(text.split('\n')[1], 'a      <none>   one...   1s')
  })

  it('widths are remembered between calls so later rows line up; the header is printed once', () => {
    const printer = new TablePrinter()
    const first = printer.render(table([['a-long-name', '1', '2', '1s']]))
    const later = printer.render(table([['b', '1', '2', '2s']]))
    assert.equal(first.split('\n')[0], 'NAME          A     WIDE   AGE')
    assert.equal(later, 'b' + ' '.repeat(13) + '1     2      2s\n')
    assert.equal(printer.render(table([])), '', 'no rows, nothing printed')
  })

  it('the empty-list message names the namespace when one was listed', () => {
    assert.equal(noResourcesMessage('shop'), 'No resources found in shop namespace.')
    assert.equal(noResourcesMessage(), 'No resources found')
  })
})

describe('json, yaml and name output', () => {
  const info = {group: 'apps', version: 'v1', kind: 'StatefulSet'}
  const item = {metadata: {name: 'web'}}

  it('-o name is kind.group/name', () => {
    assert.equal(formatObjects([item], 'name', info, false), 'statefulset.apps/web\n')
    assert.equal(formatObjects([item], 'name', {group: '', version: 'v1', kind: 'ConfigMap'}, false), 'configmap/web\n')
  })

  it('one named object prints as is (with apiVersion and kind), a listing as kubectl\'s List', () => {
    assert.deepEqual(JSON.parse(formatObjects([item], 'json', info, true)), {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'web'}})
    const list = yaml.load(formatObjects([item], 'yaml', info, false)) as any
    assert.deepEqual(list, {apiVersion: 'v1', items: [{apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'web'}}], kind: 'List', metadata: {resourceVersion: ''}})
  })

  it('json and yaml leave metadata.managedFields out unless --show-managed-fields, as kubectl prints objects', () => {
    const managed = {metadata: {name: 'web', managedFields: [{manager: 'orch', operation: 'Apply'}]}, spec: {replicas: 1}}
    for (const format of ['json', 'yaml'] as const) {
      const one = yaml.load(formatObjects([managed], format, info, true)) as any
      assert.deepEqual(one.metadata, {name: 'web'}, format)
      const list = yaml.load(formatObjects([managed], format, info, false)) as any
      assert.deepEqual(list.items[0].metadata, {name: 'web'}, format)
      const watched = yaml.load(formatOne(managed, format, info, true)) as any
      assert.deepEqual(watched.metadata, {name: 'web'}, format)
      const shown = yaml.load(formatObjects([managed], format, info, true, {showManagedFields: true})) as any
      assert.deepEqual(shown.metadata.managedFields, [{manager: 'orch', operation: 'Apply'}], format)
    }
    assert.deepEqual(managed.metadata.managedFields, [{manager: 'orch', operation: 'Apply'}], 'the object itself is not changed')
  })
})

describe('resource words', () => {
  const r = (group: string, resource: string, kind: string, shortNames: string[] = [], version = 'v1'): ResourceInfo => ({
    group,
    version,
    resource,
    kind,
    namespaced: true,
    singular: kind.toLowerCase(),
    shortNames,
    verbs: [],
    subresources: [],
    preferred: version === 'v1',
  })
  const all = [r('', 'configmaps', 'ConfigMap', ['cm']), r('apps', 'statefulsets', 'StatefulSet', ['sts']), r('other.io', 'configmaps', 'ConfigMap'), r('apps', 'statefulsets', 'StatefulSet', [], 'v2')]

  it('plural, singular, short name and Kind, in any case; the core group wins a tie', () => {
    for (const word of ['configmaps', 'configmap', 'cm', 'ConfigMap', 'CM']) assert.equal(pickResource(all, word), all[0], word)
    assert.equal(pickResource(all, 'sts')?.group, 'apps')
  })

  it('resource.group and resource.version.group choose the group and version', () => {
    assert.equal(pickResource(all, 'configmaps.other.io'), all[2])
    assert.equal(pickResource(all, 'statefulsets.apps')?.version, 'v1', 'the preferred version')
    assert.equal(pickResource(all, 'statefulsets.v2.apps')?.version, 'v2')
    assert.equal(pickResource(all, 'widgets'), undefined)
  })

  it('a resource only a non-preferred version serves is found by its bare word and resource.group, as kubectl finds mutatingadmissionpolicies (v1beta1 only)', () => {
    const map = r('admissionregistration.orch.io', 'mutatingadmissionpolicies', 'MutatingAdmissionPolicy', [], 'v1beta1')
    const withBeta = [...all, r('admissionregistration.orch.io', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy'), map]
    assert.equal(pickResource(withBeta, 'mutatingadmissionpolicies'), map)
    assert.equal(pickResource(withBeta, 'mutatingadmissionpolicies.admissionregistration.orch.io'), map)
    assert.equal(pickResource(withBeta, 'MutatingAdmissionPolicy'), map)
    assert.equal(pickResource(withBeta, 'statefulsets')?.version, 'v1', 'where the preferred version serves it, that one')
  })
})

describe('manifests', () => {
  it('multi-document YAML: empty documents skipped, Lists unpacked', () => {
    const {manifests: objects, errors} = parseManifests('---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n', 'f')
    assert.deepEqual(objects.map((m) => m.object.metadata.name), ['a', 'b'])
    assert.deepEqual(errors, [])
  })

  it('concatenated JSON objects are several documents', () => {
    const {manifests} = parseManifests('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}\n{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}', 'f')
    assert.equal(manifests.length, 2)
  })

  it('"StreamVisitor stops at the first decode error": the documents before a broken one are kept, the ones after it are not read', () => {
    const {manifests, errors} = parseManifests(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # next\nkind: [unclosed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
      'f.yaml',
    )
    assert.deepEqual(manifests.map((m) => m.object.metadata.name), ['a'])
    assert.equal(errors.length, 1)
    // kubectl: error parsing f.yaml: error converting YAML to JSON: yaml: line 2: ... (lines count from the document's start)
    assert.match(errors[0].message, /^error parsing f\.yaml: error converting YAML to JSON: yaml: line [12]: /)

    const json = parseManifests('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}\n{"apiVersion": v1}\n{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}', 'f.json')
    assert.deepEqual(json.manifests.map((m) => m.object.metadata.name), ['a'])
    assert.equal(json.errors.length, 1)
    assert.match(json.errors[0].message, /^error parsing f\.json: /)
  })

  it('a document that is no object kubectl can map is an error of its own; the documents after it are still read', () => {
    const {manifests, errors} = parseManifests('apiVersion: v1\nmetadata: {name: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n', 'STDIN')
    assert.deepEqual(manifests.map((m) => m.object.metadata.name), ['b'])
    assert.deepEqual(errors.map((e) => e.message), ['error validating STDIN: document 1: kind not set'])
  })

  it('unchanged means every field the manifest gives has the live value', () => {
    const live = {metadata: {name: 'a', uid: 'u'}, data: {k: 'v', extra: 'x'}, list: [{a: 1, b: 2}]}
    assert.ok(containsManifest(live, {metadata: {name: 'a'}, data: {k: 'v'}, list: [{a: 1}]}))
    assert.ok(!containsManifest(live, {data: {k: 'w'}}))
    // quantities come back canonical: the manifest's 0.5 and 1024Mi are the live "500m" and "1Gi"
    const pod = {spec: {containers: [{resources: {limits: {cpu: '500m', memory: '1Gi'}}}]}}
    assert.ok(containsManifest(pod, {spec: {containers: [{resources: {limits: {cpu: 0.5, memory: '1024Mi'}}}]}}))
    assert.ok(!containsManifest(pod, {spec: {containers: [{resources: {limits: {cpu: 1, memory: '1024Mi'}}}]}}))
    assert.ok(!containsManifest(live, {list: [{a: 1}, {a: 2}]}))
  })
})

describe('watch lines', () => {
  it('EVENT kind[.group]/name resourceVersion, the namespace fourth across namespaces', () => {
    const event = {type: 'MODIFIED' as const, object: {metadata: {name: 'web', namespace: 'shop', resourceVersion: '42'}}}
    assert.equal(eventLine(event, {kind: 'StatefulSet', group: 'apps'}, false, false), 'MODIFIED statefulset.apps/web 42')
    assert.equal(eventLine(event, {kind: 'StatefulSet', group: 'apps'}, true, false), 'MODIFIED statefulset.apps/web 42 shop')
    assert.deepEqual(JSON.parse(eventLine(event, {kind: 'StatefulSet', group: 'apps'}, false, true)), event)
  })
})
