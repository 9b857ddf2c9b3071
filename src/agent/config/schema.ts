// The agent configuration's fields (`agent.config.orch.io/v1beta1` AgentConfiguration), as the
// kubelet's KubeletConfiguration names them, with their types and defaults. The type of a field
// decides how drop-ins merge into it (see merge.ts).

export type FieldType =
  | {kind: 'string'}
  | {kind: 'integer'; min?: number; max?: number}
  | {kind: 'boolean'}
  | {kind: 'duration'; min?: string; max?: string}
  | {kind: 'quantity'}
  | {kind: 'enum'; values: readonly string[]}
  | {kind: 'list'; of: FieldType}
  | {kind: 'map'; of: 'string' | 'boolean'}
  | {kind: 'mapOfLists'}
  | {kind: 'struct'; fields: Record<string, Field>}

export interface Field {
  type: FieldType
  default?: unknown
  description: string
}

const string = (def: string | undefined, description: string): Field => ({type: {kind: 'string'}, default: def, description})
const integer = (def: number, description: string, min?: number, max?: number): Field => ({type: {kind: 'integer', min, max}, default: def, description})
const boolean = (def: boolean, description: string): Field => ({type: {kind: 'boolean'}, default: def, description})
const duration = (def: string, description: string): Field => ({type: {kind: 'duration'}, default: def, description})
const quantity = (def: string, description: string): Field => ({type: {kind: 'quantity'}, default: def, description})
const struct = (fields: Record<string, Field>, description: string): Field => ({type: {kind: 'struct', fields}, description})

const taint: FieldType = {
  kind: 'struct',
  fields: {
    key: string(undefined, 'taint key'),
    value: string(undefined, 'taint value'),
    effect: {type: {kind: 'enum', values: ['NoSchedule', 'PreferNoSchedule', 'NoExecute']}, description: 'taint effect'},
  },
}

export const AGENT_CONFIG_API_VERSION = 'agent.config.orch.io/v1beta1'
export const AGENT_CONFIG_KIND = 'AgentConfiguration'

/** Every field, in the order --print-config prints them. */
export const AGENT_CONFIG_FIELDS: Record<string, Field> = {
  address: string('0.0.0.0', 'the address the HTTPS server listens on'),
  port: integer(10250, 'the port of the HTTPS server (0: any free port)', 0, 65535),
  enableServer: boolean(true, 'serve HTTPS (checkpoint, healthz)'),
  healthzBindAddress: string('127.0.0.1', 'reserved: /healthz is served on the HTTPS port'),
  healthzPort: integer(10248, 'reserved: /healthz is served on the HTTPS port', 0, 65535),
  tlsCertFile: string('', 'serving certificate (PEM); empty: an agent-serving CSR, self-signed until issued'),
  tlsPrivateKeyFile: string('', 'key of tlsCertFile'),
  rotateCertificates: boolean(true, 'renew the client certificate at 70-90% of its life'),
  serverTLSBootstrap: boolean(true, 'request the serving certificate with an orch.io/agent-serving CSR'),
  authentication: struct(
    {
      x509: struct({clientCAFile: string('', 'CA bundle for client certificates; empty: the CA of the kubeconfig')}, 'client certificates'),
      webhook: struct({enabled: boolean(true, 'reserved: bearer tokens are always checked with a TokenReview when connected'), cacheTTL: duration('2m0s', 'how long a token review is trusted')}, 'bearer tokens'),
      anonymous: struct({enabled: boolean(false, 'reserved: requests without credentials are always refused (401)')}, 'anonymous requests'),
    },
    'how the HTTPS server authenticates callers',
  ),
  authorization: struct(
    {
      mode: {type: {kind: 'enum', values: ['Webhook', 'AlwaysAllow']}, default: 'Webhook', description: 'AlwaysAllow, or Webhook: a SubjectAccessReview per request'},
      webhook: struct(
        {
          cacheAuthorizedTTL: duration('5m0s', 'how long an allowed answer is cached'),
          cacheUnauthorizedTTL: duration('30s', 'how long a denied answer is cached'),
        },
        'webhook answers cache',
      ),
    },
    'how the HTTPS server authorizes callers',
  ),
  registerNode: boolean(true, 'register the Node and keep its status and Lease'),
  registerWithTaints: {type: {kind: 'list', of: taint}, default: [], description: 'taints the Node is registered with'},
  nodeLabels: {type: {kind: 'map', of: 'string'}, default: {}, description: 'labels the Node is registered with'},
  providerID: string('', 'the Node spec.providerID'),
  maxPods: integer(110, 'pods this node can run', 1),
  podPidsLimit: integer(-1, 'reserved: process limit per pod (-1: none)'),
  nodeStatusUpdateFrequency: duration('10s', 'how often the Node status is computed'),
  nodeStatusReportFrequency: duration('5m0s', 'how often an unchanged status is written anyway'),
  nodeLeaseDurationSeconds: integer(40, 'the Lease duration; it is renewed every quarter of it', 1),
  syncFrequency: duration('1m0s', 'the sync loop counts as stuck after max(2 x this, 5m) without a round; pods resync on every runtime change'),
  fileCheckFrequency: duration('20s', 'how often staticPodPath is read again'),
  staticPodPath: string('/etc/orch/manifests', 'static pod manifests (a directory or a file)'),
  staticPodURL: string('', 'reserved: static pods from a URL'),
  staticPodURLHeader: {type: {kind: 'mapOfLists'}, default: {}, description: 'headers for staticPodURL: name -> values'},
  containerRuntimeEndpoint: string('', 'the CRI runtime socket; empty: the built-in process runtime'),
  imageServiceEndpoint: string('', 'the CRI image service socket; empty: containerRuntimeEndpoint'),
  runtimeRequestTimeout: duration('2m0s', 'timeout of CRI calls (and the default checkpoint timeout)'),
  serializeImagePulls: boolean(true, 'pull one image at a time (a queue shared by all pods); false: in parallel'),
  clusterDNS: {type: {kind: 'list', of: {kind: 'string'}}, default: [], description: 'DNS servers given to pods'},
  clusterDomain: string('', 'the cluster domain for DNS searches'),
  resolvConf: string('/etc/resolv.conf', 'reserved: the host resolver configuration'),
  featureGates: {type: {kind: 'map', of: 'boolean'}, default: {}, description: 'feature gates (ContainerCheckpoint beta, SystemdWatchdog beta, PodsAPI alpha)'},
  failSwapOn: boolean(true, 'refuse to start when swap is on'),
  memorySwap: struct({swapBehavior: {type: {kind: 'enum', values: ['NoSwap', 'LimitedSwap']}, default: 'NoSwap', description: 'NoSwap (no swap for pods) or LimitedSwap (swap for Burstable pods, cgroup v2)'}}, 'swap for pods'),
  seccompDefault: boolean(false, 'RuntimeDefault for containers that name no seccomp profile'),
  cgroupRoot: string('', 'reserved: the root cgroup of pods'),
  evictionHard: {type: {kind: 'map', of: 'string'}, default: {}, description: 'reserved: hard eviction thresholds'},
  podLogsDir: string('/var/log/pods', 'reserved: pod logs live under {root}/pods'),
  containerLogMaxSize: quantity('10Mi', 'a running container\'s log file larger than this is rotated (a negative size: no rotation)'),
  containerLogMaxFiles: integer(5, 'log files kept per container: the current one and the rotated ones', 2),
  containerLogMaxWorkers: integer(1, 'containers whose logs are rotated at the same time', 1),
  containerLogMonitorInterval: {type: {kind: 'duration', min: '3s'}, default: '10s', description: 'how often container log sizes are checked (at least 3s)'},
  shutdownGracePeriod: duration('0s', 'reserved: graceful node shutdown'),
  nftables: struct({skipKernelVersionCheck: boolean(false, 'allow nftables proxy mode on kernels below 5.13')}, 'nftables proxy mode'),
}

/** A fully defaulted configuration. */
export function defaultConfiguration(fields: Record<string, Field> = AGENT_CONFIG_FIELDS): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(fields)) {
    if (field.type.kind === 'struct') out[name] = defaultConfiguration(field.type.fields)
    else if (field.default !== undefined) out[name] = structuredClone(field.default)
  }
  return out
}
