// TypeScript shapes of the CRI (runtime.v1) messages in proto/cri/api.proto, as @grpc/proto-loader
// hands them over with the options in proto.ts: field names in camelCase (`pod_sandbox_id` ->
// `podSandboxId`), enums as their names (`'CONTAINER_RUNNING'`), 64-bit integers as decimal strings
// (nanosecond timestamps do not fit a JS number), bytes as Buffers, absent scalars as their zero
// value, absent messages as null. When sending, an int64 may be a number or a decimal string.

/** A 64-bit integer: a decimal string when received; a number or a decimal string when sent. */
export type Int64 = string | number

export type ContainerStateName = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN'
export type PodSandboxStateName = 'SANDBOX_READY' | 'SANDBOX_NOTREADY'
export type NamespaceModeName = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET'
export type ProtocolName = 'TCP' | 'UDP' | 'SCTP'
export type ProfileTypeName = 'RuntimeDefault' | 'Unconfined' | 'Localhost'
/** `SIGNAL_RUNTIME_DEFAULT` or `SIGNAL_SIG<NAME>` (e.g. `SIGNAL_SIGTERM`). */
export type SignalName = string

/** Makes every field optional, recursively: what a caller has to fill in a request. */
export type DeepPartial<T> = T extends Buffer
  ? T
  : T extends (infer U)[]
    ? DeepPartial<U>[]
    : T extends object
      ? {[K in keyof T]?: DeepPartial<T[K]> | null}
      : T

export interface VersionResponse {
  version: string
  runtimeName: string
  runtimeVersion: string
  runtimeApiVersion: string
}

export interface RuntimeCondition {
  type: string
  status: boolean
  reason: string
  message: string
}

export interface StatusResponse {
  status: {conditions: RuntimeCondition[]} | null
  info: Record<string, string>
  runtimeHandlers: {name: string; features: {recursiveReadOnlyMounts: boolean; userNamespaces: boolean} | null}[]
  features: {supplementalGroupsPolicy: boolean; userNamespacesHostNetwork: boolean; mountOptions: boolean} | null
}

export interface DNSConfig {
  servers: string[]
  searches: string[]
  options: string[]
}

export interface PortMapping {
  protocol: ProtocolName
  containerPort: number
  hostPort: number
  hostIp: string
}

export interface IDMapping {
  hostId: number
  containerId: number
  length: number
}

export interface Mount {
  containerPath: string
  hostPath: string
  readonly: boolean
  selinuxRelabel: boolean
  propagation: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL'
  uidMappings: IDMapping[]
  gidMappings: IDMapping[]
  recursiveReadOnly: boolean
  image: ImageSpec | null
  imageSubPath: string
  mountOptions: string[]
}

export interface NamespaceOption {
  network: NamespaceModeName
  pid: NamespaceModeName
  ipc: NamespaceModeName
  targetId: string
  usernsOptions: {mode: NamespaceModeName; uids: IDMapping[]; gids: IDMapping[]} | null
}

export interface Int64Value {
  value: Int64
}

export interface SELinuxOption {
  user: string
  role: string
  type: string
  level: string
}

export interface SecurityProfile {
  profileType: ProfileTypeName
  /** absolute path of the profile file when profileType is Localhost */
  localhostRef: string
}

export interface Capability {
  addCapabilities: string[]
  dropCapabilities: string[]
  addAmbientCapabilities: string[]
}

export interface LinuxContainerResources {
  cpuPeriod: Int64
  cpuQuota: Int64
  cpuShares: Int64
  memoryLimitInBytes: Int64
  oomScoreAdj: Int64
  cpusetCpus: string
  cpusetMems: string
  hugepageLimits: {pageSize: string; limit: Int64}[]
  unified: Record<string, string>
  memorySwapLimitInBytes: Int64
}

export interface ImageSpec {
  image: string
  annotations: Record<string, string>
  userSpecifiedImage: string
  runtimeHandler: string
  imageRef: string
}

export interface KeyValue {
  key: string
  /** `bytes` on the wire: CriClient sends a string as its UTF-8 bytes; received values are Buffers */
  value: Buffer | string
}

export interface LinuxSandboxSecurityContext {
  namespaceOptions: NamespaceOption | null
  selinuxOptions: SELinuxOption | null
  runAsUser: Int64Value | null
  runAsGroup: Int64Value | null
  readonlyRootfs: boolean
  supplementalGroups: Int64[]
  supplementalGroupsPolicy: 'Merge' | 'Strict'
  privileged: boolean
  seccomp: SecurityProfile | null
  apparmor: SecurityProfile | null
  seccompProfilePath: string
}

export interface LinuxPodSandboxConfig {
  cgroupParent: string
  securityContext: LinuxSandboxSecurityContext | null
  sysctls: Record<string, string>
  overhead: LinuxContainerResources | null
  resources: LinuxContainerResources | null
}

export interface PodSandboxMetadata {
  name: string
  uid: string
  namespace: string
  attempt: number
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata | null
  hostname: string
  logDirectory: string
  dnsConfig: DNSConfig | null
  portMappings: PortMapping[]
  labels: Record<string, string>
  annotations: Record<string, string>
  linux: LinuxPodSandboxConfig | null
}

export interface PodSandboxNetworkStatus {
  ip: string
  additionalIps: {ip: string}[]
}

export interface PodSandboxStatus {
  id: string
  metadata: PodSandboxMetadata | null
  state: PodSandboxStateName
  /** nanoseconds since the epoch */
  createdAt: Int64
  network: PodSandboxNetworkStatus | null
  linux: {namespaces: {options: NamespaceOption | null} | null} | null
  labels: Record<string, string>
  annotations: Record<string, string>
  runtimeHandler: string
}

export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null
  info: Record<string, string>
  containersStatuses: ContainerStatus[]
  timestamp: Int64
}

export interface PodSandboxFilter {
  id: string
  state: {state: PodSandboxStateName} | null
  labelSelector: Record<string, string>
}

export interface PodSandbox {
  id: string
  metadata: PodSandboxMetadata | null
  state: PodSandboxStateName
  createdAt: Int64
  labels: Record<string, string>
  annotations: Record<string, string>
  runtimeHandler: string
}

export interface LinuxContainerSecurityContext {
  capabilities: Capability | null
  privileged: boolean
  namespaceOptions: NamespaceOption | null
  selinuxOptions: SELinuxOption | null
  runAsUser: Int64Value | null
  runAsGroup: Int64Value | null
  runAsUsername: string
  readonlyRootfs: boolean
  supplementalGroups: Int64[]
  supplementalGroupsPolicy: 'Merge' | 'Strict'
  noNewPrivs: boolean
  maskedPaths: string[]
  readonlyPaths: string[]
  seccomp: SecurityProfile | null
  apparmor: SecurityProfile | null
  apparmorProfile: string
  seccompProfilePath: string
}

export interface LinuxContainerConfig {
  resources: LinuxContainerResources | null
  securityContext: LinuxContainerSecurityContext | null
}

export interface ContainerMetadata {
  name: string
  attempt: number
}

export interface ContainerConfig {
  metadata: ContainerMetadata | null
  image: ImageSpec | null
  command: string[]
  args: string[]
  workingDir: string
  envs: KeyValue[]
  mounts: Mount[]
  devices: {containerPath: string; hostPath: string; permissions: string}[]
  labels: Record<string, string>
  annotations: Record<string, string>
  /** relative to the sandbox's logDirectory */
  logPath: string
  stdin: boolean
  stdinOnce: boolean
  tty: boolean
  linux: LinuxContainerConfig | null
  stopSignal: SignalName
}

export interface ContainerFilter {
  id: string
  state: {state: ContainerStateName} | null
  podSandboxId: string
  labelSelector: Record<string, string>
}

export interface Container {
  id: string
  podSandboxId: string
  metadata: ContainerMetadata | null
  image: ImageSpec | null
  imageRef: string
  state: ContainerStateName
  createdAt: Int64
  labels: Record<string, string>
  annotations: Record<string, string>
  imageId: string
}

export interface ContainerStatus {
  id: string
  metadata: ContainerMetadata | null
  state: ContainerStateName
  /** nanoseconds since the epoch; 0 when not reached */
  createdAt: Int64
  startedAt: Int64
  finishedAt: Int64
  exitCode: number
  image: ImageSpec | null
  imageRef: string
  reason: string
  message: string
  labels: Record<string, string>
  annotations: Record<string, string>
  mounts: Mount[]
  logPath: string
  resources: {linux: LinuxContainerResources | null} | null
  imageId: string
  user: {linux: {uid: Int64; gid: Int64; supplementalGroups: Int64[]} | null} | null
  stopSignal: SignalName
}

export interface ContainerStatusResponse {
  status: ContainerStatus | null
  /** verbose only: runtime-specific details, e.g. `info` -> a JSON document */
  info: Record<string, string>
}

export interface ExecSyncResponse {
  stdout: Buffer
  stderr: Buffer
  exitCode: number
}

export interface Image {
  id: string
  repoTags: string[]
  repoDigests: string[]
  size: Int64
  uid: Int64Value | null
  username: string
  spec: ImageSpec | null
  pinned: boolean
}

export interface ImageStatusResponse {
  /** null when the image is not present */
  image: Image | null
  info: Record<string, string>
}

export interface AuthConfig {
  username: string
  password: string
  auth: string
  serverAddress: string
  identityToken: string
  registryToken: string
}

export interface FilesystemUsage {
  timestamp: Int64
  fsId: {mountpoint: string} | null
  usedBytes: {value: Int64} | null
  inodesUsed: {value: Int64} | null
}

export interface ImageFsInfoResponse {
  imageFilesystems: FilesystemUsage[]
  containerFilesystems: FilesystemUsage[]
}
