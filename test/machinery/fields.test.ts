import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {
  FieldSelector,
  SelectorParseError,
  escapeFieldValue,
  fieldSelectorFromSet,
  parseFieldSelector,
  unescapeFieldValue,
} from '../../src/machinery/fields.js'

function parseError(text: string): string {
  try {
    parseFieldSelector(text)
  } catch (e) {
    assert.ok(e instanceof SelectorParseError, `expected a SelectorParseError, got ${String(e)}`)
    return e.message
  }
  assert.fail(`"${text}" parsed but should not have`)
}

describe('parseFieldSelector: matching', () => {
  it('the empty string selects everything', () => {
    const s = parseFieldSelector('')
    assert.equal(s.isEmpty(), true)
    assert.equal(s.matches({}), true)
    assert.equal(s.toString(), '')
  })

  it('"a=b" matches objects whose field a is b', () => {
    const s = parseFieldSelector('metadata.name=foo')
    assert.equal(s.matches({'metadata.name': 'foo'}), true)
    assert.equal(s.matches({'metadata.name': 'bar'}), false)
  })

  it('"a==b" is the same as "a=b"', () => {
    const s = parseFieldSelector('metadata.name==foo')
    assert.equal(s.matches({'metadata.name': 'foo'}), true)
    assert.deepEqual(s.requirements, [{field: 'metadata.name', operator: '=', value: 'foo'}])
    assert.equal(s.toString(), 'metadata.name=foo')
  })

  it('"a!=b" matches objects whose field a is not b', () => {
    const s = parseFieldSelector('status.phase!=Running')
    assert.equal(s.matches({'status.phase': 'Pending'}), true)
    assert.equal(s.matches({'status.phase': 'Running'}), false)
  })

  it('a field the object does not have compares as the empty string', () => {
    assert.equal(parseFieldSelector('spec.nodeName=').matches({}), true)
    assert.equal(parseFieldSelector('spec.nodeName!=').matches({}), false)
    assert.equal(parseFieldSelector('spec.nodeName=n1').matches({}), false)
  })

  it('comma-separated terms must all hold', () => {
    const s = parseFieldSelector('metadata.name=foo,metadata.namespace!=kube-system')
    assert.equal(s.matches({'metadata.name': 'foo', 'metadata.namespace': 'default'}), true)
    assert.equal(s.matches({'metadata.name': 'foo', 'metadata.namespace': 'kube-system'}), false)
  })

  it('empty terms between commas are skipped', () => {
    assert.deepEqual(parseFieldSelector(',a=b,,').requirements, [{field: 'a', operator: '=', value: 'b'}])
    assert.equal(parseFieldSelector(',').isEmpty(), true)
  })

  it('a term with an empty field and an empty value is dropped', () => {
    assert.equal(parseFieldSelector('=').isEmpty(), true)
    assert.equal(parseFieldSelector('!=').isEmpty(), true)
    assert.equal(parseFieldSelector('==,a=b').toString(), 'a=b')
  })

  it('whitespace is part of fields and values, as in Kubernetes', () => {
    assert.deepEqual(parseFieldSelector('a = b').requirements, [{field: 'a ', operator: '=', value: ' b'}])
  })

  it('the first operator in a term splits it, "!=" and "==" taking precedence over "="', () => {
    assert.deepEqual(parseFieldSelector('a!=b').requirements, [{field: 'a', operator: '!=', value: 'b'}])
    assert.deepEqual(parseFieldSelector('a!b=c').requirements, [{field: 'a!b', operator: '=', value: 'c'}])
    assert.throws(() => parseFieldSelector('a=b=c'), SelectorParseError)
  })

  it('only own properties of the fields object count as fields', () => {
    assert.equal(parseFieldSelector('toString=').matches({}), true)
  })
})

describe('parseFieldSelector: escaping', () => {
  it('"\\," "\\=" and "\\\\" in a value stand for , = and \\', () => {
    const s = parseFieldSelector('a=x\\,y\\=z\\\\w')
    assert.deepEqual(s.requirements, [{field: 'a', operator: '=', value: 'x,y=z\\w'}])
    assert.equal(s.matches({a: 'x,y=z\\w'}), true)
  })

  it('an escaped comma does not split terms', () => {
    assert.equal(parseFieldSelector('a=1\\,2,b=3').requirements.length, 2)
  })

  it('toString escapes values again', () => {
    assert.equal(parseFieldSelector('a=x\\,y\\=z\\\\w').toString(), 'a=x\\,y\\=z\\\\w')
  })

  it('escapeFieldValue and unescapeFieldValue round-trip', () => {
    for (const v of ['', 'plain', 'a,b', 'k=v', 'back\\slash', '\\,=\\']) {
      assert.equal(unescapeFieldValue(escapeFieldValue(v)), v)
    }
  })

  it('an unknown escape sequence is rejected', () => {
    assert.equal(parseError('a=\\q'), 'invalid field selector: invalid escape sequence: \\q')
  })

  it('a trailing backslash is rejected', () => {
    assert.equal(parseError('a=x\\'), 'invalid field selector: invalid escape sequence: \\')
  })

  it('an unescaped "=" in a value is reported by its code point, as Kubernetes does', () => {
    assert.equal(unescapeFieldValueError('x=y'), 'invalid field selector: unescaped character in value: 61')
    assert.equal(unescapeFieldValueError('x,y'), 'invalid field selector: unescaped character in value: 44')
  })
})

function unescapeFieldValueError(text: string): string {
  try {
    unescapeFieldValue(text)
  } catch (e) {
    assert.ok(e instanceof SelectorParseError)
    return e.message
  }
  assert.fail('expected an error')
}

describe('parseFieldSelector: errors and canonical form', () => {
  it('a term without an operator cannot be understood', () => {
    assert.equal(parseError('metadata.name'), "invalid selector: 'metadata.name'; can't understand 'metadata.name'")
    assert.equal(parseError('a=b,c'), "invalid selector: 'a=b,c'; can't understand 'c'")
  })

  it('an unescaped "=" in a value is an error', () => {
    assert.equal(parseError('a=b=c'), 'invalid field selector: unescaped character in value: 61')
  })

  it('terms are sorted as text before they are kept', () => {
    assert.equal(parseFieldSelector('b=1,a==2').toString(), 'a=2,b=1')
    assert.equal(parseFieldSelector('spec.x!=1,metadata.name=n').toString(), 'metadata.name=n,spec.x!=1')
  })

  it('requirements list field, operator and value so callers can check supported fields', () => {
    const s = parseFieldSelector('metadata.namespace!=x,metadata.name=y')
    assert.deepEqual(
      s.requirements.map((r) => r.field),
      ['metadata.name', 'metadata.namespace'],
    )
    assert.deepEqual(
      s.requirements.map((r) => r.operator),
      ['=', '!='],
    )
  })

  it('requiresExactMatch returns the value of a field=value term only', () => {
    const s = parseFieldSelector('metadata.name=a,spec.nodeName!=b')
    assert.equal(s.requiresExactMatch('metadata.name'), 'a')
    assert.equal(s.requiresExactMatch('spec.nodeName'), undefined)
    assert.equal(s.requiresExactMatch('other'), undefined)
  })
})

describe('FieldSelector helpers', () => {
  it('fieldSelectorFromSet requires every field of the set to equal its value', () => {
    const s = fieldSelectorFromSet({'metadata.name': 'a', 'spec.nodeName': 'n'})
    assert.equal(s.matches({'metadata.name': 'a', 'spec.nodeName': 'n'}), true)
    assert.equal(s.matches({'metadata.name': 'a'}), false)
    assert.equal(s.toString(), 'metadata.name=a,spec.nodeName=n')
  })

  it('everything() is empty and nothing() matches nothing', () => {
    assert.equal(FieldSelector.everything().isEmpty(), true)
    assert.equal(FieldSelector.everything().matches({a: 'b'}), true)
    assert.equal(FieldSelector.nothing().isEmpty(), false)
    assert.equal(FieldSelector.nothing().matches({}), false)
    assert.equal(FieldSelector.nothing().matchesNothing(), true)
  })

  it('requirements are read-only', () => {
    const s = parseFieldSelector('a=b')
    assert.throws(() => (s.requirements as unknown as {field: string}[]).push({field: 'x'}))
  })
})
