// dropTypeDependentFields (Kubernetes' pkg/registry/core/service/strategy.go), case by case: a field
// is cleared only when the new type does not use it and the update left it as it was.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {dropTypeDependentFields} from '../../src/api/core/service.js'
import type {AnyObject} from '../../src/api/types.js'

const nodePortService = (): AnyObject => ({
  spec: {
    type: 'NodePort',
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    externalTrafficPolicy: 'Cluster',
    ports: [{name: 'a', port: 80, nodePort: 30080}, {name: 'b', port: 81, nodePort: 30081}],
  },
  status: {loadBalancer: {}},
})

/** The update: the stored Service with `change` merged into its spec, then dropped against it. */
function dropped(old: AnyObject, change: AnyObject): AnyObject {
  const next = structuredClone(old)
  Object.assign(next.spec, structuredClone(change))
  dropTypeDependentFields(next, old)
  return next.spec
}

describe('dropTypeDependentFields', () => {
  it('to ClusterIP: node ports and externalTrafficPolicy go, cluster IPs stay', () => {
    const spec = dropped(nodePortService(), {type: 'ClusterIP'})
    assert.deepEqual(spec.ports.map((p: AnyObject) => p.nodePort), [undefined, undefined])
    assert.equal(spec.externalTrafficPolicy, undefined)
    assert.equal(spec.clusterIP, '10.96.0.10')
  })

  it('node ports go when the update only removes some of them (no net-new node port), stay when it adds one', () => {
    const old = nodePortService()
    const removed = dropped(old, {type: 'ClusterIP', ports: [{name: 'a', port: 80, nodePort: 30080}]})
    assert.equal(removed.ports[0].nodePort, undefined)
    const added = dropped(old, {type: 'ClusterIP', ports: [{name: 'a', port: 80, nodePort: 30090}]})
    assert.equal(added.ports[0].nodePort, 30090)
  })

  it('externalTrafficPolicy stays when the update changes it, and for a ClusterIP with externalIPs (still externally accessible)', () => {
    assert.equal(dropped(nodePortService(), {type: 'ClusterIP', externalTrafficPolicy: 'Local'}).externalTrafficPolicy, 'Local')
    assert.equal(dropped(nodePortService(), {type: 'ClusterIP', externalIPs: ['192.0.2.1']}).externalTrafficPolicy, 'Cluster')
  })

  it('to ExternalName: clusterIP(s), ipFamilies, ipFamilyPolicy go unless changed in the update', () => {
    const spec = dropped(nodePortService(), {type: 'ExternalName', externalName: 'x.example.com'})
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) assert.equal(spec[field], undefined, field)
    const kept = dropped(nodePortService(), {type: 'ExternalName', clusterIP: '10.96.0.11', ipFamilyPolicy: 'PreferDualStack'})
    assert.equal(kept.clusterIP, '10.96.0.11')
    assert.deepEqual(kept.clusterIPs, ['10.96.0.10'])
    assert.equal(kept.ipFamilyPolicy, 'PreferDualStack')
    assert.equal(kept.ipFamilies, undefined)
  })

  it('off LoadBalancer: healthCheckNodePort, allocateLoadBalancerNodePorts, loadBalancerClass and the load-balancer status go', () => {
    const old = nodePortService()
    Object.assign(old.spec, {type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, allocateLoadBalancerNodePorts: true, loadBalancerClass: 'example.com/lb'})
    old.status = {loadBalancer: {ingress: [{ip: '192.0.2.10'}]}}
    const next = structuredClone(old)
    next.spec.type = 'NodePort'
    dropTypeDependentFields(next, old)
    for (const field of ['healthCheckNodePort', 'allocateLoadBalancerNodePorts', 'loadBalancerClass']) assert.equal(next.spec[field], undefined, field)
    assert.deepEqual(next.status.loadBalancer, {})
    assert.equal(next.spec.ports[0].nodePort, 30080)
    assert.equal(next.spec.externalTrafficPolicy, 'Local')
  })

  it('a LoadBalancer whose externalTrafficPolicy leaves Local loses healthCheckNodePort; allocateLoadBalancerNodePorts changed in the update stays', () => {
    const old = nodePortService()
    Object.assign(old.spec, {type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, allocateLoadBalancerNodePorts: true})
    assert.equal(dropped(old, {externalTrafficPolicy: 'Cluster'}).healthCheckNodePort, undefined)
    assert.equal(dropped(old, {type: 'ClusterIP', allocateLoadBalancerNodePorts: false}).allocateLoadBalancerNodePorts, false)
  })

  it('a type that stays the same changes nothing', () => {
    const old = nodePortService()
    assert.deepEqual(dropped(old, {}), old.spec)
  })
})
