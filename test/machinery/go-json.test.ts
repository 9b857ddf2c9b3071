import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {statefulSet} from '../../src/api/apps/statefulset.js'
import {configMap} from '../../src/api/core/configmap.js'
import {lease} from '../../src/api/coordination/lease.js'
import {pod} from '../../src/api/core/pod.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../../src/api/types.js'
import {scanJsonText} from '../../src/machinery/field-validation.js'
import {assertDecodes, base64ErrorOffset, decodeFailure, goDecodeError, rfc3339Error, timeParseError} from '../../src/machinery/go-json.js'
import {goNullsToZero} from '../../src/machinery/go-normalize.js'

const sts = (containers: unknown[]) => ({spec: {template: {spec: {containers}}}})

describe("Go's decoding of a body into its kind", () => {
  it('a value of the wrong JSON type is refused with encoding/json\'s message: innermost struct, field path, Go type', () => {
    assert.equal(goDecodeError({data: {k: 5}}, configMap.schema, 'v1'), 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
    assert.equal(goDecodeError({immutable: 'yes'}, configMap.schema, 'v1'), 'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool')
    assert.equal(
      goDecodeError({metadata: {labels: {a: true}}}, configMap.schema, 'v1'),
      'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string',
    )
    assert.equal(
      goDecodeError({metadata: {labels: 'x'}}, configMap.schema, 'v1'),
      'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    )
    assert.equal(
      goDecodeError({spec: {template: {spec: {containers: [{name: 'a', ports: [{containerPort: '80'}]}]}}}}, statefulSet.schema, 'v1'),
      'json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
    )
    assert.equal(
      goDecodeError({spec: {template: {spec: {containers: {name: 'a'}}}}}, statefulSet.schema, 'v1'),
      'json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container',
    )
  })

  it('integers: a fraction or a value outside int32 is shown as Go shows it ("number 1.5")', () => {
    assert.equal(goDecodeError({spec: {replicas: 1.5}}, statefulSet.schema, 'v1'), 'json: cannot unmarshal number 1.5 into Go struct field StatefulSetSpec.spec.replicas of type int32')
    assert.equal(
      goDecodeError({spec: {replicas: 2 ** 31}}, statefulSet.schema, 'v1'),
      'json: cannot unmarshal number 2147483648 into Go struct field StatefulSetSpec.spec.replicas of type int32',
    )
    assert.equal(goDecodeError({spec: {replicas: 3}}, statefulSet.schema, 'v1'), undefined)
  })

  it('nulls leave a field unset, and fields the schema does not know are not looked at', () => {
    assert.equal(goDecodeError({data: null, immutable: null, metadata: {labels: {a: null}}, extra: 5}, configMap.schema, 'v1'), undefined)
  })

  it('binaryData: standard base64 with padding, as Go\'s base64.StdEncoding (newlines skipped)', () => {
    assert.equal(goDecodeError({binaryData: {k: 'aGVsbG8='}}, configMap.schema, 'v1'), undefined)
    assert.equal(goDecodeError({binaryData: {k: 'not base64!'}}, configMap.schema, 'v1'), 'illegal base64 data at input byte 3')
    assert.equal(base64ErrorOffset(''), -1)
    assert.equal(base64ErrorOffset('aGVs\nbG8='), -1)
    assert.equal(base64ErrorOffset('AAE'), 0)
    assert.equal(base64ErrorOffset('AA=='), -1)
    assert.equal(base64ErrorOffset('AA='), 3)
    assert.equal(base64ErrorOffset('A==='), 1)
    assert.equal(base64ErrorOffset('AAA=x'), 4)
    assert.equal(base64ErrorOffset('aGVsbG8-'), 7)
    assert.equal(goDecodeError({binaryData: {k: Buffer.from('raw')}}, configMap.schema, 'v1'), undefined)
  })

  it('metav1.Time takes a string in RFC 3339 only, parsed as time.Parse parses it (errors element by element)', () => {
    assert.equal(rfc3339Error('2026-11-24T10:00:00Z'), undefined)
    assert.equal(rfc3339Error('2026-11-24T10:00:00.123456+01:00'), undefined)
    // Go's generic parser: a one-digit hour, a comma before the fraction, an offset of 24 hours
    assert.equal(rfc3339Error('2026-11-24T1:00:00Z'), undefined)
    assert.equal(rfc3339Error('2026-11-24T10:00:00,5Z'), undefined)
    assert.equal(rfc3339Error('2026-11-24T10:00:00+24:00'), undefined)
    assert.equal(rfc3339Error('0000-02-29T00:00:00Z'), undefined)
    assert.equal(rfc3339Error('2026-02-30T10:00:00Z'), 'parsing time "2026-02-30T10:00:00Z": day out of range')
    assert.equal(rfc3339Error('yesterday'), 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"')
    assert.equal(rfc3339Error(''), 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"')
    assert.equal(rfc3339Error('2026-11-24t10:00:00Z'), 'parsing time "2026-11-24t10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "t10:00:00Z" as "T"')
    assert.equal(rfc3339Error('2026-11-24T10:00:00z'), 'parsing time "2026-11-24T10:00:00z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"')
    assert.equal(rfc3339Error('2026-1-24T10:00:00Z'), 'parsing time "2026-1-24T10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-24T10:00:00Z" as "01"')
    assert.equal(rfc3339Error('2026-13-24T10:00:00Z'), 'parsing time "2026-13-24T10:00:00Z": month out of range')
    assert.equal(rfc3339Error('2026-11-24T24:00:00Z'), 'parsing time "2026-11-24T24:00:00Z": hour out of range')
    assert.equal(rfc3339Error('2026-11-24T10:00:00+25:00'), 'parsing time "2026-11-24T10:00:00+25:00": time zone offset hour out of range')
    assert.equal(rfc3339Error('2026-11-24T10:00:00Zulu'), 'parsing time "2026-11-24T10:00:00Zulu": extra text: "ulu"')
    assert.equal(rfc3339Error('2026-11-24T10:00:00\u00e9'), 'parsing time "2026-11-24T10:00:00\\xc3\\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa9" as "Z07:00"')
  })

  it('metav1.MicroTime takes RFC3339Micro: exactly six fraction digits', () => {
    assert.equal(timeParseError('2026-11-24T10:00:00.123456Z', true), undefined)
    assert.equal(timeParseError('2026-11-24T10:00:00Z', true), 'parsing time "2026-11-24T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"')
    assert.equal(timeParseError('2026-11-24T10:00:00.123Z', true), 'parsing time "2026-11-24T10:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"')
    assert.equal(
      timeParseError('2026-11-24T10:00:00.1234567Z', true),
      'parsing time "2026-11-24T10:00:00.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00"',
    )
    assert.equal(
      goDecodeError({spec: {renewTime: '2026-11-24T10:00:00Z'}}, lease.schema, 'v1'),
      'parsing time "2026-11-24T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    )
  })

  it("a type's own UnmarshalJSON (Time, IntOrString) fails with encoding/json's error, given this decoder's struct and field path", () => {
    assert.equal(goDecodeError({spec: {renewTime: 5}}, lease.schema, 'v1'), 'json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string')
    assert.equal(
      goDecodeError(sts([{name: 'a', livenessProbe: {httpGet: {port: {}}}}]), statefulSet.schema, 'v1'),
      'json: cannot unmarshal object into Go struct field HTTPGetAction.spec.template.spec.containers.livenessProbe.httpGet.port of type int32',
    )
    assert.equal(
      goDecodeError({spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 2 ** 31}}}}, statefulSet.schema, 'v1'),
      'json: cannot unmarshal number 2147483648 into Go struct field RollingUpdateStatefulSetStrategy.spec.updateStrategy.rollingUpdate.maxUnavailable of type int32',
    )
    assert.equal(goDecodeError(sts([{name: 'a', livenessProbe: {httpGet: {port: 'http'}}}]), statefulSet.schema, 'v1'), undefined)
  })

  it("an embedded struct's fields are the embedding struct's (Probe.exec, not ProbeHandler.exec)", () => {
    assert.equal(
      goDecodeError(sts([{name: 'a', livenessProbe: {exec: 'x'}}]), statefulSet.schema, 'v1'),
      'json: cannot unmarshal string into Go struct field Probe.spec.template.spec.containers.livenessProbe.exec of type v1.ExecAction',
    )
  })

  it('resource.Quantity: ParseQuantity\'s errors, the suffix one included', () => {
    const limits = (cpu: unknown) => sts([{name: 'a', resources: {limits: {cpu}}}])
    assert.equal(goDecodeError(limits('5mm'), statefulSet.schema, 'v1'), "unable to parse quantity's suffix")
    assert.match(goDecodeError(limits('x'), statefulSet.schema, 'v1') ?? '', /^quantities must match the regular expression/)
    assert.match(goDecodeError(limits(true), statefulSet.schema, 'v1') ?? '', /^quantities must match the regular expression/)
    assert.equal(goDecodeError(limits(' 1.5Gi '), statefulSet.schema, 'v1'), undefined)
    assert.equal(goDecodeError(limits(2), statefulSet.schema, 'v1'), undefined)
  })

  it('the first wrong type in document order is reported, unless a later value fails its own UnmarshalJSON, which ends decoding', () => {
    assert.equal(
      goDecodeError({data: {a: 1}, immutable: 'x'}, configMap.schema, 'v1'),
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    )
    assert.equal(
      goDecodeError({immutable: 'x', data: {a: 1}}, configMap.schema, 'v1'),
      'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool',
    )
    assert.equal(
      goDecodeError({data: {a: 1}, metadata: {creationTimestamp: 'soon'}}, configMap.schema, 'v1'),
      'parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"',
    )
    // a bad base64 value is remembered as a type error is
    assert.equal(goDecodeError({binaryData: {k: '!!!!'}, immutable: 'x'}, configMap.schema, 'v1'), 'illegal base64 data at input byte 0')
  })

  it('[]byte also takes an array of bytes, as Go decodes it', () => {
    assert.equal(goDecodeError({binaryData: {k: [104, 105]}}, configMap.schema, 'v1'), undefined)
    assert.equal(goDecodeError({binaryData: {k: [1, 256]}}, configMap.schema, 'v1'), 'json: cannot unmarshal number 256 into Go struct field ConfigMap.binaryData of type uint8')
    const object: Record<string, any> = {binaryData: {k: [104, 105]}}
    goNullsToZero(object, configMap.schema)
    assert.deepEqual(object.binaryData, {k: 'aGk='})
  })

  it('CBOR shapes: 64-bit integers (bigint) range-checked and made numbers, byte strings base64 in []byte and text in a string', () => {
    assert.equal(
      goDecodeError({spec: {replicas: 2n ** 32n}}, statefulSet.schema, 'v1'),
      'json: cannot unmarshal number 4294967296 into Go struct field StatefulSetSpec.spec.replicas of type int32',
    )
    assert.equal(goDecodeError({spec: {activeDeadlineSeconds: 2n ** 40n}}, pod.schema, 'v1'), undefined)
    assert.match(goDecodeError({spec: {activeDeadlineSeconds: 2n ** 60n}}, pod.schema, 'v1') ?? '', /cannot unmarshal number 1152921504606846976 into Go struct field PodSpec\.spec\.activeDeadlineSeconds of type int64/)
    assert.equal(goDecodeError({data: {a: Buffer.from('x')}, binaryData: {b: Buffer.from('y')}}, configMap.schema, 'v1'), undefined)
    const object: Record<string, any> = {spec: {activeDeadlineSeconds: 2n ** 40n}}
    goNullsToZero(object, pod.schema)
    assert.equal(object.spec.activeDeadlineSeconds, 2 ** 40)
    const map: Record<string, any> = {data: {a: Uint8Array.from([0x78])}, binaryData: {b: Uint8Array.from([0x79])}}
    goNullsToZero(map, configMap.schema)
    assert.deepEqual(map, {data: {a: 'x'}, binaryData: {b: 'eQ=='}})
  })

  it('a quantity is stored as resource.Quantity\'s MarshalJSON writes it: String() of what UnmarshalJSON parsed, a number\'s JSON text or a string\'s trimmed', () => {
    const object: Record<string, any> = sts([{name: 'a', resources: {limits: {cpu: '0.5', memory: 1024}, requests: {cpu: 0.5, memory: ' 1e3 ', storage: '1024Mi'}}}])
    object.spec.template.spec.containers[0].env = [{name: 'E', valueFrom: {resourceFieldRef: {resource: 'limits.cpu', divisor: 0.001}}}]
    goNullsToZero(object, statefulSet.schema)
    const container = object.spec.template.spec.containers[0]
    assert.deepEqual(container.resources, {limits: {cpu: '500m', memory: '1024'}, requests: {cpu: '500m', memory: '1e3', storage: '1Gi'}})
    assert.equal(container.env[0].valueFrom.resourceFieldRef.divisor, '1m')
    // CBOR's shapes: a big integer and a byte string
    const cbor: Record<string, any> = sts([{name: 'a', resources: {limits: {cpu: 2n ** 40n, memory: Uint8Array.from(Buffer.from('2048Ki'))}}}])
    goNullsToZero(cbor, statefulSet.schema)
    assert.deepEqual(cbor.spec.template.spec.containers[0].resources.limits, {cpu: '1099511627776', memory: '2Mi'})
  })

  it("transformDecodeError's message: the body's kind and version, defaulted from the endpoint's; unrecognized when they cannot be read", () => {
    const raw = Buffer.from('{}')
    const problem = 'json: x'
    assert.equal(decodeFailure({}, configMap, raw, problem), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: x')
    assert.equal(decodeFailure({apiVersion: 'apps/v1', kind: 'StatefulSet'}, statefulSet, raw, problem), 'StatefulSet in version "v1" cannot be handled as a StatefulSet: json: x')
    const leaseDeclaration: KindDeclaration = lease
    assert.equal(decodeFailure({apiVersion: 'coordination.orch.io/'}, leaseDeclaration, raw, problem), 'Lease in version "v1" cannot be handled as a Lease: json: x')
    assert.equal(decodeFailure({apiVersion: 'other/'}, leaseDeclaration, raw, problem), 'Lease in version "" cannot be handled as a Lease: json: x')
    assert.equal(
      decodeFailure({apiVersion: 5} as unknown as Record<string, unknown>, configMap, Buffer.from('{"apiVersion":5,"kind":"ConfigMap","data":{"a":1}}'), problem),
      'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":5,"kind":"Config ...)',
    )
    assert.equal(
      decodeFailure({apiVersion: 'a/b/c'}, configMap, Buffer.from('apiVersion: a/b/c\n'), problem),
      'the object provided is unrecognized (must be of type ConfigMap): unexpected GroupVersion string: a/b/c (61706956657273696f6e3a20612f622f630a)',
    )
  })
})

describe('numbers as they were written (assertDecodes with scanJsonText\'s numberLiterals)', () => {
  const schema: ObjectSchema = {
    type: 'object',
    name: 'Sample',
    fields: {
      ratio: {type: 'number', proto: 1},
      count: {type: 'integer', format: 'int32', proto: 2},
      bytes: {type: 'string', format: 'byte', proto: 3},
      port: {type: 'int-or-string', proto: 4},
    },
  }
  const kind = {group: '', version: 'v1', kind: 'Sample'}
  const problem = (text: string): string | undefined => {
    const body = JSON.parse(text) as AnyObject
    try {
      assertDecodes(body, schema, kind, Buffer.from(text), scanJsonText(text).numberLiterals)
      return undefined
    } catch (error) {
      return (error as Error).message.replace(/^Sample in version "v1" cannot be handled as a Sample: /, '')
    }
  }

  it('an integer, an IntOrString or a byte written with a fraction or an exponent is refused quoting its text; a float takes any finite number', () => {
    assert.equal(problem('{"count":2.0}'), 'json: cannot unmarshal number 2.0 into Go struct field Sample.count of type int32')
    assert.equal(problem('{"port":8e1}'), 'json: cannot unmarshal number 8e1 into Go struct field Sample.port of type int32')
    assert.equal(problem('{"bytes":[1,2.0]}'), 'json: cannot unmarshal number 2.0 into Go struct field Sample.bytes of type uint8')
    assert.equal(problem('{"ratio":2.50,"count":2}'), undefined)
    assert.equal(problem('{"ratio":1e400}'), 'json: cannot unmarshal number 1e400 into Go struct field Sample.ratio of type float64')
    assert.equal(problem('{"count":12345678901234567890}'), 'json: cannot unmarshal number 12345678901234567890 into Go struct field Sample.count of type int32')
  })

  it('a JSON number in a quantity is its text: UnmarshalJSON parses the bytes as written (1e3 stays 1e3, 1e400 is a quantity)', () => {
    const quantitySchema: ObjectSchema = {type: 'object', name: 'Sample', fields: {size: {type: 'quantity', proto: 1}, sizes: {type: 'map', values: {type: 'quantity'}, proto: 2}}}
    const decode = (text: string) => {
      const body = JSON.parse(text) as AnyObject
      assertDecodes(body, quantitySchema, kind, Buffer.from(text), scanJsonText(text).numberLiterals)
      goNullsToZero(body, quantitySchema)
      return body
    }
    assert.deepEqual(decode('{"size":1e3,"sizes":{"a":0.50,"b":1.5e3,"c":1e400,"d":1024}}'), {size: '1e3', sizes: {a: '500m', b: '1500', c: '10e399', d: '1024'}})
    assert.deepEqual(decode('{"size":"1e400"}'), {size: '10e399'})
  })

  it('the body is given back as it was, numbers and all', () => {
    const text = '{"ratio":2.5,"count":2.0}'
    const body = JSON.parse(text) as AnyObject
    assert.throws(() => assertDecodes(body, schema, kind, Buffer.from(text), scanJsonText(text).numberLiterals))
    assert.deepEqual(body, {ratio: 2.5, count: 2})
  })
})
