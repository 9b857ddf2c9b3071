import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {statefulSet} from '../../src/api/apps/statefulset.js'
import {configMap} from '../../src/api/core/configmap.js'
import {lease} from '../../src/api/coordination/lease.js'
import {base64ErrorOffset, goDecodeError, rfc3339Error} from '../../src/machinery/go-json.js'

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

  it('metav1.Time takes a string in RFC 3339 only', () => {
    assert.equal(rfc3339Error('2026-11-24T10:00:00Z'), undefined)
    assert.equal(rfc3339Error('2026-11-24T10:00:00.123456+01:00'), undefined)
    assert.equal(rfc3339Error('2026-02-30T10:00:00Z'), 'parsing time "2026-02-30T10:00:00Z": day out of range')
    assert.match(rfc3339Error('yesterday') ?? '', /^parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse/)
    assert.equal(
      goDecodeError({spec: {renewTime: 5}}, lease.schema, 'v1'),
      'json: cannot unmarshal number into Go value of type string',
    )
  })
})
