// YAML read and written as Kubernetes does (sigs.k8s.io/yaml over go-yaml v2: YAML 1.1's plain scalars).
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {dumpYaml, goFloatText, goYamlKeyOrder, loadAllYaml, loadYaml} from '../../src/machinery/go-yaml.js'

describe('YAML as Kubernetes reads it (go-yaml v2)', () => {
  it('"yaml: document contains excessive aliasing": an alias bomb is refused at once; ordinary anchors and aliases are read', () => {
    let bomb = 'a: &a [' + Array(10).fill('x').join(',') + ']\n'
    for (let level = 1; level < 10; level++) {
      const name = String.fromCharCode(97 + level)
      bomb += `${name}: &${name} [${Array(10).fill(`*${String.fromCharCode(96 + level)}`).join(',')}]\n`
    }
    assert.throws(() => loadYaml(bomb), /document contains excessive aliasing/)
    assert.throws(() => loadAllYaml(`x: 1\n---\n${bomb}`), /document contains excessive aliasing/)
    const shared = loadYaml('base: &base {image: app, port: 80}\nweb: *base\nworker: *base\nlist: [*base, *base]\n') as any
    assert.deepEqual(shared.web, {image: 'app', port: 80})
    assert.equal(shared.list.length, 2)
  })

  it('a number with a leading 0 is octal, as a volume defaultMode: 0644 is 420', () => {
    assert.deepEqual(loadYaml('a: 0644\nb: -0755\nc: 0\nd: 08\ne: 0o17\nf: "0644"'), {a: 420, b: -493, c: 0, d: 8, e: 15, f: '0644'})
  })

  it('yes, no, on, off, y, n and their capitalised forms are booleans; timestamps and base-60 numbers stay strings', () => {
    assert.deepEqual(loadYaml('a: yes\nb: No\nc: ON\nd: off\ne: y\nf: N\ng: True\nh: 2001-12-14\ni: 12:30:00\nj: "yes"'), {
      a: true,
      b: false,
      c: true,
      d: false,
      e: true,
      f: false,
      g: true,
      h: '2001-12-14',
      i: '12:30:00',
      j: 'yes',
    })
  })

  it('underscores are dropped from numbers; hex, binary, signs and exponents are read as strconv reads them', () => {
    assert.deepEqual(loadYaml('a: 1_000\nb: 0x1F\nc: 0b101\nd: +12\ne: 1e3\nf: .5\ng: -0x10\nh: 1.\ni: 1e400\nj: 0xFFFFFFFFFFFFFFFFF'), {
      a: 1000,
      b: 31,
      c: 5,
      d: 12,
      e: 1000,
      f: 0.5,
      g: -16,
      h: 1,
      // past float64 and past uint64 (not decimal): strings, as strconv fails on them
      i: '1e400',
      j: '0xFFFFFFFFFFFFFFFFF',
    })
  })

  it('~, null, Null, NULL and an empty value are null; a boolean key becomes "true"/"false" as sigs.k8s.io/yaml writes it', () => {
    assert.deepEqual(loadYaml('a: ~\nb: Null\nc: NULL\nd:\non: x\n'), {a: null, b: null, c: null, d: null, true: 'x'})
  })

  it('<< merges an anchored mapping', () => {
    assert.deepEqual(loadYaml('base: &b {p: 1, q: 2}\nmerged: {<<: *b, q: 3}'), {base: {p: 1, q: 2}, merged: {p: 1, q: 3}})
    // a key is resolved as any plain scalar is: `y` is the boolean true
    assert.deepEqual(loadYaml('{x: 1, y: 2}'), {x: 1, true: 2})
  })

  it('.inf and .nan cannot become JSON: an error, as json.Marshal refuses them', () => {
    assert.throws(() => loadYaml('a: .inf'), /json: unsupported value: \+Inf/)
    assert.throws(() => loadYaml('a: -.Inf'), /json: unsupported value: -Inf/)
    assert.throws(() => loadYaml('a: .NaN'), /json: unsupported value: NaN/)
  })

  it('a repeated key keeps its last value, or is an error with json: false', () => {
    assert.deepEqual(loadYaml('a: 1\na: 2'), {a: 2})
    assert.throws(() => loadYaml('a: 1\na: 2', {json: false}), /duplicated mapping key/)
    assert.deepEqual(loadAllYaml('a: 0644\n---\nb: yes\n'), [{a: 420}, {b: true}])
  })
})

describe('YAML as Kubernetes writes it', () => {
  it('a string go-yaml would read as another type is double-quoted, so it reads back as the same string', () => {
    const strings = {a: '0644', b: 'yes', c: '1_000', d: 'y', e: '~', f: '+12', g: '.5', h: '', i: 'on', j: 'plain'}
    const text = dumpYaml(strings)
    assert.match(text, /^a: "0644"$/m)
    assert.match(text, /^b: "yes"$/m)
    assert.match(text, /^c: "1_000"$/m)
    assert.match(text, /^j: plain$/m)
    assert.deepEqual(loadYaml(text), strings)
  })

  it('a string go-yaml would resolve as a timestamp (creationTimestamp, a date) is double-quoted, as kubectl -o yaml prints it, and reads back as the same string', () => {
    const strings = {creationTimestamp: '2026-11-25T08:01:01Z', date: '2026-01-01', spaced: '2026-1-2 3:04:05', micro: '2026-11-25T08:01:01.123456Z', notADate: '2026-13-01', word: 'x2026-01-01'}
    const text = dumpYaml(strings)
    assert.match(text, /^creationTimestamp: "2026-11-25T08:01:01Z"$/m)
    assert.match(text, /^date: "2026-01-01"$/m)
    assert.match(text, /^spaced: "2026-1-2 3:04:05"$/m)
    assert.match(text, /^micro: "2026-11-25T08:01:01.123456Z"$/m)
    assert.match(text, /^notADate: 2026-13-01$/m)
    assert.match(text, /^word: x2026-01-01$/m)
    assert.deepEqual(loadYaml(text), strings)
  })

  it('keys are in go-yaml order (digit runs as numbers) and a list is not indented under its key', () => {
    const text = dumpYaml({kind: 'X', apiVersion: 'v1', data: {k10: 'a', k2: 'b'}, list: [{b: 1, a: 2}]})
    assert.equal(text, 'apiVersion: v1\ndata:\n  k2: b\n  k10: a\nkind: X\nlist:\n- a: 2\n  b: 1\n')
    assert.deepEqual(['item10', 'item2', 'a.b', 'aZ', 'ab', '_x', 'a01', 'a1'].sort(goYamlKeyOrder), ['_x', 'a.b', 'a1', 'a01', 'aZ', 'ab', 'item2', 'item10'])
  })

  it('floats are written as strconv.FormatFloat(f, \'g\', -1, 64) writes them', () => {
    assert.equal(goFloatText(1.5), '1.5')
    assert.equal(goFloatText(1234567.5), '1.2345675e+06')
    assert.equal(goFloatText(1.5e-7), '1.5e-07')
    assert.equal(goFloatText(0.0001), '0.0001')
    assert.equal(dumpYaml({a: 0.25, b: 3}), 'a: 0.25\nb: 3\n')
  })
})
