// JSON patch as Kubernetes applies it (evanphx/json-patch v4): its semantics where they differ from
// RFC 6902, and its error texts, which clients match on.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {applyJsonPatch} from '../../src/machinery/patch.js'
import {ApiError} from '../../src/machinery/status.js'

const doc = () => ({metadata: {name: 'x', labels: {a: '1', 'k/8': 's'}}, spec: {ports: [{port: 80}], tags: ['a', 'b', 'c']}})

function refusal(patch: unknown[]): string {
  try {
    applyJsonPatch(doc(), patch)
  } catch (error) {
    assert.ok(error instanceof ApiError)
    assert.equal(error.code, 422)
    return error.message.replace('the server rejected our request due to an error in our request: ', '')
  }
  return assert.fail('the patch applied')
}

describe("JSON patch in json-patch v4's words", () => {
  it("remove of a missing key: error in remove for path: '/metadata/labels/zzz': Unable to remove nonexistent key: zzz: missing value", () => {
    assert.equal(refusal([{op: 'remove', path: '/metadata/labels/zzz'}]), "error in remove for path: '/metadata/labels/zzz': Unable to remove nonexistent key: zzz: missing value")
  })

  it('a failed test: testing value /metadata/labels/a failed: test failed', () => {
    assert.equal(refusal([{op: 'test', path: '/metadata/labels/a', value: '2'}]), 'testing value /metadata/labels/a failed: test failed')
  })

  it('move from a missing key, add past the end of a list, add beneath a string, a path without a leading slash', () => {
    assert.equal(refusal([{op: 'move', from: '/metadata/zzz', path: '/metadata/y'}]), "error in move for path: 'zzz': Unable to remove nonexistent key: zzz: missing value")
    assert.equal(refusal([{op: 'add', path: '/spec/ports/5', value: {port: 1}}]), "error in add for path: '/spec/ports/5': Unable to access invalid index: 5: invalid index referenced")
    assert.equal(refusal([{op: 'add', path: '/metadata/labels/a/b', value: 'x'}]), 'add operation does not apply: doc is missing path: "/metadata/labels/a/b": missing value')
    assert.equal(refusal([{op: 'add', path: 'metadata', value: {}}]), 'add operation does not apply: doc is missing path: "metadata": missing value')
    assert.equal(refusal([{op: 'replace', path: '/spec/ports/3', value: {}}]), 'replace operation does not apply: doc is missing key: /spec/ports/3: missing value')
    assert.equal(refusal([{op: 'add', path: '/spec/tags/x', value: 'd'}]), `error in add for path: '/spec/tags/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax`)
    assert.equal(refusal([{op: 'bump', path: '/a'}]), 'Unexpected kind: bump')
    assert.equal(refusal([{path: '/a'}]), 'Unexpected kind: unknown')
  })

  it('replace of a missing object key adds it; negative indices count from the end; - appends; ~1 and ~0 are / and ~', () => {
    const patched = applyJsonPatch(doc(), [
      {op: 'replace', path: '/metadata/labels/new', value: 'n'},
      {op: 'remove', path: '/spec/tags/-1'},
      {op: 'add', path: '/spec/tags/-', value: 'z'},
      {op: 'add', path: '/spec/tags/-3', value: 'first'},
      {op: 'replace', path: '/metadata/labels/k~18', value: 't'},
    ]) as ReturnType<typeof doc>
    assert.deepEqual(patched.metadata.labels, {a: '1', 'k/8': 't', new: 'n'})
    // an add at -3 counts from the end of the list one longer (json-patch v4's partialArray.add)
    assert.deepEqual(patched.spec.tags, ['a', 'first', 'b', 'z'])
  })

  it('move removes before it adds: a value moved into itself is missing its destination (no cycle)', () => {
    assert.equal(refusal([{op: 'move', from: '/metadata', path: '/metadata/inner'}]), 'move operation does not apply: doc is missing destination path: /metadata/inner: missing value')
  })

  it('what copies add is bounded (Unable to complete the copy ...), and a copy is a copy, not a shared value', () => {
    const big = {metadata: {name: 'x', annotations: {a: 'x'.repeat(1024 * 1024)}}}
    const copies = Array.from({length: 4}, (_, i) => ({op: 'copy', from: '/metadata/annotations/a', path: `/metadata/annotations/c${i}`}))
    assert.throws(() => applyJsonPatch(big, copies), (e: unknown) => e instanceof ApiError && e.code === 422 && /Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728/.test(e.message))
    const copied = applyJsonPatch(doc(), [{op: 'copy', from: '/spec/ports/0', path: '/spec/ports/-'}, {op: 'replace', path: '/spec/ports/1/port', value: 81}]) as ReturnType<typeof doc>
    assert.deepEqual(copied.spec.ports, [{port: 80}, {port: 81}])
  })

  it('a body that is not a list of operation objects is 400 in encoding/json words; null is an empty patch', () => {
    assert.throws(() => applyJsonPatch(doc(), {op: 'add'}), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    assert.throws(() => applyJsonPatch(doc(), ['add']), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'json: cannot unmarshal string into Go value of type jsonpatch.Operation')
    assert.deepEqual(applyJsonPatch(doc(), null), doc())
    // replace of the whole document with a value that is no object or array changes nothing (v4 wraps a nil error)
    assert.deepEqual(applyJsonPatch(doc(), [{op: 'replace', path: '', value: 5}]), doc())
  })
})
