// Service (v1, namespaced). Cluster IP and node port allocation is the registry's / allocator's business
// (src/apiserver/service-ips.ts), not a default; dropping what a type change leaves unused is here.
import {ageColumn, formatLabels} from '../columns.js'
import {conditionList, objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../types.js'
import {protocols} from './container.js'

const servicePort: ObjectSchema = {
  type: 'object',
  name: 'ServicePort',
  fields: {
    name: {type: 'string', proto: 1},
    protocol: {type: 'string', proto: 2, enum: protocols},
    appProtocol: {type: 'string', proto: 6},
    port: {type: 'integer', format: 'int32', proto: 3, required: true},
    targetPort: {type: 'int-or-string', proto: 4},
    nodePort: {type: 'integer', format: 'int32', proto: 5},
  },
}

const serviceSpec: ObjectSchema = {
  type: 'object',
  name: 'ServiceSpec',
  fields: {
    ports: {
      type: 'array',
      items: servicePort,
      proto: 1,
      patchMergeKey: 'port',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['port', 'protocol'],
    },
    selector: {type: 'map', values: {type: 'string'}, proto: 2, mapType: 'atomic'},
    clusterIP: {type: 'string', proto: 3},
    clusterIPs: {type: 'array', items: {type: 'string'}, proto: 18, listType: 'atomic'},
    type: {type: 'string', proto: 4, enum: ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']},
    externalIPs: {type: 'array', items: {type: 'string'}, proto: 5, listType: 'atomic'},
    sessionAffinity: {type: 'string', proto: 7, enum: ['ClientIP', 'None']},
    loadBalancerIP: {type: 'string', proto: 8},
    loadBalancerSourceRanges: {type: 'array', items: {type: 'string'}, proto: 9, listType: 'atomic'},
    externalName: {type: 'string', proto: 10},
    externalTrafficPolicy: {type: 'string', proto: 11, enum: ['Cluster', 'Local']},
    healthCheckNodePort: {type: 'integer', format: 'int32', proto: 12},
    publishNotReadyAddresses: {type: 'boolean', proto: 13},
    sessionAffinityConfig: {
      type: 'object',
      name: 'SessionAffinityConfig',
      proto: 14,
      fields: {
        clientIP: {
          type: 'object',
          name: 'ClientIPConfig',
          proto: 1,
          fields: {timeoutSeconds: {type: 'integer', format: 'int32', proto: 1}},
        },
      },
    },
    ipFamilies: {type: 'array', items: {type: 'string', enum: ['IPv4', 'IPv6']}, proto: 19, listType: 'atomic'},
    ipFamilyPolicy: {type: 'string', proto: 17, enum: ['SingleStack', 'PreferDualStack', 'RequireDualStack']},
    allocateLoadBalancerNodePorts: {type: 'boolean', proto: 20},
    loadBalancerClass: {type: 'string', proto: 21},
    internalTrafficPolicy: {type: 'string', proto: 22, enum: ['Cluster', 'Local']},
    trafficDistribution: {type: 'string', proto: 23},
  },
}

const serviceStatus: ObjectSchema = {
  type: 'object',
  name: 'ServiceStatus',
  fields: {
    loadBalancer: {
      type: 'object',
      name: 'LoadBalancerStatus',
      proto: 1,
      fields: {
        ingress: {
          type: 'array',
          proto: 1,
          listType: 'atomic',
          items: {
            type: 'object',
            name: 'LoadBalancerIngress',
            fields: {
              ip: {type: 'string', proto: 1},
              hostname: {type: 'string', proto: 2},
              ipMode: {type: 'string', proto: 3, enum: ['VIP', 'Proxy']},
              ports: {
                type: 'array',
                proto: 4,
                listType: 'atomic',
                items: {
                  type: 'object',
                  name: 'PortStatus',
                  fields: {
                    port: {type: 'integer', format: 'int32', proto: 1, required: true},
                    protocol: {type: 'string', proto: 2, required: true, enum: protocols},
                    error: {type: 'string', proto: 3},
                  },
                },
              },
            },
          },
        },
      },
    },
    conditions: conditionList(2),
  },
}

/** 3 hours: the ClientIP session affinity timeout when none is given */
const DEFAULT_CLIENT_IP_TIMEOUT = 10800

/** SetDefaults_Service; idempotent. */
function defaultService(object: AnyObject): void {
  const spec = (object.spec ??= {})
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None'
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig?.clientIP?.timeoutSeconds == null) {
    spec.sessionAffinityConfig = {clientIP: {timeoutSeconds: DEFAULT_CLIENT_IP_TIMEOUT}}
  }
  if (!spec.type) spec.type = 'ClusterIP'
  for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!port || typeof port !== 'object') continue
    if (!port.protocol) port.protocol = 'TCP'
    if (port.targetPort === undefined || port.targetPort === null || port.targetPort === 0 || port.targetPort === '') {
      port.targetPort = port.port
    }
  }
  const externallyAccessible =
    spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && (spec.externalIPs ?? []).length > 0)
  if (externallyAccessible && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster'
  if (spec.internalTrafficPolicy == null && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(spec.type)) {
    spec.internalTrafficPolicy = 'Cluster'
  }
  if (spec.type === 'LoadBalancer') {
    spec.allocateLoadBalancerNodePorts ??= true
    for (const ingress of object.status?.loadBalancer?.ingress ?? []) {
      if (ingress && typeof ingress === 'object' && ingress.ip && ingress.ipMode == null) ingress.ipMode = 'VIP'
    }
  }
}

// ---------- dropTypeDependentFields (pkg/registry/core/service/strategy.go) ----------

/** Kubernetes' ExternallyAccessible: the types that take external traffic (ClusterIP only with externalIPs). */
export function externallyAccessible(spec: AnyObject): boolean {
  return spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && (spec.externalIPs ?? []).length > 0)
}

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
const usesNodePorts = (spec: AnyObject) => spec.type === 'NodePort' || spec.type === 'LoadBalancer'
const usesHealthCheckNodePort = (spec: AnyObject) => spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local'
const nodePortSet = (spec: AnyObject) =>
  new Set<unknown>((Array.isArray(spec.ports) ? spec.ports : []).map((p: any) => p?.nodePort).filter((n: unknown) => n !== undefined && n !== null && n !== 0))

/**
 * On an update that changes the type, the fields the new type does not use are cleared — when they
 * are as they were (the user did not set them in this update; if they did, validation refuses the
 * update): clusterIP(s), ipFamilies and ipFamilyPolicy for ExternalName; the node ports (unless the
 * update adds one) for ClusterIP and ExternalName; healthCheckNodePort, allocateLoadBalancerNodePorts
 * and loadBalancerClass off LoadBalancer (the first also when externalTrafficPolicy leaves Local);
 * externalTrafficPolicy when the Service is no longer externally accessible. The allocator then
 * releases the cluster IPs and node ports dropped. A Service that is not a LoadBalancer has no
 * load-balancer status.
 */
export function dropTypeDependentFields(object: AnyObject, old: AnyObject): void {
  const spec = (object.spec ??= {})
  const before = old.spec ?? {}
  if (before.type !== 'ExternalName' && spec.type === 'ExternalName') {
    const sameIPs = (spec.clusterIP ?? '') === (before.clusterIP ?? '') && sameJSON(spec.clusterIPs ?? [], before.clusterIPs ?? [])
    if (sameIPs) {
      delete spec.clusterIP
      delete spec.clusterIPs
    }
    if (sameJSON(spec.ipFamilies, before.ipFamilies)) delete spec.ipFamilies
    if ((spec.ipFamilyPolicy ?? '') === (before.ipFamilyPolicy ?? '')) delete spec.ipFamilyPolicy
  }
  if (usesNodePorts(before) && !usesNodePorts(spec)) {
    const oldPorts = nodePortSet(before)
    if ([...nodePortSet(spec)].every((p) => oldPorts.has(p))) {
      for (const port of Array.isArray(spec.ports) ? spec.ports : []) if (port && typeof port === 'object') delete port.nodePort
    }
  }
  if (usesHealthCheckNodePort(before) && !usesHealthCheckNodePort(spec) && (spec.healthCheckNodePort ?? 0) === (before.healthCheckNodePort ?? 0)) {
    delete spec.healthCheckNodePort
  }
  if (before.type === 'LoadBalancer' && spec.type !== 'LoadBalancer') {
    if (spec.allocateLoadBalancerNodePorts != null && before.allocateLoadBalancerNodePorts != null && spec.allocateLoadBalancerNodePorts === before.allocateLoadBalancerNodePorts) {
      delete spec.allocateLoadBalancerNodePorts
    }
    if ((spec.loadBalancerClass ?? null) === (before.loadBalancerClass ?? null)) delete spec.loadBalancerClass
  }
  if (externallyAccessible(before) && !externallyAccessible(spec) && (spec.externalTrafficPolicy ?? '') === (before.externalTrafficPolicy ?? '')) {
    delete spec.externalTrafficPolicy
  }
  if (spec.type !== 'LoadBalancer' && object.status && typeof object.status === 'object') object.status.loadBalancer = {}
}

// ---------- columns (kubectl's printService; the server prints wide, so nothing is clipped) ----------

function externalIP(service: AnyObject): string {
  const spec = service.spec ?? {}
  const externalIPs: string[] = spec.externalIPs ?? []
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>'
    case 'LoadBalancer': {
      const ingress = new Set<string>()
      for (const i of service.status?.loadBalancer?.ingress ?? []) {
        if (i?.ip) ingress.add(i.ip)
        else if (i?.hostname) ingress.add(i.hostname)
      }
      const lb = [...ingress].sort()
      if (externalIPs.length > 0) return [...lb, ...externalIPs].join(',')
      return lb.length > 0 ? lb.join(',') : '<pending>'
    }
    case 'ExternalName':
      return spec.externalName ?? ''
  }
  return '<unknown>'
}

/** `80/TCP,443/TCP`, with the node port as `80:30080/TCP`; `<none>` without ports. */
export function servicePorts(service: AnyObject): string {
  const pieces = (service.spec?.ports ?? []).map((p: any) =>
    p?.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? ''}` : `${p?.port}/${p?.protocol ?? ''}`,
  )
  return pieces.length > 0 ? pieces.join(',') : '<none>'
}

export const service: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Service',
  resource: 'services',
  singular: 'service',
  shortNames: ['svc'],
  categories: ['all'],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'}],
  hasStatus: true,
  generationFields: [],
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'Service',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {...serviceSpec, proto: 2},
      status: {...serviceStatus, proto: 3},
    },
  },
  defaults: defaultService,
  prepareForCreate(object) {
    // an empty ServiceStatus: Go serialises its loadBalancer struct even when empty
    object.status = {loadBalancer: {}}
  },
  prepareForUpdate(object, old, context) {
    if (!context.subresource) dropTypeDependentFields(object, old)
  },
  columns: [
    {
      name: 'Type',
      type: 'string',
      description: 'type determines how the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.',
      priority: 0,
      cell: (o) => o.spec?.type ?? '',
    },
    {
      name: 'Cluster-IP',
      type: 'string',
      description: 'clusterIP is the IP address of the service and is usually assigned randomly.',
      priority: 0,
      cell: (o) => ((o.spec?.clusterIPs ?? []).length > 0 ? o.spec.clusterIPs[0] : '<none>'),
    },
    {
      name: 'External-IP',
      type: 'string',
      description: 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
      priority: 0,
      cell: (o) => externalIP(o),
    },
    {name: 'Port(s)', type: 'string', description: 'The list of ports that are exposed by this service.', priority: 0, cell: (o) => servicePorts(o)},
    ageColumn,
    {
      name: 'Selector',
      type: 'string',
      description: 'Route service traffic to pods with label keys and values matching this selector.',
      priority: 1,
      cell: (o) => formatLabels(o.spec?.selector),
    },
  ],
  fieldSelectors: {
    'spec.clusterIP': (o) => o.spec?.clusterIP ?? '',
    'spec.type': (o) => o.spec?.type ?? '',
  },
}
