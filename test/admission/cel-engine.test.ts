// The CEL environment of admission policies (src/admission/cel): variables, escaping, int64,
// libraries, optional types, object initialisation, the authorizer, and the cost budget.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {celEngine} from '../../src/admission/cel/engine.js'
import {rewriteObjectInitialisers} from '../../src/admission/cel/object-syntax.js'
import {escapePropertyName, toCel, unescapePropertyName} from '../../src/admission/cel/values.js'
import type {Activation, ExpressionScope} from '../../src/admission/policy/engine.js'
import {statefulSet as statefulSetDeclaration} from '../../src/api/apps/statefulset.js'
import {configMap as configMapDeclaration} from '../../src/api/core/configmap.js'
import type {AnyObject, ObjectSchema} from '../../src/api/types.js'

const engine = celEngine()

function activation(overrides: Partial<Activation> = {}): Activation {
  return {
    object: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cm', namespace: 'shop', labels: {team: 'a'}}, data: {'a.b': 'dotted', max: '3'}},
    oldObject: null,
    request: {operation: 'CREATE', userInfo: {username: 'jane', groups: ['devs']}, namespace: 'shop'},
    params: undefined,
    namespaceObject: {metadata: {name: 'shop', labels: {env: 'prod'}}},
    variables: [],
    objectSchema: configMapDeclaration.schema,
    ...overrides,
  }
}

function run(expression: string, act: Activation = activation(), scope: Partial<ExpressionScope> = {}): unknown {
  const program = engine.compile(expression, {kind: 'validation', hasParams: act.params !== undefined, variables: [], ...scope})
  if ('errors' in program) throw new Error(`compile: ${program.errors.join('; ')}`)
  return program.evaluate(act, {remaining: 10_000_000})
}

describe('CEL environment', () => {
  it('variables object, oldObject, request, namespaceObject; params only with a paramKind', () => {
    assert.equal(run("object.metadata.name == 'cm' && oldObject == null && request.operation == 'CREATE' && namespaceObject.metadata.labels.env == 'prod'"), true)
    assert.equal(run('int(params.data.max) == 3', activation({params: {data: {max: '3'}}})), true)
    const without = engine.compile('params.data.max', {kind: 'validation', hasParams: false, variables: []})
    assert.ok('errors' in without && /params/.test(without.errors.join()), 'params without a paramKind does not compile')
  })

  it('variables are evaluated lazily, once, and see only the variables declared before them', () => {
    let evaluations = 0
    const counted = engine.compile("object.data.max + '!'", {kind: 'variable', hasParams: false, variables: []})
    assert.ok(!('errors' in counted))
    const spy = {evaluate: (a: Activation, b: {remaining: number}) => (evaluations++, counted.evaluate(a, b))}
    const act = activation({variables: [{name: 'bang', program: spy}]})
    assert.equal(run("variables.bang == '3!' && variables.bang.size() == 2", act, {variables: ['bang']}), true)
    assert.equal(run('true', activation({variables: [{name: 'bang', program: spy}]}), {variables: ['bang']}), true)
    assert.equal(evaluations, 1, 'used twice, computed once; unused, not computed')
    const later = engine.compile('variables.later', {kind: 'variable', hasParams: false, variables: []})
    assert.ok('errors' in later, 'a variable may not refer to one declared after it')
  })

  it('property names are escaped: __dot__, __dash__, __slash__, __underscores__ and reserved words as __word__', () => {
    assert.equal(escapePropertyName('a.b'), 'a__dot__b')
    assert.equal(escapePropertyName('x-y'), 'x__dash__y')
    assert.equal(escapePropertyName('a/b'), 'a__slash__b')
    assert.equal(escapePropertyName('a__b'), 'a__underscores__b')
    assert.equal(escapePropertyName('namespace'), '__namespace__')
    assert.equal(escapePropertyName('if'), '__if__')
    assert.equal(unescapePropertyName('__namespace__'), 'namespace')
    assert.equal(unescapePropertyName('a__dot__b__dash__c'), 'a.b-c')
    assert.equal(run("object.metadata.__namespace__ == 'shop'"), true)
    assert.equal(run("object.data['a.b'] == 'dotted'"), true, 'map keys are indexed, not escaped')
  })

  it('integers are int64 where the schema says integer; number fields stay doubles', () => {
    const sts = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 's'}, spec: {replicas: 3}}
    assert.equal(run("type(object.spec.replicas) == int && object.spec.replicas + 1 == 4", activation({object: sts, objectSchema: statefulSetDeclaration.schema})), true)
    const schema: ObjectSchema = {type: 'object', name: 'X', fields: {ratio: {type: 'number', proto: 1}, count: {type: 'integer', format: 'int64', proto: 2}}}
    const value = toCel({ratio: 2, count: 2}, schema) as AnyObject
    assert.equal(typeof value.ratio, 'number')
    assert.equal(value.count, 2n)
  })

  it('objects without a schema show only apiVersion, kind, metadata.name and metadata.generateName of their metadata', () => {
    const untyped = toCel({apiVersion: 'x/v1', kind: 'X', metadata: {name: 'n', generateName: 'g', labels: {a: 'b'}}}) as AnyObject
    assert.deepEqual(untyped.metadata, {name: 'n', generateName: 'g'})
    assert.equal(run("has(object.metadata.labels) && 'team' in object.metadata.labels"), true, 'typed objects show every declared field')
  })

  it('equality on set-typed lists ignores order', () => {
    const schema: ObjectSchema = {type: 'object', name: 'S', fields: {tags: {type: 'array', items: {type: 'string'}, listType: 'set', proto: 1}}}
    assert.equal(run('object.tags == oldObject.tags', activation({object: {tags: ['a', 'b']}, oldObject: {tags: ['b', 'a']}, objectSchema: schema})), true)
  })

  it("Kubernetes' libraries: strings, lists, regex, quantity, ip, cidr, url, optional, jsonpatch.escapeKey", () => {
    assert.equal(run("'a-b-c'.replace('-', '_') == 'a_b_c' && 'abc'.charAt(1) == 'b' && 'ABC'.lowerAscii() == 'abc' && 'a,b'.split(',') == ['a', 'b']"), true)
    assert.equal(run('[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3 && [1, 2, 3].indexOf(2) == 1 && [1, 2, 3].slice(1, 2) == [2] && [[1], [2]].flatten() == [1, 2]'), true)
    assert.equal(run("'abc123def'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2'] && 'abc'.matches('^a')"), true)
    assert.equal(run("quantity('1Gi').isGreaterThan(quantity('512Mi')) && quantity('2').asInteger() == 2 && isQuantity('1.5') && !isQuantity('1.5x') && quantity('1').add(quantity('500m')).compareTo(quantity('1500m')) == 0"), true)
    assert.equal(run("ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !isIP('300.1.1.1') && string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8'"), true)
    assert.equal(run("url('https://example.com:8443/a?x=1').getHostname() == 'example.com' && url('https://example.com:8443/a?x=1').getPort() == '8443' && url('https://e.com/p?x=1').getQuery()['x'] == ['1'] && isURL('/path')"), true)
    assert.equal(run("object.?spec.?replicas.orValue(7) == 7 && optional.of(1).hasValue()"), true)
    assert.equal(run("jsonpatch.escapeKey('a/b~c') == 'a~1b~0c'"), true)
  })

  it('authorizer and authorizer.requestResource ask the server authorizer; messageExpression has no authorizer', () => {
    const asked: unknown[] = []
    const act = activation({
      authorizer: (check) => (asked.push(check), {decision: check.verb === 'create' ? 'allow' : 'no-opinion', reason: 'rbac'}),
      requestResource: {group: '', resource: 'configmaps', subresource: '', namespace: 'shop', name: 'cm'},
    })
    assert.equal(run("authorizer.group('apps').resource('statefulsets').namespace('shop').check('create').allowed() && !authorizer.requestResource.check('delete').allowed()", act), true)
    assert.deepEqual(asked[0], {user: {username: 'jane', uid: undefined, groups: ['devs'], extra: undefined}, verb: 'create', group: 'apps', resource: 'statefulsets', subresource: '', namespace: 'shop', name: ''})
    const message = engine.compile("authorizer.path('/x').check('get').allowed() ? 'a' : 'b'", {kind: 'messageExpression', hasParams: false, variables: []})
    assert.ok('errors' in message)
  })

  it('object initialisation: Object{...} and JSONPatch{...} become maps; field names stay escaped until the result', () => {
    assert.equal(rewriteObjectInitialisers('Object{spec: Object.spec{replicas: 3}}'), '{"spec": {"replicas": 3}}')
    assert.equal(rewriteObjectInitialisers("JSONPatch{op: 'add', path: 'a{b}', value: {'k': 1}}"), `{"op": 'add', "path": 'a{b}', "value": {'k': 1}}`)
    const program = engine.compile('Object{metadata: Object.metadata{labels: {"a": "b"}}}', {kind: 'applyConfiguration', hasParams: false, variables: []})
    assert.ok(!('errors' in program))
    assert.deepEqual(program.evaluate(activation(), {remaining: 100}), {metadata: {labels: {a: 'b'}}})
  })

  it('a per-evaluation cost budget stops a runaway expression quickly with Kubernetes\' message', () => {
    const runaway = 'range.all(a, range.all(b, range.all(c, range.all(d, range.all(e, a + b + c + d + e >= 0)))))'.replace(/range/g, '[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]')
    const started = Date.now()
    assert.throws(() => run(runaway), /operation cancelled: actual cost limit exceeded/)
    assert.ok(Date.now() - started < 2000, `cut off after ${Date.now() - started} ms`)
    const program = engine.compile('[1,2,3].all(x, x > 0)', {kind: 'validation', hasParams: false, variables: []})
    assert.ok(!('errors' in program))
    assert.throws(() => program.evaluate(activation(), {remaining: 3}), /running out of cost budget/, 'the budget given to one evaluation is its own')
    assert.equal(program.evaluate(activation(), {remaining: 1000}), true)
  })

  it('compile errors are readable and carry the position', () => {
    const broken = engine.compile('object.data +', {kind: 'validation', hasParams: false, variables: []})
    assert.ok('errors' in broken)
    assert.match(broken.errors[0], /Unexpected token/)
    assert.match(broken.errors[0], /1 \| object.data \+/)
  })
})
