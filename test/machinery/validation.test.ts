import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {formatFieldError} from '../../src/machinery/field-errors.js'
import {
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isInRange,
  isQualifiedName,
  isValidLabelValue,
  isValidPortNum,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
  validateNameFields,
  validateObjectName,
  type ValidateNameFunc,
} from '../../src/machinery/validation.js'

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const dns1035Msg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
const nameRule =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const configKeyMsg =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
const cIdentMsg =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"

describe('isDNS1123Subdomain', () => {
  it('accepts lower-case alphanumerics, "-" and "." starting and ending alphanumeric', () => {
    for (const v of ['a', 'ab', 'a-b', 'a.b', '0', 'a--b', 'a.b.c-d', '1.2.3.4', 'a'.repeat(253)]) assert.deepEqual(isDNS1123Subdomain(v), [], v)
  })

  it('rejects upper case, underscores, empty labels and bad edges with Kubernetes\' message', () => {
    for (const v of ['', 'A', 'a_b', '-a', 'a-', 'a..b', '.a', 'a.', 'a b', 'a.-b']) assert.deepEqual(isDNS1123Subdomain(v), [subdomainMsg], v)
  })

  it('rejects more than 253 characters', () => {
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters'])
  })
})

describe('isDNS1123Label', () => {
  it('accepts lower-case alphanumerics and "-" up to 63 characters', () => {
    for (const v of ['a', '0', 'a-b', 'a--b', '1-2', 'a'.repeat(63)]) assert.deepEqual(isDNS1123Label(v), [], v)
  })

  it('rejects dots with "must not contain dots"', () => {
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots'])
  })

  it('rejects other malformed labels with Kubernetes\' message', () => {
    for (const v of ['', 'A', '-a', 'a-', 'a_b', 'a b']) assert.deepEqual(isDNS1123Label(v), [labelMsg], v)
  })

  it('rejects more than 63 characters', () => {
    assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters'])
  })
})

describe('isDNS1035Label', () => {
  it('accepts labels starting with a letter', () => {
    for (const v of ['a', 'a1', 'a-1', 'abc-123']) assert.deepEqual(isDNS1035Label(v), [], v)
  })

  it('rejects labels starting with a digit or a dash, or ending with a dash', () => {
    for (const v of ['1a', '-a', 'a-', 'A', '', 'a.b']) assert.deepEqual(isDNS1035Label(v), [dns1035Msg], v)
  })

  it('rejects more than 63 characters', () => {
    assert.deepEqual(isDNS1035Label('a'.repeat(64)), ['must be no more than 63 characters'])
  })
})

describe('isQualifiedName', () => {
  it('accepts a name of mixed-case alphanumerics, "-", "_" and ".", with an optional DNS prefix', () => {
    for (const v of ['a', 'A', 'a_b', 'a.B-c', '1', 'example.com/MyName', 'k8s.io/a', 'a'.repeat(63), `${'a'.repeat(253)}/b`]) {
      assert.deepEqual(isQualifiedName(v), [], v)
    }
  })

  it('rejects a name that does not start and end alphanumeric', () => {
    for (const v of ['-a', 'a-', '_a', 'a b', 'a@b']) assert.deepEqual(isQualifiedName(v), [`name part ${nameRule}`], v)
  })

  it('rejects an empty name with two messages, as Kubernetes does', () => {
    assert.deepEqual(isQualifiedName(''), ['name part must be non-empty', `name part ${nameRule}`])
    assert.deepEqual(isQualifiedName('a.com/'), ['name part must be non-empty', `name part ${nameRule}`])
  })

  it('rejects a name longer than 63 bytes', () => {
    assert.deepEqual(isQualifiedName('a'.repeat(64)), ['name part must be no more than 63 bytes'])
  })

  it('rejects an empty or malformed prefix', () => {
    assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty'])
    assert.deepEqual(isQualifiedName('Example.com/a'), [`prefix part ${subdomainMsg}`])
    assert.deepEqual(isQualifiedName(`${'a'.repeat(254)}/b`), ['prefix part must be no more than 253 bytes'])
  })

  it('rejects more than one "/"', () => {
    assert.deepEqual(isQualifiedName('a/b/c'), [
      `a valid label key ${nameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ])
  })
})

describe('isValidLabelValue', () => {
  it('accepts the empty string and up to 63 alphanumerics, "-", "_", "."', () => {
    for (const v of ['', 'a', 'A-b_c.d', '12345', 'a'.repeat(63)]) assert.deepEqual(isValidLabelValue(v), [], v)
  })

  it('rejects bad characters and edges', () => {
    for (const v of ['-a', 'a-', 'a b', 'a/b', 'é']) assert.deepEqual(isValidLabelValue(v), [labelValueMsg], v)
  })

  it('rejects more than 63 bytes, counting UTF-8 bytes', () => {
    assert.deepEqual(isValidLabelValue('a'.repeat(64)), ['must be no more than 63 bytes'])
    assert.deepEqual(isValidLabelValue('é'.repeat(32)), ['must be no more than 63 bytes', labelValueMsg])
  })
})

describe('isConfigMapKey', () => {
  it('accepts alphanumerics, "-", "_" and "."', () => {
    for (const v of ['a', 'key.name', 'KEY_NAME', 'key-name', '.dotfile', '.a', 'a..b', 'a'.repeat(253)]) assert.deepEqual(isConfigMapKey(v), [], v)
  })

  it('rejects other characters with Kubernetes\' message', () => {
    assert.deepEqual(isConfigMapKey('a/b'), [configKeyMsg])
    assert.deepEqual(isConfigMapKey(''), [configKeyMsg])
  })

  it('rejects ".", ".." and names starting with ".."', () => {
    assert.deepEqual(isConfigMapKey('.'), ["must not be '.'"])
    assert.deepEqual(isConfigMapKey('..'), ["must not be '..'"])
    assert.deepEqual(isConfigMapKey('..a'), ["must not start with '..'"])
  })

  it('rejects more than 253 characters', () => {
    assert.deepEqual(isConfigMapKey('a'.repeat(254)), ['must be no more than 253 characters'])
  })
})

describe('isCIdentifier, isValidPortNum, isInRange', () => {
  it('a C identifier starts with a letter or "_" followed by alphanumerics or "_"', () => {
    for (const v of ['a', '_', 'MY_NAME', 'a1']) assert.deepEqual(isCIdentifier(v), [], v)
    for (const v of ['', '1a', 'a-b', 'a.b']) assert.deepEqual(isCIdentifier(v), [cIdentMsg], v)
  })

  it('a port number is an integer from 1 to 65535', () => {
    for (const p of [1, 80, 65535]) assert.deepEqual(isValidPortNum(p), [], String(p))
    for (const p of [0, -1, 65536, 1.5, NaN]) assert.deepEqual(isValidPortNum(p), ['must be between 1 and 65535, inclusive'], String(p))
  })

  it('isInRange accepts values within the inclusive bounds', () => {
    assert.deepEqual(isInRange(5, 5, 6), [])
    assert.deepEqual(isInRange(7, 5, 6), ['must be between 5 and 6, inclusive'])
  })
})

describe('object name functions (ValidateNameFunc)', () => {
  it('nameIsDNSSubdomain checks a name as a DNS subdomain', () => {
    assert.deepEqual(nameIsDNSSubdomain('my.app'), [])
    assert.deepEqual(nameIsDNSSubdomain('Foo'), [subdomainMsg])
    assert.deepEqual(validateObjectName('my.app'), [])
    assert.deepEqual(validateObjectName('my-app-'), [subdomainMsg])
  })

  it('in prefix (generateName) mode a trailing dash is tolerated', () => {
    assert.deepEqual(nameIsDNSSubdomain('my-app-', true), [])
    assert.deepEqual(validateObjectName('my-app-', true), [])
    assert.deepEqual(nameIsDNSLabel('web-', true), [])
    assert.deepEqual(nameIsDNS1035Label('web-', true), [])
    assert.deepEqual(nameIsDNSLabel('web-', false), [labelMsg])
  })

  it('prefix mode masks the last two characters as Kubernetes does, and never a lone "-"', () => {
    assert.deepEqual(nameIsDNSSubdomain('-', true), [subdomainMsg])
    assert.deepEqual(nameIsDNSSubdomain('a-', true), [])
    assert.deepEqual(nameIsDNSSubdomain('a.-', true), [])
    assert.deepEqual(nameIsDNSSubdomain('A-', true), [])
    assert.deepEqual(nameIsDNSSubdomain('Ab-', true), [subdomainMsg])
  })

  it('nameIsDNSLabel rejects dots and nameIsDNS1035Label leading digits', () => {
    assert.deepEqual(nameIsDNSLabel('a.b'), ['must not contain dots'])
    assert.deepEqual(nameIsDNS1035Label('1a'), [dns1035Msg])
    assert.deepEqual(nameIsDNSLabel('1a'), [])
  })

  it('validateNameFields requires a name and checks generateName in prefix mode', () => {
    assert.deepEqual(validateNameFields({name: 'ok'}), [])
    assert.deepEqual(validateNameFields({}).map(formatFieldError), ['metadata.name: Required value: name or generateName is required'])
    assert.deepEqual(validateNameFields({name: 'Foo'}).map(formatFieldError), [`metadata.name: Invalid value: "Foo": ${subdomainMsg}`])
    assert.deepEqual(validateNameFields({generateName: 'web-', name: 'web-x1'}), [])
    const fn: ValidateNameFunc = nameIsDNSLabel
    assert.deepEqual(validateNameFields({generateName: 'a.b-', name: 'a.b-x'}, fn, 'meta').map(formatFieldError), [
      'meta.generateName: Invalid value: "a.b-": must not contain dots',
      'meta.name: Invalid value: "a.b-x": must not contain dots',
    ])
  })
})

describe('validateLabels', () => {
  it('accepts valid keys and values', () => {
    assert.deepEqual(validateLabels({'app.kubernetes.io/name': 'web', tier: ''}, 'metadata.labels'), [])
    assert.deepEqual(validateLabels(undefined, 'metadata.labels'), [])
  })

  it('reports an invalid key with the key as the value', () => {
    assert.deepEqual(validateLabels({'bad key': 'v'}, 'metadata.labels').map(formatFieldError), [
      `metadata.labels: Invalid value: "bad key": name part ${nameRule}`,
    ])
  })

  it('reports an invalid value with the value itself', () => {
    const errs = validateLabels({app: 'no good'}, 'metadata.labels')
    assert.deepEqual(errs, [{type: 'FieldValueInvalid', field: 'metadata.labels', value: 'no good', message: labelValueMsg}])
  })
})

describe('validateAnnotations', () => {
  it('accepts qualified keys and any values', () => {
    assert.deepEqual(validateAnnotations({'example.com/note': 'any text at all, with spaces!'}, 'metadata.annotations'), [])
  })

  it('checks keys ignoring case', () => {
    assert.deepEqual(validateAnnotations({'Example.COM/Note': 'x'}, 'metadata.annotations'), [])
  })

  it('reports an invalid key with the original spelling', () => {
    assert.deepEqual(validateAnnotations({'A B': 'x'}, 'metadata.annotations').map(formatFieldError), [
      `metadata.annotations: Invalid value: "A B": name part ${nameRule}`,
    ])
  })

  it('limits the total size of keys and values to 256 KiB', () => {
    const atLimit = {a: 'x'.repeat(256 * 1024 - 1)}
    assert.deepEqual(validateAnnotations(atLimit, 'metadata.annotations'), [])
    const over = {a: 'x'.repeat(128 * 1024), b: 'y'.repeat(128 * 1024)}
    assert.deepEqual(validateAnnotations(over, 'metadata.annotations').map(formatFieldError), [
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ])
  })

  it('counts the size in UTF-8 bytes', () => {
    assert.equal(validateAnnotations({a: 'é'.repeat(128 * 1024)}, 'metadata.annotations').length, 1)
  })
})

describe('validateLabelSelector', () => {
  it('accepts a well-formed selector and a null one', () => {
    assert.deepEqual(validateLabelSelector(null, 'spec.selector'), [])
    assert.deepEqual(
      validateLabelSelector({matchLabels: {app: 'web'}, matchExpressions: [{key: 'tier', operator: 'In', values: ['fe']}, {key: 'x', operator: 'Exists'}]}, 'spec.selector'),
      [],
    )
  })

  it('requires values for In and NotIn and forbids them for Exists and DoesNotExist', () => {
    const errs = validateLabelSelector(
      {matchExpressions: [{key: 'a', operator: 'NotIn', values: []}, {key: 'b', operator: 'DoesNotExist', values: ['x']}]},
      'spec.selector',
    )
    assert.deepEqual(errs.map(formatFieldError), [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ])
  })

  it('rejects unknown operators, bad keys and bad values with their paths', () => {
    const errs = validateLabelSelector(
      {matchLabels: {'-x': 'y'}, matchExpressions: [{key: 'a b', operator: 'Gt', values: ['@']}]},
      'spec.selector',
    )
    assert.deepEqual(errs.map(formatFieldError), [
      `spec.selector.matchLabels: Invalid value: "-x": name part ${nameRule}`,
      'spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator',
      `spec.selector.matchExpressions[0].key: Invalid value: "a b": name part ${nameRule}`,
      `spec.selector.matchExpressions[0].values[0]: Invalid value: "@": ${labelValueMsg}`,
    ])
  })
})
