// Container and its parts (core/v1), shared by Pod and every pod template. Field numbers are those of
// Kubernetes' core/v1 generated.proto; list and map types those of its Go struct tags.
import type {Field, ObjectSchema} from '../types.js'

// ---------- embedded (inline) structs ----------

/** Where an embedded Go struct sits in protobuf: its field number in the parent and its message name. */
export interface Embedding {
  proto: number
  name: string
}

/**
 * Go's embedded structs (`json:",inline"`): JSON flattens their fields into the parent, protobuf keeps
 * them in one nested message. The flattened fields carry their number inside that message and an
 * `embeddedIn` marker naming the parent's field for it (ProbeHandler at 1 of Probe, VolumeSource at 2
 * of Volume, LocalObjectReference at 1 of ConfigMapKeySelector, …). Read it with embeddingOf().
 */
export function embedded(embedding: Embedding, fields: Record<string, Field>): Record<string, Field> {
  const out: Record<string, Field> = {}
  for (const [name, field] of Object.entries(fields)) out[name] = Object.assign({}, field, {embeddedIn: embedding})
  return out
}

export function embeddingOf(field: Field): Embedding | undefined {
  return (field as {embeddedIn?: Embedding}).embeddedIn
}

/** LocalObjectReference, embedded at `proto` of its parent: contributes `name`. */
export function localObjectReferenceInline(proto: number): Record<string, Field> {
  return embedded({proto, name: 'LocalObjectReference'}, {name: {type: 'string', proto: 1}})
}

export const localObjectReference: ObjectSchema = {
  type: 'object',
  name: 'LocalObjectReference',
  structType: 'atomic',
  fields: {name: {type: 'string', proto: 1}},
}

// ---------- env ----------

export const objectFieldSelector: ObjectSchema = {
  type: 'object',
  name: 'ObjectFieldSelector',
  structType: 'atomic',
  fields: {
    apiVersion: {type: 'string', proto: 1},
    fieldPath: {type: 'string', proto: 2, required: true},
  },
}

export const resourceFieldSelector: ObjectSchema = {
  type: 'object',
  name: 'ResourceFieldSelector',
  structType: 'atomic',
  fields: {
    containerName: {type: 'string', proto: 1},
    resource: {type: 'string', proto: 2, required: true},
    divisor: {type: 'quantity', proto: 3},
  },
}

function keySelector(name: string): ObjectSchema {
  return {
    type: 'object',
    name,
    structType: 'atomic',
    fields: {
      ...localObjectReferenceInline(1),
      key: {type: 'string', proto: 2, required: true},
      optional: {type: 'boolean', proto: 3},
    },
  }
}

const envVar: ObjectSchema = {
  type: 'object',
  name: 'EnvVar',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    value: {type: 'string', proto: 2},
    valueFrom: {
      type: 'object',
      name: 'EnvVarSource',
      proto: 3,
      fields: {
        fieldRef: {...objectFieldSelector, proto: 1},
        resourceFieldRef: {...resourceFieldSelector, proto: 2},
        configMapKeyRef: {...keySelector('ConfigMapKeySelector'), proto: 3},
        secretKeyRef: {...keySelector('SecretKeySelector'), proto: 4},
        fileKeyRef: {
          type: 'object',
          name: 'FileKeySelector',
          structType: 'atomic',
          proto: 5,
          fields: {
            volumeName: {type: 'string', proto: 1, required: true},
            path: {type: 'string', proto: 2, required: true},
            key: {type: 'string', proto: 3, required: true},
            optional: {type: 'boolean', proto: 4},
          },
        },
      },
    },
  },
}

function envSource(name: string): ObjectSchema {
  return {type: 'object', name, fields: {...localObjectReferenceInline(1), optional: {type: 'boolean', proto: 2}}}
}

const envFromSource: ObjectSchema = {
  type: 'object',
  name: 'EnvFromSource',
  fields: {
    prefix: {type: 'string', proto: 1},
    configMapRef: {...envSource('ConfigMapEnvSource'), proto: 2},
    secretRef: {...envSource('SecretEnvSource'), proto: 3},
  },
}

// ---------- ports, resources, mounts ----------

export const protocols = ['TCP', 'UDP', 'SCTP'] as const

const containerPort: ObjectSchema = {
  type: 'object',
  name: 'ContainerPort',
  fields: {
    name: {type: 'string', proto: 1},
    hostPort: {type: 'integer', format: 'int32', proto: 2},
    containerPort: {type: 'integer', format: 'int32', proto: 3, required: true},
    protocol: {type: 'string', proto: 4, enum: protocols},
    hostIP: {type: 'string', proto: 5},
  },
}

export const resourceRequirements: ObjectSchema = {
  type: 'object',
  name: 'ResourceRequirements',
  fields: {
    limits: {type: 'map', values: {type: 'quantity'}, proto: 1},
    requests: {type: 'map', values: {type: 'quantity'}, proto: 2},
    claims: {
      type: 'array',
      proto: 3,
      listType: 'map',
      listMapKeys: ['name'],
      items: {
        type: 'object',
        name: 'ResourceClaim',
        fields: {name: {type: 'string', proto: 1, required: true}, request: {type: 'string', proto: 2}},
      },
    },
  },
}

const volumeMount: ObjectSchema = {
  type: 'object',
  name: 'VolumeMount',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    readOnly: {type: 'boolean', proto: 2},
    recursiveReadOnly: {type: 'string', proto: 7, enum: ['Disabled', 'IfPossible', 'Enabled']},
    mountPath: {type: 'string', proto: 3, required: true},
    subPath: {type: 'string', proto: 4},
    mountPropagation: {type: 'string', proto: 5, enum: ['None', 'HostToContainer', 'Bidirectional']},
    subPathExpr: {type: 'string', proto: 6},
    bindMountOptions: {type: 'array', items: {type: 'string'}, proto: 8, listType: 'set'},
  },
}

const volumeDevice: ObjectSchema = {
  type: 'object',
  name: 'VolumeDevice',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    devicePath: {type: 'string', proto: 2, required: true},
  },
}

// ---------- probes and lifecycle ----------

const execAction: ObjectSchema = {
  type: 'object',
  name: 'ExecAction',
  fields: {command: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'}},
}

const httpGetAction: ObjectSchema = {
  type: 'object',
  name: 'HTTPGetAction',
  fields: {
    path: {type: 'string', proto: 1},
    port: {type: 'int-or-string', proto: 2, required: true},
    host: {type: 'string', proto: 3},
    scheme: {type: 'string', proto: 4, enum: ['HTTP', 'HTTPS']},
    httpHeaders: {
      type: 'array',
      proto: 5,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'HTTPHeader',
        fields: {name: {type: 'string', proto: 1, required: true}, value: {type: 'string', proto: 2, required: true}},
      },
    },
    protocol: {type: 'string', proto: 6},
  },
}

const tcpSocketAction: ObjectSchema = {
  type: 'object',
  name: 'TCPSocketAction',
  fields: {port: {type: 'int-or-string', proto: 1, required: true}, host: {type: 'string', proto: 2}},
}

const probe: ObjectSchema = {
  type: 'object',
  name: 'Probe',
  fields: {
    ...embedded(
      {proto: 1, name: 'ProbeHandler'},
      {
        exec: {...execAction, proto: 1},
        httpGet: {...httpGetAction, proto: 2},
        tcpSocket: {...tcpSocketAction, proto: 3},
        grpc: {
          type: 'object',
          name: 'GRPCAction',
          proto: 4,
          fields: {
            port: {type: 'integer', format: 'int32', proto: 1, required: true},
            service: {type: 'string', proto: 2},
            mode: {type: 'string', proto: 3},
          },
        },
      },
    ),
    initialDelaySeconds: {type: 'integer', format: 'int32', proto: 2},
    timeoutSeconds: {type: 'integer', format: 'int32', proto: 3},
    periodSeconds: {type: 'integer', format: 'int32', proto: 4},
    successThreshold: {type: 'integer', format: 'int32', proto: 5},
    failureThreshold: {type: 'integer', format: 'int32', proto: 6},
    terminationGracePeriodSeconds: {type: 'integer', format: 'int64', proto: 7},
  },
}

const lifecycleHandler: ObjectSchema = {
  type: 'object',
  name: 'LifecycleHandler',
  fields: {
    exec: {...execAction, proto: 1},
    httpGet: {...httpGetAction, proto: 2},
    tcpSocket: {...tcpSocketAction, proto: 3},
    sleep: {
      type: 'object',
      name: 'SleepAction',
      proto: 4,
      fields: {seconds: {type: 'integer', format: 'int64', proto: 1, required: true}},
    },
  },
}

const lifecycle: ObjectSchema = {
  type: 'object',
  name: 'Lifecycle',
  fields: {
    postStart: {...lifecycleHandler, proto: 1},
    preStop: {...lifecycleHandler, proto: 2},
    stopSignal: {type: 'string', proto: 3},
  },
}

// ---------- security ----------

export const seccompProfile: ObjectSchema = {
  type: 'object',
  name: 'SeccompProfile',
  fields: {
    type: {type: 'string', proto: 1, required: true, enum: ['Unconfined', 'RuntimeDefault', 'Localhost']},
    localhostProfile: {type: 'string', proto: 2},
  },
}

export const appArmorProfile: ObjectSchema = {
  type: 'object',
  name: 'AppArmorProfile',
  fields: {
    type: {type: 'string', proto: 1, required: true, enum: ['Unconfined', 'RuntimeDefault', 'Localhost']},
    localhostProfile: {type: 'string', proto: 2},
  },
}

export const seLinuxOptions: ObjectSchema = {
  type: 'object',
  name: 'SELinuxOptions',
  fields: {
    user: {type: 'string', proto: 1},
    role: {type: 'string', proto: 2},
    type: {type: 'string', proto: 3},
    level: {type: 'string', proto: 4},
  },
}

export const windowsSecurityContextOptions: ObjectSchema = {
  type: 'object',
  name: 'WindowsSecurityContextOptions',
  fields: {
    gmsaCredentialSpecName: {type: 'string', proto: 1},
    gmsaCredentialSpec: {type: 'string', proto: 2},
    runAsUserName: {type: 'string', proto: 3},
    hostProcess: {type: 'boolean', proto: 4},
  },
}

const securityContext: ObjectSchema = {
  type: 'object',
  name: 'SecurityContext',
  fields: {
    capabilities: {
      type: 'object',
      name: 'Capabilities',
      proto: 1,
      fields: {
        add: {type: 'array', items: {type: 'string'}, proto: 1, listType: 'atomic'},
        drop: {type: 'array', items: {type: 'string'}, proto: 2, listType: 'atomic'},
      },
    },
    privileged: {type: 'boolean', proto: 2},
    seLinuxOptions: {...seLinuxOptions, proto: 3},
    windowsOptions: {...windowsSecurityContextOptions, proto: 10},
    runAsUser: {type: 'integer', format: 'int64', proto: 4},
    runAsGroup: {type: 'integer', format: 'int64', proto: 8},
    runAsNonRoot: {type: 'boolean', proto: 5},
    readOnlyRootFilesystem: {type: 'boolean', proto: 6},
    allowPrivilegeEscalation: {type: 'boolean', proto: 7},
    procMount: {type: 'string', proto: 9, enum: ['Default', 'Unmasked']},
    seccompProfile: {...seccompProfile, proto: 11},
    appArmorProfile: {...appArmorProfile, proto: 12},
  },
}

// ---------- the container ----------

export const container: ObjectSchema = {
  type: 'object',
  name: 'Container',
  fields: {
    name: {type: 'string', proto: 1, required: true},
    image: {type: 'string', proto: 2},
    command: {type: 'array', items: {type: 'string'}, proto: 3, listType: 'atomic'},
    args: {type: 'array', items: {type: 'string'}, proto: 4, listType: 'atomic'},
    workingDir: {type: 'string', proto: 5},
    ports: {
      type: 'array',
      items: containerPort,
      proto: 6,
      patchMergeKey: 'containerPort',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['containerPort', 'protocol'],
    },
    envFrom: {type: 'array', items: envFromSource, proto: 19, listType: 'atomic'},
    env: {type: 'array', items: envVar, proto: 7, patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name']},
    resources: {...resourceRequirements, proto: 8},
    resizePolicy: {
      type: 'array',
      proto: 23,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'ContainerResizePolicy',
        fields: {
          resourceName: {type: 'string', proto: 1, required: true},
          restartPolicy: {type: 'string', proto: 2, required: true, enum: ['NotRequired', 'RestartContainer']},
        },
      },
    },
    restartPolicy: {type: 'string', proto: 24, enum: ['Always', 'OnFailure', 'Never']},
    restartPolicyRules: {
      type: 'array',
      proto: 25,
      listType: 'atomic',
      items: {
        type: 'object',
        name: 'ContainerRestartRule',
        fields: {
          action: {type: 'string', proto: 1, required: true},
          exitCodes: {
            type: 'object',
            name: 'ContainerRestartRuleOnExitCodes',
            proto: 2,
            fields: {
              operator: {type: 'string', proto: 1, required: true, enum: ['In', 'NotIn']},
              values: {type: 'array', items: {type: 'integer', format: 'int32'}, proto: 2, listType: 'set'},
            },
          },
        },
      },
    },
    volumeMounts: {
      type: 'array',
      items: volumeMount,
      proto: 9,
      patchMergeKey: 'mountPath',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['mountPath'],
    },
    volumeDevices: {
      type: 'array',
      items: volumeDevice,
      proto: 21,
      patchMergeKey: 'devicePath',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['devicePath'],
    },
    livenessProbe: {...probe, proto: 10},
    readinessProbe: {...probe, proto: 11},
    startupProbe: {...probe, proto: 22},
    lifecycle: {...lifecycle, proto: 12},
    terminationMessagePath: {type: 'string', proto: 13},
    terminationMessagePolicy: {type: 'string', proto: 20, enum: ['File', 'FallbackToLogsOnError']},
    imagePullPolicy: {type: 'string', proto: 14, enum: ['Always', 'Never', 'IfNotPresent']},
    securityContext: {...securityContext, proto: 15},
    stdin: {type: 'boolean', proto: 16},
    stdinOnce: {type: 'boolean', proto: 17},
    tty: {type: 'boolean', proto: 18},
  },
}

// ---------- defaults ----------

// An image reference as Kubernetes' parsers.ParseImageName reads it: [domain/]path[:tag][@digest].
const component = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*'
const domain = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?|\\[[0-9a-fA-F:.%]+\\](?::[0-9]+)?)'
const reference = new RegExp(
  `^(?:${domain}/)?${component}(?:/${component})*(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
)

/** The image's tag as Kubernetes reads it: `latest` when neither tag nor digest is given, '' when unparsable. */
export function imageTag(image: string): string {
  const match = reference.exec(image)
  if (!match) return ''
  const [, tag, digest] = match
  if (tag) return tag
  return digest ? '' : 'latest'
}

/** imagePullPolicy default: Always for `:latest` (or no tag), IfNotPresent otherwise. */
export function defaultPullPolicy(image: string | undefined): 'Always' | 'IfNotPresent' {
  return imageTag(image ?? '') === 'latest' ? 'Always' : 'IfNotPresent'
}

function defaultProbe(p: any): void {
  if (!p || typeof p !== 'object') return
  if (!p.timeoutSeconds) p.timeoutSeconds = 1
  if (!p.periodSeconds) p.periodSeconds = 10
  if (!p.successThreshold) p.successThreshold = 1
  if (!p.failureThreshold) p.failureThreshold = 3
  defaultHandler(p)
  if (p.grpc && typeof p.grpc === 'object') p.grpc.service ??= ''
}

function defaultHandler(h: any): void {
  if (!h || typeof h !== 'object') return
  if (h.httpGet && typeof h.httpGet === 'object') {
    if (!h.httpGet.path) h.httpGet.path = '/'
    if (!h.httpGet.scheme) h.httpGet.scheme = 'HTTP'
  }
}

/** Kubernetes' container defaults (SetDefaults_Container and the nested types'); idempotent. */
export function defaultContainer(c: any): void {
  if (!c || typeof c !== 'object') return
  if (!c.imagePullPolicy) c.imagePullPolicy = defaultPullPolicy(c.image)
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log'
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File'
  for (const port of Array.isArray(c.ports) ? c.ports : []) {
    if (port && typeof port === 'object' && !port.protocol) port.protocol = 'TCP'
  }
  for (const env of Array.isArray(c.env) ? c.env : []) {
    const fieldRef = env?.valueFrom?.fieldRef
    if (fieldRef && typeof fieldRef === 'object' && !fieldRef.apiVersion) fieldRef.apiVersion = 'v1'
  }
  defaultProbe(c.livenessProbe)
  defaultProbe(c.readinessProbe)
  defaultProbe(c.startupProbe)
  defaultHandler(c.lifecycle?.postStart)
  defaultHandler(c.lifecycle?.preStop)
}
