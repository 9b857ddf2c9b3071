import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {
  LabelRequirement,
  LabelSelector,
  SelectorParseError,
  labelSelectorFromObject,
  labelSelectorFromSet,
  newLabelRequirement,
  parseLabelSelector,
} from '../../src/machinery/labels.js'

const labelValueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const nameRule =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

function parseError(text: string): string {
  try {
    parseLabelSelector(text)
  } catch (e) {
    assert.ok(e instanceof SelectorParseError, `expected a SelectorParseError, got ${String(e)}`)
    return e.message
  }
  assert.fail(`"${text}" parsed but should not have`)
}

function objectError(sel: Parameters<typeof labelSelectorFromObject>[0]): string {
  try {
    labelSelectorFromObject(sel)
  } catch (e) {
    assert.ok(e instanceof SelectorParseError)
    return e.message
  }
  assert.fail('the selector object was accepted but should not have been')
}

describe('parseLabelSelector: matching', () => {
  it('the empty string selects everything', () => {
    const s = parseLabelSelector('')
    assert.equal(s.isEmpty(), true)
    assert.equal(s.matches({}), true)
    assert.equal(s.matches(undefined), true)
    assert.equal(s.matches({a: 'b'}), true)
    assert.equal(s.toString(), '')
  })

  it('a selector of only whitespace selects everything', () => {
    assert.equal(parseLabelSelector('  \t ').isEmpty(), true)
  })

  it('"a=b" matches labels with a=b only', () => {
    const s = parseLabelSelector('a=b')
    assert.equal(s.matches({a: 'b'}), true)
    assert.equal(s.matches({a: 'b', c: 'd'}), true)
    assert.equal(s.matches({a: 'c'}), false)
    assert.equal(s.matches({}), false)
    assert.equal(s.matches(undefined), false)
  })

  it('"a==b" matches like "a=b"', () => {
    const s = parseLabelSelector('a==b')
    assert.equal(s.matches({a: 'b'}), true)
    assert.equal(s.matches({a: 'x'}), false)
  })

  it('"a!=b" matches labels where a is missing or differs', () => {
    const s = parseLabelSelector('a!=b')
    assert.equal(s.matches({a: 'c'}), true)
    assert.equal(s.matches({}), true)
    assert.equal(s.matches({a: 'b'}), false)
  })

  it('a selector "a in (x,y)" matches labels with a=x or a=y', () => {
    const s = parseLabelSelector('a in (x,y)')
    assert.equal(s.matches({a: 'x'}), true)
    assert.equal(s.matches({a: 'y'}), true)
    assert.equal(s.matches({a: 'z'}), false)
    assert.equal(s.matches({b: 'x'}), false)
  })

  it('a selector "a notin (x,y)" matches labels where a is missing or is neither x nor y', () => {
    const s = parseLabelSelector('a notin (x,y)')
    assert.equal(s.matches({a: 'z'}), true)
    assert.equal(s.matches({}), true)
    assert.equal(s.matches({a: 'x'}), false)
    assert.equal(s.matches({a: 'y'}), false)
  })

  it('a bare key "a" matches labels that have a, whatever its value', () => {
    const s = parseLabelSelector('a')
    assert.equal(s.matches({a: ''}), true)
    assert.equal(s.matches({a: 'q'}), true)
    assert.equal(s.matches({b: 'q'}), false)
  })

  it('"!a" matches labels that lack a', () => {
    const s = parseLabelSelector('!a')
    assert.equal(s.matches({b: 'x'}), true)
    assert.equal(s.matches(undefined), true)
    assert.equal(s.matches({a: ''}), false)
  })

  it('"a>1" and "a<5" compare the label value as an integer', () => {
    const gt = parseLabelSelector('a>1')
    assert.equal(gt.matches({a: '2'}), true)
    assert.equal(gt.matches({a: '10'}), true)
    assert.equal(gt.matches({a: '1'}), false)
    const lt = parseLabelSelector('a<5')
    assert.equal(lt.matches({a: '4'}), true)
    assert.equal(lt.matches({a: '5'}), false)
  })

  it('Gt/Lt do not match a missing label or a label that is not an integer', () => {
    const s = parseLabelSelector('a>1')
    assert.equal(s.matches({}), false)
    assert.equal(s.matches({a: 'x'}), false)
    assert.equal(s.matches({a: '1.5'}), false)
  })

  it('Gt/Lt compare 64-bit integers exactly', () => {
    assert.equal(parseLabelSelector('a>9007199254740992').matches({a: '9007199254740993'}), true)
    assert.equal(parseLabelSelector('a<9223372036854775807').matches({a: '9223372036854775808'}), false)
  })

  it('comma-separated requirements must all hold', () => {
    const s = parseLabelSelector('a=b,c notin (d),e')
    assert.equal(s.matches({a: 'b', e: ''}), true)
    assert.equal(s.matches({a: 'b', c: 'd', e: ''}), false)
    assert.equal(s.matches({a: 'b'}), false)
  })

  it('whitespace around keys, operators, values and commas is ignored', () => {
    const s = parseLabelSelector('  a  =  b ,  c in ( x , y ) ,\td\n')
    assert.equal(s.toString(), 'a=b,c in (x,y),d')
    assert.equal(s.matches({a: 'b', c: 'y', d: '1'}), true)
  })

  it('"a=" and "a in ()" select the empty value', () => {
    assert.equal(parseLabelSelector('a=').matches({a: ''}), true)
    assert.equal(parseLabelSelector('a=').matches({a: 'x'}), false)
    assert.equal(parseLabelSelector('a in ()').matches({a: ''}), true)
    assert.deepEqual(parseLabelSelector('a in (,)').requirements[0]!.values, [''])
  })

  it('"in" and "notin" may be used as keys and values', () => {
    assert.equal(parseLabelSelector('in=notin').matches({in: 'notin'}), true)
    assert.equal(parseLabelSelector('a in (in,notin)').matches({a: 'in'}), true)
  })

  it('prefixed keys are accepted', () => {
    assert.equal(parseLabelSelector('app.kubernetes.io/name=web').matches({'app.kubernetes.io/name': 'web'}), true)
  })

  it('only own properties of the labels object count as labels', () => {
    assert.equal(parseLabelSelector('toString').matches({}), false)
    assert.equal(parseLabelSelector('!constructor').matches({}), true)
  })
})

describe('parseLabelSelector: canonical form', () => {
  it('requirements print sorted by key, whatever the input order', () => {
    assert.equal(parseLabelSelector('x=a,a=x').toString(), 'a=x,x=a')
    assert.equal(parseLabelSelector('a=x,x=a').toString(), 'a=x,x=a')
  })

  it('set values print sorted and without duplicates', () => {
    assert.equal(parseLabelSelector('a in (c,b,a,b)').toString(), 'a in (a,b,c)')
  })

  it('empty values in a set print as an empty entry', () => {
    assert.equal(parseLabelSelector('x in (foo,,baz),y,z notin ()').toString(), 'x in (,baz,foo),y,z notin ()')
  })

  it('each operator prints as Kubernetes prints it', () => {
    assert.equal(parseLabelSelector('x notin (abc,def),y!=jkl,!z').toString(), 'x notin (abc,def),y!=jkl,!z')
    assert.equal(parseLabelSelector('x=abc,y==jkl,z!=a').toString(), 'x=abc,y==jkl,z!=a')
    assert.equal(parseLabelSelector('x > 2, y < 8, z').toString(), 'x>2,y<8,z')
  })

  it('selectors that print without spaces re-parse to the same text', () => {
    for (const text of ['x=a,y=b,z=c', 'x!=a,y=b', 'x=', 'x=,z=', '!x', 'x>1', 'x>1,z<5']) {
      assert.equal(parseLabelSelector(text).toString(), text)
    }
    assert.equal(parseLabelSelector('x= ,z= ').toString(), 'x=,z=')
  })

  it('requirements expose key, operator and values', () => {
    const [a, b, c] = parseLabelSelector('c,b notin (y,x),!a').requirements
    assert.deepEqual([a!.key, a!.operator, a!.values], ['a', '!', []])
    assert.deepEqual([b!.key, b!.operator, b!.values], ['b', 'notin', ['x', 'y']])
    assert.deepEqual([c!.key, c!.operator, c!.values], ['c', 'exists', []])
  })

  it('requiresExactMatch reports the value pinned by =, == or a one-value in', () => {
    assert.equal(parseLabelSelector('a=1,b').requiresExactMatch('a'), '1')
    assert.equal(parseLabelSelector('a in (2)').requiresExactMatch('a'), '2')
    assert.equal(parseLabelSelector('a in (1,2)').requiresExactMatch('a'), undefined)
    assert.equal(parseLabelSelector('a!=1').requiresExactMatch('a'), undefined)
    assert.equal(parseLabelSelector('b=1').requiresExactMatch('a'), undefined)
  })
})

describe('parseLabelSelector: errors', () => {
  it('an invalid value names values[0][key] and quotes the value', () => {
    assert.equal(parseError('app=x@y'), `unable to parse requirement: values[0][app]: Invalid value: "x@y": ${labelValueRule}`)
  })

  it('a value longer than 63 bytes is rejected with the byte limit', () => {
    const long = 'a'.repeat(64)
    assert.equal(parseError(`k=${long}`), `unable to parse requirement: values[0][k]: Invalid value: "${long}": must be no more than 63 bytes`)
  })

  it('an invalid key is reported with Kubernetes\' nil field path "<nil>"', () => {
    assert.equal(parseError('-a=b'), `unable to parse requirement: <nil>: Invalid value: "-a": name part ${nameRule}`)
  })

  it('a key with two slashes is not a qualified name', () => {
    assert.equal(
      parseError('a/b/c'),
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key ${nameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    )
  })

  it('a key with an invalid prefix reports the prefix part', () => {
    assert.match(parseError('Foo.com/a'), /^unable to parse requirement: <nil>: Invalid value: "Foo.com\/a": prefix part a lowercase RFC 1123 subdomain/)
    assert.equal(parseError('/a'), 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty')
  })

  it('a key whose name part is too long reports both problems of an empty or long name', () => {
    assert.equal(
      parseError('a/'),
      `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; name part ${nameRule}`,
    )
    assert.equal(parseError('k'.repeat(64)), `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 bytes`)
  })

  it('Gt/Lt need an integer value', () => {
    assert.equal(parseError('a>x'), `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`)
    assert.equal(parseError('a<'), `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`)
    assert.match(parseError('a>99999999999999999999'), /the value must be an integer$/)
  })

  it('a negative Gt/Lt bound is an integer but not a valid label value', () => {
    assert.equal(parseError('a>-1'), `unable to parse requirement: values[0][a]: Invalid value: "-1": ${labelValueRule}`)
  })

  it('a word where an operator belongs lists the binary operators', () => {
    assert.equal(parseError('a b'), 'unable to parse requirement: found \'b\', expected: in, notin, =, ==, !=, gt, lt')
    assert.equal(parseError('a ('), "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt")
  })

  it('a trailing comma expects another requirement', () => {
    assert.equal(parseError('a,'), "found '', expected: identifier after ','")
    assert.equal(parseError('a,,b'), "found ',', expected: identifier after ','")
  })

  it('a selector may not start with an operator', () => {
    assert.equal(parseError('=a'), "found '=', expected: !, identifier, or 'end of string'")
  })

  it('in/notin need a parenthesised list', () => {
    assert.equal(parseError('a in x'), "unable to parse requirement: found 'x' expected: '('")
    assert.equal(parseError('a in (x'), "unable to parse requirement: found '', expected: ',' or ')'")
    assert.equal(parseError('a in (x y)'), "unable to parse requirement: found 'y', expected: ',' or ')'")
    assert.equal(parseError('a in (x,'), "unable to parse requirement: found '', expected: ',', or identifier")
    assert.equal(parseError('a in (='), "unable to parse requirement: found '=', expected: ',', ')' or identifier")
  })

  it('an operator must be followed by a value, not another symbol', () => {
    assert.equal(parseError('a=!b'), "unable to parse requirement: found '!', expected: identifier")
    assert.equal(parseError('a>=1'), "unable to parse requirement: found '=', expected: identifier")
    assert.equal(parseError('x==a==b'), "found '==', expected: ',' or 'end of string'")
  })

  it('"!key" takes no operator after it', () => {
    assert.equal(parseError('!x=a'), "found '=', expected: ',' or 'end of string'")
    assert.equal(parseError('!'), "unable to parse requirement: found '', expected: identifier")
  })

  it('characters that are not special belong to identifiers', () => {
    assert.equal(parseError('x=a||y=b'), `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${labelValueRule}`)
  })

  it('a NUL character ends the selector at a token start and separates tokens inside one', () => {
    assert.equal(parseLabelSelector('a=b \0c=@').toString(), 'a=b')
    assert.equal(parseError('a=b,\0'), "found '', expected: identifier after ','")
    assert.equal(parseError('a\0b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")
    assert.equal(parseError('a=\0=b'), "unable to parse requirement: found '=', expected: identifier")
    assert.equal(parseLabelSelector('a=b\0,c').toString(), 'a=b,c')
  })

  it('errors are SelectorParseError carrying the field errors behind them', () => {
    try {
      parseLabelSelector('a=@')
      assert.fail('expected an error')
    } catch (e) {
      assert.ok(e instanceof SelectorParseError)
      assert.equal(e.name, 'SelectorParseError')
      assert.equal(e.errors.length, 1)
      assert.equal(e.errors[0]!.field, 'values[0][a]')
    }
  })
})

describe('labelSelectorFromObject', () => {
  it('a null or missing selector matches nothing', () => {
    for (const sel of [null, undefined]) {
      const s = labelSelectorFromObject(sel)
      assert.equal(s.matches({}), false)
      assert.equal(s.matches({a: 'b'}), false)
      assert.equal(s.isEmpty(), false)
      assert.equal(s.matchesNothing(), true)
      assert.equal(s.toString(), '')
    }
  })

  it('an empty selector {} matches everything', () => {
    for (const sel of [{}, {matchLabels: {}, matchExpressions: []}]) {
      const s = labelSelectorFromObject(sel)
      assert.equal(s.matches({}), true)
      assert.equal(s.matches({a: 'b'}), true)
      assert.equal(s.isEmpty(), true)
    }
  })

  it('matchLabels entries must all be equal', () => {
    const s = labelSelectorFromObject({matchLabels: {app: 'web', tier: 'fe'}})
    assert.equal(s.matches({app: 'web', tier: 'fe', x: 'y'}), true)
    assert.equal(s.matches({app: 'web'}), false)
    assert.equal(s.toString(), 'app=web,tier=fe')
  })

  it('matchExpressions In, NotIn, Exists and DoesNotExist map to in, notin, exists and !', () => {
    const s = labelSelectorFromObject({
      matchLabels: {b: 'x'},
      matchExpressions: [
        {key: 'c', operator: 'In', values: ['z', 'x']},
        {key: 'd', operator: 'NotIn', values: ['q']},
        {key: 'e', operator: 'Exists'},
        {key: 'a', operator: 'DoesNotExist', values: []},
      ],
    })
    assert.equal(s.toString(), '!a,b=x,c in (x,z),d notin (q),e')
    assert.equal(s.matches({b: 'x', c: 'z', e: ''}), true)
    assert.equal(s.matches({b: 'x', c: 'z', e: '', a: '1'}), false)
    assert.equal(s.matches({b: 'x', c: 'z', e: '', d: 'q'}), false)
  })

  it('In and NotIn need values', () => {
    assert.equal(objectError({matchExpressions: [{key: 'a', operator: 'In', values: []}]}), "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty")
    assert.equal(objectError({matchExpressions: [{key: 'a', operator: 'NotIn'}]}), "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty")
  })

  it('Exists and DoesNotExist forbid values', () => {
    assert.equal(
      objectError({matchExpressions: [{key: 'a', operator: 'Exists', values: ['x', 'y']}]}),
      'values: Invalid value: ["x","y"]: values set must be empty for exists and does not exist',
    )
  })

  it('an unknown operator is rejected with its name quoted', () => {
    assert.equal(objectError({matchExpressions: [{key: 'a', operator: 'Gt', values: ['1']}]}), '"Gt" is not a valid label selector operator')
  })

  it('invalid keys and values report key and values[i][key]', () => {
    assert.equal(objectError({matchLabels: {'a b': 'x'}}), `key: Invalid value: "a b": name part ${nameRule}`)
    assert.equal(objectError({matchLabels: {a: 'x y'}}), `values[0][a]: Invalid value: "x y": ${labelValueRule}`)
  })

  it('several problems in one requirement are listed in brackets', () => {
    assert.equal(
      objectError({matchExpressions: [{key: '-a', operator: 'In', values: ['@']}]}),
      `[key: Invalid value: "-a": name part ${nameRule}, values[0][-a]: Invalid value: "@": ${labelValueRule}]`,
    )
  })

  it('set values of an object selector keep their order for matching and print sorted', () => {
    const s = labelSelectorFromObject({matchExpressions: [{key: 'a', operator: 'In', values: ['y', 'x', 'y']}]})
    assert.deepEqual(s.requirements[0]!.values, ['y', 'x', 'y'])
    assert.equal(s.toString(), 'a in (x,y,y)')
  })
})

describe('LabelSelector helpers', () => {
  it('labelSelectorFromSet matches labels that contain every pair of the set', () => {
    const s = labelSelectorFromSet({b: '2', a: '1'})
    assert.equal(s.toString(), 'a=1,b=2')
    assert.equal(s.matches({a: '1', b: '2', c: '3'}), true)
    assert.equal(s.matches({a: '1'}), false)
    assert.equal(labelSelectorFromSet({}).isEmpty(), true)
    assert.equal(labelSelectorFromSet(undefined).matches({}), true)
  })

  it('newLabelRequirement validates like Kubernetes\' NewRequirement', () => {
    assert.equal(newLabelRequirement('a', 'in', ['x']).toString(), 'a in (x)')
    assert.throws(() => newLabelRequirement('a', 'in', []), {message: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"})
    assert.throws(() => newLabelRequirement('a', '=', ['x', 'y']), {
      message: 'values: Invalid value: ["x","y"]: exact-match compatibility requires one single value',
    })
    assert.throws(() => newLabelRequirement('a', 'gt', ['1', '2']), {message: /exactly one value is required/})
  })

  it('add keeps requirements sorted by key', () => {
    const s = parseLabelSelector('b=1').add(new LabelRequirement('a', 'exists', []))
    assert.equal(s.toString(), 'a,b=1')
  })

  it('everything() is empty and nothing() matches nothing', () => {
    assert.equal(LabelSelector.everything().isEmpty(), true)
    assert.equal(LabelSelector.nothing().matches({}), false)
    assert.equal(LabelSelector.nothing().add(new LabelRequirement('a', 'exists', [])).matchesNothing(), true)
  })
})
